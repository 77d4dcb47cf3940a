package lab

import (
	"bufio"
	"context"
	"crypto/md5" //nolint:gosec // G501: the stand-in GPUs' UUIDs, as md5sum made them; no secret.
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// StateRoot holds each host's overlay while the default lab runs; other
	// instances use StateRoot-<instance>, and likewise for LogRoot.
	StateRoot      = "/var/lib/gpucluster-lab"
	LogRoot        = "/var/log/gpucluster-lab"
	knownHostsFile = "known_hosts"
	bootTimeout    = 3 * time.Minute
	pollInterval   = 200 * time.Millisecond
)

// Up starts lab instance inst, from the image of release, with login01 and
// gpuServers GPU servers and writes the descriptor to path, known_hosts next
// to it. It refuses to start the same instance twice: run Down first.
func Up(ctx context.Context, inst Instance, release, path string, gpuServers int, log io.Writer) (*Lab, error) {
	planned, err := Plan(gpuServers)
	if err != nil {
		return nil, err
	}
	if err := requireDependencies(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("a lab is already up (%s): run `gpucluster-lab down` first", path)
	}
	if netnsExists(inst.Netns()) {
		return nil, fmt.Errorf("network namespace %s exists without a descriptor (leftover of a failed run): run `gpucluster-lab down`", inst.Netns())
	}
	img := CurrentImage(release)
	// Held until the hosts are up, so that an image build's prune cannot take their layer.
	unlock, err := lockCache(CacheRoot, syscall.LOCK_SH)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		defer unlock()
	}
	if !img.Built() {
		return nil, fmt.Errorf("lab image %s is not built: run `%s=%s gpucluster-lab image`", img.Name, EnvRelease, release)
	}
	password, err := img.adminPassword()
	if err != nil {
		return nil, err
	}
	l := &Lab{
		AdminUser:      adminUser,
		AdminKeyPath:   img.AdminKeyPath(),
		AdminPassword:  password,
		KnownHostsPath: filepath.Join(filepath.Dir(path), knownHostsFile),
		Netns:          inst.Netns(),
		Bridge:         inst.Bridge(),
		Subnet:         Subnet,
		ClientAddress:  ClientAddress,
		Image:          img.Name,
		Release:        release,
		Instance:       inst.Name(),
		descriptor:     path,
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("create descriptor directory: %w", err)
	}
	if err := createNetwork(ctx, l.Netns, l.Bridge); err != nil {
		return nil, errors.Join(err, l.teardown(log))
	}
	l.Namespace = namespaceDir(path)
	if err := mountNamespace(l.Namespace); err != nil {
		return nil, errors.Join(err, l.teardown(log))
	}
	if err := l.startHosts(ctx, path, img, planned, planned, log); err != nil {
		return nil, errors.Join(err, l.teardown(log), removeDescriptor(path))
	}
	return l, nil
}

// Add starts GPU server name in the running lab and records it in the
// descriptor the lab was loaded from, so that l, the descriptor, known_hosts
// and every host's /etc/hosts all describe the grown lab. The new host
// starts bare, like the hosts `up` starts.
func (l *Lab) Add(ctx context.Context, name string, log io.Writer) (Host, error) {
	if l.descriptor == "" {
		return Host{}, errors.New("lab was not loaded from a descriptor")
	}
	h, err := PlanHost(name)
	if err != nil {
		return Host{}, err
	}
	if _, exists := l.lookup(name); exists {
		return Host{}, fmt.Errorf("lab already has %s", name)
	}
	if handed, err := l.handOff(ctx, "add", name, log); handed {
		if err != nil {
			return Host{}, err
		}
		return l.Host(name), nil
	}
	img := CurrentImage(l.ReleaseName())
	if img.Name != l.Image {
		return Host{}, fmt.Errorf("running lab uses image %s but the recipe now builds %s: restart the lab", l.Image, img.Name)
	}
	all := append(l.planned(), h)
	if err := writeHostsFiles(l.Hosts, all); err != nil {
		return Host{}, err
	}
	if err := l.startHosts(ctx, l.descriptor, img, all, []PlannedHost{h}, log); err != nil {
		// Whatever was started must stay in the descriptor so that `down` removes it.
		return Host{}, errors.Join(err, l.Save(l.descriptor))
	}
	return l.Host(name), nil
}

