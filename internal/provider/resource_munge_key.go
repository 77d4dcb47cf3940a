package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure      = (*mungeKeyResource)(nil)
	_ resource.ResourceWithImportState    = (*mungeKeyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*mungeKeyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*mungeKeyResource)(nil)
)

// NewMungeKeyResource returns the gpucluster_munge_key resource.
func NewMungeKeyResource() guardedResource { return &mungeKeyResource{} }

type mungeKeyResource struct{ cluster *cluster }

type mungeKeyModel struct {
	ID            types.String   `tfsdk:"id"`
	Controller    types.String   `tfsdk:"controller"`
	Nodes         types.Set      `tfsdk:"nodes"`
	Rotation      types.String   `tfsdk:"rotation"`
	StopOnDestroy types.Bool     `tfsdk:"stop_on_destroy"`
	MungeVersion  types.String   `tfsdk:"munge_version"`
	Installed     types.Map      `tfsdk:"installed_version"`
	Fingerprint   types.String   `tfsdk:"fingerprint"`
	NodeStatus    types.Map      `tfsdk:"node_status"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

// mungeKeyTimeout bounds a create or update: munge installed with apt where missing, the key
// copied, munged restarted and answering on every node, and the cross-node check.
const mungeKeyTimeout = 10 * time.Minute

// mungePackages are what munge_version pins.
var mungePackages = pinnedPackages{
	attrName: "munge_version", what: "MUNGE", names: munge.PinnedPackages, daemon: "munged", example: "0.5.16-1.1~deb13u1",
	where: "on every node in `nodes`", shownIn: "installed_version",
	unset: "Unset (the default), `" + munge.Package + "` is installed with apt where it is missing, at the version apt offers, and never upgraded.",
}

func (r *mungeKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_munge_key"
}

func (r *mungeKeyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	nodeRef := nodeRefValidator
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster's MUNGE key, which Slurm signs every message with: one key, generated once on the controller with " +
			"`mungekey`, copied by the provider from host to host in memory (never written to the disk of the machine running Terraform), and installed as `" +
			munge.KeyPath + "`, owner `munge`, mode `0400`, on every node. The package `munge` is installed with apt where it is missing, or at the version `munge_version` pins. " +
			"After any key change munged is restarted on that node and the apply waits until it answers; it then checks that a credential " +
			"made on the controller decodes on every node (`munge -n | unmunge`). Make the Slurm resources depend on this one so they start " +
			"only after that.\n\n" +
			"If the controller already has a key when this resource is created, that key is **adopted** and copied to the other nodes, not " +
			"replaced: a running cluster keeps working. A new key is generated only when the controller has none, or when `rotation` changes.\n\n" +
			"The key itself never enters the state, the plan or the logs: the state keeps its SHA-256 `fingerprint` only. " +
			"One resource per cluster.",
		Attributes: map[string]schema.Attribute{
			"id": computedKeptAttribute("The controller."),
			"controller": schema.StringAttribute{
				MarkdownDescription: "Node, by name or address, where the key is generated and read from; its key is the one every other node gets. " +
					"It must also be listed in `nodes`, written the same way. Changing it replaces the resource (the new controller's key is adopted).",
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{nodeRef},
			},
			"nodes": schema.SetAttribute{
				MarkdownDescription: "Every node, by name or address, that gets the key, the controller included. Adding a node copies the key " +
					"there and restarts munged there only. Removing a node stops managing it: its key and munged are left as they are " +
					"(rotate the key when a node leaves the cluster for good).",
				Required:    true,
				ElementType: types.StringType,
				Validators:  []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(nodeRef)},
			},
			"rotation": schema.StringAttribute{
				MarkdownDescription: "Any value; changing it (setting, changing or removing it) means \"new key\": a new key is generated on the " +
					"controller and installed on every node, munged restarts everywhere, and the credential check runs again. Credentials " +
					"made with the old key stop decoding, so jobs being launched at that moment may fail. The value at creation does not rotate. " +
					"If a rotating apply fails on some node after the controller got the new key, the rotation counts as done: " +
					"the next apply copies that key to the remaining nodes instead of generating another.",
				Optional: true,
			},
			"stop_on_destroy": schema.BoolAttribute{
				MarkdownDescription: "On destroy, stop munged and disable it on every node. Defaults to `false`: destroy then changes nothing on the " +
					"nodes, because Slurm and everything else that authenticates with MUNGE keeps depending on it. The key file is left in place either way.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"munge_version": mungePackages.schemaAttribute(),
			"installed_version": schema.MapAttribute{
				MarkdownDescription: "Per node, the Debian version of `" + munge.Package + "` installed there (`dpkg-query -W " + munge.Package + "`), as the last refresh or apply found it. " +
					"A plan that changes `munge_version` shows each node's entry going to the wanted version.",
				Computed:    true,
				ElementType: types.StringType,
			},
			"fingerprint": computedKeptAttribute("SHA-256 of the key, in hex, as read on the controller. It identifies the key without revealing it; compare with `sha256sum " + munge.KeyPath + "` on a node."),
			"node_status": schema.MapAttribute{
				MarkdownDescription: "Per node, `" + inSync + "` or what differs there, as the last refresh found it: \"missing on gpu02\", " +
					"\"different key on gpu02\", \"owner root:root on gpu02, want munge:munge\", \"mode 0600 on gpu02, want 0400\", " +
					"\"munge not running on gpu02\", \"munge not enabled on gpu02\". Only fingerprints are compared; the key is not read for this. " +
					"A plan that changes an entry back to `" + inSync + "` repairs that node with the controller's key.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock(ctx, "How long a create or an update may take.",
				"A duration such as `\"30s\"` or `\"10m\"`, covering munge's installation, the key's copies, munged's restarts and the wait until it answers, "+
					"and the cross-node check. Defaults to `"+mungeKeyTimeout.String()+"`."),
		},
	}
}

