package provider

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var _ datasource.DataSourceWithConfigure = (*clusterCheckDataSource)(nil)

// NewClusterCheckDataSource returns the gpucluster_cluster_check data source.
func NewClusterCheckDataSource() datasource.DataSource { return &clusterCheckDataSource{} }

type clusterCheckDataSource struct{ cluster *cluster }

type clusterCheckModel struct {
	ID             types.String `tfsdk:"id"`
	Controller     types.String `tfsdk:"controller"`
	Nodes          types.Set    `tfsdk:"nodes"`
	FailOnProblems types.Bool   `tfsdk:"fail_on_problems"`
	Munge          types.Map    `tfsdk:"munge"`
	ControllerPing types.String `tfsdk:"controller_ping"`
	ControllerUp   types.Bool   `tfsdk:"controller_up"`
	NodeStatus     types.Map    `tfsdk:"node_status"`
	NodeStates     types.Map    `tfsdk:"node_states"`
	HomeFSType     types.String `tfsdk:"home_fstype"`
	HomeMounts     types.Map    `tfsdk:"home_mounts"`
	BeegfsMgmtd    types.String `tfsdk:"beegfs_mgmtd_host"`
	BeegfsHealthy  types.Bool   `tfsdk:"beegfs_healthy"`
	Problems       types.List   `tfsdk:"problems"`
	OK             types.Bool   `tfsdk:"ok"`
}

func (d *clusterCheckDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_check"
}

func (d *clusterCheckDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs the guide's verification from the controller and reports what it finds: a MUNGE " +
			"credential made on the controller decodes on every node (`munge -n | unmunge`), `scontrol ping`, every " +
			"node's state from `sinfo -a` (which also shows nodes that `AllowGroups` hides from the admin account), and, " +
			"with `beegfs_mgmtd_host`, `beegfs health check`. " +
			"Read it after the cluster resources, with `depends_on`, or in a `check` block.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "The controller.", Computed: true},
			"controller": schema.StringAttribute{
				MarkdownDescription: "The controller node, by name or address: credentials are made there and Slurm is asked there.",
				Required:            true,
				Validators:          []validator.String{nodeRefValidator},
			},
			"nodes": schema.SetAttribute{
				MarkdownDescription: "Nodes where a credential made on the controller must decode.",
				Required:            true,
				ElementType:         types.StringType,
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(nodeRefValidator),
				},
			},
			"fail_on_problems": schema.BoolAttribute{
				MarkdownDescription: "Turn any problem into an error, so a plan or apply stops. Defaults to `false`: problems are reported in `problems`.",
				Optional:            true,
			},
			"munge": schema.MapAttribute{
				MarkdownDescription: "Per node, `Success` or why the controller's credential did not decode there.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"controller_ping": schema.StringAttribute{MarkdownDescription: "What `scontrol ping` printed.", Computed: true},
			"controller_up":   schema.BoolAttribute{MarkdownDescription: "Whether the primary slurmctld answered UP.", Computed: true},
			"node_status": schema.MapAttribute{
				MarkdownDescription: "Per node known to the controller, its state from `sinfo -a` (`idle`, `mixed`, `down*`, ...).",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"node_states": schema.MapAttribute{
				MarkdownDescription: "Deprecated: the same map as `node_status`, under its earlier name.",
				DeprecationMessage:  "Use node_status instead, the name every resource gives its per-node map: node_states is its earlier name, kept so that existing configurations keep working.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"home_fstype": schema.StringAttribute{
				MarkdownDescription: "When set, the guide's check that BeeGFS is mounted over /home everywhere: `findmnt -n -o FSTYPE /home` " +
					"on every node in `nodes` must print this type, `beegfs` for real BeeGFS (the lab's BeeGFS stand-in mounts `tmpfs`). " +
					"Unset: /home is not checked.",
				Optional:   true,
				Validators: []validator.String{stringCheck{"must be a filesystem type such as beegfs", beegfs.ValidateFSType}},
			},
			"home_mounts": schema.MapAttribute{
				MarkdownDescription: "With `home_fstype`: per node, the filesystem type mounted on /home, or an empty string when nothing is " +
					"mounted there and the local /home underneath is in use.",
				Computed:    true,
				ElementType: types.StringType,
			},
			"beegfs_mgmtd_host": schema.StringAttribute{
				MarkdownDescription: "When set, the guide's BeeGFS verification runs on the controller: `" + beegfs.CLIPath + " health check --mgmtd-addr HOST:" +
					strconv.Itoa(beegfs.MgmtdAPIPort) + "` (package `" + beegfs.CLIPackage + "`, with the controller's `" + beegfs.TLSCertPath + "` and `" + beegfs.ConnAuthPath +
					"`). Every check it does not pass is a problem, in its own words, and so is its error when it cannot run. Unset: BeeGFS is not checked.",
				Optional:   true,
				Validators: []validator.String{stringCheck{"must be a host name or an IP address", beegfs.ValidateMgmtdHost}},
			},
			"beegfs_healthy": schema.BoolAttribute{
				MarkdownDescription: "With `beegfs_mgmtd_host`: whether `beegfs health check` passed (exit status 0).",
				Computed:            true,
			},
			"problems": schema.ListAttribute{
				MarkdownDescription: "Everything that failed, one sentence each, naming the node.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"ok": schema.BoolAttribute{MarkdownDescription: "True when there are no problems.", Computed: true},
		},
	}
}

