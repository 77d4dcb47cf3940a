# shellcheck shell=sh disable=SC2154 # the caller sets name; the password arrives on stdin
login() {
	f=$(mktemp) || return 1
	{ echo '[client]'; printf 'password=%s\n' "$(cat)"; } > "$f"
	mysql --defaults-extra-file="$f" -u "$name" -N -e 'SELECT 1' >/dev/null 2>&1
	st=$?
	rm -f -- "$f"
	return $st
}
sec login login
