package transport

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Batched scripts print each command's output between a header line and a
// status line, so one round trip can carry many commands and a command that
// found nothing (getent status 2) is told apart from a broken one.
const (
	sectionPrefix = "@@gpucluster "
	statusPrefix  = "@@rc "
)

// SectionFuncs defines the shell functions that print those lines:
// `sec <key>` opens a section, `end <status>` closes it. end starts with a
// newline in case the command's output did not end with one.
const SectionFuncs = `sec() { printf '` + sectionPrefix + `%s\n' "$1"; }
end() { printf '\n` + statusPrefix + `%d\n' "$1"; }
`

// AwkSections is an awk program that prints each file it reads as a section of status 0, its
// key set by a k=KEY operand before the file: one process for many files, where a cat per
// file costs a process each. A file without a line (an empty one) gets no section, so pass
// only files the shell found not empty ([ -s ]). When awk fails, `|| end $?` after it closes
// the section it was in, and the sections of the files after it are missing.
const AwkSections = `'FNR == 1 { if (NR > 1) printf "\n` + statusPrefix + `0\n"; printf "` + sectionPrefix + `%s\n", k } { print } END { printf "\n` + statusPrefix + `0\n" }'`

// PerlSections defines sec and end, SectionFuncs' two functions, in Perl, for a Perl program
// in a batched script that prints sections of its own, and hexof, which prints a file's
// content hex-encoded (the section parser drops blank lines; Debian's perl-base has no base64)
// and returns 0, or 1 without printing when the file cannot be read. It holds no single
// quote, so the program can travel in the shell's single quotes.
const PerlSections = `sub sec { print q{` + sectionPrefix + `}, $_[0], "\n" } sub end { print "\n", q{` + statusPrefix + `}, $_[0], "\n" }
sub hexof { open(my $h, "<:raw", $_[0]) or return 1; local $/; my $c = readline $h; defined $c or return 1; print unpack("H*", $c); 0 }
binmode STDOUT;`

// Section is one command's output lines and exit status.
type Section struct {
	Lines  []string
	Status int
}

// SudoSections runs a batched script as root and reads its sections; what says in either
// error what the script was for ("read slurmdbd's state").
func SudoSections(ctx context.Context, ex Executor, script, what string) (map[string]Section, error) {
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sections, err := ParseSections(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sections, nil
}

// ParseSections reads the sections of a batched script's output by key.
// Blank lines are dropped, as end adds one whenever the output already ended
// with a newline. A section without a status line means the output was cut
// short, which is an error rather than a partial result.
func ParseSections(out []byte) (map[string]Section, error) {
	sections := map[string]Section{}
	var key string
	var cur *Section
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, sectionPrefix):
			if cur != nil {
				return nil, fmt.Errorf("section %q has no status line before section %q", key, strings.TrimPrefix(line, sectionPrefix))
			}
			key = strings.TrimPrefix(line, sectionPrefix)
			cur = &Section{}
		case strings.HasPrefix(line, statusPrefix):
			if cur == nil {
				return nil, fmt.Errorf("status line %q outside a section", line)
			}
			status, err := strconv.Atoi(strings.TrimPrefix(line, statusPrefix))
			if err != nil {
				return nil, fmt.Errorf("section %q: bad status line %q", key, line)
			}
			cur.Status = status
			sections[key] = *cur
			cur = nil
		case cur != nil && line != "":
			cur.Lines = append(cur.Lines, line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("section %q has no status line: output truncated", key)
	}
	return sections, nil
}
