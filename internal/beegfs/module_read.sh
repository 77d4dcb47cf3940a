# shellcheck shell=sh disable=SC2154 # the caller sets module_glob and force_build
clientmodule() {
	printf 'kernel=%s\n' "$(uname -r)"
	# shellcheck disable=SC2086 # unquoted on purpose: the pattern matches a module per kernel release
	for f in $module_glob; do
		[ ! -e "$f" ] || { f=${f#/lib/modules/}; printf 'built=%s\n' "${f%%/*}"; }
	done
	[ ! -e "$force_build" ] || echo force
}
