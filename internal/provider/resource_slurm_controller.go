package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure      = (*slurmControllerResource)(nil)
	_ resource.ResourceWithImportState    = (*slurmControllerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*slurmControllerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*slurmControllerResource)(nil)
)

// controllerPackages are installed on the controller: slurmctld, and slurm-client for the
// scontrol that validates a new slurm.conf and answers ping.
var controllerPackages = []string{"slurmctld", "slurm-client"}

// NewSlurmControllerResource returns the gpucluster_slurm_controller resource.
func NewSlurmControllerResource() guardedResource { return &slurmControllerResource{} }

type slurmControllerResource struct{ cluster *cluster }

type slurmControllerModel struct {
	ID                   types.String `tfsdk:"id"`
	Node                 types.String `tfsdk:"node"`
	ClusterName          types.String `tfsdk:"cluster_name"`
	SlurmctldHost        types.String `tfsdk:"slurmctld_host"`
	SlurmUser            types.String `tfsdk:"slurm_user"`
	StateSaveLocation    types.String `tfsdk:"state_save_location"`
	SlurmdSpoolDir       types.String `tfsdk:"slurmd_spool_dir"`
	SlurmctldPort        types.Int64  `tfsdk:"slurmctld_port"`
	SlurmdPort           types.Int64  `tfsdk:"slurmd_port"`
	SrunPortRange        types.String `tfsdk:"srun_port_range"`
	SlurmctldParameters  types.List   `tfsdk:"slurmctld_parameters"`
	SchedulerType        types.String `tfsdk:"scheduler_type"`
	EnforcePartLimits    types.String `tfsdk:"enforce_part_limits"`
	ReturnToService      types.Int64  `tfsdk:"return_to_service"`
	GresTypes            types.String `tfsdk:"gres_types"`
	SelectType           types.String `tfsdk:"select_type"`
	SelectTypeParameters types.String `tfsdk:"select_type_parameters"`
	ProctrackType        types.String `tfsdk:"proctrack_type"`
	TaskPlugin           types.String `tfsdk:"task_plugin"`
	JobAcctGatherType    types.String `tfsdk:"job_acct_gather_type"`
	MailProg             types.String `tfsdk:"mail_prog"`
	Prolog               types.String `tfsdk:"prolog"`
	Epilog               types.String `tfsdk:"epilog"`
	HealthCheckProgram   types.String `tfsdk:"health_check_program"`
	HealthCheckInterval  types.Int64  `tfsdk:"health_check_interval"`
	HealthCheckNodeState types.List   `tfsdk:"health_check_node_state"`
	Extra                types.Map    `tfsdk:"extra"`
	Cgroup               types.Object `tfsdk:"cgroup"`
	Version              types.String `tfsdk:"version"`
	SlurmVersion         types.String `tfsdk:"slurm_version"`
	InstalledVersion     types.String `tfsdk:"installed_version"`
	Status               types.String `tfsdk:"status"`
}

func (r *slurmControllerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_slurm_controller"
}

