package slurm

import (
	"reflect"
	"testing"
)

func TestParseConf(t *testing.T) {
	c, err := ParseConf([]byte(`# comment
SlurmdPort=6819 srunportrange=50000-50100 # two settings on a line
NodeName=gpu[01-02] CPUs=2 \
    Features="a b"
SlurmdPort=6820
PartitionName=gpu Nodes=gpu[01-02]
`))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Setting("SLURMDPORT"); !ok || v != "6820" {
		t.Errorf("SlurmdPort = %q, %v; want the last one, 6820", v, ok)
	}
	if v, ok := c.Setting("SrunPortRange"); !ok || v != "50000-50100" {
		t.Errorf("SrunPortRange = %q, %v", v, ok)
	}
	if _, ok := c.Setting("CPUs"); ok {
		t.Error("a node's attribute read as a setting")
	}
	nodes := c.Records("nodename")
	want := []ConfPair{{"CPUs", "2"}, {"Features", "a b"}}
	if len(nodes) != 1 || nodes[0].Value != "gpu[01-02]" || nodes[0].Number != 3 || !reflect.DeepEqual(nodes[0].Attrs, want) {
		t.Errorf("NodeName records: %+v", nodes)
	}
	if p := c.Records("PartitionName"); len(p) != 1 || p[0].Value != "gpu" {
		t.Errorf("PartitionName records: %+v", p)
	}
	for _, bad := range []string{"Include /etc/slurm/x.conf\n", "Features=\"a b\n", "=x\n"} {
		if _, err := ParseConf([]byte(bad)); err == nil {
			t.Errorf("ParseConf(%q) accepted", bad)
		}
	}
}

func TestParseGresConf(t *testing.T) {
	c, err := ParseGresConf([]byte("AutoDetect=nvml\nName=gpu File=/dev/nvidia0\nNodeName=gpu01 Name=gpu File=/dev/nvidia[0-3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Lines) != 3 || c.Lines[0].IsRecord() || !c.Lines[1].IsRecord() || c.Lines[2].Value != "gpu01" || len(c.Lines[2].Attrs) != 2 {
		t.Errorf("gres.conf lines: %+v", c.Lines)
	}
}

// The same configuration written another way is no change; a real change still is.
func TestClassifyHandWrittenForms(t *testing.T) {
	old := handWritten
	same := Files{
		SlurmConf: []byte(string(old.SlurmConf[:len(old.SlurmConf)-len("NodeName=gpu[01-03] CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=7941 Gres=gpu:4 State=UNKNOWN\n\nPartitionName=gpu Nodes=gpu[01-03] Default=YES MaxTime=3-00:00:00 State=UP AllowGroups=users DefMemPerGPU=1985\n")]) +
			"NodeName=DEFAULT CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=7941\n" +
			"NodeName=gpu01 Gres=gpu:4\nnodename=gpu[02-03] gres=gpu:4 State=unknown\n" +
			"PartitionName=gpu Nodes=gpu01,gpu02,gpu03 Default=yes MaxTime=3-00:00:00 State=UP AllowGroups=users DefMemPerGPU=1985\n"),
		CgroupConf: []byte("ConstrainDevices=true\nConstrainCores=yes\nCgroupPlugin=autodetect\n"),
		GresConf:   []byte("NodeName=gpu[01-03] Name=gpu File=/dev/nvidia[0-3]\n"),
	}
	if c, err := Classify(old, same); err != nil || c.Class != NoChange {
		t.Errorf("the same configuration in another form: %+v, %v", c, err)
	}
	changed := same
	changed.GresConf = []byte("NodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-3]\nNodeName=gpu03 AutoDetect=nvml\n")
	if c, err := Classify(old, changed); err != nil || c.Class != Reconfigure {
		t.Errorf("gres.conf changed for gpu03: %+v, %v", c, err)
	}
	changed.GresConf, changed.CgroupConf = same.GresConf, []byte("ConstrainCores=yes\n")
	if c, err := Classify(old, changed); err != nil || c.Class != Reconfigure {
		t.Errorf("cgroup.conf without ConstrainDevices: %+v, %v", c, err)
	}
}
