package slurm

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// guideExample is the guide's cluster: login01 and gpu01..03.
func guideExample() (ControllerSettings, []NodeDef, []PartitionDef) {
	var nodes []NodeDef
	for _, name := range []string{"gpu03", "gpu01", "gpu02"} {
		nodes = append(nodes, NodeDef{
			Name: name, CPUs: 384, Boards: 1, SocketsPerBoard: 2, CoresPerSocket: 96, ThreadsPerCore: 2,
			RealMemory: 500000, Gres: "gpu:4", State: DefaultNodeState,
		})
	}
	part := PartitionDef{
		Name: "gpu", Nodes: []string{"gpu01", "gpu02", "gpu03"}, Default: true, MaxTime: "3-00:00:00",
		State: "UP", AllowGroups: []string{"users"}, DefMemPerGPU: 120000,
	}
	c := DefaultControllerSettings("login01")
	// The guide's listing has no MailProg; the provider's default adds one (TestDefaultMailProg).
	c.MailProg = ""
	return c, nodes, []PartitionDef{part}
}

// The guide's example renders to the guide's listings, line for line.
func TestRenderGuideExample(t *testing.T) {
	c, nodes, parts := guideExample()
	tests := []struct {
		golden string
		got    []byte
	}{
		{"guide-slurm.conf", RenderSlurmConf(c, nodes, parts)},
		{"guide-cgroup.conf", RenderCgroupConf(c.Cgroup)},
		{"guide-gres.conf", RenderGresConf(nodes)},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			if want := transporttest.Testdata(t, tt.golden); string(tt.got) != want {
				t.Errorf("got:\n%s\nwant:\n%s", tt.got, want)
			}
		})
	}
}

func TestRenderSlurmConfLines(t *testing.T) {
	c, nodes, parts := guideExample()
	odd := nodes[0]
	odd.Name, odd.RealMemory = "gpu04", 250000
	cpuOnly := NodeDef{Name: "cpu01", CPUs: 8, RealMemory: 1000, State: DefaultNodeState, Extra: map[string]string{"Weight": "10"}}
	c.Extra = map[string]string{"SlurmctldDebug": "info", "AccountingStorageType": "accounting_storage/none"}
	parts = append(parts, PartitionDef{Name: "cpu", Nodes: []string{"cpu01"}, State: "UP", Extra: map[string]string{"Hidden": "YES"}})
	got := string(RenderSlurmConf(c, append(nodes, odd, cpuOnly), parts))
	for _, want := range []string{
		"\nJobAcctGatherType=jobacct_gather/cgroup\n\nAccountingStorageType=accounting_storage/none\nSlurmctldDebug=info\n\nNodeName=",
		"\nNodeName=cpu01 CPUs=8 RealMemory=1000 State=UNKNOWN Weight=10\n",
		"\nNodeName=gpu04 CPUs=384 Boards=1 SocketsPerBoard=2 CoresPerSocket=96 ThreadsPerCore=2 RealMemory=250000 Gres=gpu:4 State=UNKNOWN\n",
		"\nNodeName=gpu[01-03] CPUs=384",
		"\nPartitionName=cpu Nodes=cpu01 State=UP Hidden=YES\nPartitionName=gpu Nodes=gpu[01-03] Default=YES",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("slurm.conf lacks %q:\n%s", want, got)
		}
	}
	// Output does not depend on input order.
	reversed := append([]NodeDef{cpuOnly, odd}, nodes...)
	if again := string(RenderSlurmConf(c, reversed, parts)); again != got {
		t.Errorf("order-dependent output:\n%s\nvs\n%s", again, got)
	}
}

func TestRenderGresConf(t *testing.T) {
	fake := func(name, files string) NodeDef { return NodeDef{Name: name, Gres: "gpu:4", GPUFiles: files} }
	tests := []struct {
		name  string
		nodes []NodeDef
		want  string
	}{
		{"no GPUs", []NodeDef{{Name: "cpu01"}}, ""},
		{"all autodetect", []NodeDef{fake("gpu01", ""), fake("gpu02", "")}, "\nAutoDetect=nvml\n"},
		{"explicit merged", []NodeDef{fake("gpu02", "/dev/nvidia[0-3]"), fake("gpu01", "/dev/nvidia[0-3]")},
			"\nNodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-3]\n"},
		{"mixed", []NodeDef{fake("gpu01", "/dev/nvidia[0-1]"), fake("gpu02", ""), {Name: "gpu03", Gres: "gpu:a100:2", GPUFiles: "/dev/nvidia[0-1]"}},
			"\nNodeName=gpu01 Name=gpu File=/dev/nvidia[0-1]\nNodeName=gpu02 AutoDetect=nvml\nNodeName=gpu03 Name=gpu Type=a100 File=/dev/nvidia[0-1]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(RenderGresConf(tt.nodes)); got != header+tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, header+tt.want)
			}
		})
	}
}

// slurmctld logs "Configured MailProg is invalid" at every start where /bin/mail is missing:
// the default names a program every system has.
func TestDefaultMailProg(t *testing.T) {
	_, nodes, parts := guideExample()
	got := string(RenderSlurmConf(DefaultControllerSettings("login01"), nodes, parts))
	if !strings.Contains(got, "\nReturnToService=2\nMailProg=/bin/true\n") {
		t.Errorf("slurm.conf lacks MailProg=/bin/true after ReturnToService:\n%s", got)
	}
}
