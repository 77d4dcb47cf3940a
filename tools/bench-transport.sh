#!/usr/bin/env bash
# The transport and scale benchmark: the figures of issues #9 and #17, each printed next to its
# bar.
# Counts come from the hosts' own journals (sshd, sudo, PAM), never from the provider's logs;
# times are wall-clock medians of whole `terraform` runs, with Terraform's own no-op plan of as
# many terraform_data resources timed in the same loop as the reference.
#
# usage: tools/bench-transport.sh [options]
#   --runs N          timed no-op plans per lab (default 5; medians want at least 5)
#   --users N         users on every node for the parallel-load part (default 20)
#   --user-runs N     plans and applies in a row with those users (default 30)
#   --scale LIST      GPU servers per lab for the scaling part (default 2,8,32); "none" skips it
#   --parts LIST      any of noop,wrong-password,users,scale (default: all)
#   --replace-lab     take over (and replace) a lab that is already up
#   --keep-lab        leave the last lab up at the end (default: take it down)
#
# It uses the lab that GPUCLUSTER_LAB_INSTANCE selects, as the make targets do, and replaces
# it with fresh labs as it goes (a first apply is only a first apply on bare hosts). It refuses
# to touch a lab that is already up unless --replace-lab is given. The example is applied
# from a copy in a temporary directory, so examples/cluster and `make demo` state are never
# touched. Exit status: 0 when every measured figure meets its bar, 1 when one misses it or
# could not be measured, 2 on bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

## Settings ---------------------------------------------------------------------------------

runs=5
user_count=20
user_runs=30
scale=2,8,32
parts=noop,wrong-password,users,scale
replace_lab=0
keep_lab=0

lab=$root/bin/gpucluster-lab
example=$root/examples/cluster
lab_vars=$root/examples/lab-cluster/lab.tfvars
# The same instance rules as the GNUmakefile: GPUCLUSTER_LAB_INSTANCE=name selects netns
# gpucluster-lab-name and descriptor /run/gpucluster-lab-name/lab.json.
suffix=${GPUCLUSTER_LAB_INSTANCE:+-$GPUCLUSTER_LAB_INSTANCE}
netns=gpucluster-lab$suffix
descriptor=${GPUCLUSTER_LAB:-/run/gpucluster-lab$suffix/lab.json}
admin=admin # the example's provider user; only its sessions are counted
cores=$(nproc)
wrong_password=not-the-lab-password
plan_timeout=600  # seconds; a no-op plan that takes this long has failed anyway
apply_timeout=3600 # a first apply to 32 bare GPU servers takes minutes

usage() { sed -n '/^# usage:/,/^# It uses/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--runs) runs=${2:?}; shift ;;
		--users) user_count=${2:?}; shift ;;
		--user-runs) user_runs=${2:?}; shift ;;
		--scale) scale=${2:?}; shift ;;
		--parts) parts=${2:?}; shift ;;
		--replace-lab) replace_lab=1 ;;
		--keep-lab) keep_lab=1 ;;
		-h | --help) usage ;;
		*) echo "unknown option $1" >&2; usage ;;
		esac
		shift
	done
	[[ $runs =~ ^[1-9][0-9]*$ && $user_count =~ ^[0-9]+$ && $user_runs =~ ^[1-9][0-9]*$ ]] || usage
	[ "$user_count" -ge 2 ] || { echo "--users must be at least 2 (the example's alice and bob)" >&2; exit 2; }
	[ "$scale" = none ] || [[ $scale =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || usage
	local p
	for p in ${parts//,/ }; do
		case $p in noop | wrong-password | users | scale) ;; *) echo "unknown part $p" >&2; usage ;; esac
	done
}

wants() { [[ ,$parts, == *,$1,* ]]; }

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

## Figures: every measurement is recorded under a figure id, judged and printed at the end ----

declare -A samples=()     # figure id -> space-separated values (counts, or seconds)
declare -A problems=()    # figure id -> why it could not be measured
declare -a figure_rows=() # "id|label|kind|bar" in print order, kind is count or time
declare -a notes=()       # what went wrong in a counted run (the 20-user runs), for the report

figure() { figure_rows+=("$1|$2|$3|$4"); }
record() { samples[$1]="${samples[$1]:-}${samples[$1]:+ }$2"; }
problem() { problems[$1]="${problems[$1]:-}${problems[$1]:+; }$2"; log "problem: $2"; }

# stats VALUES...: "n min median max", the median of an even count being the mean of the two
# middle values.
stats() {
	[ $# -gt 0 ] || { echo 0; return; }
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print 0; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print NR, v[1], m, v[NR] }'
}

