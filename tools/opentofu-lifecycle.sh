#!/usr/bin/env bash
# Runs examples/cluster's whole lifecycle with OpenTofu instead of Terraform, with the lab's
# variables (examples/lab-cluster), on a fresh lab of its own (instance "tofu" unless
# GPUCLUSTER_LAB_INSTANCE says otherwise), and checks each step on the hosts themselves: apply,
# a no-op plan, an import block taking over an object handed over as docs/guides/ownership.md
# says, and destroy. The lab is removed at the end.
# Usage: tools/opentofu-lifecycle.sh TOFU   (make test-opentofu builds TOFU and the provider)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tofu=$(realpath "$1")
lab=$PWD/bin/gpucluster-lab
export GPUCLUSTER_LAB_INSTANCE=${GPUCLUSTER_LAB_INSTANCE:-tofu}
netns=gpucluster-lab-$GPUCLUSTER_LAB_INSTANCE
work=$(mktemp -d)
trap 'rc=$?; "$lab" down || rc=1; rm -rf "$work"; exit $rc' EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# Plain text: the output is a log.
tf() {
	ip netns exec "$netns" env TF_CLI_CONFIG_FILE="$work/tofurc" CHECKPOINT_DISABLE=1 \
		TF_CLI_ARGS_plan=-no-color TF_CLI_ARGS_apply=-no-color TF_CLI_ARGS_destroy=-no-color \
		"$tofu" -chdir="$work" "$@"
}
tfvars=(-input=false -var-file=lab.tfvars.json)

# plan_status prints a plan's -detailed-exitcode (0 no changes, 2 changes) and leaves the
# plan in $work/plan.out; a failed plan ends the run.
plan_status() {
	local rc=0
	tf plan -detailed-exitcode "${tfvars[@]}" > "$work/plan.out" 2>&1 || rc=$?
	[ "$rc" -ne 1 ] || { cat "$work/plan.out"; fail "plan failed"; }
	echo "$rc"
}

# summary prints the plan's one-line outcome.
summary() { grep -E "^(No changes|Plan:)" "$work/plan.out"; }

# accounts HOST prints the lab users that HOST's passwd database holds.
accounts() { "$lab" exec "$1" -- getent passwd alice bob 2>/dev/null | cut -d: -f1,3 | tr '\n' ' ' || true; }

"$lab" down
"$lab" up
cp examples/cluster/*.tf "$work/"
# The lab's settings for the example, as `make demo` gives them; OpenTofu reads *.auto.tfvars.
cp examples/lab-cluster/lab.tfvars "$work/lab.auto.tfvars"
# OpenTofu reads the short source gpucluster/gpucluster as registry.opentofu.org's.
cat > "$work/tofurc" <<RC
provider_installation {
  dev_overrides {
    "registry.opentofu.org/gpucluster/gpucluster" = "$PWD/bin"
  }
  direct {}
}
RC
(umask 077 && "$lab" tfvars > "$work/lab.tfvars.json")
tf version

step "apply"
tf apply -auto-approve "${tfvars[@]}"
for host in $("$lab" hosts); do
	got=$(accounts "$host")
	[ "$got" = "alice:1001 bob:1002 " ] || fail "$host has accounts '$got' after apply, want alice:1001 bob:1002"
	echo "$host: $got"
done

step "no-op plan"
[ "$(plan_status)" = 0 ] || { cat "$work/plan.out"; fail "the plan after apply is not empty"; }
summary

step "import block"
# The hand-over of docs/guides/ownership.md: out of state, the record removed, imported again.
tf state rm gpucluster_slurm_partition.gpu
"$lab" exec login01 -- rm /var/lib/gpucluster/owners/slurm_partition/gpu
cat > "$work/import.tf" <<'IMPORT'
import {
  to = gpucluster_slurm_partition.gpu
  id = "gpu@login01"
}
IMPORT
plan_status > /dev/null
summary
grep -q "^Plan: 1 to import, 0 to add, 0 to change, 0 to destroy" "$work/plan.out" || { cat "$work/plan.out"; fail "the import block does not plan a bare import"; }
tf apply -auto-approve "${tfvars[@]}"
rm "$work/import.tf"
[ "$(plan_status)" = 0 ] || { cat "$work/plan.out"; fail "the plan after the import is not empty"; }
summary

step "destroy"
tf destroy -auto-approve "${tfvars[@]}"
for host in $("$lab" hosts); do
	got=$(accounts "$host")
	[ -z "$got" ] || fail "$host still has accounts '$got' after destroy"
done
echo "OpenTofu lifecycle passed: $(tf version | head -n 1)"
