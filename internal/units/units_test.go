package units

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// sharedUnits and the files beside them stand in for what munge, slurm and beegfs share in
// the provider (Share), so this package's tests read a set like the provider's.
var sharedUnits = []string{
	"munge.service",
	"slurmd.service",
	"beegfs-mgmtd.service",
	"beegfs-meta.service",
	"beegfs-storage.service",
	"beegfs-client.service",
}

func init() {
	Share(sharedUnits, []string{"/etc/munge/munge.key", "/etc/beegfs/conn.auth", "/etc/beegfs/cert.pem"})
}

// batchOut is batchScript's answer for units, none of them linked: absent ones left to the
// shell, list-units naming the loaded ones (an inactive unit is left out, as systemd drops it
// once nothing needs it), is-enabled answering each of the others.
func batchOut(units, active, enabled []string, absent ...string) string {
	var b strings.Builder
	b.WriteString("@@gpucluster absent\n" + strings.Join(absent, "\n") + "\n\n@@rc 0\n@@gpucluster loaded\n")
	for i, u := range units {
		if active[i] != "inactive" {
			fmt.Fprintf(&b, "%s loaded %s running Some daemon\n", u, active[i])
		}
	}
	b.WriteString("\n@@rc 0\n@@gpucluster linked\n\n@@rc 0\n@@gpucluster enabled\n" + strings.Join(enabled, "\n") + "\n\n@@rc 0\n")
	return b.String()
}

// The words of trixie's systemd 257 for munge enabled and up, slurmd masked, BeeGFS's
// management missing, its metadata static, storage an alias, the client enabled but failed.
var (
	active  = []string{"active", "inactive", "inactive", "reloading", "activating", "failed"}
	enabled = []string{"enabled", "masked", "not-found", "static", "alias", "enabled-runtime"}
)

func TestReadSharesOneScriptForEveryUnit(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(batchOut(sharedUnits, active, enabled))}, {Stdout: transporttest.Sections(batchOut(sharedUnits, active, enabled))}}}
	munge, err := Read(context.Background(), f, "munge.service")
	if err != nil {
		t.Fatal(err)
	}
	storage, err := Read(context.Background(), f, "beegfs-storage.service")
	if err != nil {
		t.Fatal(err)
	}
	if munge != (State{"active", "enabled"}) || storage != (State{"activating", "alias"}) {
		t.Errorf("munge %+v, storage %+v", munge, storage)
	}
	if s := f.Scripts(); s[0] != s[1] || !f.Calls[0].Read || !f.Calls[1].Read {
		t.Errorf("two units, two scripts or no shared reads (%+v): the host's read cache could not share them", f.Calls)
	}
	script := f.Scripts()[0]
	for _, want := range []string{"set -- munge.service slurmd.service", `systemctl list-units --all --plain --no-legend --full "$@"`, `systemctl is-enabled "$@" 2>/dev/null`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
}

func TestReadAsksAnOtherUnitAlone(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(batchOut([]string{"beegfs-helperd.service"}, []string{"active"}, []string{"enabled"}))}}}
	st, err := Read(context.Background(), f, "beegfs-helperd.service")
	if err != nil {
		t.Fatal(err)
	}
	if st != (State{"active", "enabled"}) || !strings.Contains(f.Scripts()[0], "set -- beegfs-helperd.service\n") {
		t.Errorf("state %+v from\n%s", st, f.Scripts()[0])
	}
}

// A service without a unit file is answered by the shell, not systemctl: the verbs' lines are
// those of the other units, in order.
func TestReadAbsentUnitsWithoutSystemctl(t *testing.T) {
	out := batchOut([]string{"munge.service", "slurmd.service", "beegfs-storage.service", "beegfs-client.service"},
		[]string{"active", "inactive", "failed", "active"}, []string{"enabled", "masked", "enabled", "alias"},
		"beegfs-mgmtd.service", "beegfs-meta.service")
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(out)}, {Stdout: transporttest.Sections(out)}, {Stdout: transporttest.Sections(out)}}}
	for unit, want := range map[string]State{
		"beegfs-mgmtd.service":   {"inactive", "not-found"},
		"beegfs-storage.service": {"failed", "enabled"},
		"beegfs-client.service":  {"active", "alias"},
	} {
		if got, err := Read(context.Background(), f, unit); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", unit, got, err, want)
		}
	}
	script := f.Scripts()[0]
	for _, want := range []string{`if [ -L "$d/$u" ]; then f=L; break; elif [ -e "$d/$u" ]; then f=F; break; fi`, " /usr/lib/systemd/system /lib/systemd/system ", "set -- $present\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
}