## The lab ----------------------------------------------------------------------------------

lab_owned=0 # set once this script has started a lab; only then may it take one down

# A lab that is up may be someone's demo or test run: it is replaced only when asked.
refuse_running_lab() {
	if [ -e "$descriptor" ] && [ "$replace_lab" -eq 0 ]; then
		echo "a lab is up at $descriptor: pass --replace-lab to let the benchmark replace it," >&2
		echo "or select another one with GPUCLUSTER_LAB_INSTANCE=name" >&2
		exit 1
	fi
}

lab_fresh() {
	local gpus=$1
	lab_owned=1
	if [ -e "$descriptor" ]; then "$lab" down >/dev/null; fi
	log "starting a fresh lab with $gpus GPU server(s) (netns $netns)"
	# A container that fails to boot on a loaded machine says nothing about the provider:
	# one more try (up has removed what it started), then give up.
	if ! "$lab" up --gpus "$gpus" >/dev/null; then
		log "the lab did not start; trying once more"
		"$lab" up --gpus "$gpus" >/dev/null
	fi
}

# work_dir GPUS: a copy of the example with its own CLI config, lab variables and state.
work_dir() {
	local dir=$tmp/lab-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$example"/*.tf "$dir"/
	# The lab's own settings for the example, as `make demo` gives them; Terraform reads *.auto.tfvars.
	cp "$lab_vars" "$dir/lab.auto.tfvars"
	# The provider from bin/, as `make demo` does it: dev_overrides, no terraform init.
	printf '%s\n' 'provider_installation {' '  dev_overrides {' \
		"    \"registry.terraform.io/gpucluster/gpucluster\" = \"$root/bin\"" \
		'  }' '  direct {}' '}' >"$tmp/terraformrc"
	"$lab" tfvars >"$dir/lab.tfvars.json"
	echo "$dir"
}

## Counting on the hosts --------------------------------------------------------------------

# Each run is bracketed by a journal cursor per host; what a host logged after the cursor is
# that run's. journalctl --sync first, so lines sent just before the run ended are in.
declare -A cursor

mark_hosts() {
	local host
	for host in "${hosts[@]}"; do
		cursor[$host]=$("$lab" exec "$host" -- journalctl -n 0 --show-cursor -o cat | sed -n 's/^-- cursor: //p')
		[ -n "${cursor[$host]}" ] || { echo "no journal cursor on $host" >&2; exit 1; }
	done
}

# CPU seconds of a run, to tell how far a time is from what this machine can do: the lab's
# hosts share its cores with Terraform and the provider, so a run cannot be faster than all
# the CPU it costs divided by the cores. Each host's use comes from its container's cgroup
# (cpu.stat's usage_usec, or cgroup v1's cpuacct.usage), Terraform's and the provider's from
# the shell's own children times (the provider is Terraform's child).
declare -A host_cgroup

# find_cgroups: each host's CPU counter, from the lab's descriptor.
find_cgroups() {
	local host dir
	host_cgroup=()
	for host in "${hosts[@]}"; do
		for dir in $(grep -o '"/sys/fs/cgroup/[^"]*lab-[^"]*-'"$host"'"' "$descriptor" | tr -d '"'); do
			if [ -r "$dir/cpu.stat" ] && grep -q '^usage_usec ' "$dir/cpu.stat"; then
				host_cgroup[$host]=$dir/cpu.stat
				break
			elif [ -r "$dir/cpuacct.usage" ]; then
				host_cgroup[$host]=$dir/cpuacct.usage
			fi
		done
		[ -n "${host_cgroup[$host]:-}" ] || { echo "no CPU counter for $host in $descriptor" >&2; exit 1; }
	done
}

# hosts_cpu: microseconds of CPU all hosts have used so far.
hosts_cpu() {
	local host f total=0 v
	for host in "${hosts[@]}"; do
		f=${host_cgroup[$host]}
		case $f in
		*/cpu.stat) v=$(awk '$1 == "usage_usec" { print $2 }' "$f") ;;
		*) v=$(($(cat "$f") / 1000)) ;;
		esac
		total=$((total + v))
	done
	echo "$total"
}

# children_cpu FILE: microseconds of user and system CPU in FILE, the output of `times`
# (which must run in the main shell itself: a subshell's children are its own).
children_cpu() {
	tail -n 1 "$1" | awk '{ split($0, f, /[ ms]+/); printf "%d", (f[1] * 60 + f[2] + f[3] * 60 + f[4]) * 1e6 }'
}

