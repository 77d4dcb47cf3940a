package provider

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// verifyMunge connects to the nodes and runs munge.VerifyAcross from the controller, with also
// riding along on every node: nodes it cannot reach and nodes where the credential does not
// decode come back as failures, sorted by node, and the decode command's output by node for
// also's sections; err is set alone when the controller made no credential. The resource and
// the gpucluster_cluster_check data source share it, so both check MUNGE the same way.
func verifyMunge(ctx context.Context, c *cluster, ctl *transport.Host, nodeNames []string, also string) ([]nodeFailure, map[string][]byte, error) {
	var mu sync.Mutex
	hosts := make(map[string]transport.Executor, len(nodeNames))
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		mu.Lock()
		hosts[node] = h
		mu.Unlock()
		return nil
	})
	results, err := munge.VerifyAcross(ctx, ctl, hosts, also)
	if err != nil {
		return nil, nil, err
	}
	outs := make(map[string][]byte, len(results))
	for node, r := range results {
		outs[node] = r.Out
		if r.Err != nil {
			failures = append(failures, nodeFailure{node: node, err: r.Err})
		}
	}
	slices.SortFunc(failures, func(a, b nodeFailure) int { return strings.Compare(a.node, b.node) })
	return failures, outs, nil
}
