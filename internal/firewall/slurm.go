package firewall

import (
	"context"
	_ "embed"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// DefaultSlurmdPort is slurmd's port when slurm.conf sets no SlurmdPort.
const DefaultSlurmdPort = 6818

// SlurmNode is what the plan knows about a node's Slurm traffic before UFW filters it.
type SlurmNode struct {
	// RunsSlurmd is true when slurmd is enabled or running on the node.
	RunsSlurmd bool
	// Subnet is the cluster subnet: the network of the address the provider reaches
	// the node at. Invalid when the node's addresses did not show it.
	Subnet netip.Prefix
	// Controller is the controller's slurm.conf; nil when no controller is named or
	// its slurm.conf does not exist yet.
	Controller *SlurmConf
}

// SlurmConf holds the slurm.conf settings a firewall has to allow for.
type SlurmConf struct {
	SlurmdPort    int
	SrunPortRange string
}

// Warning is a firewall that would break Slurm, said before it does.
type Warning struct {
	Summary string
	Detail  string
}

// SlurmWarnings returns the pitfalls a firewall with rules, filtering incoming traffic, sets
// up on a Slurm node: slurmd's port not open to the whole subnet (P5), and no SrunPortRange
// on the controller, so srun's callbacks come in on random ports the firewall drops (P6).
func SlurmWarnings(node string, rules []Rule, n SlurmNode) []Warning {
	var out []Warning
	port := DefaultSlurmdPort
	if n.Controller != nil && n.Controller.SlurmdPort != 0 {
		port = n.Controller.SlurmdPort
	}
	if n.RunsSlurmd && n.Subnet.IsValid() && !AdmitsSubnet(rules, n.Subnet, port) {
		out = append(out, Warning{
			Summary: "slurmd Port Not Open To The Cluster Subnet",
			Detail: fmt.Sprintf("%s runs slurmd, but no allow rule admits %d/tcp from the whole cluster subnet %s before UFW is enabled (%s). "+
				"slurmd forwards job launches to other slurmds and srun inside a batch job connects to slurmd directly, so multi-node jobs "+
				"would hang. Add a gpucluster_firewall_rule for port %q from %q on %s and list it in rules.",
				node, port, n.Subnet, slurm.PitfallRef("P5"), strconv.Itoa(port), n.Subnet.String(), node),
		})
	}
	if n.Controller != nil && n.Controller.SrunPortRange == "" {
		out = append(out, Warning{
			Summary: "Controller Has No SrunPortRange",
			Detail: fmt.Sprintf("UFW on %s would deny incoming traffic, but the controller's slurm.conf sets no SrunPortRange (%s). "+
				"srun then listens for its callbacks on random ports, which the firewall drops: sbatch, squeue and sinfo work, srun hangs. "+
				"Set srun_port_range on gpucluster_slurm_controller (the guide's 60001-61000) and allow that range from the subnet on every node.",
				node, slurm.PitfallRef("P6")),
		})
	}
	return out
}

// AdmitsSubnet reports whether every address of subnet may reach port/tcp under a
// deny-incoming policy: UFW's first matching rule must be an allow for each of them. A rule
// for only part of the subnet does not decide, unless it denies.
func AdmitsSubnet(rules []Rule, subnet netip.Prefix, port int) bool {
	for _, r := range rules {
		if !r.matchesPort(port) {
			continue
		}
		switch r.overlap(subnet) {
		case overlapAll:
			return r.Action == ActionAllow
		case overlapPart:
			if r.Action != ActionAllow {
				return false
			}
		}
	}
	return false
}

type overlap int

const (
	overlapNone overlap = iota
	overlapPart
	overlapAll
)

// overlap says how much of subnet the rule's source covers.
func (r Rule) overlap(subnet netip.Prefix) overlap {
	if r.From == FromAny {
		return overlapAll
	}
	src, err := netip.ParsePrefix(r.From)
	if err != nil {
		addr, err := netip.ParseAddr(r.From)
		if err != nil {
			return overlapNone
		}
		src = netip.PrefixFrom(addr, addr.BitLen())
	}
	switch {
	case src.Bits() <= subnet.Bits() && src.Contains(subnet.Addr()):
		return overlapAll
	case subnet.Overlaps(src):
		return overlapPart
	}
	return overlapNone
}

// SubnetOf returns the network of the interface that holds addr, from `ip -o addr show`
// output ("2: eth0    inet 10.0.0.11/24 brd ..."), so the cluster subnet need not be
// configured twice.
func SubnetOf(ipAddrOutput string, addr netip.Addr) (netip.Prefix, bool) {
	for _, line := range strings.Split(ipAddrOutput, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" && f[i] != "inet6" {
				continue
			}
			p, err := netip.ParsePrefix(f[i+1])
			if err == nil && p.Addr().Unmap() == addr {
				return p.Masked(), true
			}
		}
	}
	return netip.Prefix{}, false
}

