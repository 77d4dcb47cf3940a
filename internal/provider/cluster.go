package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// settings are the provider's connection defaults after defaults and the environment are applied.
// unknown is set when some value is not known until apply (it comes from another resource):
// plan-time checks that need a host then wait for apply.
type settings struct {
	unknown               bool
	user                  string
	port                  int
	privateKey            []byte
	privateKeyPassphrase  []byte
	useAgent              bool
	knownHostsFile        string
	hostKeys              []transport.PinnedKey
	insecureIgnoreHostKey bool
	acceptNewHostKeys     bool
	loginNode             string
	jumpHost              string
	connectTimeout        time.Duration
	commandTimeout        time.Duration
	keepalive             time.Duration
	sudoExe               string
	sudoPassword          []byte
	overrides             []nodeOverride
}

type nodeOverride struct {
	name, address, user string
	port                int
	jumpHost            *string
	// offline: the node is down; nothing connects to it (see offlineGuard).
	offline bool
}

func settingsFromModel(ctx context.Context, m providerModel, getenv func(string) string) (settings, diag.Diagnostics) {
	diags := applyEnvironment(&m, getenv)
	s := settings{
		user:                  stringOr(m.User, defaultUser),
		port:                  int(int64Or(m.Port, transport.DefaultPort)),
		privateKeyPassphrase:  []byte(m.PrivateKeyPassphrase.ValueString()),
		knownHostsFile:        m.KnownHostsFile.ValueString(),
		insecureIgnoreHostKey: m.InsecureIgnoreHostKey.ValueBool(),
		acceptNewHostKeys:     m.AcceptNewHostKeys.ValueBool(),
		loginNode:             m.LoginNode.ValueString(),
		jumpHost:              m.LoginNode.ValueString(),
		connectTimeout:        durationOr(m.ConnectTimeout, transport.DefaultConnectTimeout),
		commandTimeout:        durationOr(m.CommandTimeout, transport.DefaultCommandTimeout),
		keepalive:             durationOr(m.KeepaliveInterval, transport.DefaultKeepaliveInterval),
		sudoExe:               stringOr(m.SudoExe, transport.DefaultSudoExe),
		sudoPassword:          []byte(m.SudoPassword.ValueString()),
	}
	if !m.JumpHost.IsNull() {
		s.jumpHost = m.JumpHost.ValueString()
	}
	s.unknown = len(unknownSettings(m)) > 0
	if !m.HostKeys.IsNull() && !hostKeysUnknown(m.HostKeys) {
		var lines []string
		diags.Append(m.HostKeys.ElementsAs(ctx, &lines, false)...)
		pins, err := transport.ParsePinnedKeys(lines)
		if err != nil {
			diags.AddAttributeError(path.Root("host_keys"), "Invalid Host Key",
				"A pinned host key could not be used.\n\nWrite each entry as a known_hosts line naming its hosts: \"login01,10.0.0.10 ssh-ed25519 AAAA...\".\n\nOriginal Error: "+err.Error())
		}
		s.hostKeys = pins
	}
	switch {
	case !m.PrivateKey.IsNull():
		s.privateKey = []byte(m.PrivateKey.ValueString())
	case !m.PrivateKeyFile.IsNull() && !m.PrivateKeyFile.IsUnknown():
		key, err := transport.ReadPrivateKeyFile(m.PrivateKeyFile.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("private_key_file"), "Cannot Read Private Key File",
				fmt.Sprintf("The provider could not read the SSH private key at %q.\n\nCheck the path and its permissions.\n\nOriginal Error: %s",
					m.PrivateKeyFile.ValueString(), err))
		}
		s.privateKey = key
	}
	s.useAgent = m.UseAgent.ValueBool() || (m.UseAgent.IsNull() && len(s.privateKey) == 0)
	if s.knownHostsFile == "" && (len(s.hostKeys) == 0 || s.acceptNewHostKeys) {
		s.knownHostsFile = transport.ExpandHome("~/.ssh/known_hosts")
	} else {
		s.knownHostsFile = transport.ExpandHome(s.knownHostsFile)
	}
	for _, n := range m.Nodes {
		o := nodeOverride{
			name:    n.Name.ValueString(),
			address: n.Address.ValueString(),
			user:    n.User.ValueString(),
			port:    int(n.Port.ValueInt64()),
			offline: n.Offline.ValueBool(),
		}
		if !n.JumpHost.IsNull() {
			j := n.JumpHost.ValueString()
			o.jumpHost = &j
		}
		s.overrides = append(s.overrides, o)
	}
	return s, diags
}