// writeHostsFiles rewrites /etc/hosts of the running hosts for the lab all.
// It writes in place rather than renaming, through the host's overlay, as
// an admin editing the file would.
func writeHostsFiles(hosts []Host, all []PlannedHost) error {
	for _, h := range hosts {
		// /etc/hosts is world-readable on every system.
		if err := os.WriteFile(filepath.Join(h.root(), "etc", "hosts"), []byte(RenderHostsFile(all)), 0o644); err != nil { //nolint:gosec // G306: see above.
			return fmt.Errorf("update /etc/hosts of %s: %w", h.Name, err)
		}
	}
	return nil
}

func (l *Lab) planned() []PlannedHost {
	hosts := make([]PlannedHost, 0, len(l.Hosts))
	for _, h := range l.Hosts {
		hosts = append(hosts, PlannedHost{Name: h.Name, Address: h.Address, Role: h.Role})
	}
	return hosts
}

// startHosts boots the hosts in start (all of them at once) and waits until
// they are usable. all is the complete lab, for /etc/hosts. The descriptor
// is saved as soon as processes exist, so `down` can always clean up.
func (l *Lab) startHosts(ctx context.Context, descriptor string, img Image, all, start []PlannedHost, log io.Writer) error {
	began := time.Now()
	if err := raiseInotifyLimit(); err != nil {
		return err
	}
	for _, p := range start {
		h, err := prepareHost(ctx, l.instance(), img, p, all)
		l.Hosts = append(l.Hosts, h)
		if err != nil {
			return err
		}
	}
	for i := len(l.Hosts) - len(start); i < len(l.Hosts); i++ {
		if err := l.launch(&l.Hosts[i]); err != nil {
			return err
		}
	}
	if err := l.Save(descriptor); err != nil {
		return err
	}
	for i := len(l.Hosts) - len(start); i < len(l.Hosts); i++ {
		pid, err := l.waitForInit(ctx, l.Hosts[i])
		if err != nil {
			return err
		}
		l.Hosts[i].PID = pid
	}
	if err := l.Save(descriptor); err != nil {
		return err
	}
	for _, p := range start {
		if err := l.waitReady(ctx, p); err != nil {
			return err
		}
	}
	if err := l.writeKnownHosts(); err != nil {
		return err
	}
	if err := writeNetnsHosts(l.instance(), all); err != nil {
		return err
	}
	logf(log, "%d host(s) up in %.1fs\n", len(start), time.Since(began).Seconds())
	return nil
}

func createNetwork(ctx context.Context, netns, bridge string) error {
	steps := [][]string{
		{"netns", "add", netns},
		{"-n", netns, "link", "set", "lo", "up"},
		{"-n", netns, "link", "add", bridge, "type", "bridge"},
		{"-n", netns, "addr", "add", ClientAddress + "/24", "dev", bridge},
		{"-n", netns, "link", "set", bridge, "up"},
	}
	for _, args := range steps {
		if _, err := output(ctx, "ip", args...); err != nil {
			return fmt.Errorf("create lab network: %w", err)
		}
	}
	return nil
}

func netnsExists(netns string) bool {
	_, err := os.Stat(filepath.Join("/run/netns", netns))
	return err == nil
}

