package slurm

import (
	"strings"
	"testing"

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
	good := ComputeState{Defaults: want, Active: true, Enabled: true, Version: v}
	tests := []struct {
		name  string
		st    ComputeState
		keeps bool
		want  string
	}{
		{"in order", good, false, ""},
		{"not installed", ComputeState{}, false, "slurmd is not installed"},
		{"defaults missing", ComputeState{Active: true, Enabled: true, Version: v}, false, "/etc/default/slurmd is missing"},
		{"defaults differ", ComputeState{Defaults: []byte("x"), Active: true, Enabled: true, Version: v}, false, "/etc/default/slurmd differs"},
		{"stopped", ComputeState{Defaults: want, Enabled: true, Version: v}, false, "slurmd is not running"},
		{"local conf", ComputeState{Defaults: want, Active: true, Enabled: true, Version: v, LocalSlurmConf: true}, false, "a local /etc/slurm/slurm.conf exists"},
		{"controller keeps its conf", ComputeState{Defaults: want, Active: true, Enabled: true, Version: v, LocalSlurmConf: true}, true, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.st.Problems(want, tt.keeps), "; "); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if p := (ComputeState{RealGPUs: true}).Packages(); len(p) != 2 || p[1] != NVMLPluginPackage {
		t.Errorf("real GPUs: %v", p)
	}
	if p := (ComputeState{}).Packages(); len(p) != 1 {
		t.Errorf("no GPUs: %v", p)
	}
}
