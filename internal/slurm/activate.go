package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// Outcome is what an activation did, or would do.
type Outcome struct {
	Classification
	// Warnings are pitfalls that do not stop the change (P4, settings the version table
	// does not know).
	Warnings []string
	// CurrentSHA256 is the digest of the files slurmctld runs with before the activation,
	// NextSHA256 of those it runs with after it; empty while there are none.
	CurrentSHA256, NextSHA256 string
	// NodeStates are the drains and resumes SetNodeStates would make after the activation.
	NodeStates []NodeStateChange
	// Adopted are the fragments the change writes that were read from hand-written files
	// (AdoptFiles), before the files are rewritten from them: empty once FragmentDir holds the
	// provider's layout.
	Adopted []string
	// ReplacesDebianPlugstack: with the hand-written files, Debian's plugstack.conf is replaced
	// too (QuietPlugstack), once the provider owns the controller's files.
	ReplacesDebianPlugstack bool
}

// NotRunningReason is the reason an activation starts a slurmctld that does not run.
const NotRunningReason = "slurmctld does not run"

// Activate brings slurm.conf, cgroup.conf and gres.conf and the running slurmctld in line
// with the fragments, once, under the host's lock: nothing is written and no daemon touched
// when they already agree and slurmctld runs. The new slurm.conf is checked (P2, P14, the
// version gate, Slurm's own parser) before it is written; then slurmctld is reconfigured,
// restarted or, for an ordered restart, stopped before the write and started after it, the
// way the class of change needs, and the apply waits up to wait for it to answer. If it
// does not, the previous files are restored and slurmctld, if it ran before, is started
// with them again. An ordered restart leaves the restart of slurmd on
// Outcome.RestartNodes to the caller, and records those nodes as pending on the
// controller until ClearPendingRestart says they are done; restarts still pending from an
// earlier activation are returned too.
//
// A refusal before any write is a *RefusedError; a failed activation an *ActivationError.
func Activate(ctx context.Context, h ControllerHost, wait time.Duration) (Outcome, error) {
	unlock, err := h.Lock(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("slurm activation: %w", err)
	}
	defer unlock()
	for attempt := 1; ; attempt++ {
		out, err := activateOnce(ctx, h, wait)
		if !errors.Is(err, transport.ErrWriteConflict) || attempt == writeAttempts {
			return out, err
		}
	}
}

func activateOnce(ctx context.Context, h ControllerHost, wait time.Duration) (Outcome, error) {
	st, err := readState(ctx, h)
	if err != nil {
		return Outcome{}, err
	}
	c, err := prepare(st, nil)
	if err != nil {
		return Outcome{}, &RefusedError{Err: err}
	}
	if c.files == nil {
		return Outcome{}, &RefusedError{Err: fmt.Errorf("%s/%s does not exist: there is nothing to activate before gpucluster_slurm_controller writes it", FragmentDir, ControllerFile)}
	}
	if c.out.Class == NoChange && !st.adopted && filesEqual(st.files, *c.files) {
		return c.out, nil
	}
	if !filesEqual(st.files, *c.files) {
		if err := ValidateSlurmConf(ctx, h, c.files.SlurmConf); err != nil {
			return Outcome{}, &RefusedError{Err: err}
		}
	}
	if st.adopted {
		// The fragments read from the hand-written files go on disk first, so the files
		// written next are assembled from fragments that exist.
		if err := writeFragments(ctx, h, nil, c.next); err != nil {
			return Outcome{}, err
		}
	}
	// The files are written from here on, so the provider owns the controller's files from now:
	// a hand-built controller's Debian plugstack.conf goes with them, in the apply whose plan
	// said so (a drain written before this apply's activation already ended the adoption).
	if err := replaceDebianPlugstack(ctx, h, st); err != nil {
		return Outcome{}, err
	}
	if c.out.Class == NoChange {
		// The same settings in the provider's layout: slurmctld runs them already, and
		// configless nodes fetch the same from it, so no daemon is touched.
		if err := writeFiles(ctx, h, *c.files, &st.files); err != nil {
			return Outcome{}, err
		}
		return c.out, nil
	}
	// From the first write on, a cancelled apply (Ctrl-C) must not leave slurmctld stopped
	// or the files half-written: this part runs to its end, bounded by its own timeout,
	// which leaves room for a rollback's wait after the activation's.
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*wait+time.Minute)
	defer cancel()
	err = activate(settle, h, st, *c.files, c.out.Class, wait)
	if errors.Is(err, transport.ErrWriteConflict) {
		return Outcome{}, resume(settle, h, st, c.out.Class, err)
	}
	if err != nil {
		return Outcome{}, rollback(settle, h, st, c.fragments.Controller, wait, err)
	}
	if err := addPendingRestart(settle, h, c.out.RestartNodes); err != nil {
		return c.out, err
	}
	return c.out, nil
}

// resume follows a conditional write that lost to another process: that process's files
// stand, and slurmctld, if this activation stopped it, runs again before Activate starts
// over from a fresh read.
func resume(ctx context.Context, h ControllerHost, st state, class ChangeClass, conflict error) error {
	if class != OrderedRestart || !st.active {
		return conflict
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+startSlurmctld("start"), nil); err != nil {
		return errors.Join(conflict, fmt.Errorf("start slurmctld again: %w", err))
	}
	return conflict
}

