package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// enableStub is a systemctl that says $WORD to is-enabled (exiting 0 for the words systemctl
// counts as enabled), fails enable with $ENABLE_RC, and logs every call.
const enableStub = `#!/bin/sh
echo "$*" >> "$SANDBOX/calls"
case $1 in
is-enabled) echo "$WORD"; case $WORD in enabled|enabled-runtime|static|alias|indirect|generated) exit 0 ;; esac; exit 1 ;;
enable) exit "$ENABLE_RC" ;;
esac
`

// TestEnableText runs the text with a stub systemctl for each word is-enabled has: only
// "enabled" leaves systemctl enable out, and a failed enable fails the text.
func TestEnableText(t *testing.T) {
	tests := []struct {
		word, enableRC string
		wantCalls      string
		wantFail       bool
	}{
		{"enabled", "0", "is-enabled munge", false},
		{"enabled-runtime", "0", "is-enabled munge|enable --quiet munge", false},
		{"static", "0", "is-enabled munge|enable --quiet munge", false},
		{"generated", "0", "is-enabled munge|enable --quiet munge", false},
		{"linked", "0", "is-enabled munge|enable --quiet munge", false},
		{"disabled", "0", "is-enabled munge|enable --quiet munge", false},
		{"masked", "1", "is-enabled munge|enable --quiet munge", true},
		{"not-found", "1", "is-enabled munge|enable --quiet munge", true},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "systemctl"), []byte(enableStub), 0o755); err != nil { //nolint:gosec // G306: the stub must be executable.
				t.Fatal(err)
			}
			sh := transporttest.Shell{Rewrite: func(script string) string {
				return "export SANDBOX=" + root + " WORD=" + tt.word + " ENABLE_RC=" + tt.enableRC + " PATH=" + root + ":/usr/bin:/bin\n" + script
			}}
			_, err := sh.Sudo(context.Background(), EnableText("munge")+" || exit\necho after\n", nil)
			var exitErr *transport.ExitError
			if tt.wantFail != errors.As(err, &exitErr) {
				t.Errorf("err %v, want failure %v", err, tt.wantFail)
			}
			calls, _ := os.ReadFile(filepath.Join(root, "calls"))
			if got := strings.ReplaceAll(strings.TrimSpace(string(calls)), "\n", "|"); got != tt.wantCalls {
				t.Errorf("calls %q, want %q", got, tt.wantCalls)
			}
		})
	}
}
