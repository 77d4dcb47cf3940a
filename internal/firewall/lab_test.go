package firewall

import (
	"context"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestLabRuleLifecycle runs the commands against real UFW, inactive and then active, and reads
// the result back from UFW's files each time. UFW is left disabled with the rule gone.
func TestLabRuleLifecycle(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	h := transporttest.LabHost{Lab: l, Host: "gpu02"}
	ssh, _ := Rule{Port: "22", Proto: ProtoTCP, From: "10.0.0.0/24", Comment: "lab ssh"}.Normalize()
	r, _ := Rule{Port: "60001:61000", Proto: ProtoTCP, From: "10.0.0.0/24", Comment: "srun callbacks"}.Normalize()
	t.Cleanup(func() {
		ctx := context.Background()
		if err := SetEnabled(ctx, h, false); err != nil {
			t.Error(err)
		}
		for _, rule := range []Rule{r, ssh} {
			if err := Delete(ctx, h, rule); err != nil {
				t.Error(err)
			}
		}
	})

	for _, active := range []bool{false, true} {
		if active {
			if err := Add(ctx, h, ssh); err != nil {
				t.Fatal(err)
			}
			if err := SetEnabled(ctx, h, true); err != nil {
				t.Fatal(err)
			}
		}
		if err := Add(ctx, h, r); err != nil {
			t.Fatal(err)
		}
		if err := Add(ctx, h, r); err != nil {
			t.Fatalf("adding an existing rule again: %v", err)
		}
		expectRule(ctx, t, h, r, active)

		renamed := r
		renamed.Comment = "callbacks of srun"
		if err := Add(ctx, h, renamed); err != nil {
			t.Fatal(err)
		}
		expectRule(ctx, t, h, renamed, active)

		if err := Delete(ctx, h, r); err != nil {
			t.Fatal(err)
		}
		if err := Delete(ctx, h, r); err != nil {
			t.Fatalf("deleting a deleted rule: %v", err)
		}
		st, err := ReadState(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if _, found := Find(st.Rules, r.Key()); found {
			t.Errorf("active=%v: %s still there after delete", active, r.Key())
		}
	}
}

func expectRule(ctx context.Context, t *testing.T, h transport.Executor, want Rule, active bool) {
	t.Helper()
	st, err := ReadState(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if st.Enabled != active {
		t.Errorf("enabled = %v, want %v", st.Enabled, active)
	}
	got, found := Find(st.Rules, want.Key())
	if !found || got != want {
		t.Errorf("active=%v: rule %+v (found %v), want %+v; all: %+v", active, got, found, want, st.Rules)
	}
	n := 0
	for _, r := range st.Rules {
		if r.Key() == want.Key() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("active=%v: %d copies of %s", active, n, want.Key())
	}
}
