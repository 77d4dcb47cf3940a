package slurm

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

func TestParseVersion(t *testing.T) {
	for _, tt := range []struct{ out, want string }{
		{"slurm 24.11.5\n", "24.11.5"},
		{"slurm-wlm 24.11.5\n", "24.11.5"},
		{"slurm 25.11.0\n", "25.11.0"},
	} {
		v, err := ParseVersion(tt.out)
		if err != nil || v.String() != tt.want {
			t.Errorf("ParseVersion(%q) = %v, %v", tt.out, v, err)
		}
	}
	for _, out := range []string{"", "bash: slurmctld: not found", "slurm x.y"} {
		if _, err := ParseVersion(out); err == nil {
			t.Errorf("ParseVersion(%q): want an error", out)
		}
	}
}

func TestCheckKeys(t *testing.T) {
	tests := []struct {
		version string
		scope   Scope
		key     string
		err     string
		warns   bool
	}{
		{"24.11.5", ScopeSlurmConf, "CredType", "", false},
		{"22.05.8", ScopeSlurmConf, "CredType", "added in Slurm 23.11 (older releases call it CryptoType=crypto/munge)", false},
		{"24.11.5", ScopeSlurmConf, "CryptoType", "removed in Slurm 23.11", false},
		{"24.11.5", ScopeSlurmConf, "TLSType", "added in Slurm 25.05", false},
		{"25.11.0", ScopeSlurmConf, "tlstype", "", false},
		{"25.11.0", ScopeSlurmConf, "AccountingStorageUser", "removed in Slurm 25.11", false},
		{"24.11.5", ScopeSlurmConf, "slurmctlddebug", "", false},
		{"24.11.5", ScopeSlurmConf, "SlurmctlDebug", "unknown to Slurm 24.11.5", false},
		{"25.11.0", ScopeSlurmConf, "SomethingNew", "", true},
		// Forky's Slurm: the version is named as slurmctld -V prints it, and a
		// name its parser still reads is refused with that said.
		{"26.05.5", ScopeSlurmConf, "GetEnvTimeout", "removed in Slurm 25.05; the installed Slurm is 26.05.5, whose parser accepts the name all the same", false},
		{"26.05.5", ScopeSlurmConf, "MetricsType", "", false},
		{"24.11.5", ScopeSlurmConf, "TLSType", "added in Slurm 25.05; the installed Slurm is 24.11.5, whose parser accepts the name all the same", false},
		{"24.11.5", ScopeSlurmConf, "NamespaceType", "added in Slurm 25.11 (it succeeds JobContainerType); the installed Slurm is 24.11.5", false},
		{"24.11.5", ScopePartition, "DefMemPerGPU", "", false},
		{"24.11.5", ScopeNode, "RealMemory", "", false},
		{"24.11.5", ScopeNode, "MaxTime", "unknown to Slurm", false},
		{"24.11.5", ScopeCgroup, "ConstrainSwapSpace", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.key, func(t *testing.T) {
			warnings, err := CheckKeys(version.Must(version.NewVersion(tt.version)), tt.scope, []string{tt.key})
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
			if (len(warnings) > 0) != tt.warns {
				t.Errorf("warnings = %v", warnings)
			}
		})
	}
}

// Everything the guide's configuration writes is known to the lab's 24.11
// and the guide's 25.11; Slurm 22.05 has no CredType.
func TestCheckVersionGuideExample(t *testing.T) {
	c, nodes, parts := guideExample()
	f := Fragments{Controller: &c, Nodes: nodes, Partitions: parts}
	for _, v := range []string{"24.11.5", "25.11.0"} {
		if w, err := CheckVersion(version.Must(version.NewVersion(v)), f); err != nil || len(w) > 0 {
			t.Errorf("%s: %v %v", v, w, err)
		}
	}
	if _, err := CheckVersion(version.Must(version.NewVersion("22.05.8")), f); err == nil || !strings.Contains(err.Error(), "CredType") {
		t.Errorf("22.05: %v", err)
	}
}
