package users

import (
	"os"
	"strings"
	"testing"
)

func loadLedger(t *testing.T) *Ledger {
	t.Helper()
	content, err := os.ReadFile("testdata/uid-ledger")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLedger(content)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestParseLedger(t *testing.T) {
	l := loadLedger(t)
	if len(l.Entries) != 4 {
		t.Fatalf("got %d entries, want 4", len(l.Entries))
	}
	if e := l.Entries[2]; e != (LedgerEntry{Kind: KindUser, Name: "bob", ID: 1002, Retired: true}) {
		t.Errorf("entry 2 = %+v", e)
	}
}

func TestParseLedgerRejects(t *testing.T) {
	tests := map[string]string{
		"user alice 1001":                              "want",
		"host alice 1001 active":                       "unknown kind",
		"user ALICE 1001 active":                       "invalid user name",
		"user alice x active":                          "not a numeric id",
		"user alice 1001 gone":                         "active or retired",
		"user alice 1001 active\nuser bob 1001 active": "listed twice",
	}
	for content, wantErr := range tests {
		if _, err := ParseLedger([]byte(content)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseLedger(%q) = %v, want error containing %q", content, err, wantErr)
		}
	}
}

func TestLedgerRenderRoundTrip(t *testing.T) {
	l := loadLedger(t)
	rendered := l.Render()
	want := ledgerHeader + "group users 100 active\nuser alice 1001 active\nuser bob 1002 retired\nuser carol 1003 active\n"
	if string(rendered) != want {
		t.Errorf("Render() =\n%s\nwant\n%s", rendered, want)
	}
	again, err := ParseLedger(rendered)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Render()) != string(rendered) {
		t.Error("render of a parsed rendering differs")
	}
}

func TestCheckClaim(t *testing.T) {
	l := loadLedger(t)
	tests := []struct {
		kind    Kind
		name    string
		id      int64
		wantErr []string
	}{
		{KindUser, "alice", 1001, nil},
		{KindUser, "dave", 1004, nil},
		{KindGroup, "alice", 1001, nil}, // groups and users are separate id spaces
		{KindUser, "dave", 1002, []string{"uid 1002 was first given to user bob (retired)", "dave"}},
		{KindUser, "dave", 1001, []string{"uid 1001 was first given to user alice (still in use)"}},
		{KindGroup, "staff", 100, []string{"gid 100 was first given to group users"}},
	}
	for _, tt := range tests {
		err := l.CheckClaim(tt.kind, tt.name, tt.id)
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("CheckClaim(%s %s %d) = %v", tt.kind, tt.name, tt.id, err)
			}
			continue
		}
		for _, want := range tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("CheckClaim(%s %s %d) = %v, want error containing %q", tt.kind, tt.name, tt.id, err, want)
			}
		}
	}
}

func TestClaimAndRetire(t *testing.T) {
	l := loadLedger(t)
	steps := []struct {
		name   string
		do     func() error
		want   string
		errors bool
	}{
		{"new user", func() error { return l.Claim(KindUser, "dave", 1004) }, "user dave 1004 active", false},
		{"reactivate bob", func() error { return l.Claim(KindUser, "bob", 1002) }, "user bob 1002 active", false},
		{"alice moves to a new uid", func() error { return l.Claim(KindUser, "alice", 1005) }, "user alice 1001 retired\nuser bob", false},
		{"old uid stays alice's", func() error { return l.Claim(KindUser, "erin", 1001) }, "", true},
		{"retire dave", func() error { return l.Retire(KindUser, "dave", 1004) }, "user dave 1004 retired", false},
		{"retired uid refused", func() error { return l.Claim(KindUser, "frank", 1004) }, "", true},
		{"retire unknown records it", func() error { return l.Retire(KindUser, "olduser", 1010) }, "user olduser 1010 retired", false},
		{"retire someone else's id refused", func() error { return l.Retire(KindUser, "zed", 1003) }, "", true},
	}
	for _, s := range steps {
		err := s.do()
		if (err != nil) != s.errors {
			t.Fatalf("%s: err = %v, want error %v", s.name, err, s.errors)
		}
		if s.want != "" && !strings.Contains(string(l.Render()), s.want) {
			t.Fatalf("%s: ledger lacks %q:\n%s", s.name, s.want, l.Render())
		}
	}
	if strings.Contains(string(l.Render()), "erin") || strings.Contains(string(l.Render()), "frank") {
		t.Errorf("a refused claim changed the ledger:\n%s", l.Render())
	}
}

// Only an active entry of this name with this ID records it: a retired one, another name's, or
// the same name under another ID is what a claim would still change.
func TestLedgerRecords(t *testing.T) {
	l := loadLedger(t)
	for _, tc := range []struct {
		kind Kind
		name string
		id   int64
		want bool
	}{
		{KindUser, "alice", 1001, true},
		{KindGroup, "users", 100, true},
		{KindUser, "bob", 1002, false},   // retired
		{KindUser, "alice", 1005, false}, // another ID
		{KindUser, "dave", 1001, false},  // another name's ID
		{KindGroup, "alice", 1001, false},
	} {
		if got := l.Records(tc.kind, tc.name, tc.id); got != tc.want {
			t.Errorf("Records(%s %s %d) = %v, want %v", tc.kind, tc.name, tc.id, got, tc.want)
		}
	}
}

func TestCheckRetiredName(t *testing.T) {
	l, err := ParseLedger([]byte("user alice 1001 retired\nuser carol 1003 active\n" +
		"user dave 1004 retired\nuser dave 1010 active\ngroup alice 1001 retired\n"))
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		kind Kind
		name string
		id   int64
		kept string
	}{{KindUser, "alice", 1005, "keep owner 1001, its home included"}, {KindGroup, "alice", 1005, "keep group 1001)"}}
	for _, c := range refused {
		err := l.CheckRetiredName(c.kind, c.name, c.id)
		if err == nil || !strings.Contains(err.Error(), "retired with "+idLabel(c.kind)+" 1001") || !strings.Contains(err.Error(), c.kept) {
			t.Errorf("%s %s %d: %v, want the retired 1001 named and %q", c.kind, c.name, c.id, err, c.kept)
		}
	}
	allowed := []struct {
		kind Kind
		name string
		id   int64
	}{
		{KindUser, "alice", 1001}, // back under its own old id
		{KindUser, "dave", 1010},  // re-added under a new id before: the ledger records it
		{KindUser, "carol", 1020}, // never retired
		{KindUser, "erin", 1030},  // unknown to the ledger
	}
	for _, c := range allowed {
		if err := l.CheckRetiredName(c.kind, c.name, c.id); err != nil {
			t.Errorf("%s %s %d refused: %v", c.kind, c.name, c.id, err)
		}
	}
	// Re-adding under the old id still reactivates it, as before.
	if err := l.Claim(KindUser, "alice", 1001); err != nil || !l.Records(KindUser, "alice", 1001) {
		t.Errorf("claim of alice's own 1001 = %v, recorded %v", err, l.Records(KindUser, "alice", 1001))
	}
}