# host_counts HOST: "sudo ssh pamfail nosess anomalies ctld slurmd chkpwd noident authfail" for
# what HOST logged since its cursor; the last three are pamfail's parts, for the log.
#   sudo     sudo-rs's "sudo[PID]: pam_unix(sudo:session): session opened for user root(uid=0)
#            by admin(uid=1000)", one per sudo invocation. The provider runs `sudo -k`, so every
#            invocation authenticates through PAM; the service name (sudo:session) leaves out
#            other root sessions (su, systemd-user, cron).
#   ssh      sshd's "Accepted publickey for admin from ...", one per SSH connection.
#   pamfail  failed PAM authentications of admin: unix_chkpwd's "password check failed for
#            user (admin)", one per password checked and refused, plus pam_unix's "auth could
#            not identify password for [admin]", an attempt that got no password at all (stdin
#            closed). pam_unix's own "authentication failure" line comes only for the first
#            failure of a PAM handle (later ones are summed at pam_end, which a sudo cut off
#            never reaches), so it is the floor, used only if it is higher.
#   nosess   sshd's "error: no more sessions" (MaxSessions reached: the refused opens of #9).
#   anomalies  what would make the counts inexact: journald's "Suppressed N messages" (rate
#            limit), and sudo's "admin : PWD=... ; USER=root ; COMMAND=..." lines that do not
#            pair up with the session lines (one of each per sudo invocation).
#   ctld, slurmd  systemd's "Started slurmctld.service" and "Started slurmd.service", one per
#            start of the daemon (issue #17: one Slurm activation per apply).
host_counts() {
	"$lab" exec "$1" -- sh -c 'journalctl --sync; journalctl --no-pager -o short --after-cursor="$1"' \
		- "${cursor[$1]}" | awk -v user="$admin" '
		function has(re) { return $0 ~ re }
		has(" sudo\\[[0-9]+\\]: pam_unix\\(sudo:session\\): session opened for user root\\(uid=0\\) by " user "\\(") { sudo++ }
		has(" sshd(-session)?\\[[0-9]+\\]: Accepted publickey for " user " from ") { ssh++ }
		has(" unix_chkpwd\\[[0-9]+\\]: password check failed for user \\(" user "\\)") { chkpwd++ }
		has(" sudo\\[[0-9]+\\]: pam_unix\\(sudo:auth\\): auth could not identify password for \\[" user "\\]") { noident++ }
		has(" sudo\\[[0-9]+\\]: pam_unix\\(sudo:auth\\): authentication failure;.* user=" user "$") { authfail++ }
		has(" sudo\\[[0-9]+\\]: pam_unix\\(sudo:auth\\): [0-9]+ more authentication failures?;") {
			sub(/.*pam_unix\(sudo:auth\): /, ""); authfail += $1 }
		has(" sshd(-session)?\\[[0-9]+\\]: error: no more sessions") { nosess++ }
		has(" systemd-journald\\[[0-9]+\\]: Suppressed [0-9]+ messages") { suppressed++ }
		has(" systemd\\[1\\]: Started slurmctld\\.service") { ctld++ }
		has(" systemd\\[1\\]: Started slurmd\\.service") { slurmd++ }
		has(" sudo\\[[0-9]+\\]: " user " : .*; USER=root ; COMMAND=") { commands++ }
		END { checked = chkpwd > authfail ? chkpwd : authfail
			unpaired = commands > sudo ? commands - sudo : sudo - commands
			print sudo + 0, ssh + 0, checked + noident, nosess + 0, suppressed + unpaired,
				ctld + 0, slurmd + 0, chkpwd + 0, noident + 0, authfail + 0 }'
}

## Running Terraform ------------------------------------------------------------------------

# tf DIR ARGS...: terraform inside the lab's netns with the benchmark's CLI config.
tf() {
	local dir=$1
	shift
	ip netns exec "$netns" env TF_CLI_CONFIG_FILE="$tmp/terraformrc" CHECKPOINT_DISABLE=1 \
		TF_IN_AUTOMATION=1 terraform -chdir="$dir" "$@"
}

