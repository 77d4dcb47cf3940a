package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// EnvDescriptor names the environment variable that points tests at the descriptor.
const EnvDescriptor = "GPUCLUSTER_LAB"

// DefaultDescriptorPath is where `gpucluster-lab up` writes the default lab's descriptor.
const DefaultDescriptorPath = "/run/gpucluster-lab/lab.json"

// Roles of lab hosts.
const (
	RoleLogin = "login"
	RoleGPU   = "gpu"
)

// Lab is the descriptor of a running lab.
type Lab struct {
	AdminUser      string
	AdminKeyPath   string
	AdminPassword  string
	KnownHostsPath string
	Netns          string
	Bridge         string
	Subnet         string
	ClientAddress  string
	Image          string
	// Release is the Debian release of Image (see EnvRelease); descriptors
	// written before releases could be chosen have none and mean trixie.
	Release string `json:",omitempty"`
	// Instance is "" for the default lab (see EnvInstance).
	Instance string `json:",omitempty"`
	// Namespace is the machine directory (a tmpfs) bound into every host at
	// StandInNamespace: the one BeeGFS namespace the stand-in client mounts.
	Namespace string `json:",omitempty"`
	// Command is the gpucluster-lab binary that started the lab; Add and
	// Remove run it when called from another mount namespace (see delegate).
	Command string `json:",omitempty"`
	Hosts   []Host

	// descriptor is the file this lab was loaded from or written to, which
	// Add and Remove keep up to date.
	descriptor string
}

func (l *Lab) instance() Instance { return Instance{name: l.Instance} }

// ReleaseName is the Debian release the lab's hosts run.
func (l *Lab) ReleaseName() string {
	if l.Release == "" {
		return DefaultRelease
	}
	return l.Release
}

// Host is one lab container.
type Host struct {
	Name    string
	Address string
	Role    string
	// PID is the container's PID 1 as seen from the machine, as of the last
	// boot the lab saw: a host rebooted from inside has a new one (see currentInit).
	PID int
	// LauncherPID is the shell that runs systemd-nspawn for the container,
	// again after each reboot.
	LauncherPID int
	// Dir holds the host's overlay (upper, work, merged root) and boot log.
	Dir string
	// Cgroups are the cgroup directories created for this host's launcher.
	Cgroups []string
	// Disk is the host's own filesystem (see Disk).
	Disk *Disk `json:",omitempty"`
}

// Load reads a descriptor written by `gpucluster-lab up`.
func Load(path string) (*Lab, error) {
	data, err := os.ReadFile(path) //nolint:gosec // G304: reading the descriptor the operator names is the purpose.
	if err != nil {
		return nil, fmt.Errorf("read lab descriptor: %w", err)
	}
	var l Lab
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("parse lab descriptor %s: %w", path, err)
	}
	l.descriptor = path
	return &l, nil
}

// Save writes the descriptor atomically (readable by root only: it holds the
// sudo password); Add and Remove keep it up to date from then on.
func (l *Lab) Save(path string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab descriptor: %w", err)
	}
	if err := writeFileAtomic(path, append(data, '\n'), 0o600); err != nil {
		return err
	}
	l.descriptor = path
	return nil
}

// TB is the part of testing.TB that Require uses; *testing.T and *testing.B satisfy it, and
// the lab's own code does not link the testing package.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatalf(format string, args ...any)
}

// Require returns the running lab for an acceptance test. Without TF_ACC the
// test is skipped; with TF_ACC a missing or dead lab fails the test, so a
// forgotten `make lab-up` can never pass silently.
func Require(t TB) *Lab {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("lab test: set TF_ACC=1 and start the lab with `make lab-up` to run it")
	}
	path, err := DescriptorPath()
	if err != nil {
		t.Fatalf("TF_ACC is set but the lab is not available (%v)", err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatalf("TF_ACC is set but the lab is not available (%v); start it with `make lab-up`", err)
	}
	if err := l.checkAlive(); err != nil {
		t.Fatalf("TF_ACC is set but the lab is not running (%v); restart it with `make lab-down lab-up`", err)
	}
	return l
}

func (l *Lab) checkAlive() error {
	login, ok := l.lookup(LoginHost)
	if !ok {
		return errors.New("descriptor lists no login01")
	}
	if _, ok := currentInit(login); !ok {
		return fmt.Errorf("login01 (launcher PID %d) is not running", login.LauncherPID)
	}
	return nil
}

// Host returns the host with the given name, or the zero Host if there is none.
func (l *Lab) Host(name string) Host {
	h, _ := l.lookup(name)
	return h
}

func (l *Lab) lookup(name string) (Host, bool) {
	for _, h := range l.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// HostsWithRole returns the hosts of one role, in descriptor order.
func (l *Lab) HostsWithRole(role string) []Host {
	var hosts []Host
	for _, h := range l.Hosts {
		if h.Role == role {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// Exec runs script with /bin/sh as root directly inside host, bypassing SSH.
// A non-zero exit is returned as an error together with the captured output.
func (l *Lab) Exec(ctx context.Context, host, script string) (stdout, stderr string, err error) {
	h, ok := l.lookup(host)
	if !ok {
		return "", "", fmt.Errorf("lab has no host %q", host)
	}
	pid, ok := currentInit(h)
	if !ok {
		return "", "", fmt.Errorf("exec on %s: the host is not running", host)
	}
	var out, errOut bytes.Buffer
	cmd := nsenterCommand(ctx, pid, "/bin/sh", "-c", script)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("exec on %s: %w (stderr: %s)", host, err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), errOut.String(), nil
}

// Run runs argv as root inside host with the given streams and returns its exit status.
func (l *Lab) Run(ctx context.Context, host string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	h, ok := l.lookup(host)
	if !ok {
		return 0, fmt.Errorf("lab has no host %q", host)
	}
	pid, ok := currentInit(h)
	if !ok {
		return 0, fmt.Errorf("exec on %s: the host is not running", host)
	}
	cmd := nsenterCommand(ctx, pid, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitStatus(exitErr), nil
	}
	if err != nil {
		return 0, fmt.Errorf("exec on %s: %w", host, err)
	}
	return 0, nil
}

// exitStatus follows the shell convention 128+N for a command killed by signal N.
func exitStatus(err *exec.ExitError) int {
	if ws, ok := err.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return err.ExitCode()
}

func nsenterCommand(ctx context.Context, pid int, argv ...string) *exec.Cmd {
	args := append([]string{"--target", strconv.Itoa(pid), "--mount", "--uts", "--ipc", "--net", "--pid", "--"}, argv...)
	// Running the caller's command as root inside the host is the point of
	// the test seam; the caller is a test or the operator's exec command.
	return exec.CommandContext(ctx, "nsenter", args...) //nolint:gosec // G204: see above.
}

// isContainerInit reports whether pid is alive and PID 1 of a nested PID
// namespace, so a recycled PID of some unrelated process does not count.
func isContainerInit(pid int) bool {
	if pid <= 0 {
		return false
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			ids := strings.Fields(rest)
			return len(ids) > 1 && ids[len(ids)-1] == "1"
		}
	}
	return false
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}
