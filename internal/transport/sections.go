package transport

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// Batched scripts print each command's output as a section, so one round trip can carry many
// commands and a command that found nothing (getent status 2) is told apart from a broken one.
// A section is framed out of band, as the root shell frames its replies: a header line
// "@@gpucluster STATUS LENGTH KEY", then exactly LENGTH bytes of output, then a newline. No
// output can forge or end a section, whatever lines it holds. The programs that print sections
// (sections.sh, .pl and .awk) spell the mark out.
const sectionMark = "@@gpucluster"

// SectionFuncs defines the shell functions that print sections. `sec KEY CMD [ARG...]` runs the
// command (a shell function for anything compound) and prints its standard output as the
// section KEY with its exit status; the shell's command substitution
// drops the output's NUL bytes and final newlines, and ${#o} counts bytes (dash knows no
// multibyte locale, and ScriptEnv sets the C one). A command's stderr must not be redirected
// to stdout on sec's own line, where it would escape the capture: redirect it inside a
// function. `secv KEY STATUS [TEXT]` prints a section of a status and text the shell holds
// already, without a command (and the process sec's capture costs).
//
//go:embed sections.sh
var SectionFuncs string

// AwkSections is an awk program (for a variable of the script: awk "$prog" ...) that prints each file it reads as a section of status 0, its
// key set by a k=KEY operand before the file: one process for many files, where a cat per
// file costs a process each. Each line is given a final newline. A file without a line (an
// empty one) gets no section, so pass only files the shell found not empty ([ -s ]). awk
// prints a file's section when it opens the next file or ends, so when awk fails, on a file
// it cannot open say, the sections from the file before on are missing.
//
//go:embed sections.awk
var AwkSections string

// PerlSections defines, for a Perl program in a batched script that prints sections of its
// own, sec(KEY, STATUS, CONTENT), which prints a section (and ends the program on a key that
// would break its header, a file name with a newline), and hexof(PATH), which returns 0 and
// a file's content hex-encoded (Debian's perl-base has no base64), or 1 when the file cannot
// be read. It holds no single quote, so the program can travel in the shell's single quotes;
// its final newline ends binmode's statement.
//
//go:embed sections.pl
var PerlSections string

// Section is one command's output lines and exit status.
type Section struct {
	Lines  []string
	Status int
}

// SudoSections runs a batched script as root (Executor.Sudo) and reads its sections; what says
// in either error what the script was for ("read slurmdbd's state").
func SudoSections(ctx context.Context, ex Executor, script, what string) (map[string]Section, error) {
	res, err := ex.Sudo(ctx, script, nil)
	return sectionsOf(res, err, what)
}

// ReadSections is SudoSections for a script that only reads the host (Executor.Read), whose
// result may be shared.
func ReadSections(ctx context.Context, ex Executor, script, what string) (map[string]Section, error) {
	res, err := ex.Read(ctx, script)
	return sectionsOf(res, err, what)
}

func sectionsOf(res Result, err error, what string) (map[string]Section, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sections, err := ParseSections(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sections, nil
}

// ParseSections reads the sections of a batched script's output by key. The output must be
// sections and nothing else; a key printed twice, or a section cut short, is an error rather
// than a partial result. A section's blank lines are dropped.
func ParseSections(out []byte) (map[string]Section, error) {
	sections := map[string]Section{}
	for len(out) > 0 {
		header, rest, ok := bytes.Cut(out, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("output truncated in a section header %q", header)
		}
		key, status, length, err := parseSectionHeader(string(header))
		if err != nil {
			return nil, err
		}
		if length >= len(rest) {
			return nil, fmt.Errorf("section %q: %d bytes announced, %d left: output truncated", key, length, max(len(rest)-1, 0))
		}
		if rest[length] != '\n' {
			return nil, fmt.Errorf("section %q: no newline after its %d bytes", key, length)
		}
		if _, dup := sections[key]; dup {
			return nil, fmt.Errorf("section %q appears twice", key)
		}
		sections[key] = Section{Lines: nonBlankLines(rest[:length]), Status: status}
		out = rest[length+1:]
	}
	return sections, nil
}

func parseSectionHeader(header string) (key string, status, length int, err error) {
	fields := strings.SplitN(header, " ", 4)
	if len(fields) != 4 || fields[0] != sectionMark || fields[3] == "" {
		return "", 0, 0, fmt.Errorf("unexpected line %q where a section header belongs", header)
	}
	status, err = strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, 0, fmt.Errorf("section %q: bad status in header %q", fields[3], header)
	}
	length, err = strconv.Atoi(fields[2])
	if err != nil || length < 0 {
		return "", 0, 0, fmt.Errorf("section %q: bad length in header %q", fields[3], header)
	}
	return fields[3], status, length, nil
}

func nonBlankLines(content []byte) []string {
	var lines []string
	for _, line := range strings.Split(string(content), "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}
