package beegfs

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The client's kernel module is built on the node by the beegfs-client service:
// its start builds the module when the package asks for it (ForceAutoBuildPath, which
// the package's postinst creates) or when none exists for the running kernel, as
// after a kernel upgrade; until then `mount -t beegfs` fails with "unknown
// filesystem type 'beegfs'".
const (
	ClientScript       = SbinDir + "/beegfs-client"
	ForceAutoBuildPath = "/var/lib/beegfs/client/force-auto-build"
	AutobuildConfPath  = ConfDir + "/beegfs-client-autobuild.conf"
	// moduleGlob is where the autobuild installs the module, one directory per kernel release.
	moduleGlob = "/lib/modules/*/updates/fs/beegfs_autobuild/beegfs.ko"
)

// ModuleState is the client's kernel module as the node has it.
type ModuleState struct {
	// Kernel is the running kernel's release (uname -r).
	Kernel string
	// Built are the kernel releases a module is built for.
	Built []string
	// ForceBuild reports the package's request for a build on the next start.
	ForceBuild bool
}

// NeedsBuild reports whether the next start of the service builds the module; a
// module not read (no kernel release) needs nothing.
func (m ModuleState) NeedsBuild() bool {
	return m.Kernel != "" && (m.ForceBuild || !slices.Contains(m.Built, m.Kernel))
}

// Problem says why the module must be built, "" when it need not.
func (m ModuleState) Problem() string {
	switch {
	case !m.NeedsBuild():
		return ""
	case m.ForceBuild:
		return "the client module awaits the rebuild the package asked for (" + ForceAutoBuildPath + ")"
	case len(m.Built) == 0:
		return "no client module is built for the running kernel " + m.Kernel
	default:
		return fmt.Sprintf("the client module is built for kernel %s, not for the running kernel %s (a kernel upgrade): apply rebuilds it",
			strings.Join(m.Built, ", "), m.Kernel)
	}
}

// moduleSection is the section of the host read that answers ClientModule.
const moduleSection = "kmod"

// moduleRead defines clientmodule, which prints the running release, one "built=RELEASE" per
// module (module_glob) and "force" (force_build).
//
//go:embed module_read.sh
var moduleRead string

func parseModule(s transport.Section) (ModuleState, error) {
	var m ModuleState
	for _, line := range s.Lines {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "kernel":
			m.Kernel = v
		case "built":
			m.Built = append(m.Built, v)
		case "force":
			m.ForceBuild = true
		}
	}
	if s.Status != 0 || m.Kernel == "" {
		return m, fmt.Errorf("read the client module: status %d, no kernel release", s.Status)
	}
	return m, nil
}

//go:embed build_module.sh
var buildModule string

// PrepareClientModule builds the client module with the service's own build
// (`beegfs-client rebuild`) when the node needs one, and with load also loads it, so
// that a mount works before the service has ever started. A mounted client is left
// alone: the caller restarts it once the build succeeded, so that a failed build (no
// kernel headers, buildEnabled=false) never costs the node its mount. The build's own
// output is the error when it fails.
func PrepareClientModule(ctx context.Context, ex transport.Executor, m ModuleState, load bool) error {
	script := transport.NewScript().Set("client", ClientScript).Set("conf", AutobuildConfPath)
	if m.NeedsBuild() {
		script.Text(buildModule)
	}
	if load {
		script.Text("modprobe beegfs")
	}
	if _, err := ex.Sudo(ctx, script.String(), nil); err != nil {
		return &ModuleError{Kernel: m.Kernel, Err: err}
	}
	if m.NeedsBuild() {
		transport.Changed(ctx, ex, "built the BeeGFS client module for kernel "+m.Kernel)
	}
	return nil
}

// ModuleError is a client module that could not be built or loaded.
type ModuleError struct {
	Kernel string
	Err    error
}

func (e *ModuleError) Error() string {
	return fmt.Sprintf("the BeeGFS client module for kernel %s cannot be built or loaded: %v", e.Kernel, e.Err)
}

func (e *ModuleError) Unwrap() error { return e.Err }

// ModuleBuildFailure finds the module build's own failure in a service's output: the
// kernel build directory missing (no headers) or modprobe finding no module.
func ModuleBuildFailure(output string) bool {
	return strings.Contains(output, "Linux kernel build directory not found") ||
		strings.Contains(output, "modprobe: FATAL: Module beegfs not found")
}

// MountCheckFailure is the client module's mount sanity check refusing a mount: one of
// the services it asks did not answer.
type MountCheckFailure struct {
	// Service is beegfs-mgmtd, beegfs-meta or beegfs-storage.
	Service string
	// Endpoint is the address and port the client could not reach, "" when the log
	// names none (the service answered but knew no such node).
	Endpoint string
	// Line is the module's own log line for the failed check.
	Line string
}

// sanityChecks map the module's line for each failed check to the service it asked.
var sanityChecks = []struct{ line, service string }{
	{"Waiting for management server initialization timed out", "beegfs-mgmtd"},
	{"Retrieval of root directory entry failed", "beegfs-meta"},
	{"Retrieval of storage server free space info failed", "beegfs-storage"},
}

// FindMountCheckFailure reads the client module's log lines (the kernel log, or the
// service's journal) for a failed mount sanity check; nil when there is none.
func FindMountCheckFailure(log string) *MountCheckFailure {
	if !strings.Contains(log, "Mount sanity check failed") {
		return nil
	}
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, c := range sanityChecks {
			if !strings.Contains(lines[i], c.line) {
				continue
			}
			f := &MountCheckFailure{Service: c.service, Line: strings.TrimSpace(lines[i])}
			f.Endpoint = connectFailedEndpoint(lines[:i], c.service)
			return f
		}
	}
	return &MountCheckFailure{}
}

// connectFailedEndpoint is the address of the last "Connect failed: SERVICE@ADDR" line.
func connectFailedEndpoint(lines []string, service string) string {
	marker := "Connect failed: " + service + "@"
	for i := len(lines) - 1; i >= 0; i-- {
		if _, after, ok := strings.Cut(lines[i], marker); ok && len(strings.Fields(after)) > 0 {
			return strings.Fields(after)[0]
		}
	}
	return ""
}
