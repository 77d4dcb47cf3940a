package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

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
