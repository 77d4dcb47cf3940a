package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// firewallState connects to a node and reads UFW's state in one round trip.
func (c *cluster) firewallState(ctx context.Context, node string) (*transport.Host, firewall.State, diag.Diagnostics) {
	h, err := c.host(ctx, node)
	if err != nil {
		return nil, firewall.State{}, diag.Diagnostics{connectError(node, err)}
	}
	st, err := firewall.ReadState(ctx, h)
	if err != nil {
		return nil, firewall.State{}, diag.Diagnostics{firewallReadError(node, err)}
	}
	return h, st, nil
}

// firewallLock names the node's lock of UFW: ufw's commands and the firewall's own files (the
// rule ledger, the marker) are changed only under it, and nothing done under the node's other
// lock reads them, so a node's ufw enable no longer holds up its Slurm or account writes.
const firewallLock = "ufw"

// lockedFirewallState is firewallState under the node's lock of UFW, so the state is not read
// halfway through another resource's rule change; the caller unlocks when its own change is done.
func (c *cluster) lockedFirewallState(ctx context.Context, node string) (*transport.Host, firewall.State, func(), diag.Diagnostics) {
	h, err := c.host(ctx, node)
	if err != nil {
		return nil, firewall.State{}, nil, diag.Diagnostics{connectError(node, err)}
	}
	unlock, err := h.LockNamed(ctx, firewallLock)
	if err != nil {
		return nil, firewall.State{}, nil, diag.Diagnostics{nodeError("Cannot Lock Node", node, "Waiting for the node's lock failed", "", err)}
	}
	st, err := firewall.ReadState(ctx, h)
	if err != nil {
		unlock()
		return nil, firewall.State{}, nil, diag.Diagnostics{firewallReadError(node, err)}
	}
	return h, st, unlock, nil
}

// firewallReadError advises installing ufw only when ufw is what is missing: a read that
// failed for another reason, a lost connection among them, changed nothing either.
func firewallReadError(node string, err error) diag.Diagnostic {
	if errors.Is(err, firewall.ErrNotInstalled) {
		return nodeError("UFW Not Installed", node, "The ufw command is missing", "Install ufw on the node (Debian package ufw), or declare no firewall resources for it. Nothing was changed.", err)
	}
	return nodeError("Cannot Read Firewall", node, "Reading UFW's files failed", adviceRead, err)
}
