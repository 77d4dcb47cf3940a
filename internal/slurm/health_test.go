package slurm

import (
	"context"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestReadHealth(t *testing.T) {
	tests := []struct {
		name   string
		out    string
		up     bool
		states map[string]string
	}{
		{
			name: "controller up, nodes listed once per partition",
			out: "@@gpucluster ping\nSlurmctld(primary) at login01 is UP\n@@rc 0\n" +
				"@@gpucluster nodes\ngpu01 idle\ngpu02 mixed\ngpu01 idle\n@@rc 0\n",
			up:     true,
			states: map[string]string{"gpu01": "idle", "gpu02": "mixed"},
		},
		{
			name: "controller down",
			out: "@@gpucluster ping\nSlurmctld(primary) at login01 is DOWN\n@@rc 1\n" +
				"@@gpucluster nodes\nslurm_load_partitions: Unable to contact slurm controller (connect failure)\n@@rc 1\n",
			up:     false,
			states: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(tt.out)}}}
			h, err := ReadHealth(context.Background(), fake)
			if err != nil {
				t.Fatal(err)
			}
			if h.ControllerUp != tt.up || len(h.NodeStates) != len(tt.states) {
				t.Fatalf("got %+v, want up=%v states=%v", h, tt.up, tt.states)
			}
			for n, s := range tt.states {
				if h.NodeStates[n] != s {
					t.Errorf("%s: %q, want %q", n, h.NodeStates[n], s)
				}
			}
		})
	}
}

func TestUsable(t *testing.T) {
	for state, want := range map[string]bool{"idle": true, "mixed": true, "allocated": true, "down*": false, "idle*": false, "drained": false, "unknown": false} {
		if Usable(state) != want {
			t.Errorf("Usable(%q) = %v, want %v", state, !want, want)
		}
	}
}
