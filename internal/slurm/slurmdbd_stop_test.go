package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// StopSlurmdbd clears the failed result a slurmdbd that died while stopping leaves (Slurm 26.05
// on forky: killed by its own SIGUSR1), and leaves a cleanly stopped unit alone.
func TestStopSlurmdbdClearsAFailedStop(t *testing.T) {
	for _, failed := range []bool{true, false} {
		root := t.TempDir()
		bin := filepath.Join(root, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		systemctl := "#!/bin/sh\necho \"$*\" >> \"$SANDBOX/calls\"\n[ \"$1\" != is-failed ] || [ -e \"$SANDBOX/failed\" ]\n"
		for name, content := range map[string]string{"systemctl": systemctl, "slurmdbd": "#!/bin/sh\n"} {
			if err := os.WriteFile(filepath.Join(bin, name), []byte(content), 0o755); err != nil { //nolint:gosec // G306: the stubs must be executable.
				t.Fatal(err)
			}
		}
		if failed {
			touch(t, filepath.Join(root, "failed"))
		}
		shell := transporttest.Shell{Rewrite: func(script string) string {
			script = strings.ReplaceAll(script, transport.ScriptEnv, "export SANDBOX="+root+" PATH="+bin+":/usr/bin:/bin\n")
			return strings.ReplaceAll(script, SlurmdbdConfPath, root+"/slurmdbd.conf")
		}}
		if err := StopSlurmdbd(context.Background(), shell); err != nil {
			t.Fatal(err)
		}
		calls, err := os.ReadFile(filepath.Join(root, "calls"))
		if err != nil {
			t.Fatal(err)
		}
		want := "disable --now --quiet slurmdbd\nis-failed --quiet slurmdbd\n"
		if failed {
			want += "reset-failed slurmdbd\n"
		}
		if string(calls) != want {
			t.Errorf("failed=%v: systemctl ran\n%s\nwant\n%s", failed, calls, want)
		}
	}
}