func (d *clusterCheckDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterCheckDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = readingDataSource(ctx, "cluster check")
	m, ok := modelFrom[clusterCheckModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	controller := m.Controller.ValueString()
	nodeNames := setStrings(ctx, m.Nodes, &resp.Diagnostics)
	ctl, err := d.cluster.host(ctx, controller)
	if err != nil {
		resp.Diagnostics.Append(connectError(controller, err))
		return
	}
	homeFSType := m.HomeFSType.ValueString()
	decoded, mounts := d.checkNodes(ctx, ctl, controller, nodeNames, homeFSType != "")
	health, err := slurm.ReadHealth(ctx, ctl)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Check Slurm", controller, "Running scontrol ping and sinfo failed",
			"Check that slurm-client is installed on the controller.", err))
		return
	}
	problems := checkProblems(controller, decoded, health)
	m.HomeMounts = types.MapNull(types.StringType)
	if homeFSType != "" {
		m.HomeMounts = statusMap(mounts)
		problems = append(problems, homeProblems(homeFSType, mounts)...)
		sort.Strings(problems)
	}
	m.BeegfsHealthy = types.BoolNull()
	if mgmtd := m.BeegfsMgmtd.ValueString(); mgmtd != "" {
		health, err := beegfs.CheckHealth(ctx, ctl, mgmtd)
		if err != nil {
			resp.Diagnostics.Append(nodeError("Cannot Check BeeGFS", controller, "Running beegfs health check failed", adviceRead, err))
			return
		}
		m.BeegfsHealthy = types.BoolValue(health.Passed)
		problems = append(problems, beegfsProblems(controller, health)...)
		sort.Strings(problems)
	}
	m.ID = m.Controller
	m.Munge = statusMap(decoded)
	m.ControllerPing = types.StringValue(health.Ping)
	m.ControllerUp = types.BoolValue(health.ControllerUp)
	m.NodeStatus = statusMap(health.NodeStates)
	m.NodeStates = m.NodeStatus
	m.Problems = stringList(problems)
	m.OK = types.BoolValue(len(problems) == 0)
	if m.FailOnProblems.ValueBool() && len(problems) > 0 {
		resp.Diagnostics.AddError("Cluster Check Failed",
			"The guide's verification found problems:\n- "+strings.Join(problems, "\n- ")+
				"\n\nSee the guide's Troubleshooting section; fix the nodes named and read the check again.")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// homeMountRead is the guide's findmnt of /home, asked with each node's decode.
var homeMountRead = func() string {
	read, err := beegfs.MountedFSTypeRead(beegfs.DefaultClientMountPath)
	if err != nil {
		panic(err) // a constant path that is not valid is a programming error
	}
	return read
}()

// checkNodes is verifyMunge as a result per node: "Success", or why the credential did not
// decode there; with home, what is mounted on /home on each node too, read in the command that
// decodes the credential there, so the check costs each node one round trip.
func (d *clusterCheckDataSource) checkNodes(ctx context.Context, ctl *transport.Host, controller string, nodeNames []string, home bool) (decoded, mounts map[string]string) {
	var also string
	if home {
		also = homeMountRead
	}
	decoded = make(map[string]string, len(nodeNames))
	for _, n := range nodeNames {
		decoded[n] = "Success"
	}
	failures, outs, err := verifyMunge(ctx, d.cluster, ctl, nodeNames, also)
	if err != nil {
		for _, n := range nodeNames {
			decoded[n] = fmt.Sprintf("on %s: %v", controller, err)
		}
		if home {
			// No node decoded anything, so none read its mounts either.
			mounts = d.homeMounts(ctx, nodeNames)
		}
		return decoded, mounts
	}
	failed := make(map[string]error, len(failures))
	for _, f := range failures {
		decoded[f.node] = f.err.Error()
		failed[f.node] = f.err
	}
	if home {
		mounts = make(map[string]string, len(nodeNames))
		for _, n := range nodeNames {
			mounts[n] = homeMountFrom(outs[n], failed[n])
		}
	}
	return decoded, mounts
}

// homeMountFrom reads the type mounted on /home from a node's decode command's output, or,
// when the command gave no answer for it, says why in place of a type: the decode's failure,
// which is why the command did not run (the node cannot be reached, say).
func homeMountFrom(out []byte, decodeErr error) string {
	sections, err := transport.ParseSections(out)
	if err == nil {
		var fsType string
		if fsType, err = beegfs.MountedFSTypeFrom(sections, beegfs.DefaultClientMountPath); err == nil {
			return fsType
		}
	}
	if decodeErr != nil && len(out) == 0 {
		err = decodeErr
	}
	return "unknown: " + err.Error()
}

// homeMounts asks every node at once what is mounted on /home; a node that cannot be asked
// reports why in place of a type.
func (d *clusterCheckDataSource) homeMounts(ctx context.Context, nodeNames []string) map[string]string {
	mounts, failures := readOnEachNode(ctx, d.cluster, nodeNames, func(h *transport.Host) (string, error) {
		return beegfs.MountedFSType(ctx, h, beegfs.DefaultClientMountPath)
	})
	for _, f := range failures {
		mounts[f.node] = "unknown: " + f.err.Error()
	}
	return mounts
}

// homeProblems are the guide's "Home directories are missing on one node", named per node.
func homeProblems(want string, mounts map[string]string) []string {
	var problems []string
	for node, got := range mounts {
		switch {
		case got == want:
		case got == "":
			problems = append(problems, fmt.Sprintf("/home on %s is not mounted: beegfs-client did not mount it and the local /home underneath is in use "+
				"(see the guide's Troubleshooting: check systemctl status beegfs-client and lsmod | grep beegfs)", node))
		case strings.HasPrefix(got, "unknown: "):
			problems = append(problems, fmt.Sprintf("/home on %s could not be checked: %s", node, strings.TrimPrefix(got, "unknown: ")))
		default:
			problems = append(problems, fmt.Sprintf("/home on %s is %s, not %s", node, got, want))
		}
	}
	return problems
}

// beegfsProblems are the health check's failing lines, naming where it ran.
func beegfsProblems(controller string, h beegfs.Health) []string {
	problems := make([]string, 0, len(h.Failing))
	for _, line := range h.Failing {
		problems = append(problems, fmt.Sprintf("beegfs health check on %s: %s", controller, line))
	}
	return problems
}

func checkProblems(controller string, decoded map[string]string, health slurm.Health) []string {
	var problems []string
	for node, result := range decoded {
		if result != "Success" {
			problems = append(problems, fmt.Sprintf("a MUNGE credential made on %s does not decode on %s: %s", controller, node, result))
		}
	}
	if !health.ControllerUp {
		problems = append(problems, fmt.Sprintf("slurmctld on %s does not answer: %s", controller, strings.TrimSpace(health.Ping)))
	}
	for node, state := range health.NodeStates {
		if !slurm.Usable(state) {
			problems = append(problems, fmt.Sprintf("node %s is %s", node, state))
		}
	}
	sort.Strings(problems)
	return problems
}
