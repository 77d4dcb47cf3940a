package slurm

import (
	"context"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// handWritten are the files tools/lab-build-by-hand.sh writes, as the guide shows them.
var handWritten = Files{
	SlurmConf:  byHandSlurmConf("gpu[01-03]", "CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=7941", "1985"),
	CgroupConf: []byte("CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=no\n"),
	GresConf:   []byte("Name=gpu File=/dev/nvidia[0-3]\n"),
}

// byHandSlurmConf is the slurm.conf of tools/lab-build-by-hand.sh for the given nodes, their
// hardware as slurmd -C prints it, and DefMemPerGPU. It panics when the file cannot be read:
// the package's variables are made before any test runs.
func byHandSlurmConf(nodes, hardware, defMemPerGPU string) []byte {
	template, err := os.ReadFile("../../tools/lab-build-by-hand.slurm.conf")
	if err != nil {
		panic(err)
	}
	return []byte(strings.NewReplacer("@NODES@", nodes, "@HARDWARE@", hardware, "@DEF_MEM_PER_GPU@", defMemPerGPU).Replace(string(template)))
}

func TestAdoptFiles(t *testing.T) {
	got, err := AdoptFiles(handWritten)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFragments(got)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultControllerSettings("login01")
	want.ProctrackType, want.TaskPlugin, want.JobAcctGatherType, want.MailProg = "proctrack/linuxproc", "task/none", "jobacct_gather/none", ""
	if !reflect.DeepEqual(*f.Controller, want) {
		t.Errorf("controller:\n got %+v\nwant %+v", *f.Controller, want)
	}
	var names []string
	for _, n := range f.Nodes {
		names = append(names, n.Name)
		wantNode := NodeDef{Name: n.Name, CPUs: 2, Boards: 1, SocketsPerBoard: 1, CoresPerSocket: 2, ThreadsPerCore: 1, RealMemory: 7941,
			Gres: "gpu:4", GPUFiles: "/dev/nvidia[0-3]", State: "UNKNOWN"}
		if !reflect.DeepEqual(n, wantNode) {
			t.Errorf("node:\n got %+v\nwant %+v", n, wantNode)
		}
	}
	if strings.Join(names, " ") != "gpu01 gpu02 gpu03" {
		t.Errorf("nodes %v, want one per name of gpu[01-03]", names)
	}
	wantPart := PartitionDef{Name: "gpu", Nodes: []string{"gpu01", "gpu02", "gpu03"}, Default: true, MaxTime: "3-00:00:00", State: "UP",
		AllowGroups: []string{"users"}, DefMemPerGPU: 1985}
	if len(f.Partitions) != 1 || !reflect.DeepEqual(f.Partitions[0], wantPart) {
		t.Errorf("partitions:\n got %+v\nwant %+v", f.Partitions, wantPart)
	}
	assertSameEffective(t, handWritten, f)
}

// assertSameEffective checks that the files assembled from f are what Slurm runs with now.
func assertSameEffective(t *testing.T, files Files, f Fragments) {
	t.Helper()
	slurmConf, cgroupConf, gresConf, err := Assemble(f)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Classify(files, Files{SlurmConf: slurmConf, CgroupConf: cgroupConf, GresConf: gresConf})
	if err != nil {
		t.Fatal(err)
	}
	if c.Class != NoChange {
		t.Errorf("the provider's layout changes what Slurm runs with: %s, %v\n%s", c.Class, c.Reasons, slurmConf)
	}
}

// Other forms a hand-written file takes: DEFAULT lines, one node per line with its own
// address from a hostlist, several settings on a line, comments, continued lines, keys in
// another case, yes/no as true/false, gres.conf per node with AutoDetect.
func TestAdoptFilesForms(t *testing.T) {
	files := Files{
		SlurmConf: []byte(`# a hand-written slurm.conf
slurmctldhost=head   ClusterName=lab
SlurmctldDebug=info # a comment
SlurmctldParameters=enable_configless
NodeName=DEFAULT CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=node[1-10] NodeAddr=10.1.0.[1-10] Gres=gpu:a100:2
NodeName=big \
  CPUs=64 Features=fat
PartitionName=DEFAULT MaxTime=1:00:00
PartitionName=all Nodes=node[1-10],big Default=yes
PartitionName=long Nodes=big MaxTime=UNLIMITED OverSubscribe=NO
`),
		CgroupConf: []byte("ConstrainCores=true\nAllowedRAMSpace=90\n"),
		GresConf:   []byte("NodeName=node[1-5] Name=gpu Type=a100 File=/dev/nvidia[0-1]\nNodeName=node[6-10] AutoDetect=nvml\n"),
	}
	got, err := AdoptFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFragments(got)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Controller; c.SlurmctldHost != "head" || c.ClusterName != "lab" || c.Extra["SlurmctldDebug"] != "info" || len(c.Extra) != 1 ||
		!c.Cgroup.ConstrainCores || c.Cgroup.ConstrainDevices || c.Cgroup.Extra["AllowedRAMSpace"] != "90" {
		t.Errorf("controller: %+v", *c)
	}
	if len(f.Nodes) != 11 {
		t.Fatalf("%d nodes, want node1..node10 and big", len(f.Nodes))
	}
	byName := map[string]NodeDef{}
	for _, n := range f.Nodes {
		byName[n.Name] = n
	}
	if n := byName["node7"]; n.CPUs != 4 || n.RealMemory != 1000 || n.Extra["NodeAddr"] != "10.1.0.7" || n.GPUFiles != "" || n.Gres != "gpu:a100:2" {
		t.Errorf("node7: %+v", n)
	}
	if n := byName["node3"]; n.GPUFiles != "/dev/nvidia[0-1]" {
		t.Errorf("node3: %+v", n)
	}
	if n := byName["big"]; n.CPUs != 64 || n.RealMemory != 1000 || n.Extra["Features"] != "fat" || n.State != "UNKNOWN" {
		t.Errorf("big: %+v", n)
	}
	sort.Slice(f.Partitions, func(i, j int) bool { return f.Partitions[i].Name < f.Partitions[j].Name })
	if p := f.Partitions[0]; len(p.Nodes) != 11 || !p.Default || p.MaxTime != "1:00:00" {
		t.Errorf("partition all: %+v", p)
	}
	if p := f.Partitions[1]; p.MaxTime != "UNLIMITED" || p.Extra["OverSubscribe"] != "NO" {
		t.Errorf("partition long: %+v", p)
	}
	assertSameEffective(t, files, f)
}

func TestAdoptFilesRefused(t *testing.T) {
	base := string(handWritten.SlurmConf)
	tests := []struct {
		name        string
		slurm, gres string
		want        string
	}{
		{"backup controller", base + "SlurmctldHost=login02\n", "", "set again"},
		{"include", base + "Include /etc/slurm/more.conf\n", "", "not key=value"},
		{"include as a setting", base + "Include=/etc/slurm/more.conf\n", "", "Include"},
		{"node set", base + "NodeSet=ns Feature=a\n", "", "NodeSet lines"},
		{"no controller", "ClusterName=x\n", "", "no SlurmctldHost"},
		{"node twice", base + "NodeName=gpu02 CPUs=1\n", "", "node gpu02 is defined again"},
		{"all nodes", strings.Replace(base, "Nodes=gpu[01-03]", "Nodes=ALL", 1), "", "Nodes=ALL"},
		{"gres cores", base, "Name=gpu File=/dev/nvidia0 Cores=0-1\n", "Cores="},
		{"two gpu lines", base, "Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n", "2 GPU lines"},
		{"addresses do not match", strings.Replace(base, "Gres=gpu:4", "Gres=gpu:4 NodeAddr=10.0.0.[11-12]", 1), "", "one value for each"},
		{"whitespace in a value", base + "SlurmctldDebug=\"very verbose\"\n", "", "whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AdoptFiles(Files{SlurmConf: []byte(tt.slurm), CgroupConf: handWritten.CgroupConf, GresConf: []byte(tt.gres)})
			var adopt *AdoptError
			if !errors.As(err, &adopt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an AdoptError with %q", err, tt.want)
			}
		})
	}
}

