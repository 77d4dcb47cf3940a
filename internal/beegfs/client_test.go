package beegfs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestClientSettingsValidate(t *testing.T) {
	good := ClientSettings{MountPath: "/home", Mgmtd: "10.0.0.10", FSType: "beegfs"}
	cases := map[string]struct {
		edit func(*ClientSettings)
		want string
	}{
		"guide":             {func(*ClientSettings) {}, ""},
		"lab stand-in type": {func(s *ClientSettings) { s.FSType = "tmpfs" }, ""},
		"root":              {func(s *ClientSettings) { s.MountPath = "/" }, "hide the operating system"},
		"relative":          {func(s *ClientSettings) { s.MountPath = "home" }, "mount path"},
		"blank in path":     {func(s *ClientSettings) { s.MountPath = "/my home" }, "mount path"},
		"mgmtd injection":   {func(s *ClientSettings) { s.Mgmtd = "a;reboot" }, "not an address"},
		"type injection":    {func(s *ClientSettings) { s.FSType = "beegfs x" }, "not a type name"},
		"empty type":        {func(s *ClientSettings) { s.FSType = "" }, "not a type name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := good
			tc.edit(&s)
			err := s.Validate()
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func clientConf(t *testing.T) FileState {
	t.Helper()
	content, err := os.ReadFile("testdata/beegfs-client.conf")
	if err != nil {
		t.Fatal(err)
	}
	return FileState{Exists: true, Content: content}
}

func mountedState(t *testing.T) ClientState {
	t.Helper()
	conf := clientConf(t)
	c, err := ParseConf(conf.Content)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(KeyMgmtdHost, "10.0.0.10"); err != nil {
		t.Fatal(err)
	}
	return ClientState{
		Version:    "8.4.0",
		Service:    ServiceState{Active: "active", Enabled: "enabled"},
		ClientConf: FileState{Exists: true, Content: c.Bytes()},
		MountsConf: FileState{Exists: true, Content: []byte("/home /etc/beegfs/beegfs-client.conf\n")},
		ConnAuth:   true,
		Mount:      Mount{Path: "/home", Target: "/home", Source: "beegfs_nodev", FSType: "beegfs"},
	}
}

func TestClientProblems(t *testing.T) {
	set := ClientSettings{MountPath: "/home", Mgmtd: "10.0.0.10", FSType: "beegfs"}
	cases := map[string]struct {
		edit func(*ClientState)
		want []string
	}{
		"in sync":        {func(*ClientState) {}, nil},
		"shipped mounts": {func(s *ClientState) { s.MountsConf.Content = []byte("/mnt/beegfs /etc/beegfs/beegfs-client.conf\n") }, []string{"beegfs-mounts.conf does not hold \"/home "}},
		"no mounts file": {func(s *ClientState) { s.MountsConf = FileState{} }, []string{"beegfs-mounts.conf does not hold"}},
		"disabled":       {func(s *ClientState) { s.Service.Enabled = "disabled" }, []string{"beegfs-client is disabled, not enabled"}},
		// The guide's "home directories are missing on one node": findmnt
		// finds /home on the root filesystem.
		"unmounted": {func(s *ClientState) {
			s.Service.Active = "inactive"
			s.Mount = Mount{Path: "/home", Target: "/", FSType: "ext4"}
		}, []string{"beegfs-client is inactive, not active", "/home is not mounted (the local directory on / is visible)"}},
		"other filesystem": {func(s *ClientState) { s.Mount.FSType = "nfs4" }, []string{"/home is mounted as nfs4, not beegfs"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := mountedState(t)
			tc.edit(&st)
			got := st.Problems(set)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], strings.TrimSuffix(tc.want[i], "\"")) && !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestClientMgmtdHostAndStagingConf(t *testing.T) {
	fresh := ClientState{ClientConf: clientConf(t)}
	if got := fresh.MgmtdHost(); got != "" {
		t.Fatalf("shipped config: sysMgmtdHost %q, want unset", got)
	}
	conf, err := fresh.StagingConf("10.0.0.10")
	if err != nil {
		t.Fatal(err)
	}
	staged := ClientState{ClientConf: FileState{Exists: true, Content: conf}}
	if got := staged.MgmtdHost(); got != "10.0.0.10" {
		t.Fatalf("staging config names %q, want 10.0.0.10", got)
	}
	// Everything but the one key stays, so the staging mount is the client's own.
	if strings.Count(string(conf), "\n") != strings.Count(string(fresh.ClientConf.Content), "\n") {
		t.Error("the staging config gained or lost lines")
	}
	same, err := staged.StagingConf("10.0.0.10")
	if err != nil || same != nil {
		t.Fatalf("a config naming mgmtd already: got %q, %v; want the node's own file (nil)", same, err)
	}
	if _, err := (ClientState{}).StagingConf("10.0.0.10"); err == nil {
		t.Error("a missing beegfs-client.conf was accepted")
	}
}

func TestCheckConnAuth(t *testing.T) {
	st := mountedState(t)
	if err := st.CheckConnAuth(); err != nil {
		t.Fatalf("secret present: %v", err)
	}
	st.ConnAuth = false
	if err := st.CheckConnAuth(); err == nil || !strings.Contains(err.Error(), ConnAuthPath) {
		t.Fatalf("secret missing: got %v", err)
	}
	c, _ := ParseConf(st.ClientConf.Content)
	_ = c.Set("connDisableAuthentication", "true")
	st.ClientConf.Content = c.Bytes()
	if err := st.CheckConnAuth(); err != nil {
		t.Fatalf("authentication disabled: %v", err)
	}
}

func TestImportedSettings(t *testing.T) {
	st := mountedState(t)
	st.Mount.FSType = "tmpfs"
	set, err := st.ImportedSettings()
	if err != nil {
		t.Fatal(err)
	}
	if want := (ClientSettings{MountPath: "/home", Mgmtd: "10.0.0.10", FSType: "tmpfs"}); set != want {
		t.Fatalf("imported %+v, want %+v", set, want)
	}
	st.MountsConf.Content = []byte("# comment\n\n/shared /etc/beegfs/beegfs-client.conf\n")
	st.Mount = Mount{Target: "/", FSType: "ext4"}
	if set, err = st.ImportedSettings(); err != nil || set.MountPath != "/shared" || set.FSType != DefaultClientFSType {
		t.Fatalf("unmounted client: %+v, %v", set, err)
	}
	st.Service = ServiceState{Active: "inactive", Enabled: "disabled"}
	if _, err := st.ImportedSettings(); err == nil {
		t.Error("a client that was never set up was imported")
	}
}

func TestStartClient(t *testing.T) {
	running := ServiceState{Active: "active", Enabled: "enabled"}
	cases := map[string]struct {
		svc            ServiceState
		changed, mount bool
		want           string
	}{
		"in sync":            {running, false, true, ""},
		"config changed":     {running, true, true, "restart"},
		"unmounted by hand":  {running, false, false, "restart"},
		"stopped":            {ServiceState{Active: "inactive", Enabled: "enabled"}, false, false, "enable --now"},
		"disabled":           {ServiceState{Active: "active", Enabled: "disabled"}, false, true, "enable --now"},
		"fresh with changes": {ServiceState{Active: "inactive", Enabled: "disabled"}, true, false, "enable --now"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &transporttest.Fake{T: t}
			if tc.want != "" {
				f.Replies = []transporttest.Reply{{}}
			}
			if err := StartClient(context.Background(), f, ClientState{Service: tc.svc}, tc.changed, tc.mount); err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && !strings.Contains(f.Calls[0].Script, tc.want) {
				t.Errorf("ran %q, want %q", f.Calls[0].Script, tc.want)
			}
		})
	}
}

func TestWriteMountsConf(t *testing.T) {
	w := &recordingWriter{}
	shipped := FileState{Exists: true, Content: []byte("/mnt/beegfs /etc/beegfs/beegfs-client.conf\n")}
	changed, err := WriteMountsConf(context.Background(), w, "/home", shipped)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if got := string(w.files[0].Content); got != "/home /etc/beegfs/beegfs-client.conf\n" {
		t.Errorf("wrote %q", got)
	}
	if w.files[0].ExpectSHA256 != shipped.SHA256() {
		t.Error("the write is not conditional on the content read")
	}
	if changed, _ := WriteMountsConf(context.Background(), w, "/home", FileState{Exists: true, Content: w.files[0].Content}); changed || len(w.files) != 1 {
		t.Error("an unchanged file was written again")
	}
}

// A staging script that fails before its mount namespace leaves no staging
// directory behind in /run, whichever step failed.
// The findmnt read runs under /bin/sh against fake findmnts, the way a batched script runs it,
// and is read back from its sections.
func TestMountedFSTypeRead(t *testing.T) {
	read, err := MountedFSTypeRead("/home")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MountedFSTypeRead("home"); err == nil {
		t.Error("a relative mount path was accepted")
	}
	tests := []struct {
		name, findmnt, want, wantErr string
	}{
		{"beegfs stacked on the local /home", "printf 'ext4\\nbeegfs\\n'", "beegfs", ""},
		{"nothing mounted", "exit 1", "", ""},
		{"findmnt fails", "echo broken >&2; exit 4", "", "exited with status 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "findmnt"), []byte("#!/bin/sh\n"+tt.findmnt+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			script := transport.SectionFuncs + "PATH=" + bin + ":$PATH\n" + read
			out, err := exec.Command("/bin/sh", "-c", script).Output()
			if err != nil {
				t.Fatal(err)
			}
			sections, err := transport.ParseSections(out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MountedFSTypeFrom(sections, "/home")
			if got != tt.want || (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("got %q, %v; want %q, error containing %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := MountedFSTypeFrom(map[string]transport.Section{}, "/home"); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a missing section gave %v, want no answer", err)
	}
}
