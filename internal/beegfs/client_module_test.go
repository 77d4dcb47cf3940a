package beegfs

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

func TestModuleStateProblem(t *testing.T) {
	tests := map[string]struct {
		section transport.Section
		want    string
	}{
		"built for the running kernel": {transport.Section{Lines: []string{"kernel=6.1.0-30-amd64", "built=6.1.0-30-amd64"}}, ""},
		"fresh install":                {transport.Section{Lines: []string{"kernel=6.1.0-30-amd64", "force"}}, ForceAutoBuildPath},
		"never built":                  {transport.Section{Lines: []string{"kernel=6.1.0-30-amd64"}}, "no client module is built for the running kernel 6.1.0-30-amd64"},
		"kernel upgrade":               {transport.Section{Lines: []string{"kernel=6.1.0-31-amd64", "built=6.1.0-30-amd64"}}, "built for kernel 6.1.0-30-amd64, not for the running kernel 6.1.0-31-amd64"},
	}
	for name, tc := range tests {
		m, err := parseModule(tc.section)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := m.Problem()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || m.NeedsBuild() != (tc.want != "") {
			t.Errorf("%s: Problem() = %q, NeedsBuild %v; want %q", name, got, m.NeedsBuild(), tc.want)
		}
	}
	if _, err := parseModule(transport.Section{Status: 1}); err == nil {
		t.Error("a failed read is accepted")
	}
}

// The lines are the client module's, as the stand-in logs them after the real source.
func TestFindMountCheckFailure(t *testing.T) {
	log := `beegfs: mount(812): NodeConn (acquire stream): Connect failed: beegfs-storage@10.0.0.11:8003 (protocol: TCP)
beegfs: mount(812): NodeConn (acquire stream): Connect failed on all available routes: storage_gpu01 [beegfs-storage:1]
beegfs: mount(812): Mount sanity check: Retrieval of storage server free space info failed. Are the storage servers running and registered at the management daemon? Did you remove a storage target directory on a server? (Error: Communication error)
beegfs: mount(812): Mount sanity check failed. Canceling mount. (Log file may provide additional information. Check can be disabled with sysMountSanityCheckMS=0 in the config file.)`
	f := FindMountCheckFailure(log)
	if f == nil || f.Service != "beegfs-storage" || f.Endpoint != "10.0.0.11:8003" || !strings.Contains(f.Line, "Retrieval of storage server free space info failed") {
		t.Fatalf("FindMountCheckFailure = %+v", f)
	}
	mgmtd := "beegfs: mount(9): Mount sanity check: Waiting for management server initialization timed out. Are the server settings correct? Is the management daemon running?\nbeegfs: mount(9): Mount sanity check failed. Canceling mount."
	if f := FindMountCheckFailure(mgmtd); f == nil || f.Service != "beegfs-mgmtd" || f.Endpoint != "" {
		t.Errorf("management timeout = %+v", f)
	}
	if f := FindMountCheckFailure("mount: /home: unknown filesystem type 'beegfs'."); f != nil {
		t.Errorf("a missing module read as a sanity check: %+v", f)
	}
}

func TestReadHostScriptAsksForTheModule(t *testing.T) {
	script, err := readHostScript(HostQuery{ClientModule: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script, "sec "+moduleSection+" clientmodule") || !strings.Contains(script, moduleGlob) {
		t.Errorf("script does not read the module:\n%s", script)
	}
}