func (c *cluster) planGroup(name string, nodes []string) {
	for _, n := range nodes {
		c.plannedGroups.Store(n+"\x00"+name, true)
	}
}

func (c *cluster) groupPlannedOn(node, group string) bool {
	_, ok := c.plannedGroups.Load(node + "\x00" + group)
	return ok
}

// planUser records a gpucluster_user planned on nodes in this run.
func (c *cluster) planUser(name string, nodes []string) {
	for _, n := range nodes {
		c.plannedUsers.Store(c.canonicalNode(n)+"\x00"+name, true)
	}
}

func (c *cluster) userPlannedOn(node, name string) bool {
	_, ok := c.plannedUsers.Load(c.canonicalNode(node) + "\x00" + name)
	return ok
}

// planSlurmAccount records a gpucluster_slurm_account planned on controller in this run.
func (c *cluster) planSlurmAccount(controller, name string) {
	c.plannedSlurmAccounts.Store(c.canonicalNode(controller)+"\x00"+name, true)
}

func (c *cluster) slurmAccountPlanned(controller, name string) bool {
	_, ok := c.plannedSlurmAccounts.Load(c.canonicalNode(controller) + "\x00" + name)
	return ok
}

// defaultUser is the guide's administration account, which is deliberately not a cluster user.
const defaultUser = "admin"

// cluster is what resources receive from Configure: the connection defaults and the pool that
// keeps one SSH connection per host for the whole run.
type cluster struct {
	settings settings
	pool     *transport.Pool

	// firewallPlans holds the firewall changes planned in this run. Terraform plans every
	// resource of a run in one provider process, so a second declaration of one rule is a
	// second resource, refused at plan even when neither exists on the node yet, and a
	// removal is checked together with the other removals on its node.
	firewallPlans firewallPlans
	// plannedGroups holds node+"\x00"+group for every gpucluster_group planned in this run, so
	// that a user's plan-time check counts a group this apply adds to a node as there. Users
	// that refer to the group are planned after it.
	plannedGroups sync.Map
	// plannedUsers and plannedSlurmAccounts do the same for gpucluster_user (node+"\x00"+name)
	// and gpucluster_slurm_account (controller+"\x00"+name), for a Slurm user's plan-time
	// checks. A Slurm user that refers to them is planned after them.
	plannedUsers, plannedSlurmAccounts sync.Map
	// declaredTargets does the same for BeeGFS storage target IDs.
	declaredTargets targetDeclarations
	// slurmPlans holds the Slurm fragment changes planned in this run.
	slurmPlans slurmPlans
	// owners holds the objects this run's resources declare, so a second declaration is refused.
	owners ownerDeclarations
	// offlineWarned holds the offline nodes already warned about in this run.
	offlineWarned sync.Map
}

func newCluster(s settings) *cluster {
	pool := transport.NewPool()
	pool.Logger = newRunLogger()
	return &cluster{settings: s, pool: pool}
}

// newRunLogger gives each run's pool its logger. The acceptance tests count each run's
// commands per host through it.
var newRunLogger = func() transport.Logger { return tflogLogger{} }

// tflogLogger sends the transport's events to Terraform's log with the context of the request
// that caused them, so each line carries that request's resource type and RPC.
type tflogLogger struct{}

func (tflogLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(ctx, msg, fields)
}

func (tflogLogger) Info(ctx context.Context, msg string, fields map[string]any) {
	tflog.Info(ctx, msg, fields)
}

// settingsKnown tells plan-time checks whether every connection setting is known yet; only
// then can they reach the hosts.
func (c *cluster) settingsKnown() bool { return !c.settings.unknown }