// activate writes the files and brings slurmctld onto them the way the class of change
// needs, then waits up to wait for it to answer.
func activate(ctx context.Context, h ControllerHost, st state, files Files, class ChangeClass, wait time.Duration) error {
	if class == OrderedRestart && st.active {
		// The node set changes: slurmctld must not run while the file lists other nodes
		// than its state.
		if _, err := h.Sudo(ctx, transport.ScriptEnv+"systemctl stop slurmctld", nil); err != nil {
			return fmt.Errorf("stop slurmctld: %w", err)
		}
		transport.Changed(ctx, h, "stopped slurmctld for an ordered restart")
	}
	if !filesEqual(st.files, files) {
		if err := writeFiles(ctx, h, files, &st.files); err != nil {
			return err
		}
	}
	var command, what, done string
	switch {
	case !st.active:
		command, what, done = units.EnableText("slurmctld")+" || exit\n"+startSlurmctld("restart"), "start slurmctld", "started slurmctld"
	case class == Reconfigure:
		command, what, done = "scontrol reconfigure", "scontrol reconfigure", "reconfigured slurmctld"
	case class == OrderedRestart:
		command, what, done = startSlurmctld("start"), "start slurmctld", "started slurmctld"
	default:
		command, what, done = startSlurmctld("restart"), "restart slurmctld", "restarted slurmctld"
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+command, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	transport.Changed(ctx, h, done)
	return waitController(ctx, h, wait)
}

// startSlurmctld is a systemctl start or restart that systemd's start limit cannot refuse:
// failures before this apply (a package's first start without slurm.conf, a hand-made
// restart loop) are forgotten first, and an activation starts slurmctld at most twice, the
// second time only to roll back.
func startSlurmctld(verb string) string {
	return "systemctl reset-failed slurmctld 2>/dev/null; systemctl " + verb + " slurmctld"
}

// rollback restores the files slurmctld ran with, starts it again if it ran, and reports
// cause together with the daemon's own log lines. It writes unconditionally: the host's
// lock is held, and what this activation wrote, in whole or in part, is what it replaces.
// The fragments stay: they are what the resources applied, and the activation stays
// pending until a change of them lets slurmctld start.
func rollback(ctx context.Context, h ControllerHost, st state, c *ControllerSettings, wait time.Duration, cause error) error {
	e := &ActivationError{Cause: cause, WasActive: st.active, Log: controllerLog(ctx, h, c)}
	e.RestoreErr = writeFiles(ctx, h, st.files, nil)
	if e.RestoreErr == nil && st.active {
		if _, err := h.Sudo(ctx, transport.ScriptEnv+startSlurmctld("restart"), nil); err != nil {
			e.RestoreErr = fmt.Errorf("restart slurmctld: %w", err)
		} else {
			transport.Changed(ctx, h, "restored the previous Slurm files and restarted slurmctld")
			e.RestoreErr = waitController(ctx, h, wait)
		}
	}
	return e
}

// controllerLog is slurmctld's last log lines: the journal, and its log
// file when slurm.conf names one.
func controllerLog(ctx context.Context, ex transport.Executor, c *ControllerSettings) string {
	script := transport.ScriptEnv + "journalctl -u slurmctld -n 30 --no-pager -o short-iso 2>&1\n"
	if c != nil {
		if file, ok := lookup(c.Extra, "SlurmctldLogFile"); ok {
			script += "tail -n 30 -- " + transport.Quote(file) + " 2>&1\n"
		}
	}
	res, err := ex.Sudo(ctx, script, nil)
	text := strings.TrimSpace(string(res.Stdout))
	if err != nil {
		text += fmt.Sprintf("\n(reading the log failed: %v)", err)
	}
	return text
}

// ValidateSlurmConf has Slurm's own parser read content before it reaches
// /etc/slurm: scontrol parses slurm.conf fully at start (the code slurmctld
// uses) and stops on an unknown key or a malformed value. Slurm 24.11 has no
// config-test option for slurmctld, and a trial slurmctld would bind the
// controller's ports and read its state; what only the running daemon
// checks is caught by the restart's rollback.
func ValidateSlurmConf(ctx context.Context, ex transport.Executor, content []byte) error {
	script := transport.ScriptEnv + validateConf
	if _, err := ex.Sudo(ctx, script, content); err != nil {
		return fmt.Errorf("the new slurm.conf does not pass Slurm's parser, nothing was changed: %w", err)
	}
	return nil
}

//go:embed validate_conf.sh
var validateConf string

// waitController polls `scontrol ping` until the primary slurmctld
// answers UP, with backoff, for at most timeout.
func waitController(ctx context.Context, ex transport.Executor, timeout time.Duration) error {
	return poll(ctx, timeout, "wait for slurmctld", func(ctx context.Context) error {
		res, err := ex.Sudo(ctx, transport.ScriptEnv+"scontrol ping", nil)
		out := strings.TrimSpace(string(res.Stdout))
		if err == nil && pingUp(out) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scontrol ping: %w", err)
		}
		return fmt.Errorf("scontrol ping: %q: %w", out, errNotYet)
	})
}

// pingUp reads "Slurmctld(primary) at login01 is UP".
func pingUp(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "(primary)") && strings.HasSuffix(strings.TrimSpace(line), "is UP") {
			return true
		}
	}
	return false
}