// A hand-built controller: the resources read it, a write puts every fragment on disk with
// the change, and an activation that changes nothing Slurm runs with rewrites the files in
// the provider's layout without touching a daemon.
func TestAdoptOnController(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, true)
	for name, content := range map[string][]byte{"slurm.conf": handWritten.SlurmConf, "cgroup.conf": handWritten.CgroupConf, "gres.conf": handWritten.GresConf,
		"plugstack.conf": []byte(debianPlugstack)} {
		if err := os.WriteFile(s.root+ConfDir+"/"+name, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadStatus(ctx, s)
	if err != nil || !st.Adopted || st.Fragments.Controller == nil || len(st.Fragments.Nodes) != 3 {
		t.Fatalf("ReadStatus: adopted %v, %+v, %v", st.Adopted, st.Fragments, err)
	}
	out, err := Preview(ctx, s)
	if err != nil || out.Class != NoChange || len(out.Adopted) != 5 || !out.ReplacesDebianPlugstack {
		t.Fatalf("Preview: %+v, %v; want no change, the five adopted fragments and Debian's plugstack.conf replaced", out, err)
	}
	// A drain changes a fragment and nothing in the files.
	gpu02 := st.Fragments.Nodes[1]
	gpu02.DrainReason = "maintenance"
	frag, err := NodeFragment(gpu02)
	if err != nil {
		t.Fatal(err)
	}
	if out, err = Preview(ctx, s, frag); err != nil || out.Class != NoChange || len(out.Adopted) != 5 || len(out.NodeStates) != 1 {
		t.Fatalf("Preview of the drain: %+v, %v", out, err)
	}
	if err := WriteFragments(ctx, s, frag); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadDir(s.root + FragmentDir)
	if err != nil || len(written) != 5 {
		t.Fatalf("fragments on disk: %v, %v; want all five", written, err)
	}
	s.calls()
	out, err = Activate(ctx, s, time.Second)
	if err != nil || out.Class != NoChange {
		t.Fatalf("Activate: %+v, %v", out, err)
	}
	for _, c := range s.calls() {
		if strings.HasPrefix(c, "systemctl") || strings.Contains(c, "reconfigure") {
			t.Errorf("rewriting into the provider's layout touched a daemon: %s", c)
		}
	}
	if conf := s.read(ConfDir + "/slurm.conf"); !strings.HasPrefix(conf, header) || !strings.Contains(conf, "NodeName=gpu[01-03] ") {
		t.Errorf("slurm.conf not in the provider's layout:\n%s", conf)
	}
	if got := s.read(PlugstackPath); got != quietPlugstack {
		t.Errorf("after the rewrite plugstack.conf holds %q, want the provider's, which includes nothing", got)
	}
	if out, err = Preview(ctx, s); err != nil || out.Class != NoChange || len(out.Adopted) != 0 {
		t.Errorf("after the rewrite: %+v, %v", out, err)
	}
}

// A hand-written slurm.conf the resources cannot hold stops every read and write, and
// nothing is written.
func TestAdoptRefusedOnController(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, true)
	if err := os.WriteFile(s.root+ConfDir+"/slurm.conf", append([]byte("Include=/etc/slurm/more.conf\n"), handWritten.SlurmConf...), 0o600); err != nil {
		t.Fatal(err)
	}
	var adopt *AdoptError
	if _, err := ReadStatus(ctx, s); !errors.As(err, &adopt) {
		t.Errorf("ReadStatus: %v, want an AdoptError", err)
	}
	frag, err := NodeFragment(NodeDef{Name: "gpu09", State: DefaultNodeState})
	if err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if err := WriteFragments(ctx, s, frag); !errors.As(err, &refused) || !errors.As(err, &adopt) || !strings.Contains(err.Error(), "line 1: Include") {
		t.Errorf("WriteFragments: %v, want a refusal naming the Include line", err)
	}
	if len(s.writes) > 0 {
		t.Errorf("a refused adoption wrote %v", s.writes)
	}
}
