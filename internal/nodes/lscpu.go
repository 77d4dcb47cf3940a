package nodes

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUTopology is the part of the facts that lscpu and /proc/meminfo give
// when slurmd is not installed.
type CPUTopology struct {
	CPUs            int
	SocketsPerBoard int
	CoresPerSocket  int
	ThreadsPerCore  int
}

// ParseLscpu reads plain `lscpu` output (LC_ALL=C). Newer util-linux
// indents nested fields, so keys are trimmed. Arm servers may report
// "Socket(s): -" with "Cluster(s)" and "Core(s) per cluster" instead.
func ParseLscpu(out string) (CPUTopology, error) {
	fields := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			key := strings.TrimSpace(k)
			if _, seen := fields[key]; !seen {
				fields[key] = strings.TrimSpace(v)
			}
		}
	}
	cpus, err := lscpuInt(fields, "CPU(s)")
	if err != nil {
		return CPUTopology{}, err
	}
	threads, err := lscpuInt(fields, "Thread(s) per core")
	if err != nil {
		return CPUTopology{}, err
	}
	cores, err := lscpuInt(fields, "Core(s) per socket", "Core(s) per cluster")
	if err != nil {
		return CPUTopology{}, err
	}
	sockets, err := lscpuInt(fields, "Socket(s)", "Cluster(s)")
	if err != nil {
		return CPUTopology{}, err
	}
	return CPUTopology{CPUs: cpus, SocketsPerBoard: sockets, CoresPerSocket: cores, ThreadsPerCore: threads}, nil
}

// lscpuInt returns the first of keys with a positive number ("-" means the
// kernel does not know).
func lscpuInt(fields map[string]string, keys ...string) (int, error) {
	for _, k := range keys {
		if n, err := strconv.Atoi(fields[k]); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("lscpu: no number for %s", strings.Join(keys, " or "))
}

// ParseMeminfoMiB returns MemTotal from /proc/meminfo in MiB, as slurmd
// computes RealMemory.
func ParseMeminfoMiB(content string) (int64, error) {
	for _, line := range strings.Split(content, "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
				return kb / 1024, nil
			}
		}
		return 0, fmt.Errorf("/proc/meminfo: unexpected MemTotal line %q", line)
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemTotal line")
}
