package lab_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The BeeGFS stand-in is checked where the provider relies on it. Every
// test works on a scratch directory on the host's lab disk with pristine
// copies of the shipped config files (unpacked from the stand-in's own
// package), so it neither sees nor disturbs what other tests configured.

// standInScratch makes the scratch directory on host and returns its path;
// $S/pkg holds the unpacked package, $S/conn.auth a shared secret.
func standInScratch(t *testing.T, l *lab.Lab, host, pkg string) string {
	t.Helper()
	dir, _ := standInScratchOnDisk(t, l, host, pkg)
	return dir
}

// standInScratchOnDisk is standInScratch that also returns the lab disk the
// directory is on, whose UUID the setup scripts and the interlock see.
func standInScratchOnDisk(t *testing.T, l *lab.Lab, host, pkg string) (string, lab.Disk) {
	t.Helper()
	disk, err := l.Disk(host)
	if err != nil {
		t.Fatal(err)
	}
	out := mustExec(t, l, host, "d=$(mktemp -d "+disk.Mountpoint+"/standin-test.XXXXXX) && dpkg-deb -x "+lab.RepoDir+"/"+pkg+"_"+lab.StandInVersion+"_all.deb $d/pkg && head -c 128 /dev/urandom > $d/conn.auth && echo $d")
	dir := strings.TrimSpace(out)
	t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), host, "rm -rf "+dir) })
	return dir, disk
}

func mustExec(t *testing.T, l *lab.Lab, host, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, stderr, err := l.Exec(ctx, host, script)
	if err != nil {
		t.Fatalf("%s on %s: %v\n%s%s", script, host, err, out, stderr)
	}
	return out
}

// execStatus runs script and returns its stdout and exit status.
func execStatus(t *testing.T, l *lab.Lab, host, script string) (string, int) {
	t.Helper()
	out := mustExec(t, l, host, "("+script+"); echo \"status=$?\"")
	i := strings.LastIndex(out, "status=")
	if i < 0 {
		t.Fatalf("%s on %s: no exit status in %q", script, host, out)
	}
	status, err := strconv.Atoi(strings.TrimSpace(out[i+len("status="):]))
	if err != nil {
		t.Fatalf("%s on %s: %v", script, host, err)
	}
	return out[:i], status
}

func TestLabStandInVersionAndUnits(t *testing.T) {
	l := lab.Require(t)
	for _, h := range l.Hosts {
		for _, pkg := range []string{"beegfs-mgmtd", "beegfs-meta", "beegfs-storage", "beegfs-client"} {
			if got := mustExec(t, l, h.Name, "dpkg-query -W -f='${Version}' "+pkg); got != lab.StandInVersion {
				t.Errorf("%s: %s version %q, want %q", h.Name, pkg, got, lab.StandInVersion)
			}
			if _, err := beegfs.ParseRelease(lab.StandInVersion); err != nil {
				t.Errorf("the provider cannot read the stand-in's version: %v", err)
			}
		}
		if got := mustExec(t, l, h.Name, "systemctl is-enabled beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client || true"); got != strings.Repeat("disabled\n", 4) {
			t.Errorf("%s: stand-in units should ship disabled, got:\n%s", h.Name, got)
		}
		// A text file says so in its opening comment, the stand-in program
		// (reached through links) anywhere in it.
		unmarked := mustExec(t, l, h.Name, `for f in $(dpkg -L beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client); do
			[ -f "$f" ] || continue
			if [ "$(head -c 4 "$f")" = "$(printf '\177ELF')" ]; then grep -q STAND-IN "$f" || echo "$f"
			else head -n 2 "$f" | grep -q STAND-IN || echo "$f"; fi; done`)
		if unmarked != "" {
			t.Errorf("%s: stand-in files that do not open with a comment naming them a STAND-IN:\n%s", h.Name, unmarked)
		}
	}
	if got := mustExec(t, l, lab.LoginHost, beegfs.MgmtdDaemon+" --version"); got != "mgmtd v8.4.0 (gpucluster lab STAND-IN)\n" {
		t.Errorf("beegfs-mgmtd --version = %q", got)
	}
}

