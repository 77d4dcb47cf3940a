package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Status is the controller as one round trip finds it: the fragments, how
// the files in ConfDir differ from what the fragments assemble, the
// installed slurmctld and whether it runs.
type Status struct {
	Fragments Fragments
	// Version is nil when slurmctld is not installed.
	Version *version.Version
	Active  bool
	// Drift says, one entry per difference, how the files differ from
	// the fragments: a hand edit, a file removed. Empty without a
	// controller fragment, as there is nothing to assemble then.
	Drift []string
}

// ReadStatus reads the controller's Status.
func ReadStatus(ctx context.Context, ex Executor) (Status, error) {
	st, err := readState(ctx, ex)
	if err != nil {
		return Status{}, err
	}
	fragments, err := ParseFragments(st.fragments)
	if err != nil {
		return Status{}, err
	}
	s := Status{Fragments: fragments, Version: st.version, Active: st.active}
	slurmConf, cgroupConf, gresConf, err := Assemble(fragments)
	if errors.Is(err, ErrNoController) {
		return s, nil
	}
	if err != nil {
		return Status{}, err
	}
	s.Drift = fileDrift(st.files, Files{SlurmConf: slurmConf, CgroupConf: cgroupConf, GresConf: gresConf})
	return s, nil
}

// fileDrift names what differs between the files found and the files
// wanted, by setting where slurm.conf still parses.
func fileDrift(found, want Files) []string {
	var drift []string
	pairs := []struct {
		name        string
		found, want []byte
	}{
		{"slurm.conf", found.SlurmConf, want.SlurmConf},
		{"cgroup.conf", found.CgroupConf, want.CgroupConf},
		{"gres.conf", found.GresConf, want.GresConf},
	}
	for _, p := range pairs {
		switch {
		case bytes.Equal(p.found, p.want):
		case p.found == nil:
			drift = append(drift, ConfDir+"/"+p.name+" is missing")
		case p.name == "slurm.conf":
			drift = append(drift, slurmConfDrift(p.found, p.want))
		default:
			drift = append(drift, ConfDir+"/"+p.name+" was changed")
		}
	}
	return drift
}

func slurmConfDrift(found, want []byte) string {
	c, err := Classify(Files{SlurmConf: found}, Files{SlurmConf: want})
	if err != nil || len(c.Reasons) == 0 {
		return ConfDir + "/slurm.conf was changed"
	}
	return ConfDir + "/slurm.conf was changed: " + strings.Join(c.Reasons, ", ")
}

// EnsureController starts slurmctld, enabled at boot, when it does not
// run, and waits until it answers. It reports whether it started it.
func EnsureController(ctx context.Context, ex Executor) (started bool, err error) {
	res, err := ex.Sudo(ctx, transport.ScriptEnv+`if systemctl is-active --quiet slurmctld; then echo running; exit 0; fi
systemctl enable --quiet slurmctld && systemctl restart slurmctld
`, nil)
	if err != nil {
		return false, fmt.Errorf("start slurmctld: %w", err)
	}
	started = strings.TrimSpace(string(res.Stdout)) != "running"
	return started, WaitController(ctx, ex)
}

// SettingClass is the class of change that changing a slurm.conf setting
// needs, from the same table Classify uses, so documentation generated
// from it cannot disagree with what an apply does.
func SettingClass(key string) ChangeClass {
	if restartKeys[strings.ToLower(key)] {
		return RestartController
	}
	return Reconfigure
}

// Line classes: a node line's change changes the node set (Classify's
// ordered restart); a partition line or cgroup.conf, gres.conf change is a
// reconfigure.
const (
	NodeLineClass      = OrderedRestart
	PartitionLineClass = Reconfigure
	CgroupConfClass    = Reconfigure
)

// EnsureStateDir creates StateSaveLocation owned by SlurmUser when it is missing: Debian's
// package makes /var/lib/slurm/slurmctld, not the guide's /var/spool/slurmctld, and
// slurmctld, running as SlurmUser, cannot create it under /var/spool itself. An existing
// directory is left as it is.
func EnsureStateDir(ctx context.Context, ex Executor, s ControllerSettings) error {
	dir, user := s.StateSaveLocation, s.SlurmUser
	if dir == "" {
		return nil
	}
	if !strings.HasPrefix(dir, "/") || strings.Contains(dir, "..") {
		return fmt.Errorf("StateSaveLocation %q: want an absolute path", dir)
	}
	if user == "" {
		user = "root"
	}
	if !hostName.MatchString(user) {
		return fmt.Errorf("SlurmUser %q is not a user name", user)
	}
	script := transport.ScriptEnv + "[ -d " + transport.Quote(dir) + " ] || install -d -m 0755 -o " + transport.Quote(user) + " -g " + transport.Quote(user) + " -- " + transport.Quote(dir)
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("create StateSaveLocation %s: %w", dir, err)
	}
	return nil
}
