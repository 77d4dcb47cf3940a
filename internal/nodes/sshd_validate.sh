# shellcheck shell=sh disable=SC2154 # the caller sets p and restore
if ! out=$(sshd -t 2>&1); then
	if [ "$restore" = 1 ]; then
		t=$(mktemp -- "$p.gpucluster-restore.XXXXXX") && cat > "$t" && chmod 0644 -- "$t" && mv -f -- "$t" "$p"
	else
		rm -f -- "$p"
	fi
	printf 'sshd -t: %s\n' "$out" >&2
	exit 1
fi