# run LOG TIMEOUT DIR ARGS...: one timed terraform run, output to LOG. Sets rc and elapsed
# (seconds). The hosts are marked before and counted after, outside the timed span; the counts
# land in the per-host arrays run_sudo, run_ssh, run_pamfail, run_nosess, run_ctld, run_slurmd
# (and pamfail's parts in run_pamparts).
declare -A run_sudo run_ssh run_pamfail run_nosess run_ctld run_slurmd run_pamparts
run() {
	local out=$1 limit=$2 dir=$3 t0 t1 host
	shift 3
	mark_hosts
	local hosts0
	hosts0=$(hosts_cpu)
	times >"$tmp/times-before"
	t0=$EPOCHREALTIME
	rc=0
	# --foreground: Ctrl-C reaches terraform (and through it the provider) as usual.
	timeout --foreground -k 30 "$limit" \
		ip netns exec "$netns" env TF_CLI_CONFIG_FILE="$tmp/terraformrc" CHECKPOINT_DISABLE=1 \
		TF_IN_AUTOMATION=1 terraform -chdir="$dir" "$@" -input=false -no-color >"$out" 2>&1 || rc=$?
	t1=$EPOCHREALTIME
	times >"$tmp/times-after"
	elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	cpu_hosts=$(awk -v a="$hosts0" -v b="$(hosts_cpu)" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
	cpu_terraform=$(awk -v a="$(children_cpu "$tmp/times-before")" -v b="$(children_cpu "$tmp/times-after")" \
		'BEGIN { printf "%.3f", (b - a) / 1e6 }')
	local anomalies chkpwd noident authfail
	for host in "${hosts[@]}"; do
		read -r "run_sudo[$host]" "run_ssh[$host]" "run_pamfail[$host]" "run_nosess[$host]" \
			anomalies "run_ctld[$host]" "run_slurmd[$host]" chkpwd noident authfail < <(host_counts "$host")
		# A journal that could not be read must stop the benchmark, not count as zero.
		[[ $authfail =~ ^[0-9]+$ ]] || { echo "could not read the journal of $host" >&2; exit 1; }
		record journal "$anomalies"
		run_pamparts[$host]="(chkpwd $chkpwd, no password $noident, pam_unix $authfail)"
	done
}

# why LOG: why the last run failed, for the report: a timeout, or the first diagnostic's
# summary with its "Original Error" paragraph, and how many errors there were.
why() {
	if [ "$rc" -eq 124 ]; then echo "timed out after ${elapsed%.*}s"; return; fi
	awk '/^(│ )?Error: / { errors++; if (!s) s = $0; next }
		errors == 1 && !o && /Original Error:/ { o = $0; grab = 1; next }
		grab && /^[[:space:]]*$/ { grab = 0 }
		grab { o = o " " $0 }
		END { print (errors > 1 ? errors " errors, the first: " : "") (s ? s : "no error message") (o ? " / " o : "") }' "$1" |
		tr -s ' ' | cut -c1-400
}

# per_host NAME: "host=value ..." of one of the run_* arrays, for the progress log.
per_host() {
	local -n counts=$1
	local host line=
	for host in "${hosts[@]}"; do line+="$host=${counts[$host]} "; done
	echo "${line% }"
}

# record_hosts FIGURE ARRAY: one sample per host.
record_hosts() {
	local -n counts=$2
	local host
	for host in "${hosts[@]}"; do record "$1" "${counts[$host]}"; done
}

# noop_run KIND DIR LOG: a plan or apply that must change nothing; its counts are recorded
# under the no-op figures. Returns non-zero (and says why) when it failed or was not a no-op.
noop_run() {
	local kind=$1 dir=$2 out=$3
	if [ "$kind" = plan ]; then
		run "$out" "$plan_timeout" "$dir" plan -detailed-exitcode -var-file=lab.tfvars.json
	else
		run "$out" "$plan_timeout" "$dir" apply -auto-approve -var-file=lab.tfvars.json
	fi
	record_hosts "sudo_$kind" run_sudo
	record_hosts ssh run_ssh
	record_hosts nosess run_nosess
	log "no-op $kind: ${elapsed}s, rc $rc; sudo $(per_host run_sudo); ssh $(per_host run_ssh)"
	case $kind:$rc in
	plan:0) return 0 ;;
	apply:0) grep -q 'Resources: 0 added, 0 changed, 0 destroyed' "$out" && return 0
		failure="the apply changed something: $(grep -m1 'Resources:' "$out")" ;;
	plan:2) failure="the plan is not a no-op: $(grep -m1 'Plan:' "$out" || echo changes)" ;;
	*) failure="terraform $kind failed (rc $rc): $(why "$out")" ;;
	esac
	log "$failure (log: $out)"
	return 1
}

