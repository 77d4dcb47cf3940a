#!/usr/bin/env bash
# Builds the guide's cluster on a running lab the way the guide's admin does, with the guide's own
# commands and not through the provider, so adoption (issue #10) can be tested against a cluster
# the provider never touched: the groups and users of group_vars/all.yml with their IDs, one MUNGE
# key made by mungekey and copied with mode 0400, and `ufw allow` for each row of the firewall
# table that applies to the host's inventory groups, then default deny and enable, login01 first.
# On the GPU servers SSH is restricted to administrators (the guide's "Preparing the Nodes").
# Packages come from the lab image's local apt repository, as the provider's own come.
#
# Not yet built here (the next part of #10): slurm.conf, cgroup.conf, gres.conf,
# /etc/default/slurmd and BeeGFS.
#
# usage: tools/lab-build-by-hand.sh   (LAB=path of gpucluster-lab, default bin/gpucluster-lab;
#        GPUCLUSTER_LAB_INSTANCE selects the lab as for every lab command)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

lab=${LAB:-bin/gpucluster-lab}
# roles/firewall/defaults/main.yml of the guide; the lab uses the guide's addresses.
subnet=10.0.0.0/24
login_ip=10.0.0.10

on() { local host=$1; shift; "$lab" exec "$host" -- "$@"; }

mapfile -t hosts < <("$lab" hosts)
[ "${hosts[0]:-}" = login01 ] || { echo "the lab's first host is not login01" >&2; exit 1; }

# ansible.builtin.group and .user with create_home: false: an existing entry with the same ID is
# left alone, as the module does.
accounts() {
	on "$1" sh -euc '
		getent group users >/dev/null || groupadd -g 100 users
		id -u alice >/dev/null 2>&1 || useradd -M -u 1001 -g users alice
		id -u bob >/dev/null 2>&1 || useradd -M -u 1002 -g users bob'
}

# The key is made once on login01 (the guide keeps it in the Ansible tree) and the identical
# file goes to every node with mode 0400, then munged restarts (the role's flush_handlers).
munge_key() {
	on login01 sh -euc 'install -d -m 700 /etc/ansible/files
		[ -s /etc/ansible/files/munge.key ] || mungekey --create --keyfile /etc/ansible/files/munge.key'
	local key
	key=$(on login01 base64 -w0 /etc/ansible/files/munge.key)
	for h in "${hosts[@]}"; do
		on "$h" sh -euc 'printf %s "$1" | base64 -d > /etc/munge/.munge.key.by-hand
			install -m 0400 -o munge -g munge /etc/munge/.munge.key.by-hand /etc/munge/munge.key
			rm -f /etc/munge/.munge.key.by-hand
			systemctl restart munge' sh "$key"
	done
}

# One `ufw allow` per row of the guide's table whose group the host is in, as
# community.general.ufw runs it: port, proto (none for "any"), from_ip, comment.
ufw_rows() {
	local host=$1 groups=(all)
	if [ "$host" = login01 ]; then groups+=(controller); else groups+=(compute beegfs_storage); fi
	local rows=(
		"controller|22|tcp|any|SSH"
		"compute|22|tcp|$login_ip|SSH from login node"
		"controller|6817|tcp|$subnet|slurmctld"
		"compute|6818|tcp|$subnet|slurmd"
		"all|60001:61000|tcp|$subnet|srun callbacks"
		"all|8004|udp|$subnet|BeeGFS client"
		"controller|8005|any|$subnet|BeeGFS meta"
		"controller|8008|any|$subnet|BeeGFS mgmtd"
		"controller|8010|tcp|$subnet|BeeGFS mgmtd API"
		"beegfs_storage|8003|any|$subnet|BeeGFS storage"
	)
	local row group port proto from comment
	for row in "${rows[@]}"; do
		IFS='|' read -r group port proto from comment <<<"$row"
		[[ " ${groups[*]} " == *" $group "* ]] || continue
		local cmd=(ufw allow from "$from" to any port "$port")
		[ "$proto" = any ] || cmd+=(proto "$proto")
		on "$host" "${cmd[@]}" comment "$comment" >/dev/null
	done
	on "$host" ufw default deny incoming >/dev/null
	on "$host" ufw --force enable >/dev/null
}

for h in "${hosts[@]}"; do
	on "$h" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q munge >/dev/null
	accounts "$h"
done
for h in "${hosts[@]:1}"; do
	on "$h" sh -euc "printf 'AllowGroups sudo\n' > /etc/ssh/sshd_config.d/90-allow-sudo.conf; systemctl reload ssh"
done
munge_key
# login01 first, as the guide rolls the firewall out (--limit controller), then the others.
for h in "${hosts[@]}"; do
	ufw_rows "$h"
done
# The guide's check: a credential made on login01 decodes on a GPU server.
for h in "${hosts[@]:1}"; do
	on login01 sh -c 'munge -n' | on "$h" unmunge >/dev/null
done
echo "built by hand: ${hosts[*]}"
