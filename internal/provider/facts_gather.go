package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// gatherFacts connects to a node and reads its facts in one round trip; name labels the
// diagnostics, address is what is dialled.
func (c *cluster) gatherFacts(ctx context.Context, name, address string) (*transport.Host, nodes.Facts, diag.Diagnostics) {
	var diags diag.Diagnostics
	host, err := c.host(ctx, address)
	if err != nil {
		diags.Append(connectError(name, err))
		return nil, nodes.Facts{}, diags
	}
	facts, err := nodes.Gather(ctx, host)
	if err != nil {
		diags.Append(nodeError("Cannot Read Node Facts", name, "Reading OS, hardware and GPU facts failed",
			"Check that the node runs a Linux with /etc/os-release and coreutils.", err))
	}
	for _, w := range facts.Warnings {
		diags.AddWarning("Incomplete Node Facts", fmt.Sprintf("On node %s: %s.\n\nThe facts concerned may be zero or come from a fallback.", name, w))
	}
	return host, facts, diags
}

// waitUntilBooted waits up to timeout for a machine that may still be booting: for SSH to
// answer, then for its first boot to finish. Each retry is logged at INFO, so a plain
// TF_LOG=info apply shows what it waits for. name labels the log, address is what is dialled.
func (c *cluster) waitUntilBooted(ctx context.Context, name, address string, timeout time.Duration) error {
	if c.isOffline(address) {
		_, err := c.host(ctx, address)
		return err
	}
	cfg, err := c.connConfig(address, 0)
	if err != nil {
		return err
	}
	wait := transport.NewBootWait(timeout, func(p transport.WaitProgress) {
		tflog.Info(ctx, "node not up yet, waiting", map[string]any{"node": name, "address": p.Address, "waiting_for": p.Waiting,
			"attempt": p.Attempt, "elapsed": p.Elapsed.Round(time.Second).String(), "cause": p.Cause.Error()})
	})
	host, err := c.pool.HostWhenUp(ctx, cfg, wait)
	if err != nil {
		return err
	}
	return nodes.WaitBooted(ctx, host, name, address, wait)
}
