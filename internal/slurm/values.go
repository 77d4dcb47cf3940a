package slurm

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// slurm.conf's syntax holds any value without whitespace or '#', but Slurm refuses some when it
// reads them: a MaxTime it cannot parse, a memory size with a unit, a State that no line of that
// kind takes. slurmctld then stops reading the file and scontrol reconfigure fails, so such a
// value is refused before its fragment is written. The formats are those of slurm.conf(5) for
// Slurm 24.11 and 25.11.

// Line is the kind of slurm.conf line a setting sits on; State means different things on a node
// line and on a partition line.
type Line int

// The kinds of line.
const (
	ControllerLine Line = iota
	NodeLine
	PartitionLine
)

// NodeStates are the State values slurm.conf(5) allows on a NodeName line. IDLE and the busy
// states are the node's own report; the line says UNKNOWN for them.
var NodeStates = []string{"CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN"}

// PartitionStates are the State values of a PartitionName line.
var PartitionStates = []string{"UP", "DOWN", "DRAIN", "INACTIVE"}

// MemoryKeys are the controller and partition settings Slurm reads as a whole number of megabytes.
var MemoryKeys = []string{"DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode", "MaxMemPerCPU", "MaxMemPerNode"}

// valueChecks are, per kind of line, the settings whose values Slurm parses, by lower-case key
// (slurm.conf's keys are case-insensitive).
var valueChecks = map[Line]map[string]func(string) error{
	ControllerLine: withMemory(map[string]func(string) error{"preemptexempttime": CheckTime}),
	NodeLine: {
		"state":        oneOf("a node line", NodeStates, "IDLE and the busy states are the node's own report: write UNKNOWN for them"),
		"realmemory":   CheckMemory,
		"memspeclimit": CheckMemory,
		"tmpdisk":      CheckMemory,
	},
	PartitionLine: withMemory(map[string]func(string) error{
		"maxtime":     CheckTime,
		"defaulttime": CheckTime,
		"state":       oneOf("a partition line", PartitionStates, ""),
	}),
}

func withMemory(checks map[string]func(string) error) map[string]func(string) error {
	for _, k := range MemoryKeys {
		checks[strings.ToLower(k)] = CheckMemory
	}
	return checks
}

// CheckSetting refuses a value Slurm would not read for key on that kind of line. Keys whose
// values Slurm takes as they are, and empty values (the line is left out), pass.
func CheckSetting(line Line, key, value string) error {
	check, ok := valueChecks[line][strings.ToLower(key)]
	if !ok || value == "" {
		return nil
	}
	if err := check(value); err != nil {
		return fmt.Errorf("%s=%s: %w", key, value, err)
	}
	return nil
}

// maxTimeSeconds keeps a time, rounded up to whole minutes, inside the int Slurm parses it into;
// a larger one wraps to a negative number, which Slurm refuses.
const maxTimeSeconds = math.MaxInt32 - 59

var (
	timeNoDays   = regexp.MustCompile(`^[0-9]+(:[0-9]+){0,2}$`)
	timeWithDays = regexp.MustCompile(`^[0-9]+-[0-9]+(:[0-9]+){0,2}$`)
)

// CheckTime accepts the time formats of slurm.conf(5): minutes, minutes:seconds,
// hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds, and
// UNLIMITED, INFINITE or -1 for no limit.
func CheckTime(v string) error {
	if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") || v == "-1" {
		return nil
	}
	const formats = "Slurm reads a time as minutes, minutes:seconds, hours:minutes:seconds, days-hours, " +
		"days-hours:minutes or days-hours:minutes:seconds (3-00:00:00 is three days), or UNLIMITED"
	var parts []string
	var weights []int64
	switch {
	case timeWithDays.MatchString(v):
		days, rest, _ := strings.Cut(v, "-")
		parts = append([]string{days}, strings.Split(rest, ":")...)
		weights = []int64{86400, 3600, 60, 1}
	case timeNoDays.MatchString(v):
		parts = strings.Split(v, ":")
		weights = map[int][]int64{1: {60}, 2: {60, 1}, 3: {3600, 60, 1}}[len(parts)]
	default:
		return fmt.Errorf("not a time: %s", formats)
	}
	var total int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n > maxTimeSeconds {
			return fmt.Errorf("%s is too large a number for a time limit: use UNLIMITED for no limit", p)
		}
		total += n * weights[i]
		if total > maxTimeSeconds {
			return fmt.Errorf("longer than Slurm can hold (about 68 years): use UNLIMITED for no limit")
		}
	}
	return nil
}

var memoryWithUnit = regexp.MustCompile(`^([0-9]+)([KMGTkmgt])(i?[Bb])?$`)

// CheckMemory accepts what Slurm reads as a memory size: a whole number of megabytes, without a
// unit, or UNLIMITED (or INFINITE).
func CheckMemory(v string) error {
	if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") {
		return nil
	}
	if _, err := strconv.ParseUint(v, 10, 64); err == nil {
		return nil
	}
	msg := "Slurm takes memory as a whole number of megabytes, without a unit"
	if m := memoryWithUnit.FindStringSubmatch(v); m != nil {
		if mb, ok := megabytes(m[1], m[2]); ok {
			msg += fmt.Sprintf(" (%s is %s)", v, mb)
		}
	}
	return fmt.Errorf("not a memory size: %s", msg)
}

// megabytes converts NUMBER UNIT to megabytes, units being powers of 1024 as in Slurm's own
// --mem; false when the result is not a whole number of megabytes or does not fit.
func megabytes(num, unit string) (string, bool) {
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return "", false
	}
	factor := map[string]uint64{"M": 1, "G": 1024, "T": 1024 * 1024}[strings.ToUpper(unit)]
	if factor == 0 || n > math.MaxUint64/factor {
		return "", false
	}
	return strconv.FormatUint(n*factor, 10), true
}

// CheckValues refuses a value of the node's line that Slurm would not read.
func (n NodeDef) CheckValues() error {
	return checkLine(NodeLine, "node "+n.Name, n.hardware(), n.Extra)
}

// CheckValues refuses a value of the partition's line that Slurm would not read.
func (p PartitionDef) CheckValues() error {
	return checkLine(PartitionLine, "partition "+p.Name, p.settings(), p.Extra)
}

// CheckValues refuses a slurm.conf value of the controller's that Slurm would not read.
func (s ControllerSettings) CheckValues() error {
	var owned []setting
	for _, g := range s.groups() {
		owned = append(owned, g...)
	}
	return checkLine(ControllerLine, "controller", owned, s.Extra)
}

func checkLine(line Line, where string, typed []setting, extra map[string]string) error {
	for _, s := range typed {
		if err := CheckSetting(line, s.key, s.value); err != nil {
			return &FieldError{Field: s.key, Err: fmt.Errorf("%s: %w", where, err)}
		}
	}
	for _, s := range extraSettings(extra) {
		if err := CheckSetting(line, s.key, s.value); err != nil {
			return &FieldError{Field: ExtraField, Err: fmt.Errorf("%s extra: %w", where, err)}
		}
	}
	return nil
}

func oneOf(where string, allowed []string, hint string) func(string) error {
	return func(v string) error {
		for _, a := range allowed {
			if strings.EqualFold(v, a) {
				return nil
			}
		}
		msg := fmt.Sprintf("%s takes State %s", where, strings.Join(allowed, ", "))
		if hint != "" {
			msg += "; " + hint
		}
		return fmt.Errorf("not a state: %s", msg)
	}
}