// list-units names units by their own names only: a name whose unit file is a symlink (an alias,
// or a masked unit) is asked alone, and its answer stands.
func TestReadAsksLinkedUnitsAlone(t *testing.T) {
	out := strings.Replace(batchOut(sharedUnits, active, enabled), "@@gpucluster linked\n",
		"@@gpucluster linked\nbeegfs-storage.service deactivating\nslurmd.service inactive\n", 1)
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(out)}, {Stdout: transporttest.Sections(out)}}}
	for unit, want := range map[string]State{
		"beegfs-storage.service": {"deactivating", "alias"},
		"munge.service":          {"active", "enabled"},
	} {
		if got, err := Read(context.Background(), f, unit); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", unit, got, err, want)
		}
	}
}

func TestReadAbsentErrors(t *testing.T) {
	for name, out := range map[string]string{
		"unasked unit":       batchOut(sharedUnits, active, enabled, "sshd.service"),
		"list-units failed":  strings.Replace(batchOut(sharedUnits, []string{"inactive", "inactive", "inactive", "inactive", "inactive", "inactive"}, enabled), "\n@@rc 0\n@@gpucluster linked", "Failed to connect to bus\n@@rc 1\n@@gpucluster linked", 1),
		"list-units garbage": strings.Replace(batchOut(sharedUnits, active, enabled), "@@gpucluster loaded\n", "@@gpucluster loaded\nmunge.service\n", 1),
		"is-active garbage":  strings.Replace(batchOut(sharedUnits, active, enabled), "@@gpucluster linked\n", "@@gpucluster linked\nactive\n", 1),
	} {
		t.Run(name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(out)}}}
			if st, err := Read(context.Background(), f, "munge.service"); err == nil {
				t.Errorf("read %+v from %q", st, out)
			}
		})
	}
}

// An older systemd ends is-enabled at a unit without a unit file: each unit is then asked alone,
// and one without an answer reads as "not-found", as a newer systemd says.
func TestReadFallsBackUnitByUnit(t *testing.T) {
	var one strings.Builder
	for i := range sharedUnits {
		one.WriteString("@@gpucluster u" + string(rune('0'+i)) + "\n" + active[i] + "\n@@rc 0\n@@gpucluster e" + string(rune('0'+i)) + "\n")
		if enabled[i] != "not-found" {
			one.WriteString(enabled[i] + "\n")
		}
		one.WriteString("@@rc 0\n")
	}
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(batchOut(sharedUnits, active, enabled[:2]))}, {Stdout: transporttest.Sections(one.String())}}}
	st, err := Read(context.Background(), f, "beegfs-mgmtd.service")
	if err != nil {
		t.Fatal(err)
	}
	if st != (State{"inactive", "not-found"}) {
		t.Errorf("state %+v", st)
	}
	if len(f.Calls) != 2 || !strings.Contains(f.Scripts()[1], `for u; do sec "u$i" systemctl is-active "$u"`) {
		t.Errorf("no unit-by-unit read:\n%s", strings.Join(f.Scripts(), "\n---\n"))
	}
}

func TestReadErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		unit, out string
		err       error
		want      string
	}{
		"bad name":         {unit: "munge;reboot", want: `unit name "munge;reboot" is not valid`},
		"host error":       {unit: "munge.service", err: errors.New("connection lost"), want: "connection lost"},
		"no list-units":    {unit: "munge.service", out: transporttest.Sections("@@gpucluster enabled\n" + strings.Join(enabled, "\n") + "\n@@rc 0\n"), want: "list-units failed"},
		"truncated answer": {unit: "munge.service", out: "@@gpucluster 0 60 loaded\nmunge.service loaded active running\n", want: "truncated"},
	} {
		t.Run(name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: tc.out, Err: tc.err}}}
			if _, err := Read(context.Background(), f, tc.unit); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// IsActive and IsEnabled are the exit statuses of is-active --quiet and is-enabled --quiet, as
