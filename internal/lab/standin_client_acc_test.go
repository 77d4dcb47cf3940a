package lab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// The stand-in's client as the 8.1+ package ships it: the service script, the kernel
// module its start builds, and the mount with the module's checks. The tests use gpu02,
// whose client the provider tests leave alone, and put its shipped files back after.

const clientScript = "/opt/beegfs/sbin/beegfs-client"

// clientHost gives a test gpu02 with the client package freshly reinstalled (as after
// `apt install beegfs-client`: no module, the postinst's force-auto-build), the service
// stopped, and its shipped configuration put back when the test ends.
func clientHost(t *testing.T, l *lab.Lab) (host, release string) {
	t.Helper()
	host = "gpu02"
	restore := func() {
		_, _, _ = l.Exec(context.Background(), host, "systemctl stop beegfs-client; umount /mnt/standin-client 2>/dev/null; rmmod beegfs 2>/dev/null; "+
			"mkdir -p /lib/modules/$(uname -r)/build; rm -rf /lib/modules/0.0.0-standin-old; "+
			"DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall -o Dpkg::Options::=--force-confnew beegfs-client >/dev/null")
	}
	restore()
	t.Cleanup(restore)
	return host, strings.TrimSpace(mustExec(t, l, host, "uname -r"))
}

// clientConf writes a client config for the stand-in's mount on host: management on
// login01, the given sanity check time, the shared secret in the scratch directory.
func clientConf(t *testing.T, l *lab.Lab, host string, sanityMS string) string {
	t.Helper()
	s := standInScratch(t, l, host, "beegfs-client")
	cfg := s + "/pkg" + beegfs.ClientConfPath
	mustExec(t, l, host, "sed -i -e 's|^connAuthFile .*|connAuthFile = "+s+"/conn.auth|' -e 's|^sysMgmtdHost .*|sysMgmtdHost = 10.0.0.10|' "+
		"-e 's|^sysMountSanityCheckMS .*|sysMountSanityCheckMS = "+sanityMS+"|' "+cfg)
	return cfg
}

func TestLabStandInClientPackage(t *testing.T) {
	l := lab.Require(t)
	host, _ := clientHost(t, l)
	checks := []struct{ script, want string }{
		{"readlink /etc/init.d/beegfs-client", clientScript},
		{"systemctl show -p Type -p ExecStart --value beegfs-client | grep -o '^oneshot$\\|path=[^ ;]*'", "oneshot\npath=" + clientScript},
		{"dpkg -L beegfs-client | grep -x -e /sbin/mount.beegfs -e /etc/default/beegfs-client -e /etc/beegfs/lib/init-multi-mode.beegfs-client -e " + beegfs.AutobuildConfPath + " | sort",
			"/etc/beegfs/beegfs-client-autobuild.conf\n/etc/beegfs/lib/init-multi-mode.beegfs-client\n/etc/default/beegfs-client\n/sbin/mount.beegfs"},
		{"grep -x 'buildEnabled=true' " + beegfs.AutobuildConfPath, "buildEnabled=true"},
		{"grep -E '^(START_SERVICE|MULTI_MODE)=' /etc/default/beegfs-client", "START_SERVICE=\"YES\"\nMULTI_MODE=\"NO\""},
		{"grep -E '^(sysMountSanityCheckMS|connMgmtdPort) ' " + beegfs.ClientConfPath + " | tr -s ' '", "connMgmtdPort = 8008\nsysMountSanityCheckMS = 11000"},
		// The postinst asks for a build, the postrm (run by the reinstall too) removed every module.
		{"test -e " + beegfs.ForceAutoBuildPath + " && ls -d /lib/modules/*/updates/fs/beegfs_autobuild 2>/dev/null | wc -l", "0"},
	}
	for _, c := range checks {
		if got := strings.TrimSpace(mustExec(t, l, host, c.script)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.script, got, c.want)
		}
	}
	if out, status := execStatus(t, l, host, clientScript+" reload"); status != 3 || !strings.Contains(out, "Usage: "+clientScript+" {start|stop|status|restart|rebuild|condrestart|try-restart}") {
		t.Errorf("unknown verb: status %d, %q", status, out)
	}
}

