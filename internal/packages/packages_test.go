package packages

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// dpkg-query's real output for one installed, one removed with its
// configuration left, and (by its exit status) one unknown package.
const queryOut = "munge\tii \t0.5.16-1.1~deb13u1\nslurmd\trc \t24.11.5-4\n"

func notFound() error {
	return &transport.ExitError{Host: "gpu01", Status: 1, Stderr: "dpkg-query: no packages found matching nosuch"}
}

func TestInstalled(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: queryOut, Err: notFound()}}}
	got, err := Installed(context.Background(), f, "munge", "slurmd", "nosuch")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"munge": "0.5.16-1.1~deb13u1", "slurmd": "", "nosuch": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Installed = %v, want %v", got, want)
	}
	if len(f.Calls) != 1 || !strings.Contains(f.Calls[0].Script, "dpkg-query -W") || !strings.HasSuffix(f.Calls[0].Script, " -- munge slurmd nosuch\n") {
		t.Errorf("want one dpkg-query for all three packages, got %q", f.Scripts())
	}
	if len(f.Calls) == 1 && !f.Calls[0].Read {
		t.Error("the query is no shared read: every resource asking a node's packages would be a change that ends the sharing of other reads")
	}
}

func TestInstalledErrors(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		replies []transporttest.Reply
		wantErr string
	}{
		{"shell characters", []string{"munge;reboot"}, nil, `"munge;reboot" is not a Debian package name`},
		{"upper case", []string{"Munge"}, nil, "not a Debian package name"},
		{"leading dash", []string{"-y"}, nil, "not a Debian package name"},
		{"one letter", []string{"m"}, nil, "not a Debian package name"},
		{"dpkg broken", []string{"munge"}, []transporttest.Reply{{Err: &transport.ExitError{Host: "gpu01", Status: 2, Stderr: "dpkg-query: error: parsing file"}}}, "parsing file"},
		{"connection lost", []string{"munge"}, []transporttest.Reply{{Err: errors.New("connection reset")}}, "connection reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: tt.replies}
			_, err := Installed(context.Background(), f, tt.names...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
			if len(f.Replies) != 0 {
				t.Errorf("%d replies left unused", len(f.Replies))
			}
		})
	}
}

func TestInstalledNothingAsked(t *testing.T) {
	f := &transporttest.Fake{T: t}
	got, err := Installed(context.Background(), f)
	if err != nil || len(got) != 0 || len(f.Calls) != 0 {
		t.Fatalf("got %v, %v after %d calls; want an empty map and no round trip", got, err, len(f.Calls))
	}
}

func TestEnsure(t *testing.T) {
	tests := []struct {
		name          string
		names         []string
		replies       []transporttest.Reply
		wantInstalled []string
		wantInstall   string
	}{
		{"all present: only the query", []string{"munge", "slurmd"}, []transporttest.Reply{{Stdout: "munge\tii \t0.5.16\nslurmd\tii \t24.11\n"}}, nil, ""},
		{"installs only the missing", []string{"munge", "slurmd", "nosuch"}, []transporttest.Reply{{Stdout: queryOut, Err: notFound()}, {}}, []string{"nosuch", "slurmd"}, "nosuch slurmd\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: tt.replies}
			got, err := Ensure(context.Background(), f, tt.names...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.wantInstalled) {
				t.Errorf("installed = %v, want %v", got, tt.wantInstalled)
			}
			if tt.wantInstall == "" {
				if len(f.Calls) != 1 {
					t.Errorf("want only the query, got %q", f.Scripts())
				}
				return
			}
			install := f.Calls[len(f.Calls)-1].Script
			for _, want := range []string{"DEBIAN_FRONTEND=noninteractive", "apt-get install -y", "--no-install-recommends", tt.wantInstall} {
				if !strings.Contains(install, want) {
					t.Errorf("install script lacks %q:\n%s", want, install)
				}
			}
			if strings.Contains(install, "munge") {
				t.Errorf("install script reinstalls the present munge:\n%s", install)
			}
		})
	}
}

func TestEnsureQuotesApt(t *testing.T) {
	aptErr := &transport.ExitError{Host: "gpu01", Status: 100, Stderr: "E: Unable to locate package slurmd"}
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: "slurmd\tun \t\n"}, {Err: aptErr}}}
	_, err := Ensure(context.Background(), f, "slurmd")
	if err == nil || !strings.Contains(err.Error(), "apt-get install slurmd") || !strings.Contains(err.Error(), "E: Unable to locate package slurmd") {
		t.Fatalf("got %v, want an error naming the package and quoting apt", err)
	}
	if !errors.Is(err, aptErr) {
		t.Errorf("the ExitError is not wrapped: %v", err)
	}
}

// TestInstalledRealDpkg runs the query against this machine's own dpkg
// database, so the format string and the parser are proven to agree.
func TestInstalledRealDpkg(t *testing.T) {
	got, err := Installed(context.Background(), transporttest.Shell{}, "dpkg", "gpucluster-no-such-package")
	if err != nil {
		t.Skipf("no dpkg here: %v", err)
	}
	if got["dpkg"] == "" || got["gpucluster-no-such-package"] != "" {
		t.Errorf("Installed = %v, want a version for dpkg and none for the unknown package", got)
	}
}

func TestInstallScriptRunsInAShell(t *testing.T) {
	// The script must at least parse; running it would install software here.
	script := installScript([]string{"munge"})
	if _, err := (transporttest.Shell{}).Sudo(context.Background(), "sh -n <<'EOF'\n"+script+"EOF\n", nil); err != nil {
		t.Fatalf("install script does not parse: %v\n%s", err, script)
	}
}