func (r *slurmControllerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	def := slurm.DefaultControllerSettings("")
	attrs := map[string]schema.Attribute{
		"id":   computedKeptAttribute("The controller node, known once the controller runs. Refer to it as `controller = gpucluster_slurm_controller.NAME.id` from the node, partition and compute resources, so they are applied after it."),
		"node": nodeAttribute("Node, by name or address, that runs slurmctld and holds `" + slurm.ConfDir + "`. Changing it replaces the resource."),
		"slurmctld_host": schema.StringAttribute{
			MarkdownDescription: settingClassDoc("`SlurmctldHost`: the controller's host name, which configless compute nodes use as `--conf-server`. Defaults to `node`; set it when `node` is an address.", "SlurmctldHost"),
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a host name")},
		},
		"slurmctld_port": portSetting("SlurmctldPort", "Port slurmctld listens on; configless nodes fetch their files there.", int64(def.SlurmctldPort)),
		"slurmd_port":    portSetting("SlurmdPort", "Port slurmd listens on.", int64(def.SlurmdPort)),
		"slurmctld_parameters": schema.ListAttribute{
			MarkdownDescription: settingClassDoc(fmt.Sprintf("`SlurmctldParameters`. Defaults to the guide's %s: `enable_configless` lets compute nodes fetch slurm.conf from the controller, which `gpucluster_slurm_compute` relies on.", markdownList(def.SlurmctldParameters)), "SlurmctldParameters"),
			Optional:            true,
			Computed:            true,
			ElementType:         types.StringType,
			Default:             listdefault.StaticValue(stringList(def.SlurmctldParameters)),
			Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.RegexMatches(regexpNoComma, "must not contain whitespace, ',' or '#'"))},
		},
		"return_to_service": schema.Int64Attribute{
			MarkdownDescription: settingClassDoc(fmt.Sprintf("`ReturnToService`: `2` lets a node that reboots with a valid configuration rejoin on its own. Defaults to `%d`.", def.ReturnToService), "ReturnToService"),
			Optional:            true,
			Computed:            true,
			Default:             int64default.StaticInt64(int64(def.ReturnToService)),
			Validators:          []validator.Int64{int64validator.Between(0, 2)},
		},
		"extra": schema.MapAttribute{
			MarkdownDescription: "Any other slurm.conf setting, by its Slurm name (`SlurmctldDebug = \"info\"`). A key that a typed attribute owns is refused, in any case, as are `NodeName`, `PartitionName` and `Include`. " +
				"`AccountingStorageTRES` with a `gres/` or `license/` entry needs slurmdbd accounting (pitfall P2): set the TRES list as `gpucluster_slurm_accounting`'s `tres`, " +
				"which also sets the other `AccountingStorage*` keys (they are refused here then). Here, it passes the plan only once that resource's fragment is on the controller, or with `AccountingStorageType = \"accounting_storage/slurmdbd\"` beside it. " +
				"Settings the installed Slurm (or, before it is installed, the version apt would install) does not know are refused at plan time. Change class: **" + slurm.Reconfigure.String() +
				"**, except for these settings: **" + slurm.RestartController.String() + "**: " + markdownList(slurm.SettingsOfClass(slurm.RestartController)) +
				"; **" + slurm.OrderedRestart.String() + "**: " + markdownList(slurm.SettingsOfClass(slurm.OrderedRestart)) + ". " +
				"Values Slurm would refuse are refused at plan: " + markdownList(slurm.MemoryKeys) + " take a whole number of megabytes without a unit, " +
				"`PreemptExemptTime` a time (minutes, hours:minutes:seconds, days-hours:minutes:seconds and so on).",
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.Map{slurmExtraValues{line: slurm.ControllerLine}},
		},
		"cgroup": schema.SingleNestedAttribute{
			MarkdownDescription: "cgroup.conf. Defaults to the guide's: cores and devices are enforced, memory is scheduled but not enforced." + classDoc(slurm.CgroupConfClass),
			Optional:            true,
			Computed:            true,
			Default:             objectdefault.StaticValue(cgroupObject(slurm.DefaultCgroupSettings())),
			Attributes: map[string]schema.Attribute{
				"plugin": schema.StringAttribute{
					MarkdownDescription: "`CgroupPlugin`. Defaults to `" + slurm.DefaultCgroupSettings().CgroupPlugin + "`.",
					Optional:            true, Computed: true,
					Default:    stringdefault.StaticString(slurm.DefaultCgroupSettings().CgroupPlugin),
					Validators: []validator.String{slurmValue},
				},
				"constrain_cores": schema.BoolAttribute{
					MarkdownDescription: "`ConstrainCores`: a job runs only on the cores it was allocated. Defaults to `true`.",
					Optional:            true, Computed: true, Default: booldefault.StaticBool(true),
				},
				"constrain_devices": schema.BoolAttribute{
					MarkdownDescription: "`ConstrainDevices`: a job sees only the GPUs it was allocated. Defaults to `true`.",
					Optional:            true, Computed: true, Default: booldefault.StaticBool(true),
				},
				"constrain_ram_space": schema.BoolAttribute{
					MarkdownDescription: "`ConstrainRAMSpace`: `false` schedules memory without enforcing it, so a job that briefly needs more than its default is not OOM-killed. Defaults to `false`.",
					Optional:            true, Computed: true, Default: booldefault.StaticBool(false),
				},
				"extra": schema.MapAttribute{
					MarkdownDescription: "Any other cgroup.conf setting, by its Slurm name. Keys of the typed attributes are refused.",
					Optional:            true,
					ElementType:         types.StringType,
				},
			},
		},
		"prolog":                  jobScriptAttribute("Prolog", slurm.PrologFile, "before each job, as root, on every node of the job's allocation, before its first step; a prolog that exits non-zero drains the node and requeues the job"),
		"epilog":                  jobScriptAttribute("Epilog", slurm.EpilogFile, "after each job, as root, on every node of its allocation; an epilog that exits non-zero drains the node"),
		"health_check_program":    healthCheckProgramAttribute(),
		"health_check_interval":   healthCheckIntervalAttribute(),
		"health_check_node_state": healthCheckNodeStateAttribute(),
		"version":                 computedKeptAttribute("Version of the installed slurmctld (`slurmctld -V`). Settings it does not know are refused at plan time."),
		"slurm_version":           slurmVersionAttribute("`" + strings.Join(controllerPackages, "`, `") + "`, and slurmdbd's packages where `gpucluster_slurm_accounting` runs it"),
		"installed_version":       installedVersionAttribute("slurmctld"),
		"status": schema.StringAttribute{
			MarkdownDescription: "`" + inSync + "`, or what the last refresh found different on the controller: slurmctld not installed. A plan that changes it back to `" +
				inSync + "` repairs the controller. What differs in the files slurmctld runs with, or slurmctld not running, is `gpucluster_slurm_activation`'s `status`.",
			Computed: true,
		},
	}
	for _, s := range controllerStrings {
		attrs[s.attr] = schema.StringAttribute{
			MarkdownDescription: settingClassDoc(fmt.Sprintf("`%s`: %s Defaults to `%s`; `\"\"` leaves the line out, so Slurm's own default applies. "+
				"A hand-written slurm.conf without the line imports as `\"\"`, and there the line stays out while the attribute is unset.", s.key, s.doc, *s.field(&def)), s.key),
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{settingDefault(*s.field(&def))},
			Validators:    []validator.String{slurmValueOrEmpty},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Slurm controller: installs `slurmctld` (and `slurm-client`) with apt where missing, and writes the cluster-wide settings of `slurm.conf` and `cgroup.conf`, " +
			"with the guide's values as defaults. Node and partition lines come from `gpucluster_slurm_node` and `gpucluster_slurm_partition`: every resource keeps its own fragment in `" +
			slurm.FragmentDir + "`, and `gpucluster_slurm_activation` assembles `slurm.conf`, `cgroup.conf` and `gres.conf` from all of them under the controller's lock, once per apply, " +
			"and starts, reconfigures or restarts slurmctld. This resource installs the packages and writes its own fragment; slurmctld first starts at the activation. " +
			"`gres.conf` follows the nodes: nodes that list `gpu_files` get explicit `Name=gpu File=...` lines (fake or NVML-less GPUs, as in the lab), the others `AutoDetect=nvml`.\n\n" +
			"Each change is classified by comparing the files before and after: " + classText(slurm.Reconfigure) + " " + classText(slurm.RestartController) + " " + classText(slurm.OrderedRestart) +
			" Each attribute says which class a change of it needs; the activation's plan warns about restarts. Before a restart the new slurm.conf passes Slurm's own parser; if slurmctld does not come back, " +
			"the previous files are restored, slurmctld restarted, and the error quotes its log.\n\n" +
			"Make this resource depend on `gpucluster_munge_key` (pitfall P10): slurmctld authenticates with MUNGE, and the apply refuses to set it up where `munge -n | unmunge` fails. Destroy stops and disables slurmctld and removes the assembled files, the job scripts and its " +
			"fragment; the packages, the state in `state_save_location` and the other resources' fragments stay. One resource per cluster.\n\n" +
			"Import with the controller node, for example `login01`. A controller set up by hand (the guide's own steps) imports too: while `" + slurm.FragmentDir + "` holds no fragment, " +
			"this resource and `gpucluster_slurm_node`, `gpucluster_slurm_partition` and `gpucluster_slurm_activation` read the `slurm.conf`, `cgroup.conf` and `gres.conf` slurmctld runs with " +
			"(a `NodeName` line with a hostlist gives one node each, `DEFAULT` lines apply to the lines after them), and nothing on the controller changes until a Slurm resource changes. " +
			"That first change writes every fragment read from those files, and the files are assembled from them: slurmctld is reconfigured or restarted only as the changes themselves need, " +
			"not for the new layout, and the activation's plan warns first, naming the fragments. Until then a hand-built controller keeps Debian's `plugstack.conf`. " +
			"What the resources cannot hold is refused with the line it is on: a second `SlurmctldHost`, `Include`, `NodeSet`, `DownNodes`, `Nodes=ALL`, gres.conf lines other than `Name=gpu` with `File=` or `AutoDetect=nvml`.",
		Attributes: attrs,
	}
}