// The module is built by the service's start (never by the package), under the running
// kernel's release; a mount before that has no filesystem type beegfs.
func TestLabStandInClientModule(t *testing.T) {
	l := lab.Require(t)
	host, release := clientHost(t, l)
	cfg := clientConf(t, l, host, "0")
	module := "/lib/modules/" + release + "/updates/fs/beegfs_autobuild/beegfs.ko"
	mustExec(t, l, host, "echo '/mnt/standin-client "+cfg+"' > "+beegfs.MountsConfPath)

	out, status := execStatus(t, l, host, "mkdir -p /mnt/standin-client && mount -t beegfs beegfs_nodev /mnt/standin-client -ocfgFile="+cfg+" 2>&1")
	if status != 32 || !strings.Contains(out, "mount: /mnt/standin-client: unknown filesystem type 'beegfs'.") {
		t.Fatalf("mount before the first start: status %d, %q", status, out)
	}

	mustExec(t, l, host, "sed -i 's/^buildEnabled=.*/buildEnabled=false/' "+beegfs.AutobuildConfPath)
	out, status = execStatus(t, l, host, clientScript+" start 2>&1")
	if status == 0 || !strings.Contains(out, "modprobe: FATAL: Module beegfs not found in directory /lib/modules/"+release) {
		t.Errorf("start with buildEnabled=false: status %d, %q", status, out)
	}
	mustExec(t, l, host, "sed -i 's/^buildEnabled=.*/buildEnabled=true/' "+beegfs.AutobuildConfPath+" && rmdir /lib/modules/$(uname -r)/build")
	out, status = execStatus(t, l, host, clientScript+" start 2>&1")
	if status == 0 || !strings.Contains(out, "Linux kernel build directory not found. Please check if the kernel module development packages are installed") {
		t.Errorf("start without kernel headers: status %d, %q", status, out)
	}

	mustExec(t, l, host, "mkdir /lib/modules/$(uname -r)/build")
	out = mustExec(t, l, host, clientScript+" start")
	for _, line := range []string{"Starting BeeGFS Client: ", "- Loading BeeGFS modules", "- BeeGFS module autobuild", "- Mounting directories from /etc/beegfs/beegfs-mounts.conf"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("start lacks %q:\n%s", line, out)
		}
	}
	checks := []struct{ script, want string }{
		{"test -f " + module + " && echo built", "built"},
		{"test -e " + beegfs.ForceAutoBuildPath + " && echo forced || echo done", "done"},
		{"lsmod | grep -c '^beegfs '", "1"},
		{"findmnt -n -o SOURCE /mnt/standin-client", "beegfs_nodev"},
		{"ps -eo args | grep -c '^/usr/lib/beegfs-standin/bin/beegfs-kmount' || true", "0"},
	}
	for _, c := range checks {
		if got := strings.TrimSpace(mustExec(t, l, host, c.script)); got != c.want {
			t.Errorf("after start: %s: got %q, want %q", c.script, got, c.want)
		}
	}
	if out, status := execStatus(t, l, host, clientScript+" status"); status != 0 || !strings.Contains(out, "is running...") {
		t.Errorf("status while mounted: %d, %q", status, out)
	}

	// A kernel upgrade: the module exists only for the release the node ran before, and
	// the reboot into the new one unloaded it.
	mustExec(t, l, host, clientScript+" stop && mkdir -p /lib/modules/0.0.0-standin-old/updates/fs && mv /lib/modules/"+release+"/updates/fs/beegfs_autobuild /lib/modules/0.0.0-standin-old/updates/fs/")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := l.Reboot(ctx, host); err != nil {
		t.Fatal(err)
	}
	if out, status := execStatus(t, l, host, clientScript+" status"); status != 3 || !strings.Contains(out, "is stopped.") {
		t.Errorf("status after the reboot: %d, %q", status, out)
	}
	if out := mustExec(t, l, host, clientScript+" start"); !strings.Contains(out, "- BeeGFS module autobuild") {
		t.Errorf("start after the kernel upgrade did not build:\n%s", out)
	}
	if got := mustExec(t, l, host, "test -f "+module+" && lsmod | grep -c '^beegfs '"); got != "1\n" {
		t.Errorf("after the rebuild: module loaded %q", got)
	}
	mustExec(t, l, host, clientScript+" stop")
	if got := mustExec(t, l, host, "lsmod | grep -c '^beegfs ' || true; findmnt -n /mnt/standin-client || true"); got != "0\n" {
		t.Errorf("after stop: %q, want the module unloaded and nothing mounted", got)
	}
}

