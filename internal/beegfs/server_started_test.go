package beegfs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// serverHost answers server_started.sh's systemctl and journalctl as a host
// whose unit is in state and whose daemon logged journal.
func serverHost(state, journal string) transporttest.Shell {
	fakes := "systemctl() { case $3 in ExecMainPID) echo 42 ;; ActiveState) echo " + state + " ;; esac; }\n" +
		"journalctl() { [ \"$6\" = _PID=42 ] && printf '%s\\n' " + journal + "; }\n" +
		"sleep() { :; }\n"
	return transporttest.Shell{Rewrite: func(s string) string { return fakes + s }}
}

func TestConfirmServerStarted(t *testing.T) {
	ServerRegisterDeadline = time.Second
	t.Cleanup(func() { ServerRegisterDeadline = 30 * time.Second })
	refusal := "Error: Found uninitialized storage target directory and initialization has been disabled: /data/other"
	tests := []struct {
		name, state, journal string
		wantErr              string
		exited               bool
	}{
		{"registered", "active", "'Main >> Version: 8.4.0' 'Register node >> Node registration successful.'", "", false},
		{"refused", "failed", "'Started beegfs-storage.service.' '' '" + refusal + "' '' '[BeeGFS Storage Node Version: 8.4.0'", refusal, true},
		{"no auth", "failed", "'' 'Unrecoverable error: Unable to open auth file: /etc/beegfs/conn.auth (SysErr: No such file or directory)'",
			"Unrecoverable error: Unable to open auth file: /etc/beegfs/conn.auth", true},
		{"waiting", "active", "'Main >> Waiting for beegfs-mgmtd@login01:8008...'", "did not register with the management service within 1s; its last line: Main >> Waiting for beegfs-mgmtd@login01:8008...", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ConfirmServerStarted(context.Background(), serverHost(tt.state, tt.journal), ServiceStorage)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var started *ServerStartError
			if !errors.As(err, &started) || started.Exited != tt.exited || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want a ServerStartError (exited %v) containing %q", err, tt.exited, tt.wantErr)
			}
		})
	}
}