// jobScriptAttribute is a job script's content: the activation writes it beside slurm.conf
// and names it with key, and configless slurmd fetches both.
func jobScriptAttribute(key, file, runs string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("Content of the `%[1]s` script that slurmd runs %[3]s (slurm.conf(5)). `gpucluster_slurm_activation` writes it to `%[4]s/%[2]s` "+
			"(owner root, mode 0755, replaced whole and only when it changes) and sets `%[1]s=%[2]s`: a name beside slurm.conf, which configless slurmd fetches with the files "+
			"and runs from its cache, so no file is written on the GPU servers themselves. A change of the script alone is applied with `scontrol reconfigure`, which sends it "+
			"to every slurmd; running jobs continue. The script must start with an interpreter line (`#!/bin/sh`), hold no NUL byte and have at most %[5]d bytes; it runs "+
			"with no login environment, so name programs by their full path. Unset (the default) writes no script and no `%[1]s` line, and leaves `%[1]s` to `extra`. "+
			"A script edited by hand on the controller shows as drift in `gpucluster_slurm_activation`'s `status`.",
			key, file, runs, slurm.ConfDir, slurm.MaxJobScriptSize),
		Optional:   true,
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
	}
}

func portSetting(key, doc string, def int64) schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: settingClassDoc(fmt.Sprintf("`%s`: %s Defaults to `%d`.", key, doc, def), key),
		Optional:            true,
		Computed:            true,
		Default:             int64default.StaticInt64(def),
		Validators:          portValidators(),
	}
}