func (r *mungeKeyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *mungeKeyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[mungeKeyModel](ctx, req.Config, &resp.Diagnostics)
	if !ok || m.Controller.IsUnknown() || m.Controller.IsNull() || !fullyKnown(m.Nodes) {
		return
	}
	if nodeNames := setStrings(ctx, m.Nodes, &resp.Diagnostics); len(nodeNames) > 0 {
		resp.Diagnostics.Append(notAmongNodes(path.Root("nodes"), "Controller Not In Nodes", "controller", m.Controller.ValueString(),
			nodeNames, "The controller needs the key too: add it to nodes, written the same way.")...)
	}
}

// ModifyPlan marks every node in sync so drift shows as a change, makes a rotation visible
// (unknown fingerprint and a warning), and checks at plan time that new nodes are reachable.
func (r *mungeKeyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, ok := plannedModel[mungeKeyModel](ctx, req, req.Plan, &resp.Diagnostics)
	if !ok || !fullyKnown(plan.Nodes) {
		return
	}
	nodeNames := setStrings(ctx, plan.Nodes, &resp.Diagnostics)
	resp.Diagnostics.Append(planNodeStatus(ctx, req, resp, nodeNames)...)
	var state mungeKeyModel
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	installed := mungePackages.planInstalledVersions(nodeNames, plan.MungeVersion, state.Installed, !creating && plan.Nodes.Equal(state.Nodes), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("installed_version"), installed)...)
	if !creating {
		if !plan.Rotation.Equal(state.Rotation) {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("fingerprint"), types.StringUnknown())...)
			resp.Diagnostics.AddAttributeWarning(path.Root("rotation"), "MUNGE Key Will Be Rotated",
				fmt.Sprintf("rotation changed, so apply generates a new key on %s, installs it on %s and restarts munged there. "+
					"Credentials made with the old key stop decoding: a job launched during the apply may fail.",
					plan.Controller.ValueString(), strings.Join(nodeNames, ", ")))
		}
	}
	if r.cluster == nil || !r.cluster.settingsKnown() || plan.Controller.IsUnknown() {
		return
	}
	if !creating && plan.Nodes.Equal(state.Nodes) {
		return
	}
	resp.Diagnostics.Append(r.checkNodes(ctx, plan.Controller.ValueString(), nodeNames, creating)...)
}

