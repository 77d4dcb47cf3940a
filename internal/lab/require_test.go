package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recordingTB captures how Require ends a test without ending the real one.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	message         string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skip(args ...any) {
	r.skipped, r.message = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed, r.message = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func runRequire(tb *recordingTB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(tb)
	}()
	<-done
}

func TestRequire(t *testing.T) {
	dir := t.TempDir()
	notRunning := filepath.Join(dir, "stale.json")
	stale := &Lab{Hosts: []Host{{Name: LoginHost, PID: os.Getpid()}}}
	if err := stale.Save(notRunning); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		tfAcc, path string
		wantSkip    bool
		wantFail    bool
		wantMessage string
	}{
		{name: "no TF_ACC skips", tfAcc: "", path: notRunning, wantSkip: true, wantMessage: "make lab-up"},
		{name: "missing descriptor fails", tfAcc: "1", path: filepath.Join(dir, "missing.json"), wantFail: true, wantMessage: "make lab-up"},
		{name: "stopped lab fails", tfAcc: "1", path: notRunning, wantFail: true, wantMessage: "not running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TF_ACC", tt.tfAcc)
			t.Setenv(EnvDescriptor, tt.path)
			tb := &recordingTB{}
			runRequire(tb)
			if tb.skipped != tt.wantSkip || tb.failed != tt.wantFail {
				t.Fatalf("skipped=%v failed=%v, want skipped=%v failed=%v (%s)", tb.skipped, tb.failed, tt.wantSkip, tt.wantFail, tb.message)
			}
			if !strings.Contains(tb.message, tt.wantMessage) {
				t.Errorf("message %q does not mention %q", tb.message, tt.wantMessage)
			}
		})
	}
}
