package munge

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// Outcome is what Install did on one node.
type Outcome struct {
	// KeyChanged: the node had another key, or none.
	KeyChanged bool
	// Restarted: munged was (re)started and answered afterwards.
	Restarted bool
}

// Install makes the node's key equal to key, owned by munge with mode 0400,
// and has munged run with it: restarted when the key changed or it was not
// running (it reads the key only at start), enabled at boot either way. It
// returns once munged answers, so whatever depends on MUNGE can run next.
func Install(ctx context.Context, h KeyWriter, key []byte) (Outcome, error) {
	before, err := ReadState(ctx, h)
	if err != nil {
		return Outcome{}, err
	}
	_, err = h.WriteFile(ctx, transport.File{Path: KeyPath, Content: key, Owner: KeyOwner, Group: KeyGroup, Mode: KeyMode})
	if err != nil {
		return Outcome{}, fmt.Errorf("install the MUNGE key: %w", err)
	}
	out := Outcome{KeyChanged: !before.KeyExists || before.Fingerprint != Fingerprint(key)}
	switch {
	case out.KeyChanged || !before.Active:
		if err := Restart(ctx, h); err != nil {
			return out, err
		}
		out.Restarted = true
	case !before.Enabled:
		if _, err := h.Sudo(ctx, transport.ScriptEnv+"systemctl enable --quiet "+service, nil); err != nil {
			return out, fmt.Errorf("enable munge: %w", err)
		}
		transport.Changed(ctx, h, "enabled munge at boot")
	}
	return out, nil
}

// restartScript quotes munged's own last words when it does not come back,
// for example a key it refuses.
var restartScript = transport.NewScript().Text(units.EnableText(service)+" || exit").Set("unit", service).Text(restartText).String()

//go:embed restart.sh
var restartText string

// Restart restarts munged, enables it at boot, and waits until it answers.
func Restart(ctx context.Context, ex transport.Executor) error {
	if _, err := ex.Sudo(ctx, restartScript, nil); err != nil {
		return fmt.Errorf("restart munge: %w", err)
	}
	transport.Changed(ctx, ex, "restarted munge")
	return WaitReady(ctx, ex, readyPoll)
}

// readyPoll is how often to ask munged whether it answers after a restart.
const readyPoll = 200 * time.Millisecond

// WaitReady polls until munged makes a credential or ctx ends (the caller's timeout, which the
// user sets), and then reports the last refusal.
func WaitReady(ctx context.Context, ex transport.Executor, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		_, err := ex.Sudo(ctx, transport.ScriptEnv+"munge -n >/dev/null", nil)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("munged does not answer: %w (last attempt: %w)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// Credential makes an empty credential with munged on the host.
func Credential(ctx context.Context, ex transport.Executor) ([]byte, error) {
	res, err := ex.Sudo(ctx, transport.ScriptEnv+"munge -n", nil)
	if err != nil {
		return nil, fmt.Errorf("make a credential with munge -n: %w", err)
	}
	cred := bytes.TrimSpace(res.Stdout)
	if !bytes.HasPrefix(cred, []byte("MUNGE:")) {
		return nil, errors.New("make a credential with munge -n: the output is not a MUNGE credential")
	}
	return cred, nil
}

// Decode has munged on the host decode cred, as `munge -n | unmunge` does in
// the guide's verification, and reports unmunge's STATUS unless it is Success.
//
// also is shell text that prints sections of its own (transport.SectionFuncs) and runs after
// unmunge in the same command, so a check that reads more of the node costs it one round trip;
// out is that command's output, for the caller to parse those sections from (nil when the
// command did not run). The command exits with unmunge's status, whatever also's commands do.
func Decode(ctx context.Context, ex transport.Executor, cred []byte, also string) (out []byte, err error) {
	res, err := ex.Sudo(ctx, transport.ScriptEnv+transport.SectionFuncs+"decode=$(unmunge); decoded=$?; secv unmunge $decoded \"$decode\"\n"+also+"exit $decoded\n", cred)
	status := statusLine(res.Stdout)
	switch {
	case err == nil && strings.HasPrefix(status, "Success"):
		return res.Stdout, nil
	case status != "":
		return res.Stdout, fmt.Errorf("unmunge: STATUS %s", status)
	case err != nil:
		return res.Stdout, fmt.Errorf("unmunge: %w", err)
	}
	return res.Stdout, errors.New("unmunge printed no STATUS")
}

// Decoded is one node's part of VerifyAcross.
type Decoded struct {
	// Err is why the credential did not decode on the node, nil when it did.
	Err error
	// Out is the output of the node's decode command with the sections of VerifyAcross's also.
	Out []byte
}

// VerifyAcross is the guide's `munge -n | unmunge` for a whole cluster: one credential made on
// the controller, decoded by every node at once. One credential serves all of them because each
// munged keeps its own replay cache: a credential decodes once on each node, and only a second
// decode on the same node is refused as replayed. So the nodes must be distinct hosts; the same
// host under two names would refuse the credential the second time. also rides along with each
// node's decode (see Decode). It returns each node's result, and an error alone when the
// controller could not make the credential.
func VerifyAcross(ctx context.Context, controller transport.Executor, nodes map[string]transport.Executor, also string) (map[string]Decoded, error) {
	cred, err := Credential(ctx, controller)
	if err != nil {
		return nil, err
	}
	results := make(map[string]Decoded, len(nodes))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for name, ex := range nodes {
		wg.Go(func() {
			out, err := Decode(ctx, ex, cred, also)
			mu.Lock()
			results[name] = Decoded{Err: err, Out: out}
			mu.Unlock()
		})
	}
	wg.Wait()
	return results, nil
}

func statusLine(out []byte) string {
	sections, err := transport.ParseSections(out)
	if err != nil {
		return ""
	}
	for _, line := range sections["unmunge"].Lines {
		if v, ok := strings.CutPrefix(line, "STATUS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Stop stops munged and disables it at boot; the key stays.
func Stop(ctx context.Context, ex transport.Executor) error {
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+"systemctl disable --now --quiet "+service, nil); err != nil {
		return fmt.Errorf("stop munge: %w", err)
	}
	return nil
}

// LibPackage is the library munged is built with; munge depends on it at its own exact version.
const LibPackage = "libmunge2"

// PinnedPackages move together at a pinned version: apt does not pick an older library for
// munge by itself.
var PinnedPackages = []string{LibPackage, Package}

// InstallVersion brings the node's MUNGE packages to version, their own restart held, and
// restarts a running munged afterwards (waiting until it answers), so it runs the installed
// binary. It returns whether the packages changed; a node at the version is only read.
// munged that was not running is left to Install, which starts it with the cluster's key.
func InstallVersion(ctx context.Context, ex transport.Executor, version string) (changed bool, err error) {
	u, err := units.Read(ctx, ex, service+".service")
	if err != nil {
		return false, fmt.Errorf("read munged's state: %w", err)
	}
	upgraded, err := packages.Pin(ctx, ex, version, PinnedPackages...)
	if err != nil || len(upgraded) == 0 {
		return false, err
	}
	if u.Active != "active" {
		return true, nil
	}
	return true, Restart(ctx, ex)
}
