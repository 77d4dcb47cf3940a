#!/usr/bin/env bash
# Builds the guide's cluster on a running lab the way the guide's admin does, with the guide's own
# commands and not through the provider, so adoption (issue #10) can be tested against a cluster
# the provider never touched: the groups and users of group_vars/all.yml with their IDs, one MUNGE
# key made by mungekey and copied with mode 0400, and `ufw allow` for each row of the firewall
# table that applies to the host's inventory groups, then default deny and enable, login01 first.
# On the GPU servers SSH is restricted to administrators (the guide's "Preparing the Nodes").
# Packages come from the lab image's local apt repository, as the provider's own come.
#
# Then Slurm: Debian's slurmctld on login01 and slurmd on the GPU servers, slurm.conf,
# cgroup.conf and gres.conf written as the guide shows them, and /etc/default/slurmd, with the
# lab's necessary changes: proctrack/linuxproc, task/none and jobacct_gather/none (the
# containers' cgroups are read-only), the stand-in GPUs /dev/nvidia[0-3] listed in gres.conf
# (no NVML without GPUs), NodeName values from `slurmd -C` on the first GPU server as the guide
# says, and DefMemPerGPU a quarter of that memory; and slurm-client beside slurmd on the GPU
# servers, as a batch script that calls srun runs it there (the guide's role installs slurmd
# alone, which the provider reports as drift).
#
# Then BeeGFS, by the guide's "Shared Storage with BeeGFS" (see beegfs below).
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