func (r *slurmControllerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses at plan time, with no host asked, what slurm.conf's syntax cannot
// hold. Pitfall P2 needs the controller's fragments, whether accounting is set up there, so
// it is ModifyPlan's.
func (r *slurmControllerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, ok := modelFrom[slurmControllerModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	s, known := m.settingsForValidation(ctx, &resp.Diagnostics)
	if !known {
		return
	}
	if err := s.Validate(); err != nil {
		resp.Diagnostics.Append(invalidSetting(slurmControllerResourceName, controllerAttr, err))
	}
}

const slurmControllerResourceName = "gpucluster_slurm_controller"

// ModifyPlan fills slurmctld_host, marks the controller in sync so drift shows as a change,
// and checks the change on the controller: its refusals (P2, unknown settings, P14) stop the
// plan. The activation's plan announces the restart it needs.
func (r *slurmControllerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			resp.Diagnostics.AddWarning("Slurmctld Will Stop",
				"Destroying gpucluster_slurm_controller stops and disables slurmctld and removes "+slurm.ConfDir+"/slurm.conf, cgroup.conf and gres.conf: "+
					"no job can be submitted or scheduled until a controller is created again. Running jobs keep running on their nodes.")
		}
		return
	}
	var plan, state slurmControllerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.SlurmctldHost.IsUnknown() && !plan.Node.IsUnknown() {
		plan.SlurmctldHost = plan.Node
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("slurmctld_host"), plan.Node)...)
	}
	plan.Status = types.StringValue(inSync)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("status"), plan.Status)...)
	planSlurmVersion(ctx, resp, plan.Node.ValueString(), plan.SlurmVersion, state.InstalledVersion, "slurmctld")
	if resp.Diagnostics.HasError() {
		return
	}
	if (!creating && resp.Plan.Raw.Equal(req.State.Raw)) || plan.Node.IsUnknown() {
		return
	}
	node := plan.Node.ValueString()
	s, known := plan.settings(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !known {
		r.cluster.planSlurmChange(node, nil)
		return
	}
	frag, err := slurm.ControllerFragment(s)
	if err != nil {
		resp.Diagnostics.Append(invalidSetting(slurmControllerResourceName, controllerAttr, err))
		return
	}
	r.cluster.planSlurmChange(node, &frag)
	diags := r.cluster.previewSlurm(ctx, path.Root("extra"), node, "this controller change", frag)
	resp.Diagnostics.Append(diags...)
}

