package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// onNode is the model of a resource that lives on one node.
type onNode interface{ nodeName() string }

// stateOnNode is how Read and Delete of a one-node resource begin: the state, and the
// connection to its node. ok is false once diags says why there is none.
func stateOnNode[M onNode](ctx context.Context, c *cluster, state tfsdk.State, diags *diag.Diagnostics) (m M, h *transport.Host, ok bool) {
	diags.Append(state.Get(ctx, &m)...)
	if diags.HasError() {
		return m, nil, false
	}
	node := m.nodeName()
	h, ok = c.connect(ctx, node, diags)
	return m, h, ok
}
