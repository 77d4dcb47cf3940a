package beegfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The 8.x `beegfs` command (package beegfs-tools) talks to the management
// service's API over TLS with the shared secret (confirmed: beegfs-go
// v8.4.0 ctl/pkg/config). The provider runs it on the management host,
// where the guide runs it (Verification: `beegfs health check --mgmtd-addr
// login01:8010`) and where cert.pem and conn.auth, its defaults, are.
const (
	CLIPath      = SbinDir + "/beegfs"
	CLIPackage   = "beegfs-tools"
	MgmtdAPIPort = 8010
)

// MgmtdAPIAddr is the --mgmtd-addr of the management service on host.
func MgmtdAPIAddr(host string) (string, error) {
	if err := ValidateMgmtdHost(host); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(MgmtdAPIPort)), nil
}

// Deregistration is what deleting an entity from the management service did.
type Deregistration int

const (
	// Deregistered: the management service deleted it.
	Deregistered Deregistration = iota
	// NotRegistered: the management service did not know it (any more).
	NotRegistered
	// MgmtdUnavailable: the management service could not be asked (it did
	// not answer, TLS or the secret did not match, the host has no `beegfs`
	// command); nothing was deleted. Reason says why.
	MgmtdUnavailable
)

// DeregisterResult is a Deregistration and, for MgmtdUnavailable, why.
type DeregisterResult struct {
	Outcome Deregistration
	Reason  string
}

// RefusedError is the management service's refusal, in its own words.
type RefusedError struct{ Message string }

func (e *RefusedError) Error() string { return e.Message }

// DeregisterTarget deletes storage target targetID from the management
// service at mgmtdHost (`beegfs target delete --yes`), running the command
// through ex on the management host. Real 8.x deletes an online target too
// and does not look for files that use it; the caller keeps its own
// refusal for a target that holds chunks.
func DeregisterTarget(ctx context.Context, ex transport.Executor, mgmtdHost string, targetID int64) (DeregisterResult, error) {
	if err := ValidateNumID("target_id", targetID); err != nil {
		return DeregisterResult{}, err
	}
	return deregister(ctx, ex, mgmtdHost, "target", "storage:"+strconv.FormatInt(targetID, 10))
}

// DeregisterNode deletes a metadata or storage node from the management
// service (`beegfs node delete --yes`). The management service refuses the
// node that holds the root directory and a storage node with targets left.
func DeregisterNode(ctx context.Context, ex transport.Executor, mgmtdHost, nodeType string, nodeNumID int64) (DeregisterResult, error) {
	if nodeType != "meta" && nodeType != "storage" {
		return DeregisterResult{}, fmt.Errorf("node type %q: want meta or storage", nodeType)
	}
	if err := ValidateNumID("node_num_id", nodeNumID); err != nil {
		return DeregisterResult{}, err
	}
	return deregister(ctx, ex, mgmtdHost, "node", nodeType+":"+strconv.FormatInt(nodeNumID, 10))
}

func deregister(ctx context.Context, ex transport.Executor, mgmtdHost, kind, id string) (DeregisterResult, error) {
	addr, err := MgmtdAPIAddr(mgmtdHost)
	if err != nil {
		return DeregisterResult{}, err
	}
	// Status 127 without the command; its own status otherwise.
	script := transport.NewScript().Set("cli", CLIPath).
		Text(`[ -x "$cli" ] || exit 127`).
		Command(CLIPath, kind, "delete", "--mgmtd-addr", addr, "--yes", id).String()
	_, err = ex.Sudo(ctx, script, nil)
	var exit *transport.ExitError
	switch {
	case err == nil:
		return DeregisterResult{Outcome: Deregistered}, nil
	case !errors.As(err, &exit):
		return DeregisterResult{}, fmt.Errorf("%s delete %s: %w", kind, id, err)
	case exit.Status == 127:
		return DeregisterResult{Outcome: MgmtdUnavailable, Reason: CLIPath + " is not installed (package " + CLIPackage + ")"}, nil
	}
	msg := cliError(exit.Stderr)
	switch {
	case strings.HasSuffix(msg, kind+" "+id+" does not exist"):
		return DeregisterResult{Outcome: NotRegistered}, nil
	case strings.Contains(msg, "desc = Delete "+kind+": "):
		return DeregisterResult{}, &RefusedError{Message: msg}
	}
	// Not the management service's answer: the command could not ask it (no
	// answer, TLS, the secret, a certificate missing on the host).
	return DeregisterResult{Outcome: MgmtdUnavailable, Reason: msg}, nil
}

// cliError is the `beegfs` command's error line(s) without "Error: ".
func cliError(stderr string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "WARNING:") || strings.HasPrefix(l, "To avoid disruptions") || strings.HasPrefix(l, "Reason:") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(l, "Error: "))
	}
	return strings.Join(lines, "\n")
}