// checkNodes refuses nodes the provider cannot reach or read, naming the attribute that
// lists them, and says when creating adopts the key the controller already has.
func (r *mungeKeyResource) checkNodes(ctx context.Context, controller string, nodeNames []string, creating bool) diag.Diagnostics {
	observed, failures := r.readStates(ctx, nodeNames)
	var diags diag.Diagnostics
	for _, f := range failures {
		attr := path.Root("nodes")
		if f.node == controller {
			attr = path.Root("controller")
		}
		// Built once: a node that cannot be reached is reported in full only the first time a
		// diagnostic is made for it, so a discarded one would leave only the short repeat.
		var d diag.Diagnostic
		if f.connect {
			d = connectError(f.node, f.err)
		} else {
			d = nodeError("Cannot Read MUNGE State", f.node, "Reading the MUNGE key's fingerprint and munged's state failed", "", f.err)
		}
		diags.Append(diag.NewAttributeErrorDiagnostic(attr, d.Summary(), d.Detail()))
	}
	if st, ok := observed[controller]; ok && creating && st.KeyExists {
		diags.AddAttributeWarning(path.Root("controller"), "Existing MUNGE Key Adopted",
			fmt.Sprintf("%s already has %s (sha256 %s). It is kept and copied to the other nodes, so a running cluster keeps working. "+
				"To replace it with a new key, change rotation after this apply.", controller, munge.KeyPath, st.Fingerprint))
	}
	return diags
}

func (r *mungeKeyResource) readStates(ctx context.Context, nodeNames []string) (map[string]munge.NodeState, []nodeFailure) {
	return readOnEachNode(ctx, r.cluster, nodeNames, func(h *transport.Host) (munge.NodeState, error) {
		return munge.ReadState(ctx, h)
	})
}

func (r *mungeKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, nil, &resp.State, &resp.Diagnostics)
}

func (r *mungeKeyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, &req.State, &resp.State, &resp.Diagnostics)
}

// apply is Create (prior nil) and Update: converge within the create or update timeout.
func (r *mungeKeyResource) apply(ctx context.Context, plan tfsdk.Plan, prior *tfsdk.State, state *tfsdk.State, diags *diag.Diagnostics) {
	m, _ := modelFrom[mungeKeyModel](ctx, plan, diags)
	timeout, in := createTimeout, keyInputs{}
	if prior != nil {
		before, _ := modelFrom[mungeKeyModel](ctx, prior, diags)
		timeout, in = updateTimeout, keyInputs{
			rotationChanged: !m.Rotation.Equal(before.Rotation),
			inState:         before.Fingerprint.ValueString(),
			planned:         m.Fingerprint.ValueString(),
		}
	}
	if diags.HasError() {
		return
	}
	limit, timeoutDiags := timeout(m.Timeouts, ctx, mungeKeyTimeout)
	diags.Append(timeoutDiags...)
	if diags.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rotated, convergeDiags := r.converge(ctx, &m, in)
	diags.Append(convergeDiags...)
	// Once the controller holds the new key the rotation has happened, even if a node failed:
	// the state says so, or the next apply would rotate once more.
	if !diags.HasError() || (prior != nil && rotated) {
		if m.Installed.IsUnknown() {
			m.Installed = types.MapNull(types.StringType)
		}
		diags.Append(state.Set(ctx, &m)...)
	}
}

