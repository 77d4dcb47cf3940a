package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

// inSync is the node_status of a node whose account matches the configuration. Read writes
// what it finds instead ("uid 1002 on gpu02, want 1001"), so drift shows in the plan as a change of
// that node's entry back to inSync.
const inSync = "in sync"

func nodesAttribute(what string) schema.SetAttribute {
	return schema.SetAttribute{
		MarkdownDescription: "Nodes, by name or address, where the " + what + " exists with identical attributes. Adding a node creates it there and changes nothing on the others; removing one deletes it there.",
		Required:            true,
		ElementType:         types.StringType,
		Validators: []validator.Set{
			setvalidator.SizeAtLeast(1),
			setvalidator.ValueStringsAre(nodeRefValidator),
		},
	}
}

func adoptedOnAttribute(what string) schema.SetAttribute {
	return schema.SetAttribute{
		MarkdownDescription: "Nodes where the " + what + " already existed, with the same ID, when the resource first covered them. The resource manages it there too, but destroy (or dropping the node) leaves it as it was found. Empty after import: an imported " + what + " is removed everywhere on destroy.",
		Computed:            true,
		ElementType:         types.StringType,
	}
}

// planAdoptedOn carries adopted_on over while the node list stays; a new node may be adopted at
// apply, so then the value is known only after apply.
func planAdoptedOn(ctx context.Context, resp *resource.ModifyPlanResponse, planNodes, stateNodes types.Set, stateAdopted types.Set) diag.Diagnostics {
	if stateAdopted.IsNull() || !planNodes.Equal(stateNodes) {
		return nil
	}
	return resp.Plan.SetAttribute(ctx, path.Root("adopted_on"), stateAdopted)
}

func nodeStatusAttribute(what string) schema.MapAttribute {
	drift := "uid 1002 on gpu02, want 1001"
	if what == "group" {
		drift = "gid 101 on gpu02, want 100"
	}
	return schema.MapAttribute{
		MarkdownDescription: "Per node, `" + inSync + "` or what differs on that node (\"missing on gpu02\", \"" + drift + "\"), as the last refresh found the " + what + ". A plan that changes an entry back to `" + inSync + "` repairs that node.",
		Computed:            true,
		ElementType:         types.StringType,
	}
}

// fullyKnown tells whether a set and every element in it are known, as plan-time work needs.
func fullyKnown(s types.Set) bool {
	if s.IsUnknown() {
		return false
	}
	for _, e := range s.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

func setStrings(ctx context.Context, s types.Set, diags *diag.Diagnostics) []string {
	if s.IsNull() || !fullyKnown(s) {
		return nil
	}
	var out []string
	diags.Append(s.ElementsAs(ctx, &out, false)...)
	sort.Strings(out)
	return out
}

// allInSync is the node_status a converged resource has.
// planNodeStatus plans node_status: a node the resource already covers is in sync after the apply
// (so drift recorded there shows as repaired), and a node it is added to is known only after
// the apply, which is the truth before the account, key or file exists there.
func planNodeStatus(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, nodeNames []string) diag.Diagnostics {
	var covered map[string]types.String
	if !req.State.Raw.IsNull() {
		if diags := req.State.GetAttribute(ctx, path.Root("node_status"), &covered); diags.HasError() {
			return diags
		}
	}
	elems := make(map[string]attr.Value, len(nodeNames))
	for _, n := range nodeNames {
		if _, ok := covered[n]; ok {
			elems[n] = types.StringValue(inSync)
		} else {
			elems[n] = types.StringUnknown()
		}
	}
	return resp.Plan.SetAttribute(ctx, path.Root("node_status"), types.MapValueMust(types.StringType, elems))
}

func allInSync(nodeNames []string) types.Map {
	elems := make(map[string]attr.Value, len(nodeNames))
	for _, n := range nodeNames {
		elems[n] = types.StringValue(inSync)
	}
	return types.MapValueMust(types.StringType, elems)
}

func statusMap(status map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(status))
	for n, s := range status {
		elems[n] = types.StringValue(s)
	}
	return types.MapValueMust(types.StringType, elems)
}

func describeDrift(problems []string) string {
	if len(problems) == 0 {
		return inSync
	}
	return strings.Join(problems, "; ")
}

// ledgerCheck is a further plan-time check of the ledger read for checkLedger; it returns nil
// when the ledger has nothing against the plan.
type ledgerCheck func(ledger *users.Ledger, ledgerNode string) diag.Diagnostic