# first_apply FIGURE DIR: the first apply on bare hosts, timed; the cluster counts as verified
# when the example's cluster_check output says ok and login01's own sinfo lists every GPU
# server idle. Returns non-zero when either fails.
first_apply() {
	local fig=$1 dir=$2 out=$2/first-apply.log gpus idle
	log "first apply of examples/cluster to ${#hosts[@]} bare hosts"
	run "$out" "$apply_timeout" "$dir" apply -auto-approve -var-file=lab.tfvars.json
	# Terraform starts the provider twice in an apply that changes something (plan and apply).
	record_hosts sudo_changing run_sudo
	record_hosts ssh_changing run_ssh
	record_hosts nosess run_nosess
	record_daemon_starts
	log "first apply: ${elapsed}s, rc $rc; sudo $(per_host run_sudo); ssh $(per_host run_ssh)"
	log "  starts: slurmctld $(per_host run_ctld); slurmd $(per_host run_slurmd)"
	if [ "$rc" -ne 0 ]; then
		problem "$fig" "first apply to $((${#hosts[@]} - 1)) GPU server(s) failed after ${elapsed}s: $(why "$out") (log: $out)"
		return 1
	fi
	if ! tf "$dir" output -json cluster_check | tr -d ' \n' | grep -q '"ok":true'; then
		problem "$fig" "the apply succeeded but cluster_check is not ok (log: $out)"
		return 1
	fi
	gpus=$((${#hosts[@]} - 1))
	idle=$("$lab" exec login01 -- sinfo -h -N -o '%N %T' | awk '$2 == "idle"' | sort -u | wc -l)
	if [ "$idle" -ne "$gpus" ]; then
		problem "$fig" "login01's sinfo lists $idle of $gpus GPU servers idle after the first apply"
		return 1
	fi
	record "$fig" "$elapsed"
}

# record_daemon_starts: issue #17's counts of a first apply, slurmctld's starts on login01 and
# slurmd's on each GPU server (the package's own first start plus at most one activation).
record_daemon_starts() {
	local host
	for host in "${hosts[@]}"; do
		if [ "$host" = login01 ]; then
			record ctld_starts "${run_ctld[$host]}"
		else
			record slurmd_starts "${run_slurmd[$host]}"
		fi
	done
}

# timed_plans FIGURE DIR [REFDIR]: --runs no-op plans, each timed; with REFDIR, a plan of the
# reference configuration after each one, so both see the same machine load.
timed_plans() {
	local fig=$1 dir=$2 ref=${3:-} i
	for ((i = 1; i <= runs; i++)); do
		if noop_run plan "$dir" "$dir/plan-$i.log"; then
			record "$fig" "$elapsed"
			record "${fig}_cpu_hosts" "$cpu_hosts"
			record "${fig}_cpu_terraform" "$cpu_terraform"
			record "${fig}_floor" "$(awk -v h="$cpu_hosts" -v t="$cpu_terraform" -v c="$cores" 'BEGIN { printf "%.3f", (h + t) / c }')"
		else
			problem "$fig" "no-op plan $i: $failure"
		fi
		if [ -n "$ref" ]; then
			run "$ref/plan-$i.log" "$plan_timeout" "$ref" plan -detailed-exitcode
			if [ "$rc" -eq 0 ]; then
				record reference "$elapsed"
			else
				problem reference "reference plan $i: rc $rc: $(why "$ref/plan-$i.log")"
			fi
		fi
	done
}

# cpu_figures FIG LABEL: the rows that tell where FIG's plans spent their CPU.
cpu_figures() {
	figure "${1}_cpu_hosts" "  CPU of the lab's hosts during the $2" time "-"
	figure "${1}_cpu_terraform" "  CPU of Terraform and the provider in the $2" time "-"
	figure "${1}_floor" "  the floor: both CPU figures over this machine's $cores cores" time "-"
}

# reference_dir N: N terraform_data resources, applied once, so their plan refreshes N
# resources from state as the example's does.
reference_dir() {
	local dir=$tmp/reference
	mkdir -p "$dir"
	printf 'resource "terraform_data" "r" {\n  count = %d\n  input = count.index\n}\n' "$1" >"$dir/main.tf"
	tf "$dir" apply -auto-approve -input=false -no-color >"$dir/apply.log" 2>&1 ||
		{ echo "the reference configuration did not apply: see $dir/apply.log" >&2; exit 1; }
	echo "$dir"
}

## The parts --------------------------------------------------------------------------------

base_dir=        # the 3-host lab's working directory, once its first apply succeeded
reference_count= # resource instances in the example's state, as many terraform_data

# The 3-host lab (login01, gpu01, gpu02): first apply on bare hosts, then the no-op figures.
part_base() {
	lab_fresh 2
	mapfile -t hosts < <("$lab" hosts)
	find_cgroups
	local dir
	dir=$(work_dir 2)
	first_apply first_apply "$dir" || return 0
	base_dir=$dir
	wants noop || return 0

	local n ref i
	n=$(tf "$dir" state list | wc -l)
	log "$n resource instances in the example's state; the reference plans as many terraform_data"
	ref=$(reference_dir "$n")
	reference_count=$n
	timed_plans plan_3 "$dir" "$ref"
	for ((i = 1; i <= 2; i++)); do
		noop_run apply "$dir" "$dir/noop-apply-$i.log" || problem sudo_apply "no-op apply $i: $failure"
	done
}

# A plan with a wrong sudo password: how many failed PAM authentications each host logs.
part_wrong_password() {
	log "no-op plan with a wrong sudo password"
	run "$base_dir/wrong-password.log" "$plan_timeout" "$base_dir" plan \
		-var-file=lab.tfvars.json -var "sudo_password=$wrong_password"
	record_hosts pamfail run_pamfail
	record_hosts ssh run_ssh
	log "wrong password: ${elapsed}s, rc $rc; ssh $(per_host run_ssh)"
	local host
	for host in "${hosts[@]}"; do
		log "  $host: ${run_pamfail[$host]} failed PAM authentications ${run_pamparts[$host]}"
	done
	# The plan must fail, and for the password: anything else would make the count meaningless.
	if [ "$rc" -ne 1 ] || ! grep -qi 'password' "$base_dir/wrong-password.log"; then
		problem pamfail "the wrong-password plan did not fail on the password (rc $rc): $(why "$base_dir/wrong-password.log")"
	fi
}

# --users users on every node (the example's alice and bob plus bench03...), applied and then
# planned and applied --user-runs times in all at default parallelism. The cluster_users default
# is replaced through a Terraform override file in the copy, never in the example.
part_users() {
	local dir=$base_dir i kind failures=0 host present names=(alice bob)
	for ((i = 3; i <= user_count; i++)); do names+=("$(printf 'bench%02d' "$i")"); done
	{
		echo 'variable "cluster_users" {'
		echo '  default = {'
		for i in "${!names[@]}"; do echo "    ${names[$i]} = $((1001 + i))"; done
		echo '  }'
		echo '}'
	} >"$dir/bench_users_override.tf"

	log "$user_count users on every node: $user_runs plans and applies in a row"
	# Run 1 applies the new users (Terraform starts the provider twice); every later run,
	# alternately a plan and an apply, must be a no-op.
	run "$dir/users-1.log" "$apply_timeout" "$dir" apply -auto-approve -var-file=lab.tfvars.json
	record_hosts sudo_changing run_sudo
	record_hosts ssh_changing run_ssh
	record_hosts nosess run_nosess
	log "users run 1 (apply, adds users): ${elapsed}s, rc $rc"
	if [ "$rc" -ne 0 ]; then
		failures=$((failures + 1))
		notes+=("users run 1 (apply): $(why "$dir/users-1.log") (log: $dir/users-1.log)")
	fi
	for ((i = 2; i <= user_runs; i++)); do
		kind=$([ $((i % 2)) -eq 0 ] && echo plan || echo apply)
		if noop_run "$kind" "$dir" "$dir/users-$i.log"; then
			if [ "$kind" = plan ]; then record plan_users "$elapsed"; fi
		else
			failures=$((failures + 1))
			notes+=("users run $i ($kind): $failure (log: $dir/users-$i.log)")
		fi
	done
	record users_failures "$failures"

	# The users must be on every node, as the hosts themselves see them.
	for host in "${hosts[@]}"; do
		present=$("$lab" exec "$host" -- getent passwd "${names[@]}" | wc -l || true)
		record users_present "$present"
		log "$host: $present of $user_count users in getent passwd"
	done
}

# The scaling part: a fresh lab per size, its first apply, then timed no-op plans. The 3-host
# lab of part_base is the 2-GPU size when it ran.
part_scale() {
	local gpus dir bar
	for gpus in ${scale//,/ }; do
		bar=$([ "$gpus" -eq 32 ] && echo '<= 4 s' || echo '-')
		if [ "$gpus" -eq 2 ] && [ -n "${samples[plan_3]:-}" ]; then
			figure plan_gpus_2 "no-op plan, 2 GPU servers (the 3-host figure)" time "$bar"
			samples[plan_gpus_2]=${samples[plan_3]}
			cpu_figures plan_gpus_2 "plan of 2"
			local part
			for part in cpu_hosts cpu_terraform floor; do samples[plan_gpus_2_$part]=${samples[plan_3_$part]:-}; done
			continue
		fi
		figure "first_apply_gpus_$gpus" "first apply, $gpus GPU server(s)" time "-"
		figure "plan_gpus_$gpus" "no-op plan, $gpus GPU server(s)" time "$bar"
		cpu_figures "plan_gpus_$gpus" "plan of $gpus"
		lab_fresh "$gpus"
		mapfile -t hosts < <("$lab" hosts)
		find_cgroups
		dir=$(work_dir "$gpus")
		# An apply that fails at this size (issue #17 at 32) is reported; the size's plan
		# figure is then not measured, which fails the benchmark.
		if first_apply "first_apply_gpus_$gpus" "$dir"; then
			timed_plans "plan_gpus_$gpus" "$dir"
		else
			problem "plan_gpus_$gpus" "no plan timed: the first apply to $gpus GPU servers failed"
		fi
	done
}

## The report -------------------------------------------------------------------------------

failed=0

# judge ID KIND BAR: prints "measured|verdict" for one figure (it runs in a subshell: the
# caller counts the misses).
judge() {
	local id=$1 kind=$2 bar=$3 n min med max measured verdict=ok
	# shellcheck disable=SC2086 # the samples are a space-separated list
	read -r n min med max < <(stats ${samples[$id]:-})
	if [ -n "${problems[$id]:-}" ] && [ "$n" -eq 0 ]; then
		echo "not measured|FAILED"
		return
	fi
	[ "$n" -gt 0 ] || { echo "not run|skipped"; return; }
	case $kind in
	count) measured=$([ "$min" = "$max" ] && echo "$max" || echo "$min..$max") ;;
	time) if [ "$n" -eq 1 ]; then measured=$(printf '%.2f s' "$med")
		else measured=$(printf '%.2f s (%.2f-%.2f, n=%d)' "$med" "$min" "$max" "$n"); fi ;;
	esac
	case $bar in
	'= '*) [ "$min" = "${bar#= }" ] && [ "$max" = "${bar#= }" ] || verdict=MISSED ;;
	'<= '*' s') awk -v m="$med" -v b="${bar#<= }" 'BEGIN { exit !(m <= b + 0) }' || verdict=MISSED ;;
	'<= '*) [ "$max" -le "${bar#<= }" ] || verdict=MISSED ;;
	-) verdict= ;;
	esac
	if [ -n "${problems[$id]:-}" ]; then verdict=FAILED; fi
	echo "$measured|$verdict"
}

