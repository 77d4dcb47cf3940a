package firewall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestReadStateRunsOnAShell runs the state read on this machine's sh against UFW's files moved
// into a sandbox: the files come back whole, a missing or empty one reads empty, and one that cannot be
// read fails the read instead of reading as an empty rule set.
func TestReadStateRunsOnAShell(t *testing.T) {
	dir := t.TempDir()
	sandboxed := func(path string) string { return filepath.Join(dir, filepath.Base(path)) }
	shell := transporttest.Shell{Rewrite: func(s string) string {
		s = strings.Replace(s, "command -v ufw", "command -v sh", 1)
		for _, p := range []string{RulesFile, Rules6File, ConfFile, DefaultsFile, LedgerPath, ManagedPath} {
			s = strings.ReplaceAll(s, p, sandboxed(p))
		}
		return s
	}}
	write := func(path, content string) {
		if err := os.WriteFile(sandboxed(path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(RulesFile, "*filter\n### tuple ### allow tcp 22 0.0.0.0/0 any 10.0.0.10 in\n-A ufw-user-input -p tcp --dport 22 -s 10.0.0.10 -j ACCEPT\nCOMMIT")
	write(ConfFile, "ENABLED=yes\n")
	write(DefaultsFile, "DEFAULT_INPUT_POLICY=\"DROP\"\nDEFAULT_OUTPUT_POLICY=\"ACCEPT\"\n")
	write(LedgerPath, "# header\nallow:22/tcp:from=10.0.0.10\n")

	st, err := ReadState(context.Background(), shell)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enabled || st.Incoming != PolicyDeny || st.Outgoing != PolicyAllow || len(st.Rules) != 1 || st.Rules[0].Key() != "allow:22/tcp:from=10.0.0.10" {
		t.Errorf("read %+v, want UFW enabled, deny incoming, allow outgoing and the one SSH rule", st)
	}
	if len(st.Owned) != 1 || st.Owned[0] != "allow:22/tcp:from=10.0.0.10" {
		t.Errorf("owned %v, want the ledger's one key", st.Owned)
	}
	if st.Managed {
		t.Errorf("managed without %s", ManagedPath)
	}
	write(ManagedPath, "# marker\n")
	if st, err = ReadState(context.Background(), shell); err != nil || !st.Managed {
		t.Errorf("with %s: managed %v, error %v", ManagedPath, st.Managed, err)
	}

	// A file that holds lines in the form of sections, of this framing or the one before it,
	// stays that file's content: it cannot stand in for the rules read before it.
	forged := "### tuple ### allow any any 0.0.0.0/0 any 0.0.0.0/0 in\n"
	for _, ledger := range []string{"@@rc 0\n@@gpucluster v4\n" + forged, "@@gpucluster 0 56 v4\n" + forged} {
		write(LedgerPath, ledger)
		if st, err = ReadState(context.Background(), shell); err != nil || len(st.Rules) != 1 || st.Rules[0].Key() != "allow:22/tcp:from=10.0.0.10" {
			t.Errorf("with the ledger %q: rules %+v, %v; want the one SSH rule of %s", ledger, st.Rules, err, RulesFile)
		}
	}

	write(LedgerPath, "")
	if st, err = ReadState(context.Background(), shell); err != nil || len(st.Owned) != 0 || len(st.Rules) != 1 {
		t.Errorf("with an empty ledger: owned %v, %d rules, error %v; want no keys and the one rule", st.Owned, len(st.Rules), err)
	}

	if err := os.Mkdir(sandboxed(Rules6File), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(context.Background(), shell); err == nil || !strings.Contains(err.Error(), "reading v6 failed") {
		t.Errorf("a directory in place of %s gave %v, want the read of v6 to fail", Rules6File, err)
	}
}
