# shellcheck shell=sh
export DEBIAN_FRONTEND=noninteractive
apt_install() {
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confold "$@"
}
apt_install "$@" || { apt-get update -q -o DPkg::Lock::Timeout=300 >/dev/null && apt_install "$@"; }
