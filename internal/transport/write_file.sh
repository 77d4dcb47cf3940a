# shellcheck shell=sh disable=SC2154 # the caller sets p, owner, group, mode, template and expect
set -e
if [ -d "$p" ]; then echo "$p is a directory" >&2; exit 1; fi
t=$(mktemp -- "$template")
trap 'rm -f -- "$t"' EXIT
cat > "$t"
if [ -n "$expect" ]; then
	# Conditional writers on this host take turns, so the check and the rename are one step.
	exec 9>/run/lock/gpucluster-write.lock
	flock 9
	cur=absent
	if [ -e "$p" ]; then cur=$(sha256sum -- "$p" | cut -d' ' -f1); fi
	if [ "$cur" != "$expect" ]; then echo conflict; exit 0; fi
fi
if [ -f "$p" ] && cmp -s -- "$t" "$p"; then
	# shellcheck disable=SC2046 # split on purpose: stat's five fields, none of them blank
	set -- $(stat -c '%U %u %G %g %a' -- "$p")
	if { [ "$1" = "$owner" ] || [ "$2" = "$owner" ]; } && { [ "$3" = "$group" ] || [ "$4" = "$group" ]; } && [ "$5" = "$mode" ]; then
		echo unchanged
		exit 0
	fi
	chown -- "$owner:$group" "$p"
	chmod -- "$mode" "$p"
	echo changed
	exit 0
fi
chown -- "$owner:$group" "$t"
chmod -- "$mode" "$t"
mv -f -- "$t" "$p"
echo changed