// errNodeOffline is host's refusal of a node that the provider's node blocks mark offline.
var errNodeOffline = errors.New("node offline")

// host returns the shared connection to a node named by name or address. An offline node is
// refused at once: a powered-off server would otherwise cost every caller the connect timeout.
func (c *cluster) host(ctx context.Context, node string) (*transport.Host, error) {
	if c.isOffline(node) {
		return nil, fmt.Errorf("%w: %s is marked offline = true in the provider's node block, so the provider does not connect to it", errNodeOffline, node)
	}
	cfg, err := c.connConfig(node, 0)
	if err != nil {
		return nil, err
	}
	return c.pool.Host(ctx, cfg)
}

// isOffline reports whether a node block marks node, by name or address, offline.
func (c *cluster) isOffline(node string) bool {
	o, _ := c.override(node)
	return o.offline
}

// anyOffline reports whether some node block marks its node offline.
func (c *cluster) anyOffline() bool {
	for _, o := range c.settings.overrides {
		if o.offline {
			return true
		}
	}
	return false
}

func (c *cluster) override(node string) (nodeOverride, bool) {
	for _, o := range c.settings.overrides {
		if o.name == node || (o.address != "" && o.address == node) {
			return o, true
		}
	}
	return nodeOverride{name: node}, false
}

// sameNode reports whether two references (name or address) mean the same node.
func (c *cluster) sameNode(a, b string) bool {
	oa, _ := c.override(a)
	ob, _ := c.override(b)
	return a != "" && oa.name == ob.name
}

const maxJumpChain = 4

func (c *cluster) connConfig(node string, depth int) (transport.Config, error) {
	if depth > maxJumpChain {
		return transport.Config{}, fmt.Errorf("jump host chain for %s is longer than %d hops, or loops", node, maxJumpChain)
	}
	s := c.settings
	o, _ := c.override(node)
	cfg := transport.Config{
		Name:                  node,
		Address:               firstNonEmpty(o.address, node),
		Port:                  firstNonZero(o.port, s.port),
		User:                  firstNonEmpty(o.user, s.user),
		PrivateKey:            s.privateKey,
		PrivateKeyPassphrase:  s.privateKeyPassphrase,
		UseAgent:              s.useAgent,
		KnownHostsFile:        s.knownHostsFile,
		HostKeys:              transport.KeysFor(s.hostKeys, firstNonZero(o.port, s.port), node, o.name, o.address),
		InsecureIgnoreHostKey: s.insecureIgnoreHostKey,
		AcceptNewHostKeys:     s.acceptNewHostKeys,
		ConnectTimeout:        s.connectTimeout,
		CommandTimeout:        s.commandTimeout,
		KeepaliveInterval:     s.keepalive,
		SudoExe:               s.sudoExe,
		SudoPassword:          s.sudoPassword,
	}
	jump := s.jumpHost
	if o.jumpHost != nil {
		jump = *o.jumpHost
	}
	if jump == "" || c.sameNode(jump, node) {
		return cfg, nil
	}
	jumpCfg, err := c.connConfig(jump, depth+1)
	if err != nil {
		return transport.Config{}, err
	}
	cfg.Jump = &jumpCfg
	return cfg, nil
}

// userFor is the SSH user on a node: its node block's, else the provider default.
func (c *cluster) userFor(node string) string {
	o, _ := c.override(node)
	return firstNonEmpty(o.user, c.settings.user)
}

func stringOr(v types.String, def string) string {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return def
	}
	return v.ValueString()
}

func int64Or(v types.Int64, def int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueInt64()
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstNonZero(vs ...int) int {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}

// canonicalNode names a node the same way whether it is referred to by name or address.
func (c *cluster) canonicalNode(node string) string {
	o, _ := c.override(node)
	return o.name
}

// connect is host for a step that reports into diags: a node it cannot reach adds connectError.
func (c *cluster) connect(ctx context.Context, node string, diags *diag.Diagnostics) (*transport.Host, bool) {
	h, err := c.host(ctx, node)
	if err != nil {
		diags.Append(connectError(node, err))
		return nil, false
	}
	return h, true
}
