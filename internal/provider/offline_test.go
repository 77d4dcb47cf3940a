package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// An offline node is refused before any dial, by name or address, and the warning about it
// comes once per run however many resources meet it.
func TestOfflineNode(t *testing.T) {
	c := newCluster(settings{overrides: []nodeOverride{
		{name: "gpu01", address: "10.0.0.11"},
		{name: "gpu02", address: "10.0.0.12", offline: true},
	}})
	if !c.anyOffline() || !c.isOffline("gpu02") || !c.isOffline("10.0.0.12") || c.isOffline("gpu01") || c.isOffline("login01") {
		t.Fatal("offline marks read wrong")
	}
	if _, err := c.host(context.Background(), "10.0.0.12"); err == nil || !strings.Contains(err.Error(), "offline = true") {
		t.Errorf("host of an offline node: %v", err)
	}
	g := &offlineGuard{cluster: c}
	var first, second diag.Diagnostics
	g.warnOnce([]string{"gpu02"}, &first)
	g.warnOnce([]string{"10.0.0.12"}, &second)
	if first.WarningsCount() != 1 || second.WarningsCount() != 0 || !strings.Contains(first[0].Summary(), "Node gpu02 Is Offline") {
		t.Errorf("warnings: %v then %v, want one naming gpu02", first, second)
	}
	if newCluster(settings{}).anyOffline() {
		t.Error("a cluster without node blocks has an offline node")
	}
}
