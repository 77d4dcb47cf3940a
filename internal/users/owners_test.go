package users

import (
	"context"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestReadIDOwnersLocalShell(t *testing.T) {
	// The machine's own getent answers: root holds UID 0 and GID 0, 4294967 is free.
	owners, err := ReadIDOwners(context.Background(), transporttest.Shell{}, []int64{0, 4294967}, []int64{0})
	if err != nil {
		t.Fatal(err)
	}
	if owners.UIDs[0] != "root" || owners.GIDs[0] != "root" {
		t.Errorf("got %+v, want root for UID 0 and GID 0", owners)
	}
	if name, ok := owners.UIDs[4294967]; ok {
		t.Errorf("UID 4294967 owned by %q, want nobody", name)
	}
}

func TestReadIDOwnersOneRoundTrip(t *testing.T) {
	fake := &transporttest.Fake{Replies: []transporttest.Reply{{Stdout: transporttest.Sections("@@gpucluster passwd 1001\nalice:x:1001:100::/home/alice:/bin/bash\n@@rc 0\n@@gpucluster group 100\n@@rc 2\n")}}}
	owners, err := ReadIDOwners(context.Background(), fake, []int64{1001}, []int64{100})
	if err != nil {
		t.Fatal(err)
	}
	if owners.UIDs[1001] != "alice" || len(owners.GIDs) != 0 {
		t.Errorf("got %+v", owners)
	}
	if calls := fake.Scripts(); len(calls) != 1 || !strings.Contains(calls[0], "owner passwd 1001") {
		t.Errorf("scripts %q, want one round trip asking for UID 1001", calls)
	}
}
