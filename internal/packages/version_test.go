package packages

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestValidateVersion(t *testing.T) {
	for _, ok := range []string{"24.11.5-4+deb13u1", "24.11.5-4+deb13u1+gpucluster1", "1:2.0~rc1-1", "25.05.0"} {
		if err := ValidateVersion(ok); err != nil {
			t.Errorf("ValidateVersion(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "latest", "24.11 ", "24.11;reboot", "24.11-", "=24.11", "v24.11", "24.11$(id)"} {
		if err := ValidateVersion(bad); err == nil {
			t.Errorf("ValidateVersion(%q) accepted", bad)
		}
	}
}

func TestUpstream(t *testing.T) {
	for in, want := range map[string]string{"24.11.5-4+deb13u1": "24.11.5", "1:24.11.5-4": "24.11.5", "25.05.0": "25.05.0", "23.11.4-1-2": "23.11.4-1"} {
		if got := Upstream(in); got != want {
			t.Errorf("Upstream(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCompareVersions holds dpkg's own answers (dpkg --compare-versions).
func TestCompareVersions(t *testing.T) {
	older := [][2]string{
		{"24.11.5-4+deb13u1", "24.11.5-4+deb13u1+gpucluster1"},
		{"24.11.5-1+gpucluster1", "24.11.5-4+deb13u1"},
		{"24.11.5-4", "24.11.10-1"},
		{"25.05.0~rc1-1", "25.05.0-1"},
		{"9:1.0", "10:0.1"},
		{"1.0a", "1.0+"},
		{"1.0", "1.0a"},
		{"24.11.5", "24.11.5-1"},
	}
	for _, p := range older {
		if c := CompareVersions(p[0], p[1]); c >= 0 {
			t.Errorf("CompareVersions(%q, %q) = %d, want negative", p[0], p[1], c)
		}
		if c := CompareVersions(p[1], p[0]); c <= 0 {
			t.Errorf("CompareVersions(%q, %q) = %d, want positive", p[1], p[0], c)
		}
	}
	if c := CompareVersions("0:24.11.05-4", "24.11.5-4"); c != 0 {
		t.Errorf("equal versions compare %d", c)
	}
}

// TestCompareVersionsAgreesWithDpkg checks the same pairs against this machine's dpkg.
func TestCompareVersionsAgreesWithDpkg(t *testing.T) {
	pairs := [][2]string{{"24.11.5-4+deb13u1", "24.11.5-4+deb13u1+gpucluster1"}, {"24.11.5-1+gpucluster1", "24.11.5-4+deb13u1"}, {"25.05.0~rc1-1", "25.05.0-1"}, {"1.0a", "1.0+"}}
	for _, p := range pairs {
		_, err := (transporttest.Shell{}).Sudo(context.Background(), fmt.Sprintf("dpkg --compare-versions '%s' lt '%s'\n", p[0], p[1]), nil)
		if err != nil && strings.Contains(err.Error(), "not found") {
			t.Skip("no dpkg here")
		}
		if dpkgLess := err == nil; dpkgLess != (CompareVersions(p[0], p[1]) < 0) {
			t.Errorf("dpkg says %q lt %q is %v; CompareVersions disagrees", p[0], p[1], dpkgLess)
		}
	}
}

func TestInstallHeld(t *testing.T) {
	f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{}}}
	if err := InstallHeld(context.Background(), f, "24.11.5-4+deb13u1+gpucluster1", "slurmctld", "slurm-client"); err != nil {
		t.Fatal(err)
	}
	script := f.Calls[0].Script
	for _, want := range []string{"'slurmctld=24.11.5-4+deb13u1+gpucluster1' 'slurm-client=24.11.5-4+deb13u1+gpucluster1'", "exit 101", "/usr/sbin/policy-rc.d", "trap ", "apt-get install -y"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if _, err := (transporttest.Shell{}).Sudo(context.Background(), "sh -n <<'EOF'\n"+script+"EOF\n", nil); err != nil {
		t.Fatalf("script does not parse: %v", err)
	}
}

func TestInstallHeldRefusesBadInput(t *testing.T) {
	for _, tt := range []struct{ version, name string }{{"24.11;reboot", "slurmd"}, {"24.11.5-4", "slurmd;reboot"}} {
		f := &transporttest.Fake{T: t}
		if err := InstallHeld(context.Background(), f, tt.version, tt.name); err == nil || len(f.Calls) != 0 {
			t.Errorf("InstallHeld(%q, %q) = %v after %d calls, want a refusal and no call", tt.version, tt.name, err, len(f.Calls))
		}
	}
}

func TestPin(t *testing.T) {
	const a, b = "0.5.16-1.1~deb13u1", "0.5.16-1.1~deb13u1+gpucluster1"
	tests := []struct {
		name    string
		query   string
		want    []string
		install bool
		err     string
	}{
		{"at the version: query only", "libmunge2\tii \t" + b + "\nmunge\tii \t" + b + "\n", nil, false, ""},
		{"upgrade", "libmunge2\tii \t" + a + "\nmunge\tii \t" + a + "\n", []string{"libmunge2", "munge"}, true, ""},
		{"missing", "libmunge2\tii \t" + b + "\n", []string{"munge"}, true, ""},
		{"downgrade refused before apt", "libmunge2\tii \t" + b + "\nmunge\tii \t" + b + "1\n", nil, false, "older than the installed version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := []transporttest.Reply{{Stdout: tt.query}}
			if tt.install {
				replies = append(replies, transporttest.Reply{})
			}
			f := &transporttest.Fake{T: t, Replies: replies}
			got, err := Pin(context.Background(), f, b, "munge", "libmunge2")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrDowngrade) {
					t.Fatalf("Pin = %v, want an error saying %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changed %v, want %v", got, tt.want)
			}
			if len(f.Replies) != 0 {
				t.Errorf("%d scripts expected but not run", len(f.Replies))
			}
			if tt.install && !strings.Contains(f.Calls[1].Script, "'munge="+b+"' 'libmunge2="+b+"'") {
				t.Errorf("the install does not name both packages at %s:\n%s", b, f.Calls[1].Script)
			}
		})
	}
}
