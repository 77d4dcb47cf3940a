package beegfs

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

func TestSetupCommands(t *testing.T) {
	v8, err := ParseRelease("8.4.0")
	if err != nil {
		t.Fatal(err)
	}
	v7, err := ParseRelease("7.4.6")
	if err != nil {
		t.Fatal(err)
	}
	build := map[string]func() (string, error){
		"storage": func() (string, error) {
			return SetupStorageCommand(StorageSetup{Path: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"})
		},
		"meta":     func() (string, error) { return SetupMetaCommand("/beegfs/meta", 1, "10.0.0.10") },
		"client":   func() (string, error) { return SetupClientCommand("login01") },
		"mgmtd 8":  func() (string, error) { return MgmtdInitCommand(v8, "") },
		"mgmtd 7":  func() (string, error) { return MgmtdInitCommand(v7, "/beegfs/mgmtd") },
		"ipv6 mgm": func() (string, error) { return SetupClientCommand("fd00::10") },
	}
	want := map[string]string{
		"storage":  "/opt/beegfs/sbin/beegfs-setup-storage -p /data/beegfs-storage -s 2 -i 201 -m 10.0.0.10",
		"meta":     "/opt/beegfs/sbin/beegfs-setup-meta -p /beegfs/meta -s 1 -m 10.0.0.10",
		"client":   "/opt/beegfs/sbin/beegfs-setup-client -m login01",
		"mgmtd 8":  "/opt/beegfs/sbin/beegfs-mgmtd --init",
		"mgmtd 7":  "/opt/beegfs/sbin/beegfs-setup-mgmtd -p /beegfs/mgmtd",
		"ipv6 mgm": "/opt/beegfs/sbin/beegfs-setup-client -m fd00::10",
	}
	for name, f := range build {
		got, err := f()
		if err != nil || got != want[name] {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want[name])
		}
	}
}

func TestSetupCommandsRefuse(t *testing.T) {
	tests := map[string]func() (string, error){
		"storage target 0": func() (string, error) {
			return SetupStorageCommand(StorageSetup{Path: "/data/beegfs-storage", NodeNumID: 2, TargetID: 0, Mgmtd: "10.0.0.10"})
		},
		"storage node too big": func() (string, error) {
			return SetupStorageCommand(StorageSetup{Path: "/data/beegfs-storage", NodeNumID: 65536, TargetID: 201, Mgmtd: "10.0.0.10"})
		},
		"storage path with comma": func() (string, error) {
			return SetupStorageCommand(StorageSetup{Path: "/data/a,b", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"})
		},
		"storage path with & (sed's matched text)": func() (string, error) {
			return SetupStorageCommand(StorageSetup{Path: "/data/a&b", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"})
		},
		"meta path with % (a systemd specifier)": func() (string, error) { return SetupMetaCommand("/beegfs/%h", 1, "10.0.0.10") },
		"mgmtd host with a slash breaks the script's sed": func() (string, error) {
			return SetupClientCommand("10.0.0.10/24")
		},
		"mgmtd host injection": func() (string, error) { return SetupClientCommand("x; rm -rf /") },
		"empty mgmtd host":     func() (string, error) { return SetupMetaCommand("/beegfs/meta", 1, "") },
		"meta relative path":   func() (string, error) { return SetupMetaCommand("beegfs/meta", 1, "10.0.0.10") },
		"mgmtd 7 without dir":  func() (string, error) { return MgmtdInitCommand(Release{Major: 7}, "") },
	}
	for name, f := range tests {
		if got, err := f(); err == nil {
			t.Errorf("%s: accepted as %q", name, got)
		}
	}
}

func exitErr(status int, stderr string) error {
	return &transport.ExitError{Host: "gpu02", Status: status, Stderr: stderr}
}

func TestClassifySetup(t *testing.T) {
	transportFailure := errors.New("ssh: handshake failed")
	tests := []struct {
		name    string
		res     transport.Result
		err     error
		want    Outcome
		wantErr string
	}{
		{"success", transport.Result{Stdout: []byte("All done.\n")}, nil, Initialised, ""},
		{"setup-storage on a used directory",
			transport.Result{Stdout: []byte("Preparing storage target directory: /data/beegfs-storage\n * ERROR: Storage target directory is not empty. Initialization of non-empty directories can lead to data loss or orphaned data. ('-f' disables this check.)\n"), Status: 1},
			exitErr(1, ""), AlreadyInitialised, ""},
		{"setup-meta on a used directory",
			transport.Result{Stdout: []byte(" * ERROR: Storage directory is not empty. Initialization of non-empty directories can lead to data loss or orphaned data. ('-f' disables this check.)\n"), Status: 1},
			exitErr(1, ""), AlreadyInitialised, ""},
		{"mgmtd --init with an existing database file",
			transport.Result{Stderr: []byte("Creating database file \"/beegfs/mgmtd/mgmtd.sqlite\" failed: File exists (os error 17)\n"), Status: 1},
			exitErr(1, "Creating database file \"/beegfs/mgmtd/mgmtd.sqlite\" failed: File exists (os error 17)\n"), AlreadyInitialised, ""},
		{"mgmtd --init on a current schema",
			transport.Result{Stderr: []byte("Creating database schema failed: Database schema is up to date with version 5\n"), Status: 1},
			exitErr(1, "Creating database schema failed: Database schema is up to date with version 5\n"), AlreadyInitialised, ""},
		{"config file missing: the error line from stdout is quoted",
			transport.Result{Stdout: []byte("Updating config file: /etc/beegfs/beegfs-storage.conf\n * ERROR: Config file not found: /etc/beegfs/beegfs-storage.conf\n"), Status: 1},
			exitErr(1, ""), Failed, "status 1: * ERROR: Config file not found: /etc/beegfs/beegfs-storage.conf"},
		{"tool missing",
			transport.Result{Stderr: []byte("sh: 1: /opt/beegfs/sbin/beegfs-setup-storage: not found\n"), Status: 127},
			exitErr(127, "sh: 1: /opt/beegfs/sbin/beegfs-setup-storage: not found\n"), Failed, "not found"},
		{"not-empty wording under another status is not trusted",
			transport.Result{Stdout: []byte("directory is not empty\n"), Status: 2},
			exitErr(2, ""), Failed, "status 2"},
		{"transport failure", transport.Result{}, transportFailure, Failed, "handshake failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClassifySetup(SetupStorageTool, tt.res, tt.err)
			if got != tt.want {
				t.Errorf("outcome = %v, want %v", got, tt.want)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestClassifySetupThroughExecutor runs the built command through a shell
// Executor, with a script standing in for beegfs-setup-storage that answers
// as the real one does for a second initialisation (stdout, exit 1), so the
// plumbing from command to Outcome is exercised end to end.
func TestClassifySetupThroughExecutor(t *testing.T) {
	sbin := t.TempDir()
	standIn := "#!/bin/sh\n" +
		"echo 'Preparing storage target directory: '\"$2\"\n" +
		"echo \" * ERROR: Storage target directory is not empty. Initialization of non-empty directories can lead to data loss or orphaned data. ('-f' disables this check.)\"\n" +
		"exit 1\n"
	if err := os.WriteFile(filepath.Join(sbin, "beegfs-setup-storage"), []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, err := SetupStorageCommand(StorageSetup{Path: "/data/beegfs-storage", NodeNumID: 2, TargetID: 201, Mgmtd: "10.0.0.10"})
	if err != nil {
		t.Fatal(err)
	}
	var exec transport.Executor = transporttest.Shell{Rewrite: func(s string) string {
		return strings.ReplaceAll(s, SbinDir, sbin)
	}}
	res, runErr := exec.Sudo(context.Background(), cmd, nil)
	got, err := ClassifySetup(SetupStorageTool, res, runErr)
	if got != AlreadyInitialised || err != nil {
		t.Errorf("got %v, %v; want already initialised", got, err)
	}
}