func (r *slurmControllerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

func (r *slurmControllerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics, r.converge)
}

// converge installs slurmctld and writes the controller's fragment; the activation checks,
// activates and rolls back.
func (r *slurmControllerResource) converge(ctx context.Context, m *slurmControllerModel) diag.Diagnostics {
	var diags diag.Diagnostics
	node := m.Node.ValueString()
	s, known := m.settings(ctx, &diags)
	if diags.HasError() {
		return diags
	}
	if !known {
		diags.Append(unknownAtApply(slurmControllerResourceName))
		return diags
	}
	frag, err := slurm.ControllerFragment(s)
	if err != nil {
		diags.Append(invalidSetting(slurmControllerResourceName, controllerAttr, err))
		return diags
	}
	h, diags := r.cluster.slurmController(ctx, node)
	if diags.HasError() {
		return diags
	}
	if err := slurm.CheckMunge(ctx, h); err != nil {
		diags.Append(mungeError(node, "slurmctld", err))
		return diags
	}
	diags.Append(r.installPackages(ctx, h, m, s)...)
	if diags.HasError() {
		return diags
	}
	if err := slurm.QuietPlugstack(ctx, h); err != nil {
		diags.Append(nodeError("Cannot Replace plugstack.conf", node, "Replacing Debian's "+slurm.PlugstackPath+", whose include of plugstack.conf.d fails at every start of slurmctld, failed",
			"Check "+slurm.PlugstackPath+" there, then apply again.", err))
		return diags
	}
	if err := slurm.EnsureStateDir(ctx, h, s); err != nil {
		diags.Append(nodeAttributeError(path.Root("state_save_location"), "Cannot Create State Directory", node,
			"Creating state_save_location owned by slurm_user failed", "", err))
		return diags
	}
	diags.Append(r.cluster.writeSlurmFragments(ctx, node, frag)...)
	if diags.HasError() {
		return diags
	}
	m.SlurmctldHost = types.StringValue(s.SlurmctldHost)
	diags.Append(daemonApplied(ctx, h, "slurmctld", m.Node, &m.ID, &m.Version, &m.Status)...)
	if diags.HasError() {
		return diags
	}
	var more diag.Diagnostics
	m.InstalledVersion, more = installedVersion(ctx, h, node, "slurmctld")
	return append(diags, more...)
}

// installPackages installs the controller's packages where missing, or, with slurm_version,
// brings the control plane to that version in Slurm's order (upgradeControlPlane).
func (r *slurmControllerResource) installPackages(ctx context.Context, h *transport.Host, m *slurmControllerModel, s slurm.ControllerSettings) diag.Diagnostics {
	var diags diag.Diagnostics
	node := m.Node.ValueString()
	if m.SlurmVersion.IsNull() {
		if _, err := packages.Ensure(ctx, h, controllerPackages...); err != nil {
			diags.Append(nodeError("Cannot Install Slurmctld", node, "Installing "+strings.Join(controllerPackages, " ")+" with apt failed",
				"Check the node's apt sources (apt-get install "+strings.Join(controllerPackages, " ")+" must work there), then apply again.", err))
		}
		return diags
	}
	return r.upgradeControlPlane(ctx, h, node, m.SlurmVersion.ValueString(), s)
}

