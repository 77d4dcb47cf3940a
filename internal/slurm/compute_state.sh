# shellcheck shell=sh disable=SC2154 # the caller sets the paths defaults, localconf, driver and controller, and missing
if [ -e "$defaults" ]; then sec defaults base64 -w0 -- "$defaults"; else secv defaults "$missing"; fi
test -e "$localconf"; secv localconf $?
test -e "$driver"; secv gpus $?
command -v srun >/dev/null; secv client $?
test -e "$controller"; secv controller $?
