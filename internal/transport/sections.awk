function out() { printf "@@gpucluster 0 %d %s\n%s\n", length(b), key, b } FNR == 1 { if (n++) out(); key = k; b = "" } { b = b $0 "\n" } END { if (n) out() }
