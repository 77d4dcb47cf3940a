package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
)

// Where each resource keeps its ownership records, and the objects a run declares.

// ownerDeclarations are the objects the resources of this run declare, by node and object, with
// the token of each declaring resource instance.
type ownerDeclarations struct {
	mu sync.Mutex
	by map[string]map[string]bool
	// refreshed holds the tokens of the instances in this state that this run refreshed.
	refreshed map[string]bool
}

func (o *ownerDeclarations) hold(token string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refreshed == nil {
		o.refreshed = map[string]bool{}
	}
	o.refreshed[token] = true
}

// held tells a token of an instance in this state.
func (o *ownerDeclarations) held(token string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refreshed[token]
}

// declare records a resource instance's declaration of an object and reports whether another
// instance declares it too.
func (o *ownerDeclarations) declare(node string, object ownership.Object, token string) (dup bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]map[string]bool{}
	}
	key := node + "\x00" + object.Kind + "\x00" + object.Name
	if o.by[key] == nil {
		o.by[key] = map[string]bool{}
	}
	o.by[key][token] = true
	return len(o.by[key]) > 1
}

// Where the resources keep their records.

func stringAttr(ctx context.Context, data tfsdk.State, name string, diags *diag.Diagnostics) (string, bool) {
	var v types.String
	diags.Append(data.GetAttribute(ctx, path.Root(name), &v)...)
	return v.ValueString(), !v.IsNull() && !v.IsUnknown()
}

func setAttr(ctx context.Context, data tfsdk.State, name string, diags *diag.Diagnostics) ([]string, bool) {
	var v types.Set
	diags.Append(data.GetAttribute(ctx, path.Root(name), &v)...)
	if v.IsNull() {
		return nil, true
	}
	if !fullyKnown(v) {
		return nil, false
	}
	var out []string
	diags.Append(v.ElementsAs(ctx, &out, false)...)
	return out, true
}

// recordedOn keeps the record of the object named by nameAttr on the node named by nodeAttr.
func recordedOn(kind, nodeAttr, nameAttr string) ownedSpec {
	return ownedSpec{kind: kind, locate: func(ctx context.Context, _ *cluster, data tfsdk.State) ([]string, []string, bool, diag.Diagnostics) {
		var diags diag.Diagnostics
		node, nodeKnown := stringAttr(ctx, data, nodeAttr, &diags)
		name, nameKnown := stringAttr(ctx, data, nameAttr, &diags)
		return []string{node}, []string{name}, nodeKnown && nameKnown, diags
	}}
}

// recordedPerNode keeps one record named name on the node named by nodeAttr: a node has one
// firewall, one BeeGFS client.
func recordedPerNode(kind, nodeAttr, name string) ownedSpec {
	return ownedSpec{kind: kind, locate: func(ctx context.Context, _ *cluster, data tfsdk.State) ([]string, []string, bool, diag.Diagnostics) {
		var diags diag.Diagnostics
		node, known := stringAttr(ctx, data, nodeAttr, &diags)
		return []string{node}, []string{name}, known, diags
	}}
}

// recordedOnLoginNode keeps the record of a cluster-wide account on the login node, beside the
// UID ledger.
func recordedOnLoginNode(kind string) ownedSpec {
	return ownedSpec{kind: kind, locate: func(ctx context.Context, c *cluster, data tfsdk.State) ([]string, []string, bool, diag.Diagnostics) {
		var diags diag.Diagnostics
		name, known := stringAttr(ctx, data, "name", &diags)
		// Without a login node (not configured, or not known yet) the record cannot be kept, but
		// a second declaration in this run is still refused.
		if c.settings.loginNode == "" {
			return nil, []string{name}, known, diags
		}
		return []string{c.settings.loginNode}, []string{name}, known, diags
	}}
}

// recordedOnEveryNode keeps a record named name on the node of each of nodeAttrs (strings or
// sets): the MUNGE key is one file per node.
func recordedOnEveryNode(kind, name string, nodeAttrs ...string) ownedSpec {
	return ownedSpec{kind: kind, locate: func(ctx context.Context, _ *cluster, data tfsdk.State) ([]string, []string, bool, diag.Diagnostics) {
		var diags diag.Diagnostics
		var nodes []string
		for _, a := range nodeAttrs {
			typ, d := data.Schema.TypeAtPath(ctx, path.Root(a))
			if d.HasError() {
				diags.Append(d...)
				return nil, nil, false, diags
			}
			if _, isSet := typ.(types.SetType); isSet {
				values, known := setAttr(ctx, data, a, &diags)
				if !known {
					return nil, nil, false, diags
				}
				nodes = append(nodes, values...)
				continue
			}
			v, known := stringAttr(ctx, data, a, &diags)
			if !known && !isNullAttr(ctx, data, a) {
				return nil, nil, false, diags
			}
			if v != "" {
				nodes = append(nodes, v)
			}
		}
		return nodes, []string{name}, len(nodes) > 0, diags
	}}
}

func isNullAttr(ctx context.Context, data tfsdk.State, name string) bool {
	var v types.String
	data.GetAttribute(ctx, path.Root(name), &v)
	return v.IsNull()
}

// recordedForEachListed keeps, on the node named by nodeAttr, one record for each node listed in
// listAttr: a rolling reboot owns the servers it drains and reboots, so two runs never take the
// same server, and resources with other servers keep theirs.
func recordedForEachListed(kind, nodeAttr, listAttr string) ownedSpec {
	return ownedSpec{kind: kind, locate: func(ctx context.Context, c *cluster, data tfsdk.State) ([]string, []string, bool, diag.Diagnostics) {
		var diags diag.Diagnostics
		node, nodeKnown := stringAttr(ctx, data, nodeAttr, &diags)
		var list types.List
		diags.Append(data.GetAttribute(ctx, path.Root(listAttr), &list)...)
		if list.IsNull() || list.IsUnknown() || diags.HasError() {
			return nil, nil, false, diags
		}
		var names []string
		for _, v := range list.Elements() {
			s, ok := v.(types.String)
			if !ok || s.IsUnknown() {
				return nil, nil, false, diags
			}
			names = append(names, c.canonicalNode(s.ValueString()))
		}
		// A controller known only at apply keeps no record yet, but a second declaration of a
		// server in this run is still refused.
		if !nodeKnown {
			return nil, names, true, diags
		}
		return []string{node}, names, true, diags
	}}
}
