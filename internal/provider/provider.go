package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var _ provider.Provider = (*gpuclusterProvider)(nil)

// New returns the provider factory used by main and by the acceptance tests.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &gpuclusterProvider{version: version}
	}
}

type gpuclusterProvider struct {
	version string
	// current is the last configuration's cluster. A provider instance configured again (the
	// acceptance tests reuse one instance for every command) closes the previous connections.
	current *cluster
}

type providerModel struct {
	User                  types.String        `tfsdk:"user"`
	Port                  types.Int64         `tfsdk:"port"`
	PrivateKey            types.String        `tfsdk:"private_key"`
	PrivateKeyFile        types.String        `tfsdk:"private_key_file"`
	PrivateKeyPassphrase  types.String        `tfsdk:"private_key_passphrase"`
	UseAgent              types.Bool          `tfsdk:"use_agent"`
	KnownHostsFile        types.String        `tfsdk:"known_hosts_file"`
	HostKeys              types.List          `tfsdk:"host_keys"`
	InsecureIgnoreHostKey types.Bool          `tfsdk:"insecure_ignore_host_key"`
	AcceptNewHostKeys     types.Bool          `tfsdk:"accept_new_host_keys"`
	LoginNode             types.String        `tfsdk:"login_node"`
	JumpHost              types.String        `tfsdk:"jump_host"`
	ConnectTimeout        types.String        `tfsdk:"connect_timeout"`
	CommandTimeout        types.String        `tfsdk:"command_timeout"`
	KeepaliveInterval     types.String        `tfsdk:"keepalive_interval"`
	SudoExe               types.String        `tfsdk:"sudo_exe"`
	SudoPassword          types.String        `tfsdk:"sudo_password"`
	Nodes                 []nodeOverrideModel `tfsdk:"node"`
}

type nodeOverrideModel struct {
	Name     types.String `tfsdk:"name"`
	Address  types.String `tfsdk:"address"`
	Port     types.Int64  `tfsdk:"port"`
	User     types.String `tfsdk:"user"`
	JumpHost types.String `tfsdk:"jump_host"`
	Offline  types.Bool   `tfsdk:"offline"`
}

func (p *gpuclusterProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "gpucluster"
	resp.Version = p.version
}

