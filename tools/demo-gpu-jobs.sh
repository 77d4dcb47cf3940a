#!/usr/bin/env bash
# The guide's real test on the lab, run by `make demo` after the apply: as a cluster user
# (alice, not admin), two one-GPU jobs without --mem run side by side, each given a different
# GPU; then a job across two nodes; then a file written on a GPU server is read on login01.
# Jobs are started on login01 through the lab's exec seam, so what is tested is Slurm and
# BeeGFS as the provider set them up, not the provider itself.
#
# usage: tools/demo-gpu-jobs.sh [USER]   (LAB=path of gpucluster-lab, default bin/gpucluster-lab)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

lab=${LAB:-bin/gpucluster-lab}
user=${1:-alice}
# Both jobs on one node: that is what the memory default (DefMemPerGPU) makes possible.
node=$("$lab" hosts | awk '/^gpu/ && !found++')
[ -n "$node" ] || { echo "the lab has no GPU server" >&2; exit 1; }
job='nvidia-smi -L; echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; sleep 20'
wait_running=60 # seconds until both jobs must be RUNNING

on_login() { "$lab" exec login01 -- "$@"; }
# The user's home is on BeeGFS, so srun finds the same working directory on every node.
as_user() { on_login runuser -u "$user" -- env -C "/home/$user" "$@"; }

out=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	on_login scancel -u "$user" -n demo-gpu1,demo-gpu2 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT

echo
echo "The guide's test, as $user on login01: two single-GPU jobs without --mem"
for i in 1 2; do
	echo "  \$ srun -w $node -J demo-gpu$i --gres=gpu:1 bash -c '$job' &"
	as_user srun -w "$node" -J "demo-gpu$i" -t 2 --gres=gpu:1 bash -c "$job" >"$out/job$i.out" 2>&1 &
	pids+=($!)
done

deadline=$((SECONDS + wait_running))
until [ "$(on_login squeue -h -u "$user" -t RUNNING -n demo-gpu1,demo-gpu2 -o %i | wc -l)" -eq 2 ]; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "the two jobs were not RUNNING together within ${wait_running}s:" >&2
		on_login squeue -a -o '%.6i %.10j %.8u %.9T %.20R %b' >&2
		exit 1
	fi
	sleep 0.5 # poll interval
done
echo "  \$ squeue    (both RUNNING at the same time)"
on_login squeue -u "$user" -o '%.6i %.9P %.10j %.6u %.8T %.6M %.8N %.14b %.10m' | sed 's/^/  /'

# srun returns when its job ends; the time limit (-t 2) bounds the wait.
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
pids=()
echo "  Output of each job:"
for i in 1 2; do sed "s/^/    demo-gpu$i: /" "$out/job$i.out"; done
[ "$status" -eq 0 ] || { echo "a job failed (exit $status)" >&2; exit 1; }

gpu1=$(sed -n 's/^CUDA_VISIBLE_DEVICES=//p' "$out/job1.out")
gpu2=$(sed -n 's/^CUDA_VISIBLE_DEVICES=//p' "$out/job2.out")
if [[ ! "$gpu1" =~ ^[0-9]+$ || ! "$gpu2" =~ ^[0-9]+$ || "$gpu1" == "$gpu2" ]]; then
	echo "each job must be given exactly one GPU, a different one: got '$gpu1' and '$gpu2'" >&2
	exit 1
fi
echo "  Each job was given one GPU of $node, a different one: $gpu1 and $gpu2."

echo
echo "A launch across two nodes, as $user:"
echo "  \$ srun -N2 --gres=gpu:1 hostname"
as_user timeout 60 srun -N2 -t 1 --gres=gpu:1 hostname | sort | sed 's/^/    /'

echo
echo "Shared /home: a file $user writes on $node is $user's on login01 (same UID everywhere)"
"$lab" exec "$node" -- runuser -u "$user" -- sh -c 'echo "written on $(hostname)" > "$HOME/demo-shared-home"'
seen=$(on_login stat -c '%U %u' "/home/$user/demo-shared-home")
echo "  login01: /home/$user/demo-shared-home owned by $seen: $(on_login cat "/home/$user/demo-shared-home")"
[ "$seen" = "$user $(on_login id -u "$user")" ] || { echo "the file's owner on login01 is not $user" >&2; exit 1; }
