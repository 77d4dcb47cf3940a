package provider

import (
	"context"
	"errors"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// deregistration is one entity a destroy takes out of the management service: what it is,
// for the messages, and the beegfs command that deletes it.
type deregistration struct {
	what    string // "storage target 101", "storage node 1"
	command string // the command an admin runs by hand
	run     func(ctx context.Context, ex transport.Executor, mgmtdHost string) (beegfs.DeregisterResult, error)
}

func targetDeregistration(targetID int64) deregistration {
	return deregistration{
		what:    "storage target " + strconv.FormatInt(targetID, 10),
		command: beegfs.CLIPath + " target delete --yes storage:" + strconv.FormatInt(targetID, 10),
		run: func(ctx context.Context, ex transport.Executor, mgmtdHost string) (beegfs.DeregisterResult, error) {
			return beegfs.DeregisterTarget(ctx, ex, mgmtdHost, targetID)
		},
	}
}

func nodeDeregistration(nodeType string, nodeNumID int64) deregistration {
	return deregistration{
		what:    nodeType + " node " + strconv.FormatInt(nodeNumID, 10),
		command: beegfs.CLIPath + " node delete --yes " + nodeType + ":" + strconv.FormatInt(nodeNumID, 10),
		run: func(ctx context.Context, ex transport.Executor, mgmtdHost string) (beegfs.DeregisterResult, error) {
			return beegfs.DeregisterNode(ctx, ex, mgmtdHost, nodeType, nodeNumID)
		},
	}
}

// deregister deletes d from the management service at mgmtdHost by running beegfs on that
// host, where the guide runs it and where cert.pem and conn.auth are. A management service
// that cannot be reached (host offline, service stopped, no beegfs-tools) is a warning: the
// destroy itself is done, and the admin finishes it by hand. The management service's
// refusal is an error in its own words, unless refusedIsWarning (a node the real rules keep).
func (c *cluster) deregister(ctx context.Context, node, mgmtdHost string, d deregistration, refusedIsWarning bool) diag.Diagnostics {
	var diags diag.Diagnostics
	byHand := "Run `" + d.command + " --mgmtd-addr " + mgmtdHost + ":" + strconv.Itoa(beegfs.MgmtdAPIPort) + "` on " + mgmtdHost + " once the management service answers."
	h, err := c.host(ctx, mgmtdHost)
	if err != nil {
		diags.Append(nodeWarning("Not Deregistered From BeeGFS Management", mgmtdHost,
			d.what+" of "+node+" is destroyed, but the provider cannot reach the management host to delete it from the management service", byHand, err))
		return diags
	}
	res, err := d.run(ctx, h, mgmtdHost)
	var refused *beegfs.RefusedError
	switch {
	case errors.As(err, &refused) && refusedIsWarning:
		diags.Append(nodeWarning("BeeGFS Node Kept By Management", mgmtdHost,
			"The management service keeps "+d.what+" of "+node+": "+refused.Message, "Nothing to do unless you retire the node; then follow the management service's reason.", nil))
	case errors.As(err, &refused):
		diags.Append(nodeError("Management Service Refused Deregistration", mgmtdHost,
			d.what+" of "+node+" is out of its host's config, but the management service refused to delete it", "Follow the management service's reason, then destroy again (or run `"+d.command+"` by hand).", err))
	case err != nil:
		diags.Append(nodeError("Cannot Deregister From BeeGFS Management", mgmtdHost, "Running "+beegfs.CLIPath+" to delete "+d.what+" of "+node+" failed", byHand, err))
	case res.Outcome == beegfs.MgmtdUnavailable:
		diags.Append(nodeWarning("Not Deregistered From BeeGFS Management", mgmtdHost,
			d.what+" of "+node+" is destroyed, but the management service did not delete it: "+res.Reason, byHand, nil))
	}
	return diags
}

// deregisterStorage takes a destroyed storage target, and with the host's last target its
// storage node, out of the management service. 7.x has no beegfs command: nothing is done.
func (c *cluster) deregisterStorage(ctx context.Context, node, mgmtdHost string, want beegfs.TargetIdentity, hs beegfs.StorageHost, lastTarget bool) diag.Diagnostics {
	if r, err := hs.Release(); err != nil || r.Major < 8 {
		return nil
	}
	diags := c.deregister(ctx, node, mgmtdHost, targetDeregistration(want.TargetID), false)
	if diags.HasError() || !lastTarget {
		return diags
	}
	diags.Append(c.deregister(ctx, node, mgmtdHost, nodeDeregistration("storage", want.NodeNumID), true)...)
	return diags
}
