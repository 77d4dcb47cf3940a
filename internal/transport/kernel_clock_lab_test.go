package transport_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
)

// A root command that came in over SSH reads the kernel clock as on a real server, so the
// facts never fall back to timedatectl (which starts systemd-timedated on every plan), while
// setting the clock stays refused: the lab lets its hosts call adjtimex(2), not change the
// machine's time.
func TestLabKernelClockOverSSH(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	h := labHost(ctx, t, l, "gpu01")

	f, err := nodes.Gather(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.TimeSyncDetail, "kernel clock: ") {
		t.Errorf("time sync read from %q, want the kernel clock", f.TimeSyncDetail)
	}

	// ADJ_MAXERROR with the value just read: a change in name only, should the kernel allow it.
	// Exit 1 is EPERM, the refusal a host without CAP_SYS_TIME gets.
	const setMaxError = `my %nr = (x86_64 => 159, aarch64 => 171);
my $machine = ` + "`uname -m`" + `; chomp $machine;
my $nr = $nr{$machine} // exit 3;
my $t = "\0" x 512;
syscall($nr, $t) >= 0 or exit 4;
my $set = pack("L", 4) . "\0" x 20 . substr($t, 24, 8) . "\0" x 480;
exit(syscall($nr, $set) >= 0 ? 0 : $!{EPERM} ? 1 : 5);`
	res, err := h.Sudo(ctx, "perl -e '"+setMaxError+"'; echo $?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "1" {
		t.Errorf("setting the kernel clock's maximum error from gpu01 exited %s, want 1 (refused with EPERM)", got)
	}
}
