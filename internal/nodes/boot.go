package nodes

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

//go:embed boot_state.sh
var bootStateScript string

// ErrStillBooting marks a machine whose first boot has not finished yet.
var ErrStillBooting = errors.New("the first boot has not finished")

// ErrBootFailed marks a boot that ended in a state the machine does not leave by itself.
var ErrBootFailed = errors.New("the boot failed")

// BootState is how far a machine's boot got: cloud-init's status (empty where cloud-init is
// not installed) and systemd's system state.
type BootState struct {
	CloudInit, Systemd string
}

// ParseBootState reads the boot state script's output.
func ParseBootState(out string) BootState {
	var s BootState
	for line := range strings.Lines(out) {
		stage, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch stage {
		case "cloud-init":
			s.CloudInit = value
		case "systemd":
			s.Systemd = value
		}
	}
	return s
}

// Err is nil once the boot finished: cloud-init done (or disabled, or absent) and systemd
// running, or degraded (a unit failed, yet the boot ended). It wraps ErrBootFailed for a
// cloud-init error and for systemd in maintenance (emergency or rescue mode) or stopping, and
// ErrStillBooting for anything else.
func (s BootState) Err() error {
	switch s.CloudInit {
	case "", "done", "disabled":
	case "error":
		return fmt.Errorf("%w: cloud-init status is error (see `cloud-init status --long` and /var/log/cloud-init.log on the node)", ErrBootFailed)
	default:
		return fmt.Errorf("%w: cloud-init status is %q", ErrStillBooting, s.CloudInit)
	}
	switch s.Systemd {
	case "running", "degraded":
		return nil
	case "maintenance", "stopping":
		return fmt.Errorf("%w: systemd's system state is %q (see `systemctl --failed` and the journal on the node's console)", ErrBootFailed, s.Systemd)
	}
	return fmt.Errorf("%w: systemd's system state is %q", ErrStillBooting, s.Systemd)
}

// WaitBooted polls the machine until its first boot finished, within wait. It reads as the
// login user (Runner): the state needs no root, and sudo may not work before the boot ends.
// node and address name the machine in progress and errors.
func WaitBooted(ctx context.Context, r Runner, node, address string, wait transport.BootWait) error {
	booting := func(err error) bool { return errors.Is(err, ErrStillBooting) }
	return wait.Retry(ctx, node, address, "boot", booting, func(ctx context.Context) error {
		res, err := r.Run(ctx, bootStateScript, nil)
		if err != nil {
			return fmt.Errorf("reading the boot state: %w", err)
		}
		return ParseBootState(string(res.Stdout)).Err()
	})
}