// prepareHost mounts the host's overlay and writes everything host-specific
// into it before boot. The returned Host is valid even on error, for cleanup.
func prepareHost(ctx context.Context, inst Instance, img Image, p PlannedHost, all []PlannedHost) (Host, error) {
	h := Host{Name: p.Name, Address: p.Address, Role: p.Role, Dir: filepath.Join(inst.stateRoot(), p.Name)}
	for _, sub := range []string{"upper", "work", "root"} {
		// upper becomes the container's "/", which its users must be able to enter.
		if err := os.MkdirAll(filepath.Join(h.Dir, sub), 0o755); err != nil { //nolint:gosec // G301: see above.
			return h, fmt.Errorf("create state of %s: %w", h.Name, err)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", img.LowerDirs(), filepath.Join(h.Dir, "upper"), filepath.Join(h.Dir, "work"))
	if err := syscall.Mount("overlay", h.root(), "overlay", 0, opts); err != nil {
		return h, fmt.Errorf("mount overlay for %s: %w", h.Name, err)
	}
	files := map[string]string{
		"etc/hostname":                         h.Name + "\n",
		"etc/hosts":                            RenderHostsFile(all),
		"etc/systemd/network/10-host0.network": RenderNetworkFile(h.Address),
	}
	if h.Role == RoleLogin {
		files[strings.TrimPrefix(StandInLicensePath, "/")] = standInLicense(time.Now())
	}
	if h.Role == RoleGPU {
		files["etc/ssh/sshd_config.d/10-lab-login-only.conf"] = "# Lab GPU servers are reachable only through login01, as on the real cluster.\nAllowUsers *@" + subnetPrefix + strconv.Itoa(firstHostByte) + "\n"
		files["etc/tmpfiles.d/lab-nvidia.conf"] = fakeGPUDevices()
		files["etc/lab-nvidia-uuids"] = fakeGPUUUIDs(h.Name)
	}
	for rel, content := range files {
		// System configuration the container's users and daemons must read.
		if err := os.WriteFile(filepath.Join(h.root(), rel), []byte(content), 0o644); err != nil { //nolint:gosec // G306: see above.
			return h, fmt.Errorf("write %s of %s: %w", rel, h.Name, err)
		}
	}
	if h.Role == RoleGPU {
		// A command in /usr/bin that every user runs.
		if err := os.WriteFile(filepath.Join(h.root(), "usr/bin/nvidia-smi"), nvidiaSMIStandIn, 0o755); err != nil { //nolint:gosec // G306: see above.
			return h, fmt.Errorf("install nvidia-smi stand-in on %s: %w", h.Name, err)
		}
	}
	if _, err := output(ctx, "ssh-keygen", "-A", "-f", h.root()); err != nil {
		return h, fmt.Errorf("generate host keys of %s: %w", h.Name, err)
	}
	if err := createDisk(ctx, &h); err != nil {
		return h, err
	}
	return h, writeDiskConfig(h)
}

// fakeGPUDevices renders tmpfiles.d lines for character devices with
// /dev/null's numbers, as Slurm's test suite fakes GPUs.
func fakeGPUDevices() string {
	var b strings.Builder
	b.WriteString("# Lab stand-ins for GPUs: /dev/null's device numbers under NVIDIA names.\n")
	for i := 0; i < GPUsPerServer; i++ {
		fmt.Fprintf(&b, "c! /dev/nvidia%d 0666 root root - 1:3\n", i)
	}
	return b.String()
}

// fakeGPUUUIDs renders "INDEX UUID" per stand-in GPU for the nvidia-smi stand-in, each UUID
// derived from the host's name and the index, so it stays the same across the lab's restarts.
func fakeGPUUUIDs(host string) string {
	var b strings.Builder
	for i := 0; i < GPUsPerServer; i++ {
		sum := md5.Sum([]byte(host + "-" + strconv.Itoa(i))) //nolint:gosec // G401: see the import.
		x := hex.EncodeToString(sum[:])
		fmt.Fprintf(&b, "%d GPU-%s-%s-%s-%s-%s\n", i, x[:8], x[8:12], x[12:16], x[16:20], x[20:32])
	}
	return b.String()
}

func (h Host) root() string { return filepath.Join(h.Dir, "root") }

// logPath is outside Dir so that a failed start's log survives the cleanup.
func (l *Lab) logPath(host string) string { return l.instance().bootLogPath(host) }

// launch starts systemd-nspawn for h inside the lab netns, detached, from a
// cgroup of its own. The shell joins the cgroups before exec so that nspawn
// never runs in the shared parent cgroup.
func (l *Lab) launch(h *Host) error {
	dirs, err := cgroupDirsFor(l.instance().cgroupLeaf(h.Name))
	if err != nil {
		return err
	}
	h.Cgroups = dirs
	for _, dir := range dirs {
		if err := createCgroup(dir); err != nil {
			return err
		}
	}
	uuid, err := randomUUID()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.instance().logRoot(), 0o750); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	logFile, err := os.OpenFile(l.logPath(h.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("open boot log of %s: %w", h.Name, err)
	}
	// nspawn writes through a descriptor of its own; closing ours loses nothing.
	defer func() { _ = logFile.Close() }()
	// The shell stays, as the launcher, to start the container again when it
	// reboots (exit status 133), as a server comes back after a reboot.
	args := []string{"-c", `while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 1; shift; done; shift
while :; do "$@"; rc=$?; [ $rc -eq 133 ] || exit $rc; done`, "lab-launch"}
	args = append(args, dirs...)
	// nsenter rather than `ip netns exec`: the latter remounts /sys, which hides
	// /sys/fs/cgroup from systemd-nspawn ("Failed to determine whether the
	// unified cgroups hierarchy is used").
	args = append(args, "--", "nsenter", "--net="+filepath.Join("/run/netns", l.Netns), "systemd-nspawn",
		"--boot", "--directory="+h.root(), "--machine="+h.Name, "--register=no", "--keep-unit",
		"--uuid="+uuid, "--network-bridge="+l.Bridge, "--resolv-conf=off", "--timezone=off",
		"--console=read-only",
		// nspawn's syscall filter refuses adjtimex(2) to a container without CAP_SYS_TIME, even
		// the read that changes nothing, which a real server allows to every process. Allowed
		// here, the kernel still refuses any change to the clock (the container has no
		// CAP_SYS_TIME), and the provider reads the kernel clock as it does on real servers
		// instead of starting systemd-timedated over D-Bus on every host on every plan.
		"--system-call-filter=adjtimex")
	if l.Namespace != "" {
		args = append(args, "--bind="+l.Namespace+":"+StandInNamespace)
	}
	cmd := exec.Command("/bin/sh", args...)
	if env := releaseNspawnEnv[l.ReleaseName()]; env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", h.Name, err)
	}
	h.LauncherPID = cmd.Process.Pid
	// Reap the launcher if this process outlives it (tests calling Up and Down in-process).
	go cmd.Wait() //nolint:errcheck // exit status is visible in the boot log
	return nil
}

func randomUUID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate machine UUID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// waitForInit finds the container's PID 1: a descendant of the launcher that is PID 1 in its own namespace.
func (l *Lab) waitForInit(ctx context.Context, h Host) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if pid, ok := findContainerInit(h.LauncherPID); ok {
			return pid, nil
		}
		if !processAlive(h.LauncherPID) {
			return 0, fmt.Errorf("systemd-nspawn for %s exited during start, see %s", h.Name, l.logPath(h.Name))
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("container init of %s did not appear: %w", h.Name, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

func findContainerInit(launcher int) (int, bool) {
	parents := processParents()
	for pid := range parents {
		if isContainerInit(pid) && descendsFrom(parents, pid, launcher) {
			return pid, true
		}
	}
	return 0, false
}

func processParents() map[int]int {
	parents := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return parents
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			parents[pid] = ppid
		}
	}
	return parents
}

func parentOf(pid int) (int, bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(rest))
			return ppid, err == nil
		}
	}
	return 0, false
}

