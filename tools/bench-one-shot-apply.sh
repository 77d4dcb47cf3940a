#!/usr/bin/env bash
# The one-shot apply benchmark of issue #17: for each GPU server count given (default 8 and
# 32), start a fresh lab of that size, apply examples/lab-cluster to its bare hosts in one run,
# and report the exit status, the wall time, how often slurmctld started on login01 and slurmd
# on each GPU server during the apply (systemd's "Started" lines in each host's own journal),
# and the time of the following no-op plan. Bars: the apply succeeds; slurmctld starts at most
# twice; each slurmd at most twice; the plan after it is empty.
#
#   tools/bench-one-shot-apply.sh [N...]
#
# Replaces the running lab of GPUCLUSTER_LAB_INSTANCE, and takes it down at the end unless
# KEEP_LAB=1. Needs root, the lab image (make lab-image) and Terraform on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(8 32)
lab=$PWD/bin/gpucluster-lab
netns=gpucluster-lab${GPUCLUSTER_LAB_INSTANCE:+-$GPUCLUSTER_LAB_INSTANCE}
work=$(mktemp -d)
trap 'rm -rf "$work"; [ "${KEEP_LAB:-}" = 1 ] || "$lab" down >/dev/null 2>&1 || true' EXIT

go build -o bin/terraform-provider-gpucluster .
go build -o "$lab" ./cmd/gpucluster-lab
printf 'provider_installation {\n  dev_overrides {\n    "registry.terraform.io/gpucluster/gpucluster" = "%s"\n  }\n  direct {}\n}\n' \
	"$PWD/bin" >"$work/terraformrc"

tf() {
	ip netns exec "$netns" env TF_CLI_CONFIG_FILE="$work/terraformrc" CHECKPOINT_DISABLE=1 \
		terraform -chdir="$work/config" "$@" -input=false -var-file="$work/lab.tfvars.json"
}

# since prints the journal cursor of a host now; started counts systemd's "Started UNIT" lines
# in that host's journal after a cursor.
since() { "$lab" exec "$1" -- journalctl -q -n 0 --show-cursor | sed -n 's/^-- cursor: //p'; }
started() { "$lab" exec "$1" -- sh -c "journalctl -q -o cat -u $2 --after-cursor='$3' | grep -c '^Started $2' || true"; }

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

verdict() { if [ "$1" -eq 1 ]; then echo ok; else echo FAIL; fi; }

for n in "${counts[@]}"; do
	echo "== $n GPU servers"
	# A container that exits during start on a loaded machine is the lab's, not the
	# provider's: start the lab once more before giving up.
	"$lab" down >/dev/null 2>&1 || true
	if ! "$lab" up --gpus "$n" >"$work/up.log" 2>&1; then
		"$lab" down >/dev/null 2>&1 || true
		"$lab" up --gpus "$n" >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
	fi
	rm -rf "$work/config" && cp -r examples/lab-cluster "$work/config"
	rm -rf "$work/config"/.terraform* "$work/config"/terraform.tfstate*
	(umask 077 && "$lab" tfvars >"$work/lab.tfvars.json")

	declare -A cursor=()
	hosts=$("$lab" hosts)
	for h in $hosts; do cursor[$h]=$(since "$h"); done

	t0=$(date +%s%N)
	status=0
	tf apply -auto-approve >"$work/apply-$n.log" 2>&1 || status=$?
	t1=$(date +%s%N)

	ctld=$(started login01 slurmctld "${cursor[login01]}")
	max_slurmd=0
	declare -A per_count=()
	for h in $hosts; do
		[ "$h" = login01 ] && continue
		c=$(started "$h" slurmd "${cursor[$h]}")
		per_count[$c]=$((${per_count[$c]:-0} + 1))
		[ "$c" -gt "$max_slurmd" ] && max_slurmd=$c
	done
	slurmd_summary=$(for c in "${!per_count[@]}"; do printf '%s server(s) %s time(s); ' "${per_count[$c]}" "$c"; done)

	p0=$(date +%s%N)
	plan_status=0
	tf plan -detailed-exitcode >"$work/plan-$n.log" 2>&1 || plan_status=$?
	p1=$(date +%s%N)

	printf '  %-34s %-24s bar: %-16s %s\n' \
		"apply exit status" "$status" "0" "$(verdict $((status == 0)))" \
		"apply wall time" "$(seconds "$t0" "$t1") s" "-" "" \
		"slurmctld starts during the apply" "$ctld" "at most 2" "$(verdict $((ctld <= 2)))" \
		"slurmd starts per GPU server" "max $max_slurmd" "at most 2 each" "$(verdict $((max_slurmd <= 2)))" \
		"no-op plan after it" "$(seconds "$p0" "$p1") s, exit $plan_status" "exit 0 (empty)" "$(verdict $((plan_status == 0)))"
	echo "  slurmd starts: ${slurmd_summary% }"
	if [ "$status" -ne 0 ]; then
		echo "  the apply failed; its last lines:"
		tail -n 30 "$work/apply-$n.log" | sed 's/^/    /'
	fi
	unset cursor per_count
done
