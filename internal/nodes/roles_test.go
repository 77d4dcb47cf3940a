package nodes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestParseRoles(t *testing.T) {
	cases := map[string]struct {
		out  string
		want []string
	}{
		"login node":      {"slurmctld.service enabled\nslurmd.service disabled\nbeegfs-storage.service \n", []string{"controller"}},
		"gpu server":      {"slurmctld.service \nslurmd.service enabled\nbeegfs-storage.service enabled\n", []string{"compute", "storage"}},
		"masked, static":  {"slurmctld.service masked\nslurmd.service static\nbeegfs-storage.service enabled-runtime\n", nil},
		"nothing enabled": {"", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ParseRoles(tc.out); !slices.Equal(got, tc.want) {
				t.Errorf("ParseRoles(%q) = %q, want %q", tc.out, got, tc.want)
			}
		})
	}
}

func TestRolesAsksEachUnit(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: "slurmd.service enabled\n"}}}
	got, err := Roles(context.Background(), f)
	if err != nil || !slices.Equal(got, []string{"compute"}) {
		t.Fatalf("Roles = %q, %v; want [compute]", got, err)
	}
	for _, ru := range RoleUnits {
		if !strings.Contains(f.Calls[0].Script, ru.Unit) {
			t.Errorf("the script does not ask about %s:\n%s", ru.Unit, f.Calls[0].Script)
		}
	}
}
