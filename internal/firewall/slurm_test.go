package firewall

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

var labSubnet = netip.MustParsePrefix("10.0.0.0/24")

func TestAdmitsSubnet(t *testing.T) {
	tests := []struct {
		name  string
		rules []string
		port  int
		want  bool
	}{
		{"guide's row", []string{"allow:6818/tcp:from=10.0.0.0/24"}, 6818, true},
		{"from any", []string{"allow:6818/any:from=any"}, 6818, true},
		{"wider subnet", []string{"allow:6800:6900/tcp:from=10.0.0.0/16"}, 6818, true},
		{"only the login node (P5)", []string{"allow:6818/tcp:from=10.0.0.10"}, 6818, false},
		{"half the subnet", []string{"allow:6818/tcp:from=10.0.0.0/25"}, 6818, false},
		{"udp only", []string{"allow:6818/udp:from=10.0.0.0/24"}, 6818, false},
		{"other port", []string{"allow:6818/tcp:from=10.0.0.0/24"}, 6819, false},
		{"no rules", nil, 6818, false},
		{"another network", []string{"allow:6818/tcp:from=192.168.0.0/24"}, 6818, false},
		{"partial allow, then the subnet", []string{"allow:6818/tcp:from=10.0.0.10", "allow:6818/tcp:from=10.0.0.0/24"}, 6818, true},
		{"partial deny first", []string{"deny:6818/tcp:from=10.0.0.12", "allow:6818/tcp:from=10.0.0.0/24"}, 6818, false},
		{"whole-subnet deny first", []string{"deny:6818/tcp:from=any", "allow:6818/tcp:from=10.0.0.0/24"}, 6818, false},
		{"deny elsewhere, then allow", []string{"deny:6818/tcp:from=192.168.0.1", "allow:6818/tcp:from=10.0.0.0/24"}, 6818, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AdmitsSubnet(mustRules(t, tt.rules...), labSubnet, tt.port); got != tt.want {
				t.Errorf("AdmitsSubnet(%v, %d) = %v, want %v", tt.rules, tt.port, got, tt.want)
			}
		})
	}
}

func TestSlurmWarnings(t *testing.T) {
	guide := []string{"allow:22/tcp:from=10.0.0.10", "allow:6818/tcp:from=10.0.0.0/24", "allow:60001:61000/tcp:from=10.0.0.0/24"}
	withRange := &SlurmConf{SlurmdPort: 6818, SrunPortRange: "60001-61000"}
	tests := []struct {
		name  string
		rules []string
		node  SlurmNode
		want  []string
	}{
		{"guide's table", guide, SlurmNode{RunsSlurmd: true, Subnet: labSubnet, Controller: withRange}, nil},
		{"6818 from the login node only", []string{"allow:6818/tcp:from=10.0.0.10"}, SlurmNode{RunsSlurmd: true, Subnet: labSubnet},
			[]string{"slurmd Port Not Open To The Cluster Subnet"}},
		{"no slurmd, no 6818 needed", []string{"allow:22/tcp:from=10.0.0.10"}, SlurmNode{Subnet: labSubnet}, nil},
		{"subnet unknown: no guess", nil, SlurmNode{RunsSlurmd: true}, nil},
		{"slurmd on the controller's port", guide, SlurmNode{RunsSlurmd: true, Subnet: labSubnet, Controller: &SlurmConf{SlurmdPort: 6819, SrunPortRange: "60001-61000"}},
			[]string{"slurmd Port Not Open To The Cluster Subnet"}},
		{"no SrunPortRange (P6)", guide, SlurmNode{RunsSlurmd: true, Subnet: labSubnet, Controller: &SlurmConf{SlurmdPort: 6818}},
			[]string{"Controller Has No SrunPortRange"}},
		{"both", nil, SlurmNode{RunsSlurmd: true, Subnet: labSubnet, Controller: &SlurmConf{}},
			[]string{"slurmd Port Not Open To The Cluster Subnet", "Controller Has No SrunPortRange"}},
		{"no controller named: P6 unknown", guide, SlurmNode{RunsSlurmd: true, Subnet: labSubnet}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, w := range SlurmWarnings("gpu01", mustRules(t, tt.rules...), tt.node) {
				got = append(got, w.Summary)
				if !strings.Contains(w.Detail, "gpu01") {
					t.Errorf("detail does not name the node: %s", w.Detail)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseSlurmConf(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    SlurmConf
		wantErr bool
	}{
		{"guide's", "ClusterName=gpucluster\nSrunPortRange=60001-61000\n", SlurmConf{SlurmdPort: 6818, SrunPortRange: "60001-61000"}, false},
		{"none", "ClusterName=gpucluster\n# SrunPortRange=60001-61000\n", SlurmConf{SlurmdPort: 6818}, false},
		{"case and pairs", "slurmdport=6819 srunportrange=50000-50100 # comment\n", SlurmConf{SlurmdPort: 6819, SrunPortRange: "50000-50100"}, false},
		{"bad port", "SlurmdPort=x\n", SlurmConf{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSlurmConf(tt.content)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseSlurmNode(t *testing.T) {
	addrs := "1: lo    inet 127.0.0.1/8 scope host lo\n2: host0    inet 10.0.0.11/24 brd 10.0.0.255 scope global host0\n2: host0    inet6 fe80::1/64 scope link\n"
	tests := []struct {
		name string
		out  string
		want SlurmNode
	}{
		{"compute node", "10.0.0.10 40000 10.0.0.11 22\n" + addrs + "slurmd enabled active\n", SlurmNode{RunsSlurmd: true, Subnet: labSubnet}},
		{"enabled, not started yet", "10.0.0.10 40000 10.0.0.11 22\n" + addrs + "slurmd enabled inactive\n", SlurmNode{RunsSlurmd: true, Subnet: labSubnet}},
		{"no slurmd", "10.0.0.10 40000 10.0.0.11 22\n" + addrs + "slurmd  inactive\n", SlurmNode{Subnet: labSubnet}},
		{"disabled", "10.0.0.10 40000 10.0.0.11 22\n" + addrs + "slurmd disabled inactive\n", SlurmNode{Subnet: labSubnet}},
		{"address on no interface", "10.0.0.10 40000 10.9.9.9 22\n" + addrs + "slurmd enabled active\n", SlurmNode{RunsSlurmd: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSlurmNode(tt.out)
			if err != nil || got.RunsSlurmd != tt.want.RunsSlurmd || got.Subnet != tt.want.Subnet || got.Controller != nil {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := parseSlurmNode("\nslurmd enabled active\n"); err == nil {
		t.Error("a session without SSH_CONNECTION was accepted")
	}
}

func TestReadControllerSlurmConf(t *testing.T) {
	files := &transporttest.Files{Content: map[string][]byte{}}
	conf, err := ReadControllerSlurmConf(context.Background(), files)
	if conf != nil || err != nil {
		t.Errorf("no slurm.conf yet: got %+v, %v; want nil, nil", conf, err)
	}
	files.Content["/etc/slurm/slurm.conf"] = []byte("ClusterName=gpucluster\nSlurmdPort=6820 SrunPortRange=60001-63000\n")
	conf, err = ReadControllerSlurmConf(context.Background(), files)
	if err != nil || conf == nil || conf.SlurmdPort != 6820 || conf.SrunPortRange != "60001-63000" {
		t.Errorf("got %+v, %v; want SlurmdPort 6820 and SrunPortRange 60001-63000", conf, err)
	}
}