# Cost per added GPU server between consecutive sizes: constant when no step costs more than
# 1.5 times the first step per server, plus 20 ms of slack for noise on tiny increments. It
# takes three sizes (two steps) to judge; with two, the one step is printed unjudged.
scaling_row() {
	local sizes prev= prev_med= first= med gpus inc text= verdict=ok steps=0
	read -ra sizes <<<"$(tr ',' '\n' <<<"$scale" | sort -n | tr '\n' ' ')"
	[ "${#sizes[@]}" -ge 2 ] || return 0
	for gpus in "${sizes[@]}"; do
		# shellcheck disable=SC2086
		med=$(stats ${samples[plan_gpus_$gpus]:-} | awk '{ print $3 }')
		if [ -z "$med" ] || [ -n "${problems[plan_gpus_$gpus]:-}" ]; then
			text+="${text:+, }${prev:+$prev->}$gpus: not measured"
			verdict=FAILED
			prev=
			continue
		fi
		if [ -n "$prev" ]; then
			inc=$(awk -v a="$prev_med" -v b="$med" -v n=$((gpus - prev)) 'BEGIN { printf "%.0f", (b - a) / n * 1000 }')
			text+="${text:+, }$prev->$gpus: $inc ms"
			steps=$((steps + 1))
			if [ -z "$first" ]; then first=$inc; elif ! awk -v f="$first" -v i="$inc" 'BEGIN { exit !(i <= 1.5 * f + 20) }'; then verdict=MISSED; fi
		fi
		prev=$gpus prev_med=$med
	done
	if [ "$verdict" = ok ] && [ "$steps" -lt 2 ]; then verdict="- (needs 3 sizes)"; fi
	case $verdict in MISSED | FAILED) failed=1 ;; esac
	printf '%-58s %-30s %-22s %s\n' "cost per added GPU server (no-op plan)" "$text" "constant (<=1.5x +20ms)" "$verdict"
}