func descendsFrom(parents map[int]int, pid, ancestor int) bool {
	for depth := 0; pid > 1 && depth < 64; depth++ {
		if pid == ancestor {
			return true
		}
		pid = parents[pid]
	}
	return false
}

// processAlive is false for exited processes, zombies included.
func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}

// waitReady polls until systemd finished booting and sshd answers from the client side.
func (l *Lab) waitReady(ctx context.Context, p PlannedHost) error {
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	state := ""
	for {
		state = l.systemState(ctx, p.Name)
		if state == "running" || state == "degraded" {
			if err := sshAnswers(l.Netns, p.Address); err == nil {
				return nil
			}
		}
		// "offline" is also what a PID 1 says that has only just started
		// (after a reboot, say), so only a launcher gone for good ends the wait.
		if state == "maintenance" || !l.launcherAlive(p.Name) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (system state %q): %w", p.Name, state, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
	return fmt.Errorf("%s failed to boot (system state %q), see %s", p.Name, state, l.logPath(p.Name))
}

func (l *Lab) launcherAlive(host string) bool {
	h, ok := l.lookup(host)
	return ok && processAlive(h.LauncherPID) && isLauncherOf(h)
}

func (l *Lab) systemState(ctx context.Context, host string) string {
	// is-system-running exits non-zero for every state but "running"; only its output matters.
	out, _, _ := l.Exec(ctx, host, "systemctl is-system-running 2>/dev/null")
	return strings.TrimSpace(out)
}

// sshAnswers dials port 22 from inside the lab netns and expects an SSH banner.
// The dial runs on a dedicated OS thread moved into the netns; Go never
// reuses a thread that stays locked when its goroutine ends.
func sshAnswers(netns, address string) error {
	result := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		result <- dialSSHInNetns(netns, address)
	}()
	return <-result
}