// upgradeControlPlane upgrades slurmdbd first where it runs on another node, then the
// controller's node, where UpgradeNode restarts slurmdbd before slurmctld when both run there.
func (r *slurmControllerResource) upgradeControlPlane(ctx context.Context, h *transport.Host, node, version string, s slurm.ControllerSettings) diag.Diagnostics {
	st, diags := r.cluster.readSlurmStatus(ctx, node)
	if diags.HasError() {
		return diags
	}
	u := slurm.NodeUpgrade{Version: version, Packages: controllerPackages, StateSaveLocation: s.StateSaveLocation, Wait: defaultActivationWait}
	if client, err := slurm.ClientFor(st.Fragments); err == nil {
		host, err := slurm.Hostname(ctx, h)
		if err != nil {
			diags.Append(nodeError("Cannot Read Host Name", node, "Reading the node's host name, to tell whether slurmdbd runs there, failed", "", err))
			return diags
		}
		if host == client.Host {
			u.Accounting = &client
		} else {
			dh, ok := r.cluster.connect(ctx, client.Host, &diags)
			if !ok {
				return diags
			}
			dbd := slurm.NodeUpgrade{Version: version, Packages: []string{"slurmdbd", slurm.ClientPackage}, Accounting: &client, Wait: defaultActivationWait}
			if _, more := upgradeSlurm(ctx, dh, client.Host, dbd); more.HasError() {
				return append(diags, more...)
			}
		}
	}
	_, more := upgradeSlurm(ctx, h, node, u)
	return append(diags, more...)
}

func (r *slurmControllerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := modelFrom[slurmControllerModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	st, diags := r.cluster.readSlurmStatus(ctx, state.Node.ValueString())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if st.Fragments.Controller == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	state.setSettings(*st.Fragments.Controller)
	state.ID = state.Node
	var problems []string
	state.Version = types.StringNull()
	// A controller adopted from hand-written files runs as its admin set it up, Debian's
	// plugstack.conf included, until an apply of this resource replaces it.
	if st.DebianPlugstack && !st.Adopted {
		problems = append(problems, slurm.PlugstackPath+" is Debian's, whose include fails at every start of slurmctld")
	}
	if st.Version == nil {
		problems = append(problems, "slurmctld is not installed")
	} else {
		state.Version = types.StringValue(st.Version.Original())
	}
	h, diags := r.cluster.slurmController(ctx, state.Node.ValueString())
	if !diags.HasError() {
		state.InstalledVersion, diags = installedVersion(ctx, h, state.Node.ValueString(), "slurmctld")
	}
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	status := describeDrift(problems)
	if status != inSync {
		resp.Diagnostics.AddWarning("Drift Detected On "+state.Node.ValueString(),
			fmt.Sprintf("The Slurm controller differs from its configuration: %s.\n\nApply repairs it.", status))
	}
	state.Status = types.StringValue(status)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete removes the controller's fragment, stops and disables slurmctld and removes the
// assembled files. Packages and slurmctld's state stay.
func (r *slurmControllerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := modelFrom[slurmControllerModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := state.Node.ValueString()
	resp.Diagnostics.Append(r.cluster.writeSlurmFragments(ctx, node, slurm.RemoveFragment(slurm.ControllerFile))...)
	if resp.Diagnostics.HasError() {
		return
	}
	h, diags := r.cluster.slurmController(ctx, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	unlock, err := h.Lock(ctx)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop Slurmctld", node, "Taking the host lock failed", "", err))
		return
	}
	defer unlock()
	if err := slurm.StopController(ctx, h); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop Slurmctld", node, "Stopping slurmctld and removing the assembled files failed",
			"Stop it by hand (systemctl disable --now slurmctld); the fragment is already removed.", err))
	}
}

// ImportState takes the controller node; the settings are read from its fragment, or, on a
// controller set up by hand, from the slurm.conf and cgroup.conf slurmctld runs with.
func (r *slurmControllerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !nodeRefPattern.MatchString(req.ID) {
		resp.Diagnostics.Append(invalidImportID(req.ID, "CONTROLLER, the controller node as in the resource's node attribute", "login01", ""))
		return
	}
	st, diags := r.cluster.readSlurmStatus(ctx, req.ID)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if st.Fragments.Controller == nil {
		resp.Diagnostics.AddError("No Slurm Controller To Import",
			fmt.Sprintf("%s has neither a controller fragment %s/%s nor a %s/slurm.conf: no Slurm controller is set up there. Create the resource instead.",
				req.ID, slurm.FragmentDir, slurm.ControllerFile, slurm.ConfDir))
		return
	}
	m := slurmControllerModel{ID: types.StringValue(req.ID), Node: types.StringValue(req.ID), Status: types.StringValue(inSync), Version: types.StringNull()}
	m.setSettings(*st.Fragments.Controller)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