// mount.beegfs's own checks, then the module's: its configuration, and the sanity check
// that needs the management service to answer within sysMountSanityCheckMS.
func TestLabStandInClientMountRefusals(t *testing.T) {
	l := lab.Require(t)
	host, _ := clientHost(t, l)
	cfg := clientConf(t, l, host, "1500")
	mustExec(t, l, host, clientScript+" rebuild && modprobe beegfs && mkdir -p /mnt/standin-client")
	mount := func(cfg string) string {
		return "mount -t beegfs beegfs_nodev /mnt/standin-client -ocfgFile=" + cfg + ",_netdev,nosuid,, 2>&1"
	}
	noHost := strings.TrimSuffix(cfg, ".conf") + "-nohost.conf"
	badHost := strings.TrimSuffix(cfg, ".conf") + "-badhost.conf"
	noAuth := strings.TrimSuffix(cfg, ".conf") + "-noauth.conf"
	mustExec(t, l, host, "sed 's|^sysMgmtdHost .*|sysMgmtdHost =|' "+cfg+" > "+noHost+" && sed 's|^sysMgmtdHost .*|sysMgmtdHost = nosuchhost.invalid|' "+cfg+" > "+badHost+
		" && sed 's|^connAuthFile .*|connAuthFile =|' "+cfg+" > "+noAuth)
	tests := []struct {
		cfg    string
		status int
		lines  []string
	}{
		{"/nonexistent.conf", 1, []string{"Can not open config file '/nonexistent.conf'"}},
		{noHost, 1, []string{"Can not determine management host - neither through a mount option ('sysMgmtdHost') nor through a client config file ('cfgFile')."}},
		{badHost, 1, []string{"Can not resolve management host address using hostname 'nosuchhost.invalid'"}},
		{noAuth, 32, []string{"beegfs: mount(", "): No connAuthFile configured.", "Configuration error: Initialization of common objects failed.", "mount: /mnt/standin-client: mount(2) system call failed: Operation canceled."}},
		// Nothing serves BeeGFS on login01 in this test.
		{cfg, 32, []string{"Connect failed: beegfs-mgmtd@10.0.0.10:8008 (protocol: TCP)", "Mount sanity check: Waiting for management server initialization timed out. Are the server settings correct? Is the management daemon running?",
			"Mount sanity check failed. Canceling mount. (Log file may provide additional information. Check can be disabled with sysMountSanityCheckMS=0 in the config file.)"}},
	}
	for _, tc := range tests {
		out, status := execStatus(t, l, host, mount(tc.cfg))
		if status != tc.status {
			t.Errorf("mount with %s: status %d, want %d: %q", tc.cfg, status, tc.status, out)
		}
		for _, line := range tc.lines {
			if !strings.Contains(out, line) {
				t.Errorf("mount with %s lacks %q:\n%s", tc.cfg, line, out)
			}
		}
	}
	if got := mustExec(t, l, host, "grep -c 'Mount sanity check failed' /var/log/beegfs-standin-kernel.log"); got == "0\n" {
		t.Error("the module's lines are not in the stand-in's kernel log")
	}
	if got := mustExec(t, l, host, "findmnt -n /mnt/standin-client || true"); got != "" {
		t.Errorf("a refused mount left %q", got)
	}
}

// beegfs-setup-client edits the existing sysMgmtdHost line and says so as the real one does.
func TestLabStandInSetupClient(t *testing.T) {
	l := lab.Require(t)
	host := "gpu02"
	s := standInScratch(t, l, host, "beegfs-client")
	cfg := s + "/pkg" + beegfs.ClientConfPath
	out := mustExec(t, l, host, beegfs.SetupClientTool+" -c "+cfg+" -m login01 -q")
	if want := "Updating config file: " + cfg + "\n * Setting management host: login01\n * Setting quota enabled: true\nAll done.\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if got := mustExec(t, l, host, "grep -E '^(sysMgmtdHost|quotaEnabled) ' "+cfg); got != "sysMgmtdHost                  = login01\nquotaEnabled                  = true\n" {
		t.Errorf("config lines %q", got)
	}
	if out, status := execStatus(t, l, host, beegfs.SetupClientTool+" -c /nonexistent.conf -m login01"); status != 1 || !strings.Contains(out, " * ERROR: Config file not found: /nonexistent.conf") {
		t.Errorf("missing config: status %d, %q", status, out)
	}
	if _, status := execStatus(t, l, host, beegfs.SetupClientTool); status != 1 {
		t.Errorf("no arguments: status %d, want 1", status)
	}
}