func (p *gpuclusterProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Builds and keeps a small shared GPU cluster over SSH: one login node that is the " +
			"control plane and GPU servers behind it. Every host is reached as `user` over SSH with its host key " +
			"checked, through the login node as jump host, and commands that need root run through sudo.",
		Attributes: map[string]schema.Attribute{
			"user": schema.StringAttribute{
				MarkdownDescription: "SSH user on every node, an administrator in the sudo group. Defaults to `" + defaultUser + "`, the guide's administration account.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(userNamePattern, "must be a POSIX user name")},
			},
			"port": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("SSH port of every node. Defaults to `%d`.", transport.DefaultPort),
				Optional:            true,
				Validators:          portValidators(),
			},
			"private_key": schema.StringAttribute{
				MarkdownDescription: "PEM-encoded private key. Conflicts with `private_key_file`. Without either, the ssh-agent at `SSH_AUTH_SOCK` is used.",
				Optional:            true,
				Sensitive:           true,
				Validators:          []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("private_key_file"))},
			},
			"private_key_file": schema.StringAttribute{
				MarkdownDescription: "Path of a private key file.",
				Optional:            true,
			},
			"private_key_passphrase": schema.StringAttribute{
				MarkdownDescription: "Passphrase of the private key, if it has one.",
				Optional:            true,
				Sensitive:           true,
			},
			"use_agent": schema.BoolAttribute{
				MarkdownDescription: "Offer the keys of the ssh-agent at `SSH_AUTH_SOCK`. Defaults to `true` when no private key is configured.",
				Optional:            true,
			},
			"known_hosts_file": schema.StringAttribute{
				MarkdownDescription: "known_hosts file that host keys are checked against. Defaults to `~/.ssh/known_hosts` when `host_keys` is empty or `accept_new_host_keys` is set. A host whose key is not listed, or differs, is refused.",
				Optional:            true,
			},
			"host_keys": schema.ListAttribute{
				MarkdownDescription: "Host keys pinned in configuration, as known_hosts lines (`login01,10.0.0.10 ssh-ed25519 AAAA...`). Checked together with `known_hosts_file`.",
				Optional:            true,
				ElementType:         types.StringType,
			},
			"insecure_ignore_host_key": schema.BoolAttribute{
				MarkdownDescription: "Skip host key checking. Anyone on the path can then impersonate a node and receive the sudo password. Every run warns while this is set.",
				Optional:            true,
			},
			"accept_new_host_keys": schema.BoolAttribute{
				MarkdownDescription: "Trust a node that neither `known_hosts_file` nor `host_keys` lists on first contact, and record its key in `known_hosts_file` " +
					"(created if missing), as OpenSSH's `StrictHostKeyChecking=accept-new` does. A node whose key is known and differs is still refused. " +
					"Defaults to `false`: the first contact with a node is then refused with the known_hosts line to add after checking its fingerprint. " +
					"Needs `known_hosts_file` (or its default) even when `host_keys` is set.",
				Optional: true,
			},
			"login_node": schema.StringAttribute{
				MarkdownDescription: "Name or address of the login node. It is the jump host for every other node and keeps the UID ledger. Without it every node is dialled directly.",
				Optional:            true,
			},
			"jump_host": schema.StringAttribute{
				MarkdownDescription: "Jump host for every node but itself, by name or address. Defaults to `login_node`; an empty string dials every node directly. A node block can override it.",
				Optional:            true,
			},
			"connect_timeout": schema.StringAttribute{
				MarkdownDescription: "Time allowed for the TCP connection and SSH handshake, as a Go duration (`30s`). Defaults to `" + shortDuration(transport.DefaultConnectTimeout) + "`.",
				Optional:            true,
				Validators:          []validator.String{durationValidator{}},
			},
			"command_timeout": schema.StringAttribute{
				MarkdownDescription: "Longest time one command on a node may run, as a Go duration; a command still running then is killed on the node with the processes it started, and the step fails. " +
					"A resource's own `timeouts` bound its waits more tightly. Defaults to `" + shortDuration(transport.DefaultCommandTimeout) + "`, long enough for an apt install on a slow mirror.",
				Optional:   true,
				Validators: []validator.String{durationValidator{}},
			},
			"keepalive_interval": schema.StringAttribute{
				MarkdownDescription: "Interval of SSH keepalive requests, as a Go duration. Defaults to `" + shortDuration(transport.DefaultKeepaliveInterval) + "`.",
				Optional:            true,
				Validators:          []validator.String{durationValidator{}},
			},
			"sudo_exe": schema.StringAttribute{
				MarkdownDescription: "sudo executable. Defaults to `" + transport.DefaultSudoExe + "`. On Ubuntu 26.04, where `sudo` is sudo-rs, the guide uses the classic `/usr/bin/sudo.ws`; both work.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(absPathOrWordPattern, "must be an absolute path or a command name")},
			},
			"sudo_password": schema.StringAttribute{
				MarkdownDescription: "sudo password of `user`, sent on stdin only when sudo asks for it. Never stored in state or logged. Without it, sudo must not need a password. " +
					"From a Terraform variable, declare the variable `ephemeral = true` (Terraform 1.10 or later; a provider's configuration accepts ephemeral values): Terraform writes the value of any other variable into every saved plan (`terraform plan -out`).",
				Optional:  true,
				Sensitive: true,
			},
		},
		Blocks: map[string]schema.Block{
			"node": schema.ListNestedBlock{
				MarkdownDescription: "Connection settings for one node that differ from the defaults above. Resources name nodes by name or address; a block applies to both.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"name": schema.StringAttribute{
							MarkdownDescription: "Node name as resources refer to it.",
							Required:            true,
						},
						"address": schema.StringAttribute{
							MarkdownDescription: "Address to dial. Defaults to `name`, resolved by the jump host.",
							Optional:            true,
						},
						"port": schema.Int64Attribute{
							MarkdownDescription: "SSH port of this node.",
							Optional:            true,
							Validators:          portValidators(),
						},
						"user": schema.StringAttribute{
							MarkdownDescription: "SSH user on this node.",
							Optional:            true,
						},
						"jump_host": schema.StringAttribute{
							MarkdownDescription: "Jump host for this node, by name or address. An empty string dials the node directly. Defaults to `login_node`.",
							Optional:            true,
						},
						"offline": schema.BoolAttribute{
							MarkdownDescription: "The node is down (powered off for maintenance, broken): the provider does not connect to it. Resources on it " +
								"(whose `node`, `nodes` or `controller` names it) are not read, so their state stands, and plan without asking any host while unchanged; " +
								"a change to one of them is refused at plan time. One warning per run names the node. The rest of the cluster plans and applies as usual; " +
								"an ordered restart of Slurm leaves slurmd's restart on the node pending until it is back. Remove it once the node is back: the next plan reads the node again " +
								"and shows what changed there meanwhile. Data sources are not guarded: leave the node out of `gpucluster_cluster_check`'s `nodes` meanwhile. Defaults to `false`.",
							Optional: true,
						},
					},
				},
				Validators: []validator.List{listvalidator.UniqueValues()},
			},
		},
	}
	noteEnvironmentFallbacks(resp.Schema.Attributes)
}

// noteEnvironmentFallbacks ends the description of every attribute that has an environment
// fallback with its variable, so the docs list exactly what applyEnvironment reads.
func noteEnvironmentFallbacks(attributes map[string]schema.Attribute) {
	for _, name := range envAttributes() {
		note := " May come from `" + envName(name) + "` when not set here."
		switch a := attributes[name].(type) {
		case schema.StringAttribute:
			a.MarkdownDescription += note
			attributes[name] = a
		case schema.Int64Attribute:
			a.MarkdownDescription += note
			attributes[name] = a
		default:
			panic("environment fallback for " + name + ", which is neither a string nor a number attribute")
		}
	}
}