// checkLedger refuses, at plan time, an ID that the ledger on the login node gave to another
// name: the guide's "never reuse a UID", which must hold after the earlier owner is gone. The
// more checks read the same ledger.
func (c *cluster) checkLedger(ctx context.Context, kind users.Kind, name string, id int64, attr path.Path, more ...ledgerCheck) diag.Diagnostics {
	ledger, ledgerNode, diags := c.readLedger(ctx)
	if diags.HasError() {
		return diags
	}
	if err := ledger.CheckClaim(kind, name, id); err != nil {
		diags.Append(nodeAttributeError(attr, "ID Already Used", ledgerNode,
			"The UID ledger records this ID for another name",
			"Pick an ID that was never used. Reusing one hands the earlier owner's files on the shared /home to the new name.", err))
	}
	for _, check := range more {
		if d := check(ledger, ledgerNode); d != nil {
			diags.Append(d)
		}
	}
	return diags
}

// readLedger reads the UID ledger from the login node's account listing, which every user and
// group of a run shares with the node's own accounts.
func (c *cluster) readLedger(ctx context.Context) (*users.Ledger, string, diag.Diagnostics) {
	h, ledgerNode, diags := c.ledgerHost(ctx)
	if diags.HasError() {
		return nil, ledgerNode, diags
	}
	ledger, err := users.ReadListedLedger(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read UID Ledger", ledgerNode, "Reading "+users.LedgerPath+" failed",
			"Nothing was changed. Each line of the file is \"user|group NAME ID active|retired\": repair a line edited by hand, then run Terraform again.", err))
	}
	return ledger, ledgerNode, diags
}

// readAccounts asks every node about the named accounts at once, one round trip per node.
func (c *cluster) readAccounts(ctx context.Context, nodeNames, userNames, groupNames []string) (map[string]users.State, diag.Diagnostics) {
	observed, failures := readOnEachNode(ctx, c, nodeNames, func(h *transport.Host) (users.State, error) {
		return users.ReadAccounts(ctx, h, userNames, groupNames)
	})
	return observed, lookupFailureDiags(failures, "Cannot Read Accounts", "Reading accounts with getent failed")
}

// ledgerHost connects to the node that keeps the UID ledger.
func (c *cluster) ledgerHost(ctx context.Context) (*transport.Host, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	ledgerNode := c.settings.loginNode
	if ledgerNode == "" {
		diags.AddError("Missing Login Node",
			"Users and groups need the provider's login_node: the UID ledger, which keeps every ID ever handed out, lives there, "+
				"and one node must keep it for every resource.\n\nSet login_node in the provider configuration to the login (controller) node.")
		return nil, "", diags
	}
	h, err := c.host(ctx, ledgerNode)
	if err != nil {
		diags.Append(connectError(ledgerNode, err))
	}
	return h, ledgerNode, diags
}

// claim records name -> id in the ledger before any node gets the account, so a failed apply
// can never leave an ID in use that the ledger does not know.
func (c *cluster) claim(ctx context.Context, kind users.Kind, name string, id int64) diag.Diagnostics {
	return c.updateLedger(ctx, "Cannot Record ID In Ledger", func(h users.LedgerHost) error {
		return users.ClaimID(ctx, h, users.LedgerPath, kind, name, id)
	})
}

// retire keeps the name and ID in the ledger, marked retired, so the ID is never handed out again.
func (c *cluster) retire(ctx context.Context, kind users.Kind, name string, id int64) diag.Diagnostics {
	return c.updateLedger(ctx, "Cannot Retire ID In Ledger", func(h users.LedgerHost) error {
		return users.RetireID(ctx, h, users.LedgerPath, kind, name, id)
	})
}

func (c *cluster) updateLedger(ctx context.Context, summary string, update func(users.LedgerHost) error) diag.Diagnostics {
	h, ledgerNode, diags := c.ledgerHost(ctx)
	if diags.HasError() {
		return diags
	}
	if err := update(h); err != nil {
		diags.Append(nodeError(summary, ledgerNode, "Updating the UID ledger "+users.LedgerPath+" failed",
			"The accounts were not changed. Fix the cause and apply again.", err))
	}
	return diags
}

