package provider

import (
	"context"
	"sort"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// nodeFailure is one node's failure, kept apart so a diagnostic can name the node and the step.
type nodeFailure struct {
	node    string
	connect bool
	err     error
}

// onEachNode runs fn on every node at once, over the pooled connections, and returns the
// failures sorted by node so diagnostics come out in a stable order.
func (c *cluster) onEachNode(ctx context.Context, nodeNames []string, fn func(node string, h *transport.Host) error) []nodeFailure {
	var (
		mu       sync.Mutex
		failures []nodeFailure
		wg       sync.WaitGroup
	)
	for _, node := range nodeNames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := c.host(ctx, node)
			if err == nil {
				err = fn(node, h)
				if err == nil {
					return
				}
				mu.Lock()
				failures = append(failures, nodeFailure{node: node, err: err})
				mu.Unlock()
				return
			}
			mu.Lock()
			failures = append(failures, nodeFailure{node: node, connect: true, err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(failures, func(i, j int) bool { return failures[i].node < failures[j].node })
	return failures
}

// failureDiags turns failures into diagnostics: connection problems get the connection advice,
// the rest the caller's summary and advice.
func failureDiags(failures []nodeFailure, summary, happened, todo string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, f := range failures {
		if f.connect {
			diags.Append(connectError(f.node, f.err))
			continue
		}
		diags.Append(nodeError(summary, f.node, happened, todo, f.err))
	}
	return diags
}

// readOnEachNode is onEachNode for a read: what read returns on each node, by node, and the
// nodes where it failed.
func readOnEachNode[T any](ctx context.Context, c *cluster, nodeNames []string, read func(*transport.Host) (T, error)) (map[string]T, []nodeFailure) {
	var mu sync.Mutex
	byNode := make(map[string]T, len(nodeNames))
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		v, err := read(h)
		if err != nil {
			return err
		}
		mu.Lock()
		byNode[node] = v
		mu.Unlock()
		return nil
	})
	return byNode, failures
}

// changeOnEachNode runs a step that tells whether it changed anything (the users package's
// Ensure, Create and Remove steps) on every node at once, and reports each node where it failed.
func (c *cluster) changeOnEachNode(ctx context.Context, nodeNames []string, step func(*transport.Host) (bool, error), summary, happened, todo string) diag.Diagnostics {
	failures := c.onEachNode(ctx, nodeNames, func(_ string, h *transport.Host) error {
		_, err := step(h)
		return err
	})
	return failureDiags(failures, summary, happened, todo)
}