func (p *gpuclusterProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	model, ok := modelFrom[providerModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	settings, diags := settingsFromModel(ctx, model, os.Getenv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if settings.unknown {
		resp.Diagnostics.Append(deferredChecksWarning(unknownSettings(model)))
	}
	if settings.insecureIgnoreHostKey {
		resp.Diagnostics.AddWarning("Host Key Checking Disabled",
			"insecure_ignore_host_key is set: node identities are not verified, so anyone on the network path "+
				"can impersonate a node and receive the sudo password.\n\nPin the nodes' keys with host_keys or known_hosts_file and remove the setting.")
	}
	c := newCluster(settings)
	configured.replace(p.current, c)
	p.current = c
	resp.ResourceData = c
	resp.DataSourceData = c
}

// configured holds the current cluster of every provider instance in this process. Terraform
// ends a run by stopping the plugin's server; main then closes their connections
// (CloseConnections), which logs each host's run summary at INFO.
var configured clusters

type clusters struct {
	mu  sync.Mutex
	set map[*cluster]struct{}
}

// replace closes old's connections, if any, and keeps c in their place.
func (cs *clusters) replace(old, c *cluster) {
	cs.mu.Lock()
	if cs.set == nil {
		cs.set = map[*cluster]struct{}{}
	}
	delete(cs.set, old)
	cs.set[c] = struct{}{}
	cs.mu.Unlock()
	if old != nil {
		old.pool.Close()
	}
}

// CloseConnections ends every connection of the process's provider instances, logging what
// the run asked of each host. main calls it when the plugin's server has stopped.
func CloseConnections() {
	configured.mu.Lock()
	set := configured.set
	configured.set = nil
	configured.mu.Unlock()
	for c := range set {
		c.pool.Close()
	}
}

func (p *gpuclusterProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		guardOffline(NewNodeResource, "name", "address"),
		guardOffline(guardOwned(NewGroupResource, recordedOnLoginNode("group")), "nodes"),
		guardOffline(guardOwned(NewUserResource, recordedOnLoginNode("user")), "nodes"),
		guardOffline(guardOwned(NewMungeKeyResource, recordedOnEveryNode("munge_key", "munge.key", "controller", "nodes")), "controller", "nodes"),
		guardOffline(guardOwned(NewSlurmControllerResource, recordedPerNode("slurm_controller", "node", "slurmctld")), "node"),
		guardOffline(guardOwned(NewSlurmActivationResource, recordedPerNode("slurm_activation", "controller", "activation")), "controller"),
		guardOffline(guardOwned(NewSlurmNodeResource, recordedOn("slurm_node", "controller", "name")), "controller"),
		guardOffline(guardOwned(NewSlurmPartitionResource, recordedOn("slurm_partition", "controller", "name")), "controller"),
		guardOffline(guardOwned(NewSlurmComputeResource, recordedPerNode("slurm_compute", "node", "slurmd")), "node", "controller"),
		guardOffline(guardOwned(NewSlurmAccountingResource, recordedPerNode("slurm_accounting", "controller", "accounting")), "controller", "node"),
		guardOffline(guardOwned(NewSlurmAccountResource, recordedOn("slurm_account", "controller", "name")), "controller"),
		guardOffline(guardOwned(NewSlurmUserResource, recordedOn("slurm_user", "controller", "name")), "controller"),
		guardOffline(guardOwned(NewSlurmQOSResource, recordedOn("slurm_qos", "controller", "name")), "controller"),
		guardOffline(guardOwned(NewRollingRebootResource, recordedForEachListed("rolling_reboot", "controller", "nodes")), "controller", "nodes"),
		guardOffline(NewSlurmBackupResource, "controller"),
		guardOffline(NewFirewallRuleResource, "node"),
		guardOffline(guardOwned(NewFirewallResource, recordedPerNode("firewall", "node", "ufw")), "node"),
		guardOffline(guardOwned(NewBeegfsClientResource, recordedPerNode("beegfs_client", "node", "client")), "node"),
		guardOffline(guardOwned(NewBeegfsTargetResource, recordedOn("beegfs_target", "node", "path")), "node"),
		guardOffline(guardOwned(NewBeegfsManagementResource, recordedPerNode("beegfs_management", "node", "mgmtd")), "node", "auth_nodes"),
		guardOffline(guardOwned(NewBeegfsMetadataResource, recordedPerNode("beegfs_metadata", "node", "meta")), "node"),
	}
}

func (p *gpuclusterProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewNodeFactsDataSource,
		NewClusterCheckDataSource,
		NewSlurmGPUHoursDataSource,
	}
}

func durationOr(v types.String, def time.Duration) time.Duration {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil {
		return def
	}
	return d
}

// shortDuration writes a default as a user would configure it: 30m, not 30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