// parseAccountImportID accepts NAME@NODE1,NODE2 only and says which format it expects, and what
// destroy does with it, when the ID does not fit.
func parseAccountImportID(id, kind string) (string, []string, diag.Diagnostics) {
	var diags diag.Diagnostics
	const form, example = "NAME@NODE1,NODE2,...", "alice@login01,gpu01,gpu02"
	nodesMean := fmt.Sprintf("The nodes are those the resource's nodes lists: the %s must exist on each, and destroy deletes it there.", kind)
	name, nodeList, hasNodes := strings.Cut(id, "@")
	if !userNamePattern.MatchString(name) {
		diags.Append(invalidImportID(id, form, example, fmt.Sprintf("%q is not a valid %s name. %s", name, kind, nodesMean)))
		return "", nil, diags
	}
	if !hasNodes {
		// The nodes are named, never taken from the provider's node blocks: the nodes in the
		// state decide where destroy deletes the account, so the admin writes them down.
		diags.Append(invalidImportID(id, form, example, "It names no nodes: the resource's id is the name alone, so add @ and the nodes its nodes lists (terraform state show prints them). "+nodesMean))
		return "", nil, diags
	}
	nodeNames := strings.Split(nodeList, ",")
	for _, n := range nodeNames {
		if !nodeRefPattern.MatchString(n) {
			diags.Append(invalidImportID(id, form, example, fmt.Sprintf("%q is not a node name or address. %s", n, nodesMean)))
			return "", nil, diags
		}
	}
	sort.Strings(nodeNames)
	return name, nodeNames, diags
}

// agreeingID returns the one ID all nodes report, or an error naming each node's value.
func agreeingID(byNode map[string]int64, label string) (int64, error) {
	nodeNames := slices.Sorted(maps.Keys(byNode))
	var parts []string
	distinct := map[int64]bool{}
	for _, n := range nodeNames {
		distinct[byNode[n]] = true
		parts = append(parts, fmt.Sprintf("%s %d on %s", label, byNode[n], n))
	}
	if len(distinct) != 1 {
		return 0, fmt.Errorf("%s", strings.Join(parts, ", "))
	}
	return byNode[nodeNames[0]], nil
}

// missingFrom lists the entries of before that after no longer has.
func missingFrom(before, after []string) []string {
	keep := make(map[string]bool, len(after))
	for _, a := range after {
		keep[a] = true
	}
	var gone []string
	for _, b := range before {
		if !keep[b] {
			gone = append(gone, b)
		}
	}
	return gone
}

// warnDrift names every node that differs, so the plan says "uid 1002 on gpu02, want 1001"
// in words and not only as a changed map entry.
func warnDrift(diags *diag.Diagnostics, what string, status map[string]string) {
	nodeNames := make([]string, 0, len(status))
	for n, s := range status {
		if s != inSync {
			nodeNames = append(nodeNames, n)
		}
	}
	if len(nodeNames) == 0 {
		return
	}
	sort.Strings(nodeNames)
	lines := make([]string, len(nodeNames))
	for i, n := range nodeNames {
		lines[i] = "- " + status[n]
	}
	diags.AddWarning("Drift Detected On "+strings.Join(nodeNames, ", "),
		fmt.Sprintf("The %s differs from its configuration:\n%s\n\nApply repairs these nodes.", what, strings.Join(lines, "\n")))
}

// idAdvice names the attribute that opts in to a system ID, which the domain error cannot know.
func idAdvice(err error, id int64, optIn string) string {
	if id > 0 && id < users.MinRegularID {
		return fmt.Sprintf("%s.\n\nIDs below %d belong to the operating system. Set %s = true if this ID is intended, as for the guide's users group (GID 100).", err, users.MinRegularID, optIn)
	}
	return err.Error()
}

// removeAccount deletes the account record on the nodes where the resource created it, then
// retires its ID in the ledger so that no other name can ever get it.
func (c *cluster) removeAccount(ctx context.Context, created []string, kind users.Kind, name string, id int64,
	remove func(context.Context, transport.Executor, string) (bool, error), todo string) diag.Diagnostics {
	if len(created) > 0 && c.isOwnAccount(name) {
		var diags diag.Diagnostics
		diags.AddError("Account Is The Provider's Own", fmt.Sprintf("Destroying gpucluster_%s %s would delete it on %s, and it is the account the provider "+
			"connects as over SSH (or that account's group): the provider, and you, would be locked out of those nodes. Nothing was changed.\n\n"+
			"Remove the resource from the state with terraform state rm, which leaves the account on the nodes as it is.", kind, name, strings.Join(created, ", ")))
		return diags
	}
	failures := c.onEachNode(ctx, created, func(_ string, h *transport.Host) error {
		_, err := remove(ctx, h, name)
		return err
	})
	diags := failureDiags(failures, "Cannot Remove "+titleKind(kind), fmt.Sprintf("Removing %s %s failed", kind, name), todo)
	if diags.HasError() {
		return diags
	}
	return c.retire(ctx, kind, name, id)
}

