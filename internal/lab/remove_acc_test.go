package lab

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// A GPU server added to the running lab boots like the others and is known
// to every host; removed again, it leaves no process, overlay, cgroup, log,
// name or key behind, and the rest of the lab keeps running.
func TestLabAddThenRemoveGPUServer(t *testing.T) {
	ctx, l := RequireWithin(t, 2*time.Minute)
	name := freeGPUName(t, l)
	loginPID := l.Host(LoginHost).PID

	h, err := l.Add(ctx, name, logTo(t))
	if err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			_ = l.Remove(context.Background(), name, logTo(t))
		}
	})
	if out, _, err := l.Exec(ctx, name, "hostname"); err != nil || strings.TrimSpace(out) != name {
		t.Fatalf("hostname on %s = %q, %v", name, out, err)
	}
	wantKnown(t, l, name, h.Address, true)

	if err := l.Remove(ctx, name, logTo(t)); err != nil {
		t.Fatalf("remove %s: %v", name, err)
	}
	removed = true
	if processAlive(h.PID) || processAlive(h.LauncherPID) {
		t.Errorf("%s: container PID %d or launcher PID %d still runs", name, h.PID, h.LauncherPID)
	}
	if h.Disk == nil || loopBackingFile(h.Disk.LoopDevice) == h.Disk.Image {
		t.Errorf("%s: disk %+v missing or still on its loop device", name, h.Disk)
	}
	for _, path := range append([]string{h.Dir, l.logPath(name)}, h.Cgroups...) {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s left %s behind (%v)", name, path, err)
		}
	}
	if out, err := output(ctx, "ip", "-n", l.Netns, "-o", "link", "show", "master", l.Bridge); err != nil || strings.Contains(out, "vb-"+name) {
		t.Errorf("bridge ports after removing %s: %q, %v", name, out, err)
	}
	wantKnown(t, l, name, h.Address, false)
	if l.Host(LoginHost).PID != loginPID || !isContainerInit(loginPID) {
		t.Errorf("login01 (PID %d) did not survive removing %s", loginPID, name)
	}
	for _, other := range l.Hosts {
		if out, _, err := l.Exec(ctx, other.Name, "hostname"); err != nil || strings.TrimSpace(out) != other.Name {
			t.Errorf("%s after removing %s: %q, %v", other.Name, name, out, err)
		}
	}
}

// wantKnown checks that the descriptor, known_hosts, the netns's hosts file
// and /etc/hosts of every other host list name (or, with known false, do not).
func wantKnown(t *testing.T, l *Lab, name, address string, known bool) {
	t.Helper()
	reloaded, err := Load(l.descriptor)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reloaded.lookup(name); ok != known {
		t.Errorf("descriptor lists %s: %v, want %v", name, ok, known)
	}
	knownHosts, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	if has := strings.Contains("\n"+string(knownHosts), "\n"+name+","+address+" "); has != known {
		t.Errorf("known_hosts lists %s: %v, want %v:\n%s", name, has, known, knownHosts)
	}
	hostsFiles := map[string]string{"the netns": l.instance().netnsEtcDir() + "/hosts"}
	for _, h := range l.Hosts {
		if h.Name != name {
			hostsFiles[h.Name] = h.root() + "/etc/hosts"
		}
	}
	for owner, path := range hostsFiles {
		content, err := os.ReadFile(path) //nolint:gosec // G304: the lab's own files.
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(content), "\n"+address+"\t"+name+"\n"); has != known {
			t.Errorf("/etc/hosts of %s lists %s: %v, want %v:\n%s", owner, name, has, known, content)
		}
	}
}

// freeGPUName is the first GPU server name the lab does not use yet.
func freeGPUName(t *testing.T, l *Lab) string {
	t.Helper()
	for n := 1; n <= MaxGPUServers; n++ {
		name := fmt.Sprintf("gpu%02d", n)
		if _, used := l.lookup(name); !used {
			return name
		}
	}
	t.Fatal("no free GPU server name")
	return ""
}

// logTo sends the lab's progress lines to the test log.
func logTo(t *testing.T) *testLog { return &testLog{t} }

type testLog struct{ t *testing.T }

func (w *testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