// ReadControllerSlurmConf reads the settings of SlurmConf from a controller's slurm.conf;
// nil while the file does not exist yet.
func ReadControllerSlurmConf(ctx context.Context, r transport.FileReader) (*SlurmConf, error) {
	content, exists, err := r.ReadFile(ctx, slurm.ConfDir+"/slurm.conf")
	if err != nil || !exists {
		return nil, err
	}
	conf, err := ParseSlurmConf(string(content))
	if err != nil {
		return nil, err
	}
	return &conf, nil
}

// ParseSlurmConf reads SlurmdPort and SrunPortRange from slurm.conf, with the slurm
// package's parser: keys are case-insensitive, one line may hold several settings, and the
// last one counts.
func ParseSlurmConf(content string) (SlurmConf, error) {
	conf, err := slurm.ParseConf([]byte(content))
	if err != nil {
		return SlurmConf{}, fmt.Errorf("read slurm.conf: %w", err)
	}
	c := SlurmConf{SlurmdPort: DefaultSlurmdPort}
	if value, ok := conf.Setting("SlurmdPort"); ok {
		port, err := strconv.Atoi(value)
		if err != nil || port < 1 || port > 65535 {
			return SlurmConf{}, fmt.Errorf("slurm.conf: SlurmdPort=%s is not a port", value)
		}
		c.SlurmdPort = port
	}
	c.SrunPortRange, _ = conf.Setting("SrunPortRange")
	return c, nil
}

// slurmNodeScript prints, as the login user, the session's SSH_CONNECTION, the node's
// addresses and slurmd's unit state, in one round trip.
//
//go:embed slurm_node.sh
var slurmNodeScript string

// ReadSlurmNode finds whether slurmd runs on the node and the subnet of the address the
// provider reaches it at.
func ReadSlurmNode(ctx context.Context, h Runner) (SlurmNode, error) {
	res, err := h.Run(ctx, slurmNodeScript, nil)
	if err != nil {
		return SlurmNode{}, fmt.Errorf("read slurmd state and addresses: %w", err)
	}
	return parseSlurmNode(string(res.Stdout))
}

func parseSlurmNode(out string) (SlurmNode, error) {
	first, rest, _ := strings.Cut(out, "\n")
	f := strings.Fields(first)
	if len(f) != 4 {
		return SlurmNode{}, fmt.Errorf("SSH_CONNECTION %q does not have four fields", first)
	}
	addr, err := netip.ParseAddr(f[2])
	if err != nil {
		return SlurmNode{}, fmt.Errorf("SSH_CONNECTION %q: server address: %w", first, err)
	}
	var n SlurmNode
	n.Subnet, _ = SubnetOf(rest, addr.Unmap().WithZone(""))
	for _, line := range strings.Split(rest, "\n") {
		if state, ok := strings.CutPrefix(line, "slurmd "); ok {
			words := strings.Fields(state)
			n.RunsSlurmd = slices.Contains(words, "enabled") || slices.Contains(words, "active")
		}
	}
	return n, nil
}