// converge installs munge where missing, takes the controller's key (see chooseKey),
// installs it on every node with munged restarted where it changed, and proves a credential
// made on the controller decodes everywhere. It reports rotated when it generated a key the
// controller now holds; m then describes that state even when a later step failed.
func (r *mungeKeyResource) converge(ctx context.Context, m *mungeKeyModel, in keyInputs) (rotated bool, diags diag.Diagnostics) {
	nodeNames := setStrings(ctx, m.Nodes, &diags)
	controller := m.Controller.ValueString()
	if diags.HasError() {
		return false, diags
	}
	diags.Append(r.installPackages(ctx, nodeNames, m.MungeVersion)...)
	if diags.HasError() {
		return false, diags
	}
	key, generated, keyDiags := r.controllerKey(ctx, controller, in)
	diags.Append(keyDiags...)
	if diags.HasError() {
		return false, diags
	}
	defer clear(key)
	m.ID = m.Controller
	m.Fingerprint = types.StringValue(munge.Fingerprint(key))
	status := make(map[string]string, len(nodeNames))
	for _, n := range nodeNames {
		status[n] = inSync
	}
	failures := r.cluster.onEachNode(ctx, nodeNames, func(_ string, h *transport.Host) error {
		_, err := munge.Install(ctx, h, key)
		return err
	})
	for _, f := range failures {
		status[f.node] = "key not installed on " + f.node + " (apply failed)"
	}
	m.NodeStatus = statusMap(status)
	rotated = generated && status[controller] == inSync
	diags.Append(failureDiags(failures, "Cannot Install MUNGE Key", "Installing "+munge.KeyPath+" or restarting munged with it failed",
		"Nodes that got the key already use it; apply again once the cause is fixed, so every node ends with the same key.")...)
	if diags.HasError() {
		return rotated, diags
	}
	failures, verifyDiags := r.verify(ctx, controller, nodeNames)
	diags.Append(verifyDiags...)
	for _, f := range failures {
		status[f.node] = "credential from " + controller + " does not decode on " + f.node
	}
	m.NodeStatus = statusMap(status)
	if diags.HasError() {
		return rotated, diags
	}
	versions, failures := readInstalledVersions(ctx, r.cluster, nodeNames, munge.Package)
	m.Installed = versionMap(versions)
	return rotated, append(diags, failureDiags(failures, "Cannot Read Installed Version", "Asking dpkg for the version of munge failed", "")...)
}

// installPackages installs munge where it is missing or, with munge_version, brings every
// node's MUNGE packages to that version, restarting munged where it ran (munge.InstallVersion).
func (r *mungeKeyResource) installPackages(ctx context.Context, nodeNames []string, pin types.String) diag.Diagnostics {
	if pin.IsNull() {
		failures := r.cluster.onEachNode(ctx, nodeNames, func(_ string, h *transport.Host) error {
			_, err := packages.Ensure(ctx, h, munge.Package)
			return err
		})
		return failureDiags(failures, "Cannot Install MUNGE", "Installing the munge package with apt failed",
			"Check the node's apt sources (apt-get install munge must work there), then apply again.")
	}
	version := pin.ValueString()
	failures := r.cluster.onEachNode(ctx, nodeNames, func(_ string, h *transport.Host) error {
		_, err := munge.InstallVersion(ctx, h, version)
		return err
	})
	var diags diag.Diagnostics
	for _, f := range failures {
		if f.connect {
			diags.Append(connectError(f.node, f.err))
			continue
		}
		diags.Append(mungePackages.installError(f.node, version, f.err))
	}
	return diags
}

// verify is the guide's `munge -n | unmunge`: a credential made on the controller must decode
// on every node, the controller included. It also returns the nodes where it did not.
func (r *mungeKeyResource) verify(ctx context.Context, controller string, nodeNames []string) ([]nodeFailure, diag.Diagnostics) {
	var diags diag.Diagnostics
	h, ok := r.cluster.connect(ctx, controller, &diags)
	if !ok {
		return nil, diags
	}
	failures, _, err := verifyMunge(ctx, r.cluster, h, nodeNames, "")
	if err != nil {
		diags.Append(nodeError("Cannot Make MUNGE Credential", controller, "munge -n failed", "Check munged on the controller: journalctl -u munge.", err))
		return nil, diags
	}
	return failures, failureDiags(failures, "MUNGE Credential Does Not Decode", "A credential made on "+controller+" did not decode with unmunge",
		"The node's munged may still run with another key, or its clock may be far off the controller's: check journalctl -u munge and timedatectl there, then apply again.")
}

