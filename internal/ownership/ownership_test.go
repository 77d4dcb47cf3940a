package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// sandbox runs the package's scripts with this machine's sh, with /var/lib/gpucluster moved
// into a temporary directory.
func sandbox(t *testing.T) (transporttest.Shell, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "gpucluster")
	return transporttest.Shell{Rewrite: func(s string) string { return strings.ReplaceAll(s, "/var/lib/gpucluster", root) }}, root
}

func record(token string, phase Phase) Record {
	return Record{Token: token, Phase: phase, Resource: "gpucluster_slurm_partition", Workdir: "/srv/tf\nx", Machine: "adm", User: "root",
		Since: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
}

var partition = Object{Kind: "slurm_partition", Name: "gpu"}

func TestClaimOnceThenRefuseAnotherToken(t *testing.T) {
	ctx := context.Background()
	sh, root := sandbox(t)
	mine, theirs := NewToken(), NewToken()
	if err := Claim(ctx, sh, partition, record(mine, Creating)); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	err := Claim(ctx, sh, partition, record(theirs, Creating))
	var owned *OwnedError
	if !errors.As(err, &owned) {
		t.Fatalf("second claim with another token: got %v, want *OwnedError", err)
	}
	if owned.Record.Token != mine || owned.Record.Phase != Creating || owned.Record.Workdir != "/srv/tf?x" {
		t.Errorf("refusal names %+v, want the first claim's record", owned.Record)
	}
	if !strings.Contains(err.Error(), "started creating it and did not finish") {
		t.Errorf("refusal %q does not say the create is unfinished", err)
	}
	if err := Claim(ctx, sh, partition, record(mine, Created)); err != nil {
		t.Fatalf("the owner advancing its phase: %v", err)
	}
	rec, found, err := Read(ctx, sh, partition)
	if err != nil || !found || rec.Phase != Created || rec.Token != mine {
		t.Fatalf("Read = %+v, %v, %v; want the owner's record in phase created", rec, found, err)
	}
	info, err := os.Stat(filepath.Join(root, "owners", "slurm_partition", "gpu"))
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("record file: %v, mode %v; want 0644", err, info.Mode().Perm())
	}
	for _, d := range []string{root, filepath.Join(root, "owners")} {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v, want mode 0755", d, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, "owners", "slurm_partition", ".claim.*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestReleaseOnlyWithTheToken(t *testing.T) {
	ctx := context.Background()
	sh, _ := sandbox(t)
	mine, theirs := NewToken(), NewToken()
	if err := Release(ctx, sh, partition, mine); err != nil {
		t.Fatalf("releasing an object without a record: %v", err)
	}
	if err := Claim(ctx, sh, partition, record(mine, Created)); err != nil {
		t.Fatal(err)
	}
	var owned *OwnedError
	if err := Release(ctx, sh, partition, theirs); !errors.As(err, &owned) {
		t.Fatalf("release with another token: got %v, want *OwnedError", err)
	}
	if _, found, _ := Read(ctx, sh, partition); !found {
		t.Fatal("a refused release removed the record")
	}
	if err := Release(ctx, sh, partition, mine); err != nil {
		t.Fatal(err)
	}
	if _, found, err := Read(ctx, sh, partition); found || err != nil {
		t.Fatalf("after the owner's release: found %v, err %v", found, err)
	}
}

// Two applies that plan the same object before either writes race at apply: exactly one wins.
func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	ctx := context.Background()
	sh, _ := sandbox(t)
	const racers = 16
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Claim(ctx, sh, partition, record(NewToken(), Creating))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var owned *OwnedError
		switch {
		case err == nil:
			won++
		case !errors.As(err, &owned):
			t.Errorf("a losing claim failed with %v, want *OwnedError", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d racing claims won, want exactly 1", won, racers)
	}
}

func TestPathEscapesNames(t *testing.T) {
	for name, want := range map[string]string{
		"alice":       Dir + "/user/alice",
		"../etc":      Dir + "/user/%2E.%2Fetc",
		"a b":         Dir + "/user/a%20b",
		"node:22/tcp": Dir + "/user/node%3A22%2Ftcp",
	} {
		got, err := Object{Kind: "user", Name: name}.Path()
		if err != nil || got != want {
			t.Errorf("Path(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, o := range []Object{{Kind: "User", Name: "a"}, {Kind: "../x", Name: "a"}, {Kind: "user"}} {
		if _, err := o.Path(); err == nil {
			t.Errorf("Path of %+v: want an error", o)
		}
	}
}

func TestParseRecordRefusesWhatItCannotTrust(t *testing.T) {
	good := string(record(NewToken(), Created).marshal())
	for name, content := range map[string]string{
		"repeated key":  good + "token=" + NewToken() + "\n",
		"no token":      "phase=created\n",
		"bad phase":     strings.Replace(good, "phase=created", "phase=done", 1),
		"not key=value": good + "garbage\n",
	} {
		if _, err := parseRecord([]byte(content)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
	if _, err := parseRecord([]byte(good)); err != nil {
		t.Errorf("a record as written: %v", err)
	}
}

func TestMalformedTokensNeverReachTheHost(t *testing.T) {
	ctx := context.Background()
	fake := &transporttest.Fake{}
	for _, token := range []string{"", "short", "abc'; rm -rf / #0123456789"} {
		if err := Claim(ctx, fake, partition, record(token, Creating)); err == nil {
			t.Errorf("Claim with token %q: want an error", token)
		}
		if err := Release(ctx, fake, partition, token); err == nil {
			t.Errorf("Release with token %q: want an error", token)
		}
	}
	if len(fake.Scripts()) != 0 {
		t.Errorf("scripts ran: %q", fake.Scripts())
	}
}

func TestFromHereIsThisWorkingDirectoryAndMachine(t *testing.T) {
	here := Here("gpucluster_user", NewToken(), Created, time.Now())
	if !here.FromHere() {
		t.Errorf("a record written here: FromHere is false: %+v", here)
	}
	for name, change := range map[string]func(*Record){
		"another directory": func(r *Record) { r.Workdir += "/other" },
		"another machine":   func(r *Record) { r.Machine += "-other" },
		"no directory":      func(r *Record) { r.Workdir = "" },
	} {
		r := here
		change(&r)
		if r.FromHere() {
			t.Errorf("%s: FromHere is true for %+v", name, r)
		}
	}
}
