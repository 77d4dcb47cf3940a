package provider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

func ptr(s string) *string { return &s }

func testCluster(loginNode string, overrides ...nodeOverride) *cluster {
	return newCluster(settings{user: "admin", port: 22, loginNode: loginNode, jumpHost: loginNode, overrides: overrides})
}

func TestConnConfigJumpsThroughLoginNode(t *testing.T) {
	c := testCluster("login01", nodeOverride{name: "login01", address: "10.0.0.10"})
	for _, ref := range []string{"login01", "10.0.0.10"} {
		cfg, err := c.connConfig(ref, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Address != "10.0.0.10" || cfg.Jump != nil {
			t.Errorf("%s: got address %s jump %v, want 10.0.0.10 direct", ref, cfg.Address, cfg.Jump)
		}
	}
	cfg, err := c.connConfig("gpu01", 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Address != "gpu01" || cfg.Jump == nil || cfg.Jump.Address != "10.0.0.10" || cfg.Jump.Jump != nil {
		t.Errorf("gpu01: got %+v, want gpu01 through 10.0.0.10", cfg)
	}
}

func TestConnConfigNodeOverrides(t *testing.T) {
	c := testCluster("login01",
		nodeOverride{name: "gpu09", address: "192.0.2.19", jumpHost: ptr(""), port: 2222, user: "ops"},
		nodeOverride{name: "gpu10", jumpHost: ptr("gpu09")},
	)
	direct, err := c.connConfig("gpu09", 0)
	if err != nil {
		t.Fatal(err)
	}
	if direct.Jump != nil || direct.Port != 2222 || direct.User != "ops" || direct.Address != "192.0.2.19" {
		t.Errorf("gpu09: got %+v, want ops@192.0.2.19:2222 direct", direct)
	}
	chained, err := c.connConfig("gpu10", 0)
	if err != nil {
		t.Fatal(err)
	}
	if chained.Jump == nil || chained.Jump.Address != "192.0.2.19" || chained.User != "admin" || chained.Port != 22 {
		t.Errorf("gpu10: got %+v, want admin@gpu10:22 through gpu09", chained)
	}
}

func TestConnConfigRefusesJumpLoop(t *testing.T) {
	c := testCluster("", nodeOverride{name: "a", jumpHost: ptr("b")}, nodeOverride{name: "b", jumpHost: ptr("a")})
	if _, err := c.connConfig("a", 0); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Fatalf("got %v, want a jump loop error", err)
	}
}

func TestParseAccountImportID(t *testing.T) {
	tests := []struct {
		id        string
		wantName  string
		wantNodes string
		wantErr   string
	}{
		{"alice@login01,gpu01", "alice", "gpu01,login01", ""},
		{"alice", "", "", "names no nodes"},
		{"Alice@gpu01", "", "", "not a valid user name"},
		{"alice@gpu01;reboot", "", "", "not a node name"},
		{"alice@", "", "", "not a node name"},
	}
	for _, tt := range tests {
		name, nodes, diags := parseAccountImportID(tt.id, "user")
		if tt.wantErr != "" {
			if !diags.HasError() || !strings.Contains(diags[0].Detail(), tt.wantErr) || !strings.Contains(diags[0].Detail(), "destroy deletes it") {
				t.Errorf("%q: got %v, want error containing %q and the destroy behaviour", tt.id, diags, tt.wantErr)
			}
			continue
		}
		if diags.HasError() || name != tt.wantName || strings.Join(nodes, ",") != tt.wantNodes {
			t.Errorf("%q: got %s %v %v, want %s %s", tt.id, name, nodes, diags, tt.wantName, tt.wantNodes)
		}
	}
}

func TestAgreeingID(t *testing.T) {
	if id, err := agreeingID(map[string]int64{"a": 100, "b": 100}, "gid"); err != nil || id != 100 {
		t.Errorf("got %d %v, want 100", id, err)
	}
	_, err := agreeingID(map[string]int64{"login01": 100, "gpu02": 101}, "gid")
	if err == nil || err.Error() != "gid 101 on gpu02, gid 100 on login01" {
		t.Errorf("got %v, want each node named", err)
	}
}

func TestMissingFrom(t *testing.T) {
	got := missingFrom([]string{"gpu01", "gpu02", "login01"}, []string{"login01", "gpu01"})
	if strings.Join(got, ",") != "gpu02" {
		t.Errorf("got %v, want [gpu02]", got)
	}
}

func TestWarnDriftNamesNodes(t *testing.T) {
	var diags diag.Diagnostics
	warnDrift(&diags, "user alice", map[string]string{"gpu02": "uid 1002 on gpu02, want 1001", "login01": inSync})
	if len(diags) != 1 || !strings.Contains(diags[0].Summary(), "gpu02") || !strings.Contains(diags[0].Detail(), "uid 1002 on gpu02, want 1001") {
		t.Fatalf("got %v", diags)
	}
	diags = nil
	warnDrift(&diags, "user alice", map[string]string{"login01": inSync})
	if len(diags) != 0 {
		t.Fatalf("in-sync nodes warned: %v", diags)
	}
}

func TestCommandTimeoutReachesEveryNode(t *testing.T) {
	for _, tc := range []struct {
		set  types.String
		want time.Duration
	}{
		{types.StringNull(), transport.DefaultCommandTimeout},
		{types.StringValue("90s"), 90 * time.Second},
	} {
		s, diags := settingsFromModel(context.Background(), providerModel{CommandTimeout: tc.set, LoginNode: types.StringValue("login01")}, func(string) string { return "" })
		if diags.HasError() {
			t.Fatal(diags)
		}
		cfg, err := newCluster(s).connConfig("gpu01", 0)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CommandTimeout != tc.want || cfg.Jump.CommandTimeout != tc.want {
			t.Errorf("command_timeout %s: gpu01 gets %s and its jump host %s, want %s", tc.set, cfg.CommandTimeout, cfg.Jump.CommandTimeout, tc.want)
		}
	}
}

func TestHostKeysKnownOnlyAtApplyDeferChecks(t *testing.T) {
	keys := types.ListValueMust(types.StringType, []attr.Value{
		types.StringValue("login01,10.0.0.10 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBm3Vh7Vj7rQ1mYpVXc1t2cGq8yZlN3eP4u9aQJfH5sT"),
		types.StringUnknown(),
	})
	s, diags := settingsFromModel(context.Background(), providerModel{HostKeys: keys}, func(string) string { return "" })
	if diags.HasError() {
		t.Fatalf("a host key known only at apply: %v", diags)
	}
	if !s.unknown {
		t.Error("a host key known only at apply left the settings known, so plan-time checks would dial with a partial key list")
	}
}

func TestInvalidImportIDSaysFormAndExample(t *testing.T) {
	d := invalidImportID("gpu01;reboot", "NODE, the node's name", "gpu01", "")
	if d.Summary() != "Invalid Import ID" || !strings.Contains(d.Detail(), `"gpu01;reboot"`) || !strings.Contains(d.Detail(), `NODE, the node's name (for example "gpu01")`) {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
}