report() {
	local row id label kind bar result skipped=()
	echo
	printf '%-58s %-30s %-22s %s\n' figure measured bar result
	for row in "${figure_rows[@]}"; do
		IFS='|' read -r id label kind bar <<<"$row"
		# A figure of a part left out by --parts has neither samples nor problems (a wanted
		# one that could not be measured always has a problem).
		if [ -z "${samples[$id]:-}" ] && [ -z "${problems[$id]:-}" ]; then
			skipped+=("$id")
			continue
		fi
		result=$(judge "$id" "$kind" "$bar")
		case ${result#*|} in MISSED | FAILED) failed=1 ;; esac
		label=${label//@N@/${reference_count:-N}}
		printf '%-58s %-30s %-22s %s\n' "$label" "${result%|*}" "$bar" "${result#*|}"
	done
	if wants scale && [ "$scale" != none ]; then scaling_row; fi
	if [ "${#skipped[@]}" -gt 0 ]; then echo "not run (left out by --parts): ${skipped[*]}"; fi
	if [ "$runs" -lt 5 ]; then echo "note: medians of $runs run(s) (--runs); the issue's figures are medians of at least 5"; fi
	if [ "${#notes[@]}" -gt 0 ]; then
		echo
		echo "Failed runs:"
		printf '  %s\n' "${notes[@]}"
	fi
	if [ "${#problems[@]}" -gt 0 ]; then
		echo
		echo "Problems:"
		for row in "${figure_rows[@]}"; do
			id=${row%%|*}
			if [ -n "${problems[$id]:-}" ]; then echo "  $id: ${problems[$id]}"; fi
		done
	fi
	echo
	if [ "$failed" -eq 0 ]; then echo "every measured figure meets its bar"; else echo "at least one bar was missed or a figure could not be measured"; fi
}

## Main ---------------------------------------------------------------------------------------

cleanup() {
	local rc=$?
	if [ "$lab_owned" -eq 1 ] && [ "$keep_lab" -eq 0 ]; then "$lab" down >/dev/null || rc=1; fi
	if [ "$rc" -eq 0 ]; then rm -rf "$tmp"; else echo "working files kept in $tmp" >&2; fi
	exit "$rc"
}

main() {
	parse_args "$@"
	log "building the provider and the lab tool (lab instance: ${GPUCLUSTER_LAB_INSTANCE:-default})"
	make -s build lab-image >/dev/null
	refuse_running_lab
	tmp=$(mktemp -d /tmp/bench-transport.XXXXXX)
	trap cleanup EXIT
	trap 'exit 130' INT TERM

	figure sudo_plan "sudo authentications per host per no-op plan" count "= 1"
	figure sudo_apply "sudo authentications per host per no-op apply" count "= 1"
	figure ssh "SSH connections per host per run (no-op, wrong password)" count "= 1"
	figure sudo_changing "sudo per host per changing apply (2 provider runs)" count "<= 2"
	figure ssh_changing "SSH connections per host per changing apply" count "<= 2"
	figure pamfail "failed PAM authentications per host, wrong password" count "= 1"
	figure users_failures "failed runs of $user_runs, $user_count users, default parallelism" count "= 0"
	figure users_present "the $user_count users, per node (getent on the host)" count "= $user_count"
	figure nosess "sshd 'error: no more sessions' per host per run" count "= 0"
	figure journal "journal anomalies per host per run (see host_counts)" count "= 0"
	figure plan_3 "no-op plan of examples/cluster, 3 hosts" time "<= 1.2 s"
	cpu_figures plan_3 "3-host plan"
	figure reference "reference: no-op plan of @N@ terraform_data" time "-"
	figure plan_users "no-op plan, 3 hosts, the $user_count users" time "-"
	figure first_apply "first apply, bare 3 hosts to verified cluster" time "<= 20 s"
	figure ctld_starts "slurmctld starts in a first apply (every size)" count "<= 2"
	figure slurmd_starts "slurmd starts per GPU server in a first apply" count "<= 2"

	if wants noop || wants wrong-password || wants users; then
		part_base
		if [ -n "$base_dir" ]; then
			if wants wrong-password; then part_wrong_password; fi
			if wants users; then part_users; fi
		else
			# Nothing can be measured on a cluster that was never built: say so per figure.
			local id ids=()
			if wants noop; then ids+=(sudo_plan sudo_apply ssh plan_3); fi
			if wants wrong-password; then ids+=(pamfail); fi
			if wants users; then ids+=(users_failures users_present); fi
			for id in "${ids[@]}"; do problem "$id" "not measured: the first apply on the 3-host lab failed"; done
		fi
	fi
	if wants scale && [ "$scale" != none ]; then part_scale; fi

	report
	[ "$failed" -eq 0 ] || return 1
}

main "$@"
