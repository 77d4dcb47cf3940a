# shellcheck shell=sh
owner() {
	sec "$1 $2" getent "$1" "$2"
}
