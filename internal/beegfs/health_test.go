package beegfs

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// healthOutput is the check's stdout with one target offline (beegfs-go
// v8.4.0's lines, shortened).
const healthOutput = `#####################################################
Running Health Check for beegfs://login01:8010
#####################################################

✅ Management TLS -> Certificate expires in 365 days.
✅ License Status -> No issues detected. Run 'beegfs license' for more details.

🛑 Reachability -> Not all targets are responding.
✅ Consistency -> All mirrors are synchronized.
⚠️  Mapping Status -> Not all targets are mapped to a storage node.
`

func TestCheckHealth(t *testing.T) {
	for _, c := range []struct {
		name   string
		stdout string
		err    error
		passed bool
		want   []string
	}{
		{name: "passes", stdout: "✅ Reachability -> All targets are responding.\n", passed: true},
		{name: "failing checks", stdout: healthOutput, err: &transport.ExitError{Status: 1, Stderr: errChecksFailed + "\n"},
			want: []string{"🛑 Reachability -> Not all targets are responding.", "⚠️  Mapping Status -> Not all targets are mapped to a storage node."}},
		{name: "management down", err: &transport.ExitError{Status: 1, Stderr: "Error: unable to proceed without a working management node: unable to get file system UUID from the management node: rpc error: code = Unavailable\n"},
			want: []string{"Error: unable to proceed without a working management node: unable to get file system UUID from the management node: rpc error: code = Unavailable"}},
		{name: "no beegfs command", err: &transport.ExitError{Status: 127, Stderr: "/opt/beegfs/sbin/beegfs is not installed (package beegfs-tools)\n"},
			want: []string{"/opt/beegfs/sbin/beegfs is not installed (package beegfs-tools)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: c.stdout, Err: c.err}}}
			h, err := CheckHealth(context.Background(), f, "login01")
			if err != nil {
				t.Fatal(err)
			}
			if h.Passed != c.passed || !reflect.DeepEqual(h.Failing, c.want) {
				t.Errorf("got %+v, want passed=%t %q", h, c.passed, c.want)
			}
			if !strings.Contains(f.Scripts()[0], "\n/opt/beegfs/sbin/beegfs health check --mgmtd-addr login01:8010\n") {
				t.Errorf("script:\n%s", f.Scripts()[0])
			}
		})
	}
}