func dialSSHInNetns(netns, address string) error {
	ns, err := os.Open(filepath.Join("/run/netns", netns)) //nolint:gosec // G304: the lab's own netns, named from a validated instance.
	if err != nil {
		return fmt.Errorf("open lab netns: %w", err)
	}
	defer func() { _ = ns.Close() }() // read-only: nothing to flush
	if _, _, errno := syscall.RawSyscall(sysSetns, ns.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
		return fmt.Errorf("enter lab netns: %w", errno)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(address, "22"), time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // only read from: nothing to flush
	if err := conn.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return err
	}
	banner, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read SSH banner from %s: %w", address, err)
	}
	if !strings.HasPrefix(banner, "SSH-2.0-") {
		return fmt.Errorf("unexpected banner from %s: %q", address, banner)
	}
	return nil
}

func (l *Lab) writeKnownHosts() error {
	var b strings.Builder
	for _, h := range l.Hosts {
		keys, err := filepath.Glob(filepath.Join(h.root(), "etc/ssh/ssh_host_*_key.pub"))
		if err != nil {
			return fmt.Errorf("list host keys of %s: %w", h.Name, err)
		}
		var contents []string
		for _, k := range keys {
			data, err := os.ReadFile(k) //nolint:gosec // G304: a host key file the lab generated.
			if err != nil {
				return fmt.Errorf("read host key of %s: %w", h.Name, err)
			}
			contents = append(contents, string(data))
		}
		lines, err := RenderKnownHosts(PlannedHost{Name: h.Name, Address: h.Address}, contents)
		if err != nil {
			return err
		}
		b.WriteString(lines)
	}
	return writeFileAtomic(l.KnownHostsPath, []byte(b.String()), 0o644)
}

func writeNetnsHosts(inst Instance, all []PlannedHost) error {
	dir := inst.netnsEtcDir()
	// Bind-mounted over /etc for every process in the netns, root or not.
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: see above.
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return writeFileAtomic(filepath.Join(dir, "hosts"), []byte(RenderHostsFile(all)), 0o644)
}
