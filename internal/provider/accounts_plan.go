package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

// accountPlan is what a plan asks of the nodes for one user or group.
type accountPlan struct {
	kind     users.Kind
	name     string
	id       int64
	newNodes []string // nodes this plan adds the account to
	primary  string   // a user's primary group
	groups   []string // a user's supplementary groups
}

func (p accountPlan) idAttr() (path.Path, string) {
	if p.kind == users.KindGroup {
		return path.Root("gid"), "gid"
	}
	return path.Root("uid"), "uid"
}

// existing reports whether the node has the account and under which ID.
func (p accountPlan) existing(st users.State) (bool, int64) {
	if p.kind == users.KindGroup {
		g := st.Groups[p.name]
		return g.Exists, g.GID
	}
	u := st.Users[p.name]
	return u.Exists, u.UID
}

// checkOnNodes refuses at plan time, with no host changed: an ID that another name holds on a
// node (the ledger only knows IDs this provider handed out), an account that a node newly
// covered already has under another ID, and a group that a node lacks.
func (c *cluster) checkOnNodes(ctx context.Context, nodeNames []string, p accountPlan) diag.Diagnostics {
	var (
		mu    sync.Mutex
		diags diag.Diagnostics
	)
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		userNames, groupNames := []string{p.name}, append([]string{p.primary}, p.groups...)
		uids, gids := []int64{p.id}, []int64(nil)
		if p.kind == users.KindGroup {
			userNames, groupNames, uids, gids = nil, []string{p.name}, nil, []int64{p.id}
		}
		groupNames = slices.DeleteFunc(groupNames, func(g string) bool { return g == "" })
		st, err := users.ReadAccounts(ctx, h, userNames, groupNames)
		if err != nil {
			return err
		}
		owners, err := users.ReadIDOwners(ctx, h, uids, gids)
		if err != nil {
			return err
		}
		found := p.problems(node, st, owners)
		mu.Lock()
		diags.Append(found...)
		mu.Unlock()
		return nil
	})
	diags.Append(failureDiags(failures, "Cannot Check Accounts", "Looking up accounts with getent failed",
		"Check that getent works on the node.")...)
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Detail() < diags[j].Detail() })
	return diags
}

func (p accountPlan) problems(node string, st users.State, owners users.IDOwners) diag.Diagnostics {
	var diags diag.Diagnostics
	idPath, idName := p.idAttr()
	owner := owners.UIDs[p.id]
	if p.kind == users.KindGroup {
		owner = owners.GIDs[p.id]
	}
	if owner != "" && owner != p.name {
		diags.Append(nodeAttributeError(idPath, "ID Already Used", node,
			fmt.Sprintf("%s %d already belongs to %s %s", idName, p.id, p.kind, owner),
			"Pick an ID that no account holds: files on the shared /home are owned by number, so two names on one ID share them.", nil))
	}
	if exists, id := p.existing(st); exists && id != p.id && slices.Contains(p.newNodes, node) {
		diags.Append(nodeAttributeError(idPath, "Account Exists With Another ID", node,
			fmt.Sprintf("%s %s already exists there with %s %d", p.kind, p.name, idName, id),
			fmt.Sprintf("Set %s = %d, or renumber the account by hand first; the provider never renumbers an account it did not create.", idName, id), nil))
	}
	for _, g := range append([]string{p.primary}, p.groups...) {
		if g == "" || st.Groups[g].Exists {
			continue
		}
		attr := path.Root("groups")
		if g == p.primary {
			attr = path.Root("group")
		}
		diags.Append(nodeAttributeError(attr, "Unknown Group", node, fmt.Sprintf("Group %q does not exist", g),
			"Create it with a gpucluster_group resource and refer to it by its id, or fix the name.", nil))
	}
	return diags
}

// adopt finds, among the nodes this apply newly covers, those that already hold the account
// under the same ID. The resource takes them over, and destroy leaves them as it found them.
func (c *cluster) adopt(ctx context.Context, p accountPlan) ([]string, diag.Diagnostics) {
	userNames, groupNames := []string{p.name}, []string(nil)
	if p.kind == users.KindGroup {
		userNames, groupNames = nil, []string{p.name}
	}
	observed, diags := c.readAccounts(ctx, p.newNodes, userNames, groupNames)
	var adopted []string
	for _, node := range p.newNodes {
		st, ok := observed[node]
		if !ok {
			continue
		}
		exists, id := p.existing(st)
		switch {
		case exists && id == p.id:
			adopted = append(adopted, node)
		case exists:
			idPath, idName := p.idAttr()
			diags.Append(nodeAttributeError(idPath, "Account Exists With Another ID", node,
				fmt.Sprintf("%s %s appeared there with %s %d after the plan", p.kind, p.name, idName, id),
				"Plan again.", nil))
		}
	}
	sort.Strings(adopted)
	return adopted, diags
}

// intersect keeps the entries of a that b also has.
func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
