package slurm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

func TestQueuedJobRecords(t *testing.T) {
	// sdiag's output, and the queue size and whether it was there, as "3 true".
	want := map[string]string{
		"Server thread count:  1\nAgent queue size:     0\nAgent count:          0\nDBD Agent queue size: 3\n": "3 true",
		"Agent queue size:     7\nDBD Agent queue size: 0\n":                                                   "0 true",
		"Server thread count:  1\nAgent queue size:     2\n":                                                   "0 false",
	}
	for sdiag, w := range want {
		if n, found := queuedJobRecords(sdiag); fmt.Sprint(n, found) != w {
			t.Errorf("%q: got %d %v, want %s", sdiag, n, found, w)
		}
	}
}

// draining answers sdiag with a DBD agent queue that shrinks by one on every call, and
// records sacctmgr changes with the queue size they were made at.
type draining struct {
	queue   int
	changes []string
}

func (d *draining) Read(ctx context.Context, script string) (transport.Result, error) {
	return d.Sudo(ctx, script, nil)
}

func (d *draining) Sudo(_ context.Context, script string, _ []byte) (transport.Result, error) {
	lines := strings.Split(strings.TrimSpace(script), "\n")
	cmd := strings.ReplaceAll(lines[len(lines)-1], "'", "")
	switch {
	case cmd == "sdiag":
		out := fmt.Sprintf("Agent queue size:     0\nDBD Agent queue size: %d\n", d.queue)
		d.queue = max(d.queue-1, 0)
		return transport.Result{Stdout: []byte(out)}, nil
	case strings.HasPrefix(cmd, "sacctmgr -i "):
		d.changes = append(d.changes, fmt.Sprintf("%d %s", d.queue, cmd))
	}
	return transport.Result{}, nil
}

func TestDeletionsWaitForJobRecords(t *testing.T) {
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: 6819}
	d := &draining{queue: 2}
	ctx := context.Background()
	for _, err := range []error{DeleteUser(ctx, d, c, "alice"), DeleteAccount(ctx, d, c, "research"), DeleteQOS(ctx, d, c, "gpu1")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := "0 sacctmgr -i delete user where name=alice cluster=cluster\n" +
		"0 sacctmgr -i delete account where name=research cluster=cluster\n" +
		"0 sacctmgr -i delete account where name=research\n" +
		"0 sacctmgr -i delete qos where name=gpu1"
	if got := strings.Join(d.changes, "\n"); got != want {
		t.Errorf("deletions, each after the queue size it was made at:\n%s\nwant:\n%s", got, want)
	}
}
