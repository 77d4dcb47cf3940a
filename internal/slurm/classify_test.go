package slurm

import (
	"reflect"
	"testing"
)

func TestClassify(t *testing.T) {
	base, nodes, parts := guideExample()
	render := func(change func(c *ControllerSettings, nodes *[]NodeDef, parts []PartitionDef)) Files {
		c := base
		c.Extra = nil
		ns := append([]NodeDef(nil), nodes...)
		ps := []PartitionDef{parts[0]}
		if change != nil {
			change(&c, &ns, ps)
		}
		return Files{SlurmConf: RenderSlurmConf(c, ns, ps), CgroupConf: RenderCgroupConf(c.Cgroup), GresConf: RenderGresConf(ns)}
	}
	old := render(nil)
	gpu04 := nodes[0]
	gpu04.Name = "gpu04"
	tests := []struct {
		name   string
		change func(c *ControllerSettings, nodes *[]NodeDef, parts []PartitionDef)
		class  ChangeClass
		nodes  []string
	}{
		{"same", func(*ControllerSettings, *[]NodeDef, []PartitionDef) {}, NoChange, nil},
		{"partition", func(_ *ControllerSettings, _ *[]NodeDef, p []PartitionDef) { p[0].MaxTime = "1-00:00:00" }, Reconfigure, nil},
		{"parameter", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) {
			c.Extra = map[string]string{"SlurmctldDebug": "debug"}
		}, Reconfigure, nil},
		{"cgroup", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.Cgroup.ConstrainRAMSpace = true }, Reconfigure, nil},
		{"port", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.SlurmctldPort = 7817 }, RestartController, nil},
		{"select type", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.SelectType = "select/linear" }, RestartController, nil},
		// Every daemon reads these only at start: slurmctld and every slurmd restart, in order.
		{"auth in other case", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) {
			c.Extra = map[string]string{"AUTHALTTYPES": "auth/jwt"}
		}, OrderedRestart, []string{"gpu01", "gpu02", "gpu03"}},
		{"slurmd port", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.SlurmdPort = 6819 }, OrderedRestart, []string{"gpu01", "gpu02", "gpu03"}},
		{"cred type", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.CredType = "cred/none" }, OrderedRestart, []string{"gpu01", "gpu02", "gpu03"}},
		{"cluster name", func(c *ControllerSettings, _ *[]NodeDef, _ []PartitionDef) { c.ClusterName = "other" }, RestartController, nil},
		{"node added", func(_ *ControllerSettings, n *[]NodeDef, p []PartitionDef) {
			*n = append(*n, gpu04)
			p[0].Nodes = append(p[0].Nodes, "gpu04")
		}, OrderedRestart, []string{"gpu01", "gpu02", "gpu03", "gpu04"}},
		{"node removed", func(_ *ControllerSettings, n *[]NodeDef, p []PartitionDef) {
			*n = (*n)[1:]
			p[0].Nodes = p[0].Nodes[:2]
		}, OrderedRestart, []string{"gpu01", "gpu02"}},
		{"hardware", func(_ *ControllerSettings, n *[]NodeDef, _ []PartitionDef) { (*n)[0].RealMemory = 400000 }, OrderedRestart, []string{"gpu01", "gpu02", "gpu03"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classify(old, render(tt.change))
			if err != nil {
				t.Fatal(err)
			}
			if got.Class != tt.class || !reflect.DeepEqual(got.RestartNodes, tt.nodes) {
				t.Errorf("got %v %v (reasons %v), want %v %v", got.Class, got.RestartNodes, got.Reasons, tt.class, tt.nodes)
			}
		})
	}
}

func TestClassifyFirstFile(t *testing.T) {
	c, nodes, parts := guideExample()
	got, err := Classify(Files{}, Files{SlurmConf: RenderSlurmConf(c, nodes, parts)})
	if err != nil || got.Class != RestartController {
		t.Errorf("got %v, %v; want a restart (start) of slurmctld", got.Class, err)
	}
}

// A hand-made file whose lines are ordered or spelled differently is the
// same configuration.
func TestClassifyIgnoresFormatting(t *testing.T) {
	a := Files{SlurmConf: []byte("ClusterName=c\nNodeName=gpu[01-02] CPUs=2 RealMemory=10\n")}
	b := Files{SlurmConf: []byte("# comment\nclustername=c\n\nNodeName=gpu01 realmemory=10 CPUs=2\nNodeName=gpu02 CPUs=2 RealMemory=10 # x\n")}
	got, err := Classify(a, b)
	if err != nil || got.Class != NoChange {
		t.Errorf("got %v %v, %v", got.Class, got.Reasons, err)
	}
}

func TestChangeClassDescriptions(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range []ChangeClass{NoChange, Reconfigure, RestartController, OrderedRestart} {
		d := c.Description()
		if d == "" || seen[d] || c.String() == "" {
			t.Errorf("%v: description %q", c, d)
		}
		seen[d] = true
	}
}
