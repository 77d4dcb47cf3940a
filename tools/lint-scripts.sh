#!/bin/sh
# Checks every program kept in a file of its own under internal/ (the provider sends them to
# hosts, embedded with go:embed; the lab builds its images with some): shellcheck on *.sh,
# perl -c on *.pl, and mawk's compiler on *.awk (-W dump compiles a program without running
# it; mawk is Debian's awk, so the hosts run the same one). Each file names its shell dialect
# in a "# shellcheck shell=" directive or a #! line. A Perl or awk program holds no single quote.
# With --list it prints the files it would check, one a line, and checks nothing.
set -eu
cd "$(dirname "$0")/.."

files() { find internal -type f -name "$1" | LC_ALL=C sort; }

if [ "${1-}" = --list ]; then
	files '*.sh'
	files '*.pl'
	files '*.awk'
	exit 0
fi

failed=0
# shellcheck disable=SC2046 # the paths hold no blank or glob character (TestScriptFilesAreLinted)
shellcheck $(files '*.sh') || failed=1
for f in $(files '*.pl'); do
	out=$(perl -c "$f" 2>&1) || { printf '%s\n' "$out" >&2; failed=1; }
done
for f in $(files '*.awk'); do
	mawk -W dump -f "$f" >/dev/null || failed=1
done
# Scripts carry the Perl and awk programs in single quotes (perl -e '...'); the root shell's
# goes to sudo as a quoted argument of its own.
for f in $(files '*.pl') $(files '*.awk'); do
	[ "$f" = internal/transport/rootshell.pl ] && continue
	if grep -n "'" "$f" >&2; then
		echo "$f: a single quote would end the shell's quoting of the program" >&2
		failed=1
	fi
done
exit "$failed"
