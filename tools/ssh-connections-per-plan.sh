#!/usr/bin/env bash
# Counts the SSH connections that one no-op `terraform plan` of examples/lab-cluster opens on
# each lab host, from each host's own sshd log. Run after `make demo` (the lab is up and the
# example applied). The provider promises one connection per host per run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

lab=bin/gpucluster-lab
netns=gpucluster-lab${GPUCLUSTER_LAB_INSTANCE:+-$GPUCLUSTER_LAB_INSTANCE} # the lab the make targets use
demo=.demo
[ -r "$demo/terraformrc" ] || { echo "run make demo first" >&2; exit 1; }

accepted() { "$lab" exec "$1" -- journalctl -u ssh --no-pager -o cat | grep -c 'Accepted publickey' || true; }

declare -A before
for host in $("$lab" hosts); do before[$host]=$(accepted "$host"); done

ip netns exec "$netns" env TF_CLI_CONFIG_FILE="$PWD/$demo/terraformrc" CHECKPOINT_DISABLE=1 \
	terraform -chdir=examples/lab-cluster plan -input=false -detailed-exitcode \
	-var-file="$PWD/$demo/lab.tfvars.json" >/dev/null 2>&1 || {
	echo "the plan was not a no-op (or failed): apply examples/lab-cluster first" >&2
	exit 1
}

for host in $("$lab" hosts); do
	printf '%-8s %d\n' "$host" $(($(accepted "$host") - before[$host]))
done
