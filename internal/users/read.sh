# shellcheck shell=sh
acct_user() {
	sec "passwd $1" getent passwd "$1"
	sec "groups $1" id -nG "$1" 2>/dev/null
}
acct_group() {
	sec "group $1" getent group "$1"
}
is_exec() { [ -f "$1" ] && [ -x "$1" ]; }
acct_shell() {
	sec "shell $1" is_exec "$1"
}
