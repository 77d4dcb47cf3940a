package beegfs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestDeregisterTarget(t *testing.T) {
	exit := func(status int, stderr string) error {
		return &transport.ExitError{Host: "login01", Status: status, Stderr: stderr}
	}
	for _, c := range []struct {
		name    string
		reply   error
		want    Deregistration
		reason  string
		refused string
	}{
		{name: "deleted", want: Deregistered},
		{name: "already gone", reply: exit(1, "Error: rpc error: code = Unknown desc = Delete target: target storage:101 does not exist\n"), want: NotRegistered},
		{name: "management down", reply: exit(1, "Error: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 10.0.0.10:8010: connect: connection refused\"\n"),
			want: MgmtdUnavailable, reason: "connection refused"},
		{name: "no beegfs-tools", reply: exit(127, ""), want: MgmtdUnavailable, reason: "package beegfs-tools"},
		{name: "no certificate on the host", reply: exit(1, "Error: reading certificate file failed: open /etc/beegfs/cert.pem: no such file or directory (hint: run 'beegfs --help' and review the options to configure TLS)\n"),
			want: MgmtdUnavailable, reason: "reading certificate file failed"},
		{name: "refused", reply: exit(1, "Error: rpc error: code = Unknown desc = Delete target: Target target_storage_101[storage:101, uid:5] is part of a buddy group\n"),
			refused: "rpc error: code = Unknown desc = Delete target: Target target_storage_101[storage:101, uid:5] is part of a buddy group"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Err: c.reply}}}
			res, err := DeregisterTarget(context.Background(), f, "login01", 101)
			var refused *RefusedError
			switch {
			case c.refused != "":
				if !errors.As(err, &refused) || refused.Message != c.refused {
					t.Fatalf("err = %v, want the refusal %q", err, c.refused)
				}
			case err != nil:
				t.Fatal(err)
			case res.Outcome != c.want || !strings.Contains(res.Reason, c.reason):
				t.Errorf("got %+v, want outcome %d with %q", res, c.want, c.reason)
			}
			if s := f.Scripts()[0]; !strings.Contains(s, "\n/opt/beegfs/sbin/beegfs target delete --mgmtd-addr login01:8010 --yes storage:101\n") {
				t.Errorf("script:\n%s", s)
			}
		})
	}
	if _, err := DeregisterTarget(context.Background(), &transporttest.Fake{T: t}, "login01;reboot", 101); err == nil {
		t.Error("a management host that is no host name was accepted")
	}
	if _, err := DeregisterNode(context.Background(), &transporttest.Fake{T: t}, "login01", "client", 1); err == nil {
		t.Error("a client node was accepted")
	}
}
