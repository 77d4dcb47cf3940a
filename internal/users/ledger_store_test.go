package users

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// fakeLedgerHost keeps one file in memory and records what was done.
type fakeLedgerHost struct {
	transporttest.Fake
	content []byte
	exists  bool
	writes  []transport.File
	locked  bool
}

func (f *fakeLedgerHost) ReadFile(_ context.Context, _ string) ([]byte, bool, error) {
	if !f.locked {
		f.T.Error("ledger read outside the lock")
	}
	return f.content, f.exists, nil
}

func (f *fakeLedgerHost) WriteFile(_ context.Context, file transport.File) (bool, error) {
	if !f.locked {
		f.T.Error("ledger written outside the lock")
	}
	f.writes = append(f.writes, file)
	f.content, f.exists = file.Content, true
	return true, nil
}

func (f *fakeLedgerHost) Lock(context.Context) (func(), error) {
	f.locked = true
	return func() { f.locked = false }, nil
}

func TestUpdateLedger(t *testing.T) {
	ctx := context.Background()
	h := &fakeLedgerHost{Fake: transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}}

	if err := ClaimID(ctx, h, LedgerPath, KindUser, "alice", 1001); err != nil {
		t.Fatal(err)
	}
	if len(h.Scripts()) != 1 || !strings.HasSuffix(h.Scripts()[0], transport.StateDirText) {
		t.Errorf("first write did not create the directory: %q", h.Scripts())
	}
	if len(h.writes) != 1 {
		t.Fatalf("%d writes, want 1", len(h.writes))
	}
	w := h.writes[0]
	if w.Path != LedgerPath || w.Owner != "root" || w.Mode != 0o644 || !strings.Contains(string(w.Content), "user alice 1001 active\n") {
		t.Errorf("write = %+v (%s)", w, w.Content)
	}

	if err := ClaimID(ctx, h, LedgerPath, KindUser, "alice", 1001); err != nil {
		t.Fatal(err)
	}
	if len(h.writes) != 1 {
		t.Error("an unchanged ledger was rewritten")
	}

	if err := RetireID(ctx, h, LedgerPath, KindUser, "alice", 1001); err != nil {
		t.Fatal(err)
	}
	err := ClaimID(ctx, h, LedgerPath, KindUser, "mallory", 1001)
	if err == nil || !strings.Contains(err.Error(), "first given to user alice (retired)") {
		t.Fatalf("reuse of a retired uid: %v", err)
	}
	if len(h.writes) != 2 || h.locked {
		t.Errorf("writes = %d (want 2: claim, retire), still locked = %v", len(h.writes), h.locked)
	}

	l, err := ParseLedger(h.content)
	if err != nil || len(l.Entries) != 1 || !l.Entries[0].Retired {
		t.Fatalf("the ledger written = %+v, %v", l, err)
	}
}

func TestUpdateLedgerRefusesCorruptFile(t *testing.T) {
	h := &fakeLedgerHost{Fake: transporttest.Fake{T: t}, content: []byte("user alice one active\n"), exists: true}
	err := ClaimID(context.Background(), h, LedgerPath, KindUser, "bob", 1002)
	if err == nil || !strings.Contains(err.Error(), LedgerPath) || len(h.writes) != 0 {
		t.Fatalf("corrupt ledger: err %v, writes %d", err, len(h.writes))
	}
}

// racingLedgerHost is a ledger whose file another provider process changes between our read
// and our first write; it honours ExpectSHA256 the way the host's write script does.
type racingLedgerHost struct {
	fakeLedgerHost
	otherWriter func([]byte) []byte
}

func (r *racingLedgerHost) WriteFile(ctx context.Context, file transport.File) (bool, error) {
	if r.otherWriter != nil {
		r.content, r.exists = r.otherWriter(r.content), true
		r.otherWriter = nil
	}
	current := transport.Absent
	if r.exists {
		sum := sha256.Sum256(r.content)
		current = hex.EncodeToString(sum[:])
	}
	if file.ExpectSHA256 != current {
		return false, transport.ErrWriteConflict
	}
	return r.fakeLedgerHost.WriteFile(ctx, file)
}

func TestUpdateLedgerKeepsAConcurrentClaim(t *testing.T) {
	// One reply: the first attempt creates the ledger directory, the retry finds the file.
	h := &racingLedgerHost{fakeLedgerHost: fakeLedgerHost{Fake: transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}}}
	h.otherWriter = func([]byte) []byte {
		other := &Ledger{}
		if err := other.Claim(KindUser, "bob", 1002); err != nil {
			t.Fatal(err)
		}
		return other.Render()
	}
	if err := ClaimID(context.Background(), h, LedgerPath, KindUser, "alice", 1001); err != nil {
		t.Fatal(err)
	}
	got := string(h.content)
	if !strings.Contains(got, "user bob 1002 active") || !strings.Contains(got, "user alice 1001 active") {
		t.Errorf("ledger after a concurrent claim:\n%s\nwant both bob's and alice's claims", got)
	}
	if len(h.writes) != 1 {
		t.Errorf("%d writes, want 1 (the first was refused as a conflict)", len(h.writes))
	}
}

// The ledger comes from the shared account listing, so a host that already listed its accounts
// in this run answers without another round trip; a host without the file has an empty ledger.
func TestReadListedLedger(t *testing.T) {
	ledger, err := os.ReadFile("testdata/uid-ledger")
	if err != nil {
		t.Fatal(err)
	}
	listing := "@@gpucluster passwd\n@@rc 0\n@@gpucluster group\n@@rc 0\n@@gpucluster ledger\n" + string(ledger) + "\n@@rc 0\n"
	fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(listing)}, {Stdout: transporttest.Sections("@@gpucluster passwd\n@@rc 0\n@@gpucluster group\n@@rc 0\n@@gpucluster ledger\n\n@@rc 0\n")}}}
	l, err := ReadListedLedger(context.Background(), fx)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Records(KindUser, "carol", 1003) || !l.Records(KindGroup, "users", 100) || len(l.Entries) != 4 {
		t.Errorf("ledger read from the listing = %+v, want the four entries of testdata/uid-ledger", l.Entries)
	}
	if fx.Scripts()[0] != listingScript || !strings.Contains(listingScript, "ledger="+transport.Quote(LedgerPath)+"\n") {
		t.Errorf("the ledger was not read by the shared listing:\n%s", fx.Scripts()[0])
	}
	if l, err = ReadListedLedger(context.Background(), fx); err != nil || len(l.Entries) != 0 {
		t.Errorf("no ledger file: %+v, %v; want an empty ledger", l, err)
	}
}

// A ledger the host could not cat, or that does not parse, is an error, never an empty ledger:
// the plan would then let an ID be handed out twice.
func TestReadListedLedgerRefuses(t *testing.T) {
	for name, out := range map[string]string{
		"cat failed":  transporttest.Sections("@@gpucluster passwd\n@@rc 0\n@@gpucluster group\n@@rc 0\n@@gpucluster ledger\n@@rc 1\n"),
		"no section":  transporttest.Sections("@@gpucluster passwd\n@@rc 0\n@@gpucluster group\n@@rc 0\n"),
		"corrupt":     transporttest.Sections("@@gpucluster ledger\nuser alice one active\n@@rc 0\n"),
		"unparseable": strings.TrimSuffix(transporttest.Sections("@@gpucluster ledger\nuser alice 1001 active\n@@rc 0\n"), "\n"),
	} {
		fx := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out}}}
		if l, err := ReadListedLedger(context.Background(), fx); err == nil {
			t.Errorf("%s: ledger %+v, want an error", name, l)
		}
	}
}