// beegfs-setup-storage writes the ID files and the P12 lists the provider
// parses, with the UUID of the lab disk; a second run is refused the way
// ClassifySetup recognises.
func TestLabStandInSetupStorage(t *testing.T) {
	l := lab.Require(t)
	host := l.HostsWithRole(lab.RoleGPU)[0].Name
	s, disk := standInScratchOnDisk(t, l, host, "beegfs-storage")
	cfg := s + "/pkg" + beegfs.StorageConfPath
	setup, err := beegfs.SetupStorageCommand(beegfs.StorageSetup{Path: s + "/target", NodeNumID: 7, TargetID: 701, Mgmtd: "10.0.0.10"})
	if err != nil {
		t.Fatal(err)
	}
	setup += " -c " + cfg

	mustExec(t, l, host, setup)
	for file, want := range map[string]string{beegfs.NodeNumIDFile: "7\n", beegfs.TargetNumIDFile: "701\n"} {
		if got := mustExec(t, l, host, "cat "+s+"/target/"+file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	conf, err := beegfs.ParseConf([]byte(mustExec(t, l, host, "cat "+cfg)))
	if err != nil {
		t.Fatal(err)
	}
	target, err := beegfs.CheckStorageInterlock(conf, s+"/target")
	if err != nil {
		t.Fatalf("interlock after setup: %v\n%s", err, conf.Bytes())
	}
	if target.FsUUID != disk.UUID {
		t.Errorf("storeFsUUID = %s, want the lab disk's %s", target.FsUUID, disk.UUID)
	}
	if dirs, _ := conf.Get(beegfs.KeyStorageDirectory); dirs != ","+s+"/target" {
		t.Errorf("%s = %q, want the leading empty element (P12)", beegfs.KeyStorageDirectory, dirs)
	}
	if mgmt, _ := conf.Get(beegfs.KeyMgmtdHost); mgmt != "10.0.0.10" {
		t.Errorf("sysMgmtdHost = %q", mgmt)
	}

	out, status := execStatus(t, l, host, setup)
	if status != 1 || !strings.Contains(out, " * ERROR: Storage target directory is not empty.") {
		t.Fatalf("second setup: status %d, output %q; want 1 and the not-empty error", status, out)
	}
	outcome, err := beegfs.ClassifySetup(beegfs.SetupStorageTool, transport.Result{Stdout: []byte(out), Status: 1}, &transport.ExitError{Host: host, Status: 1})
	if outcome != beegfs.AlreadyInitialised || err != nil {
		t.Errorf("ClassifySetup of the second run = %v, %v; want AlreadyInitialised", outcome, err)
	}
	if got := mustExec(t, l, host, "cat "+s+"/target/"+beegfs.TargetNumIDFile); got != "701\n" {
		t.Errorf("second setup changed targetNumID to %q", got)
	}
}

// The storage daemon's own interlock: it starts on an initialised target on its filesystem
// (and, with no management service answering, waits for one) and stops cleanly, and refuses
// an uninitialised directory with storeAllowFirstRunInit = false and a storeFsUUID naming
// another filesystem. It runs as a transient unit of the same type as the shipped one
// (Type=simple), so `systemctl start` succeeds and the refusal is the daemon's own exit.
func TestLabStandInStorageDaemonRefuses(t *testing.T) {
	l := lab.Require(t)
	host := l.HostsWithRole(lab.RoleGPU)[0].Name
	s := standInScratch(t, l, host, "beegfs-storage")
	cfg := s + "/pkg" + beegfs.StorageConfPath
	unit := "standin-test-" + strings.TrimPrefix(s[strings.LastIndex(s, "."):], ".")
	// 10.0.0.99 answers nothing: the daemon waits for its management service.
	mustExec(t, l, host, "sed -i 's|^connAuthFile .*|connAuthFile = "+s+"/conn.auth|' "+cfg+" && "+beegfs.SetupStorageTool+" -c "+cfg+" -p "+s+"/good -s 3 -i 301 -m 10.0.0.99 >/dev/null")
	start := func(unit string) string {
		return "systemd-run --quiet --unit=" + unit + " --property=Type=simple " + beegfs.SbinDir + "/beegfs-storage cfgFile=" + cfg + " 2>&1"
	}
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), host, "systemctl stop "+unit+"; systemctl reset-failed '"+unit+"*'")
	})

	if out, status := execStatus(t, l, host, start(unit)); status != 0 {
		t.Fatalf("storage daemon on an initialised target: status %d: %s", status, out)
	}
	if state, _, journal := settle(t, l, host, unit, "Waiting for beegfs-mgmtd@10.0.0.99:8008..."); state != "active" {
		t.Fatalf("the daemon did not wait for its management service: %s\n%s", state, journal)
	}
	if got := mustExec(t, l, host, "ls "+s+"/good"); got != "buddymir\nchunks\nformat.conf\nlock.pid\nnodeNumID\ntargetID\ntargetNumID\n" {
		t.Errorf("the started target holds:\n%s", got)
	}
	// Stopped while it waits, the daemon gives up waiting as the real one does: exit 3.
	mustExec(t, l, host, "systemctl stop "+unit)
	if state, status, journal := settle(t, l, host, unit, "Waiting for beegfs-mgmtd canceled"); state != "failed" || status != 3 ||
		!strings.Contains(journal, "Received a SIGTERM. Shutting down...\n") || !strings.Contains(journal, "Waiting for beegfs-mgmtd canceled\n") {
		t.Errorf("stopped while waiting: %s, status %d:\n%s", state, status, journal)
	}

	refusals := []struct {
		name, edit, want string
	}{
		{"uninitialised with first-run init off",
			"sed -i 's|^storeStorageDirectory .*|storeStorageDirectory = ," + s + "/good," + s + "/empty|; s|^storeFsUUID .*|storeFsUUID =|' " + cfg + " && mkdir " + s + "/empty",
			"Error: Found uninitialized storage target directory and initialization has been disabled: " + s + "/empty"},
		{"storeFsUUID of another filesystem",
			"sed -i 's|^storeStorageDirectory .*|storeStorageDirectory = ," + s + "/good|; s|^storeFsUUID .*|storeFsUUID = ,00000000-0000-4000-8000-000000000000|' " + cfg,
			"Error: UUID of the file system under the storage target " + s + "/good ("},
	}
	for i, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			unit := unit + "-" + strconv.Itoa(i)
			mustExec(t, l, host, r.edit)
			if out, status := execStatus(t, l, host, start(unit)); status != 0 {
				t.Fatalf("systemctl start of a Type=simple unit failed: %s", out)
			}
			state, status, journal := settle(t, l, host, unit, r.want)
			if state != "failed" || status != 1 || !strings.Contains(journal, r.want) {
				t.Errorf("%s, status %d; journal lacks %q:\n%s", state, status, r.want, journal)
			}
		})
	}
}

