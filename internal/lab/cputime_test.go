package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A host's CPU comes from the first of its cgroups that counts it: cgroup v2's usage_usec, or
// v1's cpuacct.usage in nanoseconds; a v2 directory without usage_usec is passed over.
func TestHostCPUTime(t *testing.T) {
	dir := t.TempDir()
	cgroup := func(name, file, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if file != "" {
			if err := os.WriteFile(filepath.Join(p, file), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	v2 := cgroup("v2", "cpu.stat", "usage_usec 1500250\nuser_usec 1000000\nsystem_usec 500250\n")
	v1 := cgroup("v1", "cpuacct.usage", "2500000123\n")
	bare := cgroup("bare", "cpu.stat", "nr_periods 0\n")
	empty := cgroup("empty", "", "")
	broken := cgroup("broken", "cpu.stat", "usage_usec many\n")
	for name, tc := range map[string]struct {
		cgroups []string
		want    time.Duration
		wantErr string
	}{
		"v2":                   {cgroups: []string{v2}, want: 1500250 * time.Microsecond},
		"v1":                   {cgroups: []string{v1}, want: 2500000123},
		"v2 without the count": {cgroups: []string{bare, empty, v1}, want: 2500000123},
		"none":                 {cgroups: []string{bare, empty}, wantErr: "no CPU counter for gpu01"},
		"unparsable":           {cgroups: []string{broken, v1}, wantErr: "many"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Host{Name: "gpu01", Cgroups: tc.cgroups}.CPUTime()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
