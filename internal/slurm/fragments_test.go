package slurm

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestFragmentRoundTrip(t *testing.T) {
	c, nodes, parts := guideExample()
	c.Extra = map[string]string{"SlurmctldDebug": "info"}
	c.Cgroup.Extra = map[string]string{"AllowedRAMSpace": "95"}
	c.Cgroup.ConstrainCores = false
	nodes[0].Extra = map[string]string{"Weight": "5"}
	nodes[0].GPUFiles = "/dev/nvidia[0-3]"

	frag, err := ControllerFragment(c)
	if err != nil {
		t.Fatal(err)
	}
	if gotC, err := ParseControllerFragment(frag.Content); err != nil || !reflect.DeepEqual(gotC, c) {
		t.Errorf("controller: got %+v, %v\nwant %+v\n%s", gotC, err, c, frag.Content)
	}
	frag, err = NodeFragment(nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	if frag.File != "node-gpu03.conf" {
		t.Errorf("node fragment file %q", frag.File)
	}
	if gotN, err := ParseNodeFragment(frag.Content); err != nil || !reflect.DeepEqual(gotN, nodes[0]) {
		t.Errorf("node: got %+v, %v\nwant %+v", gotN, err, nodes[0])
	}
	frag, err = PartitionFragment(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if gotP, err := ParsePartitionFragment(frag.Content); err != nil || !reflect.DeepEqual(gotP, parts[0]) {
		t.Errorf("partition: got %+v, %v\nwant %+v", gotP, err, parts[0])
	}
}

func TestParseFragmentErrors(t *testing.T) {
	node, err := NodeFragment(NodeDef{Name: "gpu01", CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    string
		content string
		want    string
	}{
		{"wrong kind", "controller.conf", string(node.Content), "kind=node, want controller"},
		{"name mismatch", "node-gpu02.conf", string(node.Content), `defines node "gpu01"`},
		{"unknown key", "node-gpu01.conf", string(node.Content) + "Bogus=1\n", "unknown key Bogus"},
		{"duplicate", "node-gpu01.conf", string(node.Content) + "CPUs=4\n", "appears twice"},
		{"bad number", "node-gpu01.conf", "kind=node\nName=gpu01\nCPUs=many\n", "not a number"},
		{"no kind", "node-gpu01.conf", "Name=gpu01\n", "no kind line"},
		{"foreign file", "local.conf", "kind=node\n", "not a fragment name"},
		{"bad line", "node-gpu01.conf", "kind=node\nName gpu01\n", "want key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFragments(map[string][]byte{tt.file: []byte(tt.content)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// Fragments written by each resource assemble into the guide's files.
func TestAssembleGuideExample(t *testing.T) {
	c, nodes, parts := guideExample()
	files := map[string][]byte{}
	add := func(f Fragment, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		files[f.File] = f.Content
	}
	add(ControllerFragment(c))
	for _, n := range nodes {
		add(NodeFragment(n))
	}
	add(PartitionFragment(parts[0]))
	f, err := ParseFragments(files)
	if err != nil {
		t.Fatal(err)
	}
	slurmConf, cgroupConf, gresConf, err := Assemble(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"guide-slurm.conf": slurmConf, "guide-cgroup.conf": cgroupConf, "guide-gres.conf": gresConf} {
		if want := transporttest.Testdata(t, name); string(got) != want {
			t.Errorf("%s: got\n%s", name, got)
		}
	}
}

func TestAssembleErrors(t *testing.T) {
	c, nodes, parts := guideExample()
	if _, _, _, err := Assemble(Fragments{Nodes: nodes}); !errors.Is(err, ErrNoController) {
		t.Errorf("without a controller: %v, want ErrNoController", err)
	}
	_, _, _, err := Assemble(Fragments{Controller: &c, Nodes: nodes[:1], Partitions: parts})
	if err == nil || !strings.Contains(err.Error(), "partition gpu names gpu[01-02], which no node definition defines") {
		t.Errorf("P14: %v", err)
	}
}
