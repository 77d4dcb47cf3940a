package slurm

import (
	"context"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units/unitstest"

	"github.com/hashicorp/go-version"
)

func TestParseSlurmdDefaults(t *testing.T) {
	content, err := SlurmdDefaults("login01", 6817)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := ParseSlurmdDefaults(content)
	if err != nil || host != "login01" || port != 6817 {
		t.Errorf("round trip: %q %d %v", host, port, err)
	}
	if _, _, err := ParseSlurmdDefaults([]byte("SLURMD_OPTIONS=\"-D\"\n")); err == nil {
		t.Error("a line without --conf-server was accepted")
	}
}

func TestComputeProblems(t *testing.T) {
	want, _ := SlurmdDefaults("login01", 6817)
	v := version.Must(version.NewVersion("24.11.5"))
	good := ComputeState{Defaults: want, Active: true, Enabled: true, Version: v, Client: true}
	tests := []struct {
		name string
		st   ComputeState
		want string
	}{
		{"in order", good, ""},
		{"not installed", ComputeState{}, "slurmd is not installed"},
		{"defaults missing", ComputeState{Client: true, Active: true, Enabled: true, Version: v}, "/etc/default/slurmd is missing"},
		{"defaults differ", ComputeState{Client: true, Defaults: []byte("x"), Active: true, Enabled: true, Version: v}, "/etc/default/slurmd differs"},
		{"stopped", ComputeState{Client: true, Defaults: want, Enabled: true, Version: v}, "slurmd is not running"},
		{"local conf", ComputeState{Client: true, Defaults: want, Active: true, Enabled: true, Version: v, LocalSlurmConf: true}, "a local /etc/slurm/slurm.conf exists"},
		{"no srun", ComputeState{Defaults: want, Active: true, Enabled: true, Version: v}, "slurm-client is not installed (srun inside a batch job fails)"},
		{"controller keeps its conf", ComputeState{Client: true, Defaults: want, Active: true, Enabled: true, Version: v, LocalSlurmConf: true, Controller: true}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.st.Problems(want), "; "); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if p := (ComputeState{RealGPUs: true}).Packages(); strings.Join(p, " ") != "slurmd slurm-client slurm-wlm-nvml-plugin" {
		t.Errorf("real GPUs: %v", p)
	}
	if p := (ComputeState{}).Packages(); strings.Join(p, " ") != "slurmd slurm-client" {
		t.Errorf("no GPUs: %v", p)
	}
}

// The controller is recognised on the host, by its fragment, whatever name reached it: a
// compute resource on login01 reached as "login01" with slurmctld_host "login01.example.org"
// keeps the cluster's slurm.conf, and the removal script itself refuses to delete it there.
func TestReadComputeRecognisesController(t *testing.T) {
	out := "@@gpucluster defaults\n@@rc 200\n" +
		"@@gpucluster localconf\n@@rc 0\n@@gpucluster gpus\n@@rc 1\n@@gpucluster controller\n@@rc 0\n" +
		"@@gpucluster version\nslurm-wlm 24.11.5\n@@rc 0\n"
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(out)}, {Stdout: unitstest.Out("slurmd.service", units.State{Active: "activating", Enabled: "static"})}, {}}}
	st, err := ReadCompute(context.Background(), fake)
	if err != nil {
		t.Fatal(err)
	}
	// is-active --quiet fails for activating, is-enabled --quiet succeeds for static.
	if !st.Controller || !st.LocalSlurmConf || st.Version == nil || st.Version.String() != "24.11.5" || st.Active || !st.Enabled {
		t.Errorf("state %+v", st)
	}
	if !strings.Contains(fake.Calls[0].Script, "controller="+FragmentDir+"/"+ControllerFile+"\n") {
		t.Errorf("the read does not look for the controller fragment:\n%s", fake.Calls[0].Script)
	}
	if err := RemoveLocalSlurmConf(context.Background(), fake); err != nil {
		t.Fatal(err)
	}
	if script := fake.Calls[2].Script; !strings.Contains(script, "[ -e "+FragmentDir+"/"+ControllerFile+" ] || rm -f") {
		t.Errorf("the removal does not spare the controller:\n%s", script)
	}
}
