package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
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
	// plannedGroup tells whether a gpucluster_group this run plans puts a group on a node.
	plannedGroup func(node, group string) bool
	// shell and home complete a user's account, for what taking over an existing one changes.
	shell, home string
	// allowSystemID and allowAdmin are the resource's opt-ins (allow_system_uid or
	// allow_system_gid, allow_admin_groups).
	allowSystemID, allowAdmin bool
}

func (p accountPlan) userSpec() users.UserSpec {
	return users.UserSpec{Name: p.name, UID: p.id, PrimaryGroup: p.primary, Groups: p.groups, Shell: p.shell, Home: p.home}
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
// covered already has under another ID, an existing administrator account the configuration has
// not opted in to, a group that a node lacks, and a login shell that is not there. What taking
// over an existing user changes on it (groups it leaves, its primary group) is one warning
// naming each node.
func (c *cluster) checkOnNodes(ctx context.Context, nodeNames []string, p accountPlan) diag.Diagnostics {
	var (
		mu      sync.Mutex
		diags   diag.Diagnostics
		changes = map[string][]string{}
	)
	failures := c.onEachNode(ctx, nodeNames, func(node string, h *transport.Host) error {
		userNames, groupNames := []string{p.name}, append([]string{p.primary}, p.groups...)
		uids, gids := []int64{p.id}, []int64(nil)
		if p.kind == users.KindGroup {
			userNames, groupNames, uids, gids = nil, []string{p.name}, nil, []int64{p.id}
		}
		groupNames = slices.DeleteFunc(groupNames, func(g string) bool { return g == "" })
		var shells []string
		if p.shell != "" {
			shells = []string{p.shell}
		}
		st, err := users.Read(ctx, h, users.Lookup{Users: userNames, Groups: groupNames, Shells: shells})
		if err != nil {
			return err
		}
		owners, err := users.ReadIDOwners(ctx, h, uids, gids)
		if err != nil {
			return err
		}
		p.plannedGroup = c.groupPlannedOn
		found := p.problems(node, st, owners)
		mu.Lock()
		diags.Append(found...)
		if c := p.takeOverChanges(node, st); len(c) > 0 {
			changes[node] = c
		}
		mu.Unlock()
		return nil
	})
	diags.Append(lookupFailureDiags(failures, "Cannot Check Accounts", "Looking up "+string(p.kind)+" "+p.name+" and its IDs failed")...)
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Detail() < diags[j].Detail() })
	if w := takeOverWarning(p, changes); w != nil {
		diags.Append(w)
	}
	return diags
}

// lookupFailureDiags words a failed account lookup by its cause: the node's own answer (getent
// failing, output that does not parse, sudo refusing), or a connection that ended or a command
// deadline that passed before the node answered, which no advice about getent would fix.
func lookupFailureDiags(failures []nodeFailure, summary, happened string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, f := range failures {
		switch {
		case f.connect:
			diags.Append(connectError(f.node, f.err))
		case nodeAnswered(f.err):
			diags.Append(nodeError(summary, f.node, happened,
				"Nothing was changed. The original error quotes the node's answer: check that getent passwd and getent group work there (nsswitch.conf, sssd or LDAP when they are used).", f.err))
		default:
			diags.Append(nodeError("Node Did Not Answer", f.node, happened+": the connection ended or the command timed out before the node answered",
				"Nothing was changed by this step. Check that the node is up, reachable and not overloaded (command_timeout bounds each command), then run Terraform again.", f.err))
		}
	}
	return diags
}

// nodeAnswered tells an error the node gave (a command's exit status, sudo's refusal, account
// output that does not parse) from a transport failure, which the transport reports with other
// error types.
func nodeAnswered(err error) bool {
	var (
		exit   *transport.ExitError
		sudo   *transport.SudoError
		answer *users.AnswerError
	)
	return errors.As(err, &exit) || errors.As(err, &sudo) || errors.As(err, &answer)
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
			fmt.Sprintf("%s %s already exists there with %s %d", p.kind, p.name, idName, id), p.otherIDAdvice(id), nil))
	}
	if d := p.adminAccountError(node, st); d != nil {
		diags.Append(d)
	}
	for _, g := range append([]string{p.primary}, p.groups...) {
		if g == "" || st.Groups[g].Exists || (p.plannedGroup != nil && p.plannedGroup(node, g)) {
			continue
		}
		attr := path.Root("groups")
		if g == p.primary {
			attr = path.Root("group")
		}
		diags.Append(nodeAttributeError(attr, "Unknown Group", node, fmt.Sprintf("Group %q does not exist", g),
			"Create it with a gpucluster_group resource and refer to it by its id, or fix the name.", nil))
	}
	if d := p.missingShellError(node, st); d != nil {
		diags.Append(d)
	}
	return diags
}