func (r *mungeKeyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[mungeKeyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	nodeNames := setStrings(ctx, state.Nodes, &resp.Diagnostics)
	controller := state.Controller.ValueString()
	observed, failures := r.readStates(ctx, nodeNames)
	resp.Diagnostics.Append(failureDiags(failures, "Cannot Read MUNGE State", "Reading the MUNGE key's fingerprint and munged's state failed", "")...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctl := observed[controller]
	if !ctl.KeyExists {
		resp.State.RemoveResource(ctx)
		return
	}
	status := make(map[string]string, len(observed))
	for node, st := range observed {
		status[node] = describeDrift(munge.Problems(node, ctl.Fingerprint, st))
	}
	warnDrift(&resp.Diagnostics, "MUNGE key", status)
	if old := state.Fingerprint.ValueString(); old != "" && old != ctl.Fingerprint {
		resp.Diagnostics.AddWarning("MUNGE Key Changed On "+controller,
			fmt.Sprintf("The key on the controller %s is not the one the last apply installed (sha256 %s, was %s). It is now the cluster's key: "+
				"apply copies it to every node that differs.", controller, ctl.Fingerprint, old))
	}
	versions, failures := readInstalledVersions(ctx, r.cluster, nodeNames, munge.Package)
	resp.Diagnostics.Append(failureDiags(failures, "Cannot Read Installed Version", "Asking dpkg for the version of munge failed", "")...)
	if resp.Diagnostics.HasError() {
		return
	}
	state.ID = state.Controller
	state.Fingerprint = types.StringValue(ctl.Fingerprint)
	state.NodeStatus = statusMap(status)
	state.Installed = versionMap(versions)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete leaves MUNGE as it is unless stop_on_destroy: Slurm and anything else that
// authenticates with it still needs it.
func (r *mungeKeyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[mungeKeyModel](ctx, req.State, &resp.Diagnostics)
	if !ok || !state.StopOnDestroy.ValueBool() {
		return
	}
	nodeNames := setStrings(ctx, state.Nodes, &resp.Diagnostics)
	failures := r.cluster.onEachNode(ctx, nodeNames, func(_ string, h *transport.Host) error {
		return munge.Stop(ctx, h)
	})
	resp.Diagnostics.Append(failureDiags(failures, "Cannot Stop MUNGE", "Stopping and disabling munged failed", "")...)
}

// ImportState takes CONTROLLER or CONTROLLER@NODE1,NODE2 and refuses a controller without a key.
func (r *mungeKeyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	controller, nodeNames, diags := parseMungeKeyImportID(req.ID, r.cluster)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	observed, failures := r.readStates(ctx, []string{controller})
	resp.Diagnostics.Append(failureDiags(failures, "Cannot Read MUNGE State", "Reading the MUNGE key's fingerprint failed", "")...)
	if resp.Diagnostics.HasError() {
		return
	}
	st := observed[controller]
	if !st.KeyExists {
		resp.Diagnostics.AddError("No MUNGE Key To Import",
			fmt.Sprintf("%s has no %s. Create the resource instead: it generates a key there and copies it to the nodes.", controller, munge.KeyPath))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &mungeKeyModel{
		ID:            types.StringValue(controller),
		Controller:    types.StringValue(controller),
		Nodes:         stringSet(nodeNames),
		Rotation:      types.StringNull(),
		StopOnDestroy: types.BoolValue(false),
		MungeVersion:  types.StringNull(),
		Installed:     types.MapNull(types.StringType),
		Fingerprint:   types.StringValue(st.Fingerprint),
		NodeStatus:    allInSync(nodeNames),
		Timeouts:      nullTimeouts(),
	})...)
}

// parseMungeKeyImportID accepts CONTROLLER (with the nodes of the provider's node blocks) or
// CONTROLLER@NODE1,NODE2; the controller is added to the nodes when the list leaves it out.
func parseMungeKeyImportID(id string, c *cluster) (string, []string, diag.Diagnostics) {
	var diags diag.Diagnostics
	controller, nodeList, hasNodes := strings.Cut(id, "@")
	var nodeNames []string
	if hasNodes {
		nodeNames = strings.Split(nodeList, ",")
	} else if c != nil {
		for _, o := range c.settings.overrides {
			nodeNames = append(nodeNames, o.name)
		}
	}
	for _, n := range append([]string{controller}, nodeNames...) {
		if !nodeRefPattern.MatchString(n) {
			diags.Append(invalidImportID(id, "CONTROLLER@NODE1,NODE2,..., or CONTROLLER alone when the provider's node blocks list the nodes", "login01@login01,gpu01,gpu02",
				fmt.Sprintf("%q is not a node name or address. The controller is one of the nodes either way.", n)))
			return "", nil, diags
		}
	}
	if !slices.Contains(nodeNames, controller) {
		nodeNames = append(nodeNames, controller)
	}
	sort.Strings(nodeNames)
	return controller, slices.Compact(nodeNames), diags
}
