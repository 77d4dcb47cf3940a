package slurm

import (
	"fmt"
	"strings"
)

// RefusedError is a change Apply refused before it wrote anything: a fragment that does not
// parse, a pitfall (P2, P14), a setting the Slurm version does not know, or a slurm.conf that
// Slurm's own parser rejects. Nothing on the controller changed.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// ActivationError is a change slurmctld did not come back with. The previous files were
// written back; RestoreErr says whether that, and restarting slurmctld with them, worked.
type ActivationError struct {
	Cause error
	// RestoreErr is nil when the previous files are back and slurmctld, if it ran before,
	// runs with them again.
	RestoreErr error
	// WasActive: slurmctld ran before the change.
	WasActive bool
	// Log is slurmctld's own last log lines.
	Log string
}

func (e *ActivationError) Error() string {
	outcome := "the previous files were restored"
	if e.WasActive {
		outcome += " and slurmctld runs with them again"
	}
	if e.RestoreErr != nil {
		outcome = fmt.Sprintf("restoring the previous files failed too: %v", e.RestoreErr)
	}
	return fmt.Sprintf("slurmctld did not come back with the new configuration (%s): %v\nslurmctld's log:\n%s", outcome, e.Cause, e.Log)
}

func (e *ActivationError) Unwrap() error { return e.Cause }

// UndefinedNodesError is a partition naming nodes that no node definition defines (pitfall
// P14): slurmctld does not start with it.
type UndefinedNodesError struct {
	Partition string
	Nodes     []string
}

func (e *UndefinedNodesError) Error() string {
	return fmt.Sprintf("partition %s names %s, which no node definition defines. %s", e.Partition, CompressHostlist(e.Nodes), guideP14)
}

// FieldError is a value that slurm.conf's syntax cannot hold, or an Extra key a typed field
// owns. Field names the setting by its Slurm key ("SchedulerType", "GPUFiles"), "Extra" for
// an Extra map, with "Cgroup." before the cgroup.conf ones.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// InCgroup reports whether the field is one of cgroup.conf's, and its key there.
func (e *FieldError) InCgroup() (key string, ok bool) {
	return strings.CutPrefix(e.Field, cgroupField)
}

// cgroupField prefixes the fields of cgroup.conf in a FieldError.
const cgroupField = "Cgroup."

// ExtraField is FieldError.Field for an Extra map.
const ExtraField = "Extra"