// systemctl's own lists of good states define them.
func TestExitStatusWords(t *testing.T) {
	for word, want := range map[string]bool{"active": true, "reloading": true, "refreshing": true,
		"inactive": false, "failed": false, "activating": false, "deactivating": false, "unknown": false} {
		if got := (State{Active: word}).IsActive(); got != want {
			t.Errorf("is-active %q: %v, want %v", word, got, want)
		}
	}
	for word, want := range map[string]bool{"enabled": true, "enabled-runtime": true, "static": true, "alias": true,
		"indirect": true, "generated": true, "disabled": false, "masked": false, "masked-runtime": false,
		"linked": false, "linked-runtime": false, "transient": false, "bad": false, "not-found": false, "": false} {
		if got := (State{Enabled: word}).IsEnabled(); got != want {
			t.Errorf("is-enabled %q: %v, want %v", word, got, want)
		}
	}
}

// The shared files come from the units' own read, so a resource that reads its key file and
// its unit costs the host one command between them.
func TestReadFileSharesTheUnitsRead(t *testing.T) {
	const sum = "d795bc42b84290bfb7f00acdcb1136adc62622d81da0d86e7ffdb5dff96a58b2"
	out := "@@gpucluster files\n" + sum + "  /etc/munge/munge.key\n400 munge munge /etc/munge/munge.key\n\n@@rc 0\n" + batchOut(sharedUnits, active, enabled)
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(out)}, {Stdout: transporttest.Sections(out)}, {Stdout: transporttest.Sections(out)}}}
	key, err := ReadFile(context.Background(), f, "/etc/munge/munge.key")
	if err != nil {
		t.Fatal(err)
	}
	if want := (File{Exists: true, SHA256: sum, Owner: "munge", Group: "munge", Mode: 0o400}); key != want {
		t.Errorf("key %+v, want %+v", key, want)
	}
	auth, err := ReadFile(context.Background(), f, "/etc/beegfs/conn.auth")
	if err != nil || auth.Exists {
		t.Errorf("a file the read says nothing of: %+v, %v; want missing", auth, err)
	}
	if _, err := Read(context.Background(), f, "munge.service"); err != nil {
		t.Fatal(err)
	}
	s := f.Scripts()
	if s[0] != s[1] || s[0] != s[2] {
		t.Errorf("files and units read by different scripts: the host's read cache could not share them:\n%s", strings.Join(s, "\n---\n"))
	}
	if !strings.Contains(s[0], "hashfiles /etc/munge/munge.key /etc/beegfs/conn.auth /etc/beegfs/cert.pem\n") {
		t.Errorf("the shared files are not hashed:\n%s", s[0])
	}
}

func TestReadFileErrors(t *testing.T) {
	tests := []struct{ name, files, wantErr string }{
		{"unreadable", "@@gpucluster files\n@@rc 1\n", "status 1"},
		{"no answer", "", "no answer"},
		{"bad mode", "@@gpucluster files\nx9 munge munge /etc/munge/munge.key\n@@rc 0\n", "mode"},
		{"checksum without stat", "@@gpucluster files\n" + strings.Repeat("a", 64) + "  /etc/munge/munge.key\n@@rc 0\n", "incompletely"},
		{"garbage", "@@gpucluster files\nsha256sum: oops\n@@rc 0\n", "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: transporttest.Sections(tt.files + batchOut(sharedUnits, active, enabled))}, {Stdout: transporttest.Sections(tt.files + batchOut(sharedUnits, active, enabled))}}}
			if _, err := ReadFile(context.Background(), f, "/etc/munge/munge.key"); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want error containing %q", err, tt.wantErr)
			}
			// The units in the same read are still answered.
			if st, err := Read(context.Background(), f, "munge.service"); err != nil || st.Active != "active" {
				t.Errorf("munge.service: %+v, %v", st, err)
			}
		})
	}
	if _, err := ReadFile(context.Background(), &transporttest.Fake{T: t}, "/etc/my key"); err == nil {
		t.Error("a path with a space was accepted")
	}
}

// A unit or file shared twice, by two packages, is asked once: the script is the same for
// every caller whatever the order of the registrations.
func TestShareAddsEachNameOnce(t *testing.T) {
	before := SharedUnits()
	Share([]string{"munge.service"}, []string{"/etc/munge/munge.key"})
	if got := SharedUnits(); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Errorf("sharing a unit again changed the set from %q to %q", before, got)
	}
	if !SharesFile("/etc/beegfs/cert.pem") || SharesFile("/etc/passwd") {
		t.Error("SharesFile does not answer from what was shared")
	}
}

func TestShareRefusesABadName(t *testing.T) {
	for _, tt := range []struct{ units, files []string }{{[]string{"munge service"}, nil}, {nil, []string{"etc/x"}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Share(%q, %q) did not panic", tt.units, tt.files)
				}
			}()
			Share(tt.units, tt.files)
		}()
	}
}