// missingShellError refuses a login shell with no executable file at its path on the node:
// useradd and usermod accept any path, and the user then cannot log in there, over SSH or in a
// Slurm job's shell.
func (p accountPlan) missingShellError(node string, st users.State) diag.Diagnostic {
	sh, asked := st.Shells[p.shell]
	if p.kind != users.KindUser || !asked || sh.Executable {
		return nil
	}
	todo := "Install the shell on that node, or set shell to one every node in nodes has (the default is /bin/bash). No host was changed."
	if sh.Listed {
		todo = "The node's /etc/shells lists it, so its package may have been removed. " + todo
	}
	return nodeAttributeError(path.Root("shell"), "Shell Not Found", node,
		fmt.Sprintf("Login shell %s is not an executable file", p.shell), todo, nil)
}

// otherIDAdvice is what to do about an account that exists under another ID. Matching that ID
// is advice only when this resource could take it: root's 0, or a system ID without the opt-in,
// would itself be refused.
func (p accountPlan) otherIDAdvice(id int64) string {
	_, idName := p.idAttr()
	if err := users.ValidateID(p.kind, id, p.allowSystemID); err != nil {
		return fmt.Sprintf("That %s is one this resource cannot manage (%v): %s is the operating system's own %s. "+
			"Choose another name; the provider never renumbers an account it did not create.", idName, err, p.name, p.kind)
	}
	return fmt.Sprintf("Set %s = %d, or renumber the account by hand first; the provider never renumbers an account it did not create.", idName, id)
}

// adminAccountError refuses to take over an existing user who is an administrator on the node
// unless allow_admin_groups says so: its groups would follow the configuration from then on.
func (p accountPlan) adminAccountError(node string, st users.State) diag.Diagnostic {
	u := st.Users[p.name]
	if p.kind != users.KindUser || p.allowAdmin || !u.Exists || u.UID != p.id || !slices.Contains(p.newNodes, node) {
		return nil
	}
	admin := users.AdminGroupsIn(append([]string{u.PrimaryGroupName}, u.Groups...)...)
	if len(admin) == 0 {
		return nil
	}
	return nodeAttributeError(path.Root("allow_admin_groups"), "Existing Account Is An Administrator", node,
		fmt.Sprintf("User %s already exists there and is in %s, an administrator group", p.name, strings.Join(admin, ", ")),
		"Taking it over would make its groups follow this resource from now on, and an apply could take it out of "+
			strings.Join(admin, ", ")+". Leave administrator accounts to the nodes' own setup, or set allow_admin_groups = true "+
			"and list the groups it must keep in group and groups. No host was changed.", nil)
}

// takeOverChanges says what making an existing user on a node newly covered match the
// configuration changes on it.
func (p accountPlan) takeOverChanges(node string, st users.State) []string {
	u := st.Users[p.name]
	if p.kind != users.KindUser || !u.Exists || u.UID != p.id || !slices.Contains(p.newNodes, node) {
		return nil
	}
	return users.AdoptionChanges(p.userSpec(), u)
}

// takeOverWarning shows, per node, what the apply changes on accounts it takes over: the plan's
// diff only shows the configuration, and an account made by hand can lose groups it relies on.
func takeOverWarning(p accountPlan, changes map[string][]string) diag.Diagnostic {
	if len(changes) == 0 {
		return nil
	}
	nodeNames := slices.Sorted(maps.Keys(changes))
	lines := make([]string, len(nodeNames))
	for i, n := range nodeNames {
		lines[i] = fmt.Sprintf("- %s: %s", n, strings.Join(changes[n], "; "))
	}
	return diag.NewAttributeWarningDiagnostic(path.Root("nodes"), "Existing Account Will Change On "+strings.Join(nodeNames, ", "),
		fmt.Sprintf("User %s already exists with uid %d on these nodes. Apply takes it over there and makes it match this resource:\n%s\n\n"+
			"List in group and groups what it must keep, or leave the node out of nodes. A later destroy leaves the account on these nodes, as this resource left it.",
			p.name, p.id, strings.Join(lines, "\n")))
}

// adopt finds, among the nodes this apply newly covers, those that already hold the account
// under the same ID. The resource takes them over, and destroy leaves them as it found them. An
// administrator account is refused here too, for plans that could not ask the nodes.
func (c *cluster) adopt(ctx context.Context, p accountPlan) ([]string, diag.Diagnostics) {
	userNames, groupNames := accountNames(p.kind, p.name)
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
			if d := p.adminAccountError(node, st); d != nil {
				diags.Append(d)
				continue
			}
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
