package fakehost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/fakehost"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

const password = "s3cret"

// connect serves a fresh host and returns it with a transport host that reaches it through
// the real client: key login, host key check, sudo with a password, the root shell.
func connect(t *testing.T, name string) (*fakehost.Server, *transport.Host) {
	t.Helper()
	client := fakehost.NewClient(t)
	srv := fakehost.Serve(t, fakehost.NewHost(name), client)
	srv.SudoPassword = password
	return srv, newRun(t, config(t, client, srv, password))
}

// newRun connects as a new provider run would, with a pool of its own.
func newRun(t *testing.T, cfg transport.Config) *transport.Host {
	t.Helper()
	pool := transport.NewPool()
	t.Cleanup(pool.Close)
	h, err := pool.Host(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func config(t *testing.T, client fakehost.Client, srv *fakehost.Server, sudoPassword string) transport.Config {
	t.Helper()
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return transport.Config{
		Name: srv.Host.Name, Address: srv.Address(), Port: srv.Port(), User: fakehost.AdminUser,
		PrivateKey: client.KeyPEM, KnownHostsFile: known, ConnectTimeout: 5 * time.Second,
		SudoPassword: []byte(sudoPassword),
	}
}

func TestRootShellRunsEachScriptWithItsStdinAndStatus(t *testing.T) {
	srv, h := connect(t, "node1")
	ctx := context.Background()
	res, err := h.Sudo(ctx, "cat > /tmp/x\necho wrote\nexit 3", []byte("payload"))
	var exitErr *transport.ExitError
	if !errors.As(err, &exitErr) || res.Status != 3 || string(res.Stdout) != "wrote\n" {
		t.Fatalf("status %d, stdout %q, err %v", res.Status, res.Stdout, err)
	}
	if got, _ := srv.Host.FS.ReadFile("/tmp/x"); string(got) != "payload" {
		t.Fatalf("/tmp/x holds %q", got)
	}
	for range 3 {
		if _, err := h.Sudo(ctx, "true", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.RootShells.Load(); n != 1 {
		t.Fatalf("sudo started %d root shells, want 1 for the run", n)
	}
	// A command as the login user sees the session's SSH_CONNECTION, as sshd sets it.
	res, err = h.Run(ctx, `set -- $SSH_CONNECTION; echo "$# $3 $4 $USER"`, nil)
	if want := "4 127.0.0.1 " + strconv.Itoa(srv.Port()) + " admin\n"; err != nil || string(res.Stdout) != want {
		t.Fatalf("login user's session: %q, %v; want %q", res.Stdout, err, want)
	}
}

func TestWrongSudoPasswordIsRejectedOnce(t *testing.T) {
	client := fakehost.NewClient(t)
	srv := fakehost.Serve(t, fakehost.NewHost("node1"), client)
	srv.SudoPassword = password
	pool := transport.NewPool()
	defer pool.Close()
	h, err := pool.Host(context.Background(), config(t, client, srv, "wrong"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Sudo(context.Background(), "true", nil)
	var sudoErr *transport.SudoError
	if !errors.As(err, &sudoErr) || sudoErr.Kind != transport.SudoWrongPassword {
		t.Fatalf("got %v, want a rejected password", err)
	}
	if n := srv.SudoFailures.Load(); n != 1 {
		t.Fatalf("%d failed authentications, want 1", n)
	}
}

func TestJumpHostForwardsToTheNode(t *testing.T) {
	client := fakehost.NewClient(t)
	login := fakehost.Serve(t, fakehost.NewHost("login01"), client)
	node := fakehost.Serve(t, fakehost.NewHost("gpu01"), client)
	jump := config(t, client, login, "")
	cfg := config(t, client, node, "")
	cfg.Jump = &jump
	pool := transport.NewPool()
	defer pool.Close()
	h, err := pool.Host(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sudo(context.Background(), "touch /tmp/here", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Host.FS.ReadFile("/tmp/here"); err != nil {
		t.Fatalf("the script did not run on gpu01: %v", err)
	}
	if login.Logins.Load() != 1 || login.RootShells.Load() != 0 {
		t.Fatalf("login01: %d logins, %d root shells; want 1 and 0", login.Logins.Load(), login.RootShells.Load())
	}
}

func TestAccountsThroughTheUsersPackage(t *testing.T) {
	client := fakehost.NewClient(t)
	srv := fakehost.Serve(t, fakehost.NewHost("node1"), client)
	h := newRun(t, config(t, client, srv, ""))
	ctx := context.Background()
	if _, err := users.EnsureGroup(ctx, h, "team", 2101); err != nil {
		t.Fatal(err)
	}
	spec := users.UserSpec{Name: "alice", UID: 3001, PrimaryGroup: "team", Groups: []string{"users"}, Shell: "/bin/bash"}
	if changed, err := users.EnsureUser(ctx, h, spec); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	u, ok := srv.Host.User("alice")
	if !ok || u.UID != 3001 || u.GID != 2101 || u.Shell != "/bin/bash" || u.Home != "/home/alice" {
		t.Fatalf("alice is %+v (found %v)", u, ok)
	}
	if g, _ := srv.Host.Group("users"); !slices.Contains(g.Members, "alice") {
		t.Fatalf("users group is %+v", g)
	}
	if changed, err := users.EnsureUser(ctx, h, spec); err != nil || changed {
		t.Fatalf("second ensure: changed %v, err %v", changed, err)
	}
	if r := srv.Host.Run("usermod -u 3002 alice"); r.Status != 0 {
		t.Fatalf("drift: %+v", r)
	}
	// A run reads a host's accounts once; the drift shows in the next run.
	h = newRun(t, config(t, client, srv, ""))
	st, err := users.ReadAccounts(ctx, h, []string{"alice"}, []string{"team"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Users["alice"].UID != 3002 || st.Users["alice"].PrimaryGroupName != "team" || !slices.Equal(st.Users["alice"].Groups, []string{"users"}) {
		t.Fatalf("read %+v", st.Users["alice"])
	}
	if removed, err := users.RemoveUser(ctx, h, "alice"); err != nil || !removed {
		t.Fatalf("removed %v, err %v", removed, err)
	}
	if _, ok := srv.Host.User("alice"); ok {
		t.Fatal("alice still exists")
	}
	if _, ok := srv.Host.Group("team"); !ok {
		t.Fatal("team went with alice")
	}
	if u := srv.Host.Unmodelled(); len(u) > 0 {
		t.Fatalf("unmodelled: %v", u)
	}
}

func TestAnUnmodelledCommandFailsLoudly(t *testing.T) {
	srv, h := connect(t, "node1")
	res, err := h.Sudo(context.Background(), "frobnicate --all", nil)
	if err == nil || res.Status != 127 || !strings.Contains(string(res.Stderr), "fakehost: command frobnicate not modelled") {
		t.Fatalf("status %d, stderr %q, err %v", res.Status, res.Stderr, err)
	}
	if u := srv.Host.Unmodelled(); len(u) != 1 {
		t.Fatalf("unmodelled: %v", u)
	}
	if r := srv.Host.Run("mkdir --verbose /x"); r.Status != 127 || len(srv.Host.Unmodelled()) != 2 {
		t.Fatalf("an unmodelled option: %+v, %v", r, srv.Host.Unmodelled())
	}
}

func TestShellSemantics(t *testing.T) {
	h := fakehost.NewHost("node1")
	for _, c := range []struct {
		script, stdout string
		status         int
	}{
		{"set -e\nfalse\necho no", "", 1},
		{"mkdir /a/b", "", 1},
		{"mkdir -p /a/b && umask 077 && echo x > /a/b/f && stat -c '%a %U' /a/b/f", "600 root\n", 0},
		{"t=$(mktemp /tmp/.x.XXXXXX) && echo hi > \"$t\" && ln \"$t\" /tmp/y && ! ln \"$t\" /tmp/y 2>/dev/null && cat /tmp/y", "hi\n", 0},
		{"getent group users | cut -d: -f3", "100\n", 0},
		{"getent passwd nosuch; echo $?", "2\n", 0},
		{"printf 'a\\nb\\n' | grep -qx b && echo found", "found\n", 0},
		{"if command -v useradd >/dev/null; then echo yes; fi; command -v nosuch || echo no", "yes\nno\n", 0},
		{"echo abc | sha256sum", "edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb  -\n", 0},
		{"[ -x /bin/bash ] && [ -f /etc/shells ] && [ ! -e /nosuch ] && echo ok", "ok\n", 0},
		{"sh -c 'echo \"$1\"' sh one", "one\n", 0},
		{"export A=1; B=2; sh -c 'echo ${A-unset} ${B-unset}'", "1 unset\n", 0},
		{"mkdir /d && chown admin:users -- /d && stat -c '%U:%G %a' -- /d", "admin:users 755\n", 0},
		{"exec 9>/run/lock/x.lock && flock 9 && echo locked", "locked\n", 0},
		{"ip -o addr show | grep -c ' inet'", "2\n", 0},
	} {
		r := h.Run(c.script)
		if r.Stdout != c.stdout || r.Status != c.status {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", c.script, r.Status, r.Stdout, r.Stderr, c.status, c.stdout)
		}
	}
	if u := h.Unmodelled(); len(u) > 0 {
		t.Fatalf("unmodelled: %v", u)
	}
}

func TestPackagesAndMunge(t *testing.T) {
	a, b := fakehost.NewHost("a"), fakehost.NewHost("b")
	for _, c := range []struct {
		h              *fakehost.Host
		script, stdout string
		status         int
	}{
		{a, "dpkg-query -W -f '${Package}\\t${db:Status-Abbrev}\\t${Version}\\n' -- munge nosuch", "munge\tun \t\n", 1},
		{a, "munge -n", "", 127},
		{a, "apt-get install -y -q --no-install-recommends -o X=1 munge && systemctl is-active munge && stat -c '%U %a' /etc/munge/munge.key", "active\nmunge 600\n", 0},
		{a, "dpkg-query -W -f '${Package} ${Version}\\n' -- munge libmunge2", "munge " + fakehost.MungeVersion + "\nlibmunge2 " + fakehost.MungeVersion + "\n", 0},
		{a, "apt-get install -y nosuch", "", 100},
		{b, "apt-get install -y munge && cp /etc/munge/munge.key /tmp/own && systemctl restart munge", "", 0},
	} {
		if r := c.h.Run(c.script); r.Stdout != c.stdout || r.Status != c.status {
			t.Errorf("%s: %q: status %d, stdout %q, stderr %q; want %d, %q", c.h.Name, c.script, r.Status, r.Stdout, r.Stderr, c.status, c.stdout)
		}
	}
	cred := a.Run("munge -n").Stdout
	decode := func(h *fakehost.Host) fakehost.Result { return h.Run("printf '%s' '" + cred + "' | unmunge") }
	if r := decode(b); r.Status != 15 {
		t.Fatalf("b decoded a's credential with another key: %+v", r)
	}
	key, _ := a.FS.ReadFile("/etc/munge/munge.key")
	if err := b.FS.WriteFile("/etc/munge/munge.key", key, 0o400); err != nil {
		t.Fatal(err)
	}
	if r := decode(b); r.Status != 15 {
		t.Fatalf("b's munged decoded with a key it read only after it started: %+v", r)
	}
	if r := b.Run("systemctl restart munge"); r.Status != 0 {
		t.Fatalf("restart: %+v", r)
	}
	if r := decode(b); r.Status != 0 || !strings.Contains(r.Stdout, "Success") {
		t.Fatalf("b after restart: %+v", r)
	}
	if r := decode(b); r.Status != 17 {
		t.Fatalf("a second decode on b was not refused as replayed: %+v", r)
	}
	if r := b.Run("chmod 0644 /etc/munge/munge.key && systemctl restart munge"); r.Status == 0 || b.Units.Get("munge").Active {
		t.Fatalf("munged started with a key others can read: %+v", r)
	}
}

func TestUFWAndTheSectionsAwkProgram(t *testing.T) {
	h := fakehost.NewHost("node1")
	if r := h.Run("ufw allow from any to any port 22"); r.Status != 127 {
		t.Fatalf("ufw ran before its package was installed: %+v", r)
	}
	h.InstallPackage("ufw")
	for _, c := range []struct{ script, stdout string }{
		{"ufw allow proto tcp from 10.0.0.0/24 to any port 5601 comment 'one'", "Rule added\n"},
		{"ufw allow proto tcp from 10.0.0.0/24 to any port 5601 comment 'one'", "Skipping adding existing rule\n"},
		{"ufw allow proto tcp from 10.0.0.0/24 to any port 5601 comment 'two'", "Rule added\n"},
		{"ufw allow from any to any port 22 proto tcp", "Rule added\n"},
		{"ufw --force enable && ufw default allow incoming >/dev/null && grep -c tuple /etc/ufw/user.rules /etc/ufw/user6.rules", "Firewall is active and enabled on system startup\n/etc/ufw/user.rules:2\n/etc/ufw/user6.rules:1\n"},
		{"ufw delete allow proto tcp from 10.0.0.0/24 to any port 5601", "Rule deleted\n"},
		{"ufw delete allow proto tcp from 10.0.0.0/24 to any port 5601", "Could not delete non-existent rule\n"},
		{"grep -E 'ENABLED|INPUT' /etc/ufw/ufw.conf /etc/default/ufw", "/etc/ufw/ufw.conf:ENABLED=yes\n/etc/default/ufw:DEFAULT_INPUT_POLICY=\"ACCEPT\"\n"},
		{transport.SectionFuncs + "printf 'a\\nb' > /tmp/f && awk " + transport.Quote(transport.AwkSections) + " k=x /tmp/f k=y /etc/ufw/ufw.conf >/tmp/out && head -n 3 /tmp/out", "@@gpucluster 0 4 x\na\nb\n"},
	} {
		if r := h.Run(c.script); r.Stdout != c.stdout || r.Status != 0 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %q", c.script, r.Status, r.Stdout, r.Stderr, c.stdout)
		}
	}
	if r := h.Run("awk '{print}' /etc/passwd"); r.Status != 127 || len(h.Unmodelled()) != 1 {
		t.Fatalf("another awk program ran: %+v", r)
	}
}

func TestSystemFactsAndPerl(t *testing.T) {
	h := fakehost.NewHost("gpu01")
	for _, c := range []struct {
		script, stdout string
		status         int
	}{
		{"lscpu | grep '^CPU(s):'", "CPU(s):                   8\n", 0},
		{"cat /proc/sys/kernel/hostname", "gpu01\n", 0},
		{"perl -e 'syscall($nr, $timex) >= 0 or exit 4;'", "maxerror=2000\n", 0},
		{"printf 'AllowGroups sudo\\n' > /etc/ssh/sshd_config.d/x.conf && sshd -t && systemctl reload ssh && echo ok", "ok\n", 0},
		{"echo 'PermitRootLogin' > /etc/ssh/sshd_config.d/x.conf; sshd -t", "", 255},
		{"printf abc | base64 -w0", "YWJj", 0},
		{"command -v nvidia-smi || echo none", "none\n", 0},
	} {
		if r := h.Run(c.script); r.Stdout != c.stdout || r.Status != c.status {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", c.script, r.Status, r.Stdout, r.Stderr, c.status, c.stdout)
		}
	}
	if u := h.Units.Get("ssh"); u.Reloads != 1 {
		t.Errorf("ssh reloaded %d times, want 1", u.Reloads)
	}
	if r := h.Run("perl -e 'print 1'"); r.Status != 127 || len(h.Unmodelled()) != 1 {
		t.Fatalf("an unknown Perl program ran: %+v", r)
	}
}

func TestSlurmPackagesAndTheirTools(t *testing.T) {
	h := fakehost.NewHost("login01")
	version, _, _ := strings.Cut(fakehost.SlurmVersion, "-")
	for _, c := range []struct {
		script, stdout string
		status         int
	}{
		{"command -v slurmd || echo none", "none\n", 0},
		{"apt-cache policy slurmctld | sed -n 's/^ *Installed: *//p'", "(none)\n", 0},
		{"apt-get install -y slurmctld slurmd && apt-cache policy slurmctld | sed -n 's/^ *Installed: *//p'", fakehost.SlurmVersion + "\n", 0},
		{"slurmctld -V", "slurm " + version + "\n", 0},
		{"slurmd -C | head -n 1", "NodeName=login01 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=15948\n", 0},
		{"getent passwd slurm | cut -d: -f1,3", "slurm:64030\n", 0},
		{"mkdir -p /etc/slurm/d && printf 'A=1\\n' > /etc/slurm/d/x.conf && perl -e 'sec(\"fragment $name\", hexof($f));' /etc/slurm/d/*.conf /nosuch/*.conf", "@@gpucluster 0 8 fragment x.conf\n413d310a\n", 0},
		{"printf 'a(b)\\n' | sed -n 's/(b)/c/p'", "ac\n", 0},
	} {
		if r := h.Run(c.script); r.Stdout != c.stdout || r.Status != c.status {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", c.script, r.Status, r.Stdout, r.Stderr, c.status, c.stdout)
		}
	}
	if u := h.Unmodelled(); len(u) > 0 {
		t.Fatalf("unmodelled: %v", u)
	}
	if r := h.Run("slurmctld -D"); r.Status != 127 {
		t.Fatalf("slurmctld in the foreground ran: %+v", r)
	}
}

func TestScontrol(t *testing.T) {
	h := fakehost.NewHost("login01")
	h.InstallPackage("slurmctld")
	for _, c := range []struct {
		script, stdout string
		status         int
	}{
		{"scontrol ping", "Slurmctld(primary) at login01 is DOWN\n", 1},
		{"systemctl start slurmctld", "", 1},
		{"printf 'ClusterName=c\\nNodeName=gpu01 CPUs=8 # a comment\\n' > /etc/slurm/slurm.conf && SLURM_CONF=/etc/slurm/slurm.conf scontrol show hostnames localhost", "localhost\n", 0},
		{"printf 'Nonsense here\\n' > /tmp/bad.conf; SLURM_CONF=/tmp/bad.conf scontrol show hostnames localhost", "", 1},
		{"systemctl reset-failed slurmctld; systemctl restart slurmctld && scontrol ping", "Slurmctld(primary) at login01 is UP\n", 0},
		{"scontrol reconfigure && scontrol show node -o | cut -d' ' -f1,5", "NodeName=gpu01 State=IDLE\n", 0},
		{"scontrol show node -o gpu09", "", 1},
		{"scontrol update nodename=gpu01 state=drain reason=removed by hand && scontrol show node -o gpu01 | cut -d' ' -f5-", "State=IDLE+DRAIN ThreadsPerCore=2 Reason=removed by hand\n", 0},
		{"scontrol update nodename=gpu01 state=resume && scontrol show node -o gpu01 | cut -d' ' -f5", "State=IDLE\n", 0},
		{"squeue -h -w gpu01 -t RUNNING -o %i", "", 0},
	} {
		if r := h.Run(c.script); r.Stdout != c.stdout || r.Status != c.status {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", c.script, r.Status, r.Stdout, r.Stderr, c.status, c.stdout)
		}
	}
	if u := h.Units.Get("slurmctld"); u.Reloads != 1 || u.Starts != 1 {
		t.Errorf("slurmctld %+v, want one start and one reconfigure", u)
	}
}