// The client mount shares one namespace across hosts: a file written on a
// GPU server under the admin's numeric owner is seen with that owner on
// login01, and /home is a tmpfs (the stand-in's type) on both.
func TestLabStandInClientSharesHome(t *testing.T) {
	l := lab.Require(t)
	gpu := l.HostsWithRole(lab.RoleGPU)[0].Name
	hosts := []string{gpu, lab.LoginHost}
	cfgs := map[string]string{}
	for _, h := range hosts {
		s := standInScratch(t, l, h, "beegfs-client")
		cfgs[h] = s + "/pkg" + beegfs.ClientConfPath
		// Sharing needs no servers: the sanity check has its own tests (standin_client_acc_test.go).
		mustExec(t, l, h, "sed -i -e 's|^connAuthFile .*|connAuthFile = "+s+"/conn.auth|' -e 's|^sysMountSanityCheckMS .*|sysMountSanityCheckMS = 0|' "+cfgs[h]+
			" && /opt/beegfs/sbin/beegfs-client rebuild >/dev/null && modprobe beegfs")
	}
	mount := func(h string) string { return "mount -t beegfs beegfs_nodev /home -o cfgFile=" + cfgs[h] }

	// Refused before beegfs-setup-client has named the management host.
	if out, status := execStatus(t, l, gpu, mount(gpu)+" 2>&1"); status == 0 || !strings.Contains(out, "Can not determine management host") {
		t.Fatalf("mount without sysMgmtdHost: status %d, %q", status, out)
	}
	// The namespace gets the local homes first, as migrate_local_home does.
	mustExec(t, l, gpu, "cp -a -n /home/. "+lab.StandInNamespace+"/")
	for _, h := range hosts {
		mustExec(t, l, h, beegfs.SetupClientTool+" -c "+cfgs[h]+" -m 10.0.0.10 >/dev/null && "+mount(h))
		t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), h, "umount /home") })
		if got := strings.Fields(mustExec(t, l, h, "findmnt -n -o FSTYPE,SOURCE /home")); strings.Join(got, " ") != "tmpfs beegfs_nodev" {
			t.Errorf("%s: findmnt /home = %q, want tmpfs from beegfs_nodev", h, got)
		}
	}
	file := "/home/" + l.AdminUser + "/standin-shared-" + time.Now().Format("150405.000000000")
	mustExec(t, l, gpu, "runuser -u "+l.AdminUser+" -- sh -c 'echo written on "+gpu+" > "+file+"'")
	t.Cleanup(func() { _, _, _ = l.Exec(context.Background(), gpu, "rm -f "+file) })
	if got := mustExec(t, l, lab.LoginHost, "stat -c '%u:%g' "+file+" && cat "+file); got != "1000:1000\nwritten on "+gpu+"\n" {
		t.Errorf("on login01, %s = %q; want owner 1000:1000 and the content written on %s", file, got, gpu)
	}
}
