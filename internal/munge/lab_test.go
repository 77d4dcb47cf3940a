package munge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestLabReadGenerateDecode runs the read-only steps against real munged. The lab's hosts start
// without MUNGE, so the setup installs it from the lab's package repository and gives gpu02
// login01's key by hand, as an admin would.
func TestLabReadGenerateDecode(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 3*time.Minute)
	login := transporttest.LabHost{Lab: l, Host: "login01"}
	gpu := transporttest.LabHost{Lab: l, Host: "gpu02"}
	shareLoginKey(ctx, t, l, login, gpu)

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
	// Replay detection is per munged: one credential decodes once on each host, and only a
	// second decode on the same host is refused. VerifyAcross rests on this.
	if _, err := Decode(ctx, gpu, cred, ""); err != nil {
		t.Fatalf("a credential made on login01 does not decode on gpu02: %v", err)
	}
	if _, err := Decode(ctx, login, cred, ""); err != nil {
		t.Fatalf("the credential gpu02 decoded does not decode on login01: %v", err)
	}
	if _, err := Decode(ctx, gpu, cred, ""); err == nil || !strings.Contains(err.Error(), "Replayed credential") {
		t.Errorf("decoding the same credential twice on gpu02: got %v, want munged's replay refusal", err)
	}

	// A read that rides along with the decode answers in the same command, on each host.
	also := "sec hostname cat /proc/sys/kernel/hostname\n"
	results, err := VerifyAcross(ctx, login, map[string]transport.Executor{"login01": login, "gpu02": gpu}, also)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results["login01"].Err != nil || results["gpu02"].Err != nil {
		t.Errorf("VerifyAcross = %v, want success on login01 and gpu02", results)
	}
	for host, r := range results {
		sections, err := transport.ParseSections(r.Out)
		if err != nil || sections["hostname"].Status != 0 || len(sections["hostname"].Lines) != 1 || sections["hostname"].Lines[0] != host {
			t.Errorf("%s: the read asked with the decode answered %+v (%v), want the host's name", host, sections["hostname"], err)
		}
	}
}

// shareLoginKey installs munge where missing and copies login01's key to the other hosts,
// restarting munged there, so credentials decode across them.
func shareLoginKey(ctx context.Context, t *testing.T, l *lab.Lab, login transporttest.LabHost, others ...transporttest.LabHost) {
	t.Helper()
	for _, h := range append([]transporttest.LabHost{login}, others...) {
		if _, err := packages.Ensure(ctx, h, "munge"); err != nil {
			t.Fatalf("install munge on %s: %v", h.Host, err)
		}
	}
	key, _, err := l.Exec(ctx, login.Host, "base64 -w0 "+KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range others {
		script := "printf %s '" + strings.TrimSpace(key) + "' | base64 -d > " + KeyPath + " && chown munge:munge " + KeyPath +
			" && chmod 0400 " + KeyPath + " && systemctl restart munge && until munge -n >/dev/null 2>&1; do :; done"
		if _, stderr, err := l.Exec(ctx, h.Host, script); err != nil {
			t.Fatalf("give %s login01's key: %v: %s", h.Host, err, stderr)
		}
	}
}