# gpu01,gpu02,gpu03 as the guide writes it: gpu[01-03].
hostlist() {
	local first=${1#gpu} last=${!#}
	last=${last#gpu}
	[ "$(( 10#$last - 10#$first + 1 ))" -eq "$#" ] || { echo "GPU servers not numbered in one range: $*" >&2; exit 1; }
	if [ "$#" -eq 1 ]; then echo "$1"; else echo "gpu[$first-$last]"; fi
}

slurm() {
	local gpus=("${hosts[@]:1}")
	on login01 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld >/dev/null
	for h in "${gpus[@]}"; do
		# Installed without starting (policy-rc.d, Debian's switch for that): a slurmd started
		# before /etc/default/slurmd names the controller falls back to DNS SRV discovery (the
		# guide's note) and holds the install until its unit's 90 s start timeout. It starts
		# below, once that file is written.
		on "$h" sh -euc 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
			rc=0; DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmd slurm-client >/dev/null || rc=$?
			rm -f /usr/sbin/policy-rc.d; exit $rc'
	done
	local hw mem range
	# "NodeName=gpu01 CPUs=2 Boards=1 ... RealMemory=N", without the name and any UpTime line.
	hw=$(on "${gpus[0]}" slurmd -C | head -n1 | cut -d' ' -f2-)
	mem=${hw##*RealMemory=}
	mem=${mem%% *}
	range=$(hostlist "${gpus[@]}")
	# The slurm.conf that internal/slurm's adoption tests read as well, with this lab's values.
	local conf
	conf=$(sed -e "s|@NODES@|$range|g" -e "s|@HARDWARE@|$hw|" -e "s|@DEF_MEM_PER_GPU@|$((mem / 4))|" tools/lab-build-by-hand.slurm.conf)
	# A new server has no slurmctld state; a lab that earlier tests used keeps theirs (nodes
	# drained on their way out), which this cluster must not start from. Nor their
	# plugstack.conf: a server set up by hand has the one slurm-wlm-basic-plugins ships.
	on login01 sh -euc 'rm -rf /var/spool/slurmctld
		install -d -o slurm -g slurm /var/spool/slurmctld
		printf "include /etc/slurm/plugstack.conf.d/*.conf\n" > /etc/slurm/plugstack.conf
		printf "%s\n" "$1" > /etc/slurm/slurm.conf
		printf "CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=no\n" > /etc/slurm/cgroup.conf
		printf "Name=gpu File=/dev/nvidia[0-3]\n" > /etc/slurm/gres.conf
		systemctl enable slurmctld >/dev/null 2>&1
		systemctl restart slurmctld' sh "$conf"
	for h in "${gpus[@]}"; do
		on "$h" sh -euc 'printf "SLURMD_OPTIONS=\"--conf-server login01:6817\"\n" > /etc/default/slurmd
			systemctl enable slurmd >/dev/null 2>&1
			systemctl restart slurmd'
	done
	# After a start nodes show unk for a while: poll, never sleep a fixed time.
	local want="${#gpus[@]}:idle" got=
	for _ in $(seq 60); do
		got=$(on login01 sinfo -h -o %D:%T 2>/dev/null || true)
		[ "$got" = "$want" ] && return 0
		sleep 1
	done
	echo "Slurm did not come up: sinfo says '$got', want '$want'" >&2
	on login01 sinfo -R >&2 || true
	exit 1
}

# The guide's "Shared Storage with BeeGFS", typed as the guide shows it, against the lab's
# stand-in packages (installed in the image: no repository to add).
# login01 makes conn.auth (dd, chmod 400) and the management API's certificate (openssl, which
# the guide leaves to the admin), and both go to every node; db-file is set and the management
# database initialised once; beegfs-setup-meta on login01 as node 1, beegfs-setup-storage on
# each GPU server as node N with target N01; the interlock: storeAllowFirstRunInit = false and
# storeFsUUID in both configs (the storage one with its leading comma) and the drop-ins
# RequiresMountsFor=/beegfs and =/data; only then the services, management and metadata first.
# The clients come last: admin's home is copied into BeeGFS from a separate mountpoint before
# /home is mounted anywhere, so key-based SSH keeps working (the guide's warning); that mount
# needs the kernel module, which the client service builds on its first start, so it is built
# (beegfs-client rebuild) and loaded by hand first.
beegfs() {
	local gpus=("${hosts[@]:1}") mgmt=$login_ip
	on login01 sh -euc '
		dd if=/dev/urandom of=/etc/beegfs/conn.auth bs=128 count=1 status=none
		chmod 400 /etc/beegfs/conn.auth
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssl >/dev/null
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc -days 3650 \
			-subj /CN=login01 -addext "subjectAltName=DNS:login01,IP:$1" \
			-keyout /etc/beegfs/key.pem -out /etc/beegfs/cert.pem 2>/dev/null' sh "$mgmt"
	local auth cert
	auth=$(on login01 base64 -w0 /etc/beegfs/conn.auth)
	cert=$(on login01 base64 -w0 /etc/beegfs/cert.pem)
	for h in "${gpus[@]}"; do
		on "$h" sh -euc 'printf %s "$1" | base64 -d > /etc/beegfs/conn.auth
			chmod 400 /etc/beegfs/conn.auth
			printf %s "$2" | base64 -d > /etc/beegfs/cert.pem' sh "$auth" "$cert"
	done

	on login01 sh -euc '
		sed -i "s|^# *db-file = .*|db-file = \"/beegfs/mgmtd/mgmtd.sqlite\"|" /etc/beegfs/beegfs-mgmtd.toml
		mkdir -p /beegfs/mgmtd
		/opt/beegfs/sbin/beegfs-mgmtd --init >/dev/null
		/opt/beegfs/sbin/beegfs-setup-meta -p /beegfs/meta -s 1 -m "$1" >/dev/null
		uuid=$(findmnt -n -o UUID /beegfs)
		sed -i -e "s|^\(storeAllowFirstRunInit *=\).*|\1 false|" \
			-e "s|^\(storeFsUUID *=\).*|\1 $uuid|" /etc/beegfs/beegfs-meta.conf
		for s in mgmtd meta; do
			mkdir -p /etc/systemd/system/beegfs-$s.service.d
			printf "[Unit]\nRequiresMountsFor=/beegfs\n" > /etc/systemd/system/beegfs-$s.service.d/$s.conf
		done
		systemctl daemon-reload' sh "$mgmt"
	for h in "${gpus[@]}"; do
		local n=$((10#${h#gpu}))
		on "$h" sh -euc '
			/opt/beegfs/sbin/beegfs-setup-storage -p /data/beegfs-storage -s "$1" -i "$2" -m "$3" >/dev/null
			uuid=$(findmnt -n -o UUID /data)
			sed -i -e "s|^\(storeAllowFirstRunInit *=\).*|\1 false|" \
				-e "s|^\(storeFsUUID *=\).*|\1 ,$uuid|" /etc/beegfs/beegfs-storage.conf
			mkdir -p /etc/systemd/system/beegfs-storage.service.d
			printf "[Unit]\nRequiresMountsFor=/data\n" > /etc/systemd/system/beegfs-storage.service.d/storage.conf
			systemctl daemon-reload' sh "$n" "${n}01" "$mgmt"
	done

	on login01 systemctl enable --now beegfs-mgmtd beegfs-meta 2>/dev/null
	for h in "${gpus[@]}"; do
		on "$h" systemctl enable --now beegfs-storage 2>/dev/null
	done

	for h in "${hosts[@]}"; do
		on "$h" /opt/beegfs/sbin/beegfs-setup-client -m "$mgmt" >/dev/null
	done
	on login01 sh -euc 'mkdir -p /mnt/beegfs
		/opt/beegfs/sbin/beegfs-client rebuild >/dev/null && modprobe beegfs
		mount -t beegfs beegfs_nodev /mnt/beegfs -o cfgFile=/etc/beegfs/beegfs-client.conf
		rsync -aHAX --numeric-ids /home/admin /mnt/beegfs/
		umount /mnt/beegfs'
	for h in "${hosts[@]}"; do
		on "$h" sh -euc "echo '/home /etc/beegfs/beegfs-client.conf' > /etc/beegfs/beegfs-mounts.conf
			systemctl enable --now beegfs-client 2>/dev/null
			findmnt -n /home >/dev/null"
	done
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
slurm
# The guide's check: a credential made on login01 decodes on a GPU server.
for h in "${hosts[@]:1}"; do
	on login01 sh -c 'munge -n' | on "$h" unmunge >/dev/null
done
beegfs
echo "built by hand: ${hosts[*]}"