// readForImport reads the account named by an import ID from each of its nodes, and refuses
// the provider's own account.
func (c *cluster) readForImport(ctx context.Context, id string, kind users.Kind) (string, []string, map[string]users.State, diag.Diagnostics) {
	name, nodeNames, diags := parseAccountImportID(id, string(kind))
	if diags.HasError() {
		return "", nil, nil, diags
	}
	userNames, groupNames := accountNames(kind, name)
	observed, readDiags := c.readAccounts(ctx, nodeNames, userNames, groupNames)
	diags.Append(readDiags...)
	if !diags.HasError() {
		diags.Append(c.refuseOwnAccount(kind, name)...)
	}
	return name, nodeNames, observed, diags
}

// setNodeStatus records each node's drift in node_status and warns about it; an account found
// on no node at all is gone, and the caller removes the resource.
func setNodeStatus(diags *diag.Diagnostics, what string, drift map[string][]string, present int) (types.Map, bool) {
	status := make(map[string]string, len(drift))
	for node, problems := range drift {
		status[node] = describeDrift(problems)
	}
	warnDrift(diags, what, status)
	return statusMap(status), present > 0
}

func titleKind(kind users.Kind) string {
	if kind == users.KindGroup {
		return "Group"
	}
	return "User"
}

// connectionUsers are the accounts the provider logs in as: its user setting and every node
// block's.
func (c *cluster) connectionUsers() []string {
	names := []string{c.settings.user}
	for _, o := range c.settings.overrides {
		if o.user != "" && !slices.Contains(names, o.user) {
			names = append(names, o.user)
		}
	}
	return names
}

// refuseOwnAccount refuses, before any host is asked, a user or group named like an account the
// provider logs in as (Debian gives each account a group of its own name). Managing it would let
// an apply change the provider's own groups, primary group or shell: one usermod emptying its groups takes it
// out of sudo on every node, and only root on each host can undo that.
func (c *cluster) refuseOwnAccount(kind users.Kind, name string) diag.Diagnostics {
	var diags diag.Diagnostics
	if !c.isOwnAccount(name) {
		return diags
	}
	what := "the account"
	if kind == users.KindGroup {
		what = "the group of the account"
	}
	diags.Append(settingError(path.Root("name"), "Account Is The Provider's Own",
		fmt.Sprintf("gpucluster_%s %q names %s the provider connects as over SSH (its user setting). "+
			"Managing it would let an apply change the provider's own groups or primary group: taking it out of sudo "+
			"locks the provider, and you, out of every node, with only root on each host to recover", kind, name, what),
		"Leave this account to the nodes' own setup (the guide creates admin by hand, outside the cluster's users), "+
			"or connect as another account. No host was asked or changed.", nil))
	return diags
}

func (c *cluster) isOwnAccount(name string) bool {
	return c != nil && !c.settings.unknown && slices.Contains(c.connectionUsers(), name)
}

// refuseAdminGroups refuses administrator groups in a configuration that has not opted in; why
// says what managing them risks for this resource.
func refuseAdminGroups(attr path.Path, what string, names []string, why, todo string) diag.Diagnostics {
	var diags diag.Diagnostics
	admin := users.AdminGroupsIn(names...)
	if len(admin) == 0 {
		return diags
	}
	diags.Append(settingError(attr, "Administrator Group Not Allowed",
		fmt.Sprintf("%s %s, an administrator group (%s grant root or the system logs). %s",
			what, strings.Join(admin, ", "), strings.Join(users.AdminGroups, ", "), why),
		todo+" No host was asked or changed.", nil))
	return diags
}

// adminGroupsForUser is refuseAdminGroups for a user's group or groups.
func adminGroupsForUser(attr path.Path, what string, names []string) diag.Diagnostics {
	return refuseAdminGroups(attr, what, names,
		"Cluster users are not administrators, and an account in an administrator group can become root on every node",
		fmt.Sprintf("Remove %s, or set allow_admin_groups = true if this really is an administrator account.", strings.Join(users.AdminGroupsIn(names...), ", ")))
}
