package munge

import (
	"context"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestLabReadGenerateDecode runs the read-only steps against real munged:
// nothing here changes a key or a daemon.
func TestLabReadGenerateDecode(t *testing.T) {
	l := lab.Require(t)
	ctx := context.Background()
	login := transporttest.LabHost{Lab: l, Host: "login01"}
	gpu := transporttest.LabHost{Lab: l, Host: "gpu02"}

	st, err := ReadState(ctx, login)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := l.Exec(ctx, "login01", "sha256sum "+KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(out)[0]; !st.KeyExists || st.Fingerprint != want || !st.Active {
		t.Errorf("ReadState = %+v, want the key with fingerprint %s and munged active", st, want)
	}

	key, err := GenerateKey(ctx, login)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 128 || Fingerprint(key) == st.Fingerprint {
		t.Errorf("GenerateKey gave %d bytes (fingerprint %s); want 128 new ones", len(key), Fingerprint(key))
	}
	if left, _, _ := l.Exec(ctx, "login01", "ls -A /etc/munge; sha256sum "+KeyPath); !strings.Contains(left, st.Fingerprint) || strings.Contains(left, "gpucluster-new") {
		t.Errorf("GenerateKey changed /etc/munge on login01:\n%s", left)
	}

	cred, err := Credential(ctx, login)
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode(ctx, gpu, cred); err != nil {
		t.Fatalf("a credential made on login01 does not decode on gpu02: %v", err)
	}
	if err := Decode(ctx, gpu, cred); err == nil || !strings.Contains(err.Error(), "Replayed credential") {
		t.Errorf("decoding the same credential twice: got %v, want munged's replay refusal", err)
	}
}
