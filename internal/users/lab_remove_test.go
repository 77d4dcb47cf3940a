package users

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// userdel on Debian deletes a primary group named like the user; RemoveUser keeps it, because
// such a group may be a gpucluster_group of its own.
func TestLabRemoveUserKeepsGroupOfTheSameName(t *testing.T) {
	ctx, l := lab.RequireWithin(t, time.Minute)
	const node, name = "gpu02", "gpctest_same"
	ex := transporttest.LabHost{Lab: l, Host: node}
	t.Cleanup(func() {
		_, _, _ = l.Exec(context.Background(), node, "userdel "+name+" 2>/dev/null; groupdel "+name+" 2>/dev/null; true")
	})
	if _, err := EnsureGroup(ctx, ex, name, 59101); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureUser(ctx, ex, UserSpec{Name: name, UID: 59101, PrimaryGroup: name, Shell: "/bin/sh"}); err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveUser(ctx, ex, name); err != nil || !removed {
		t.Fatalf("RemoveUser = %v, %v", removed, err)
	}
	out, _, err := l.Exec(ctx, node, "getent passwd "+name+"; getent group "+name)
	if got := strings.TrimSpace(out); got != name+":x:59101:" {
		t.Errorf("after RemoveUser: %q (%v), want only the group %s with GID 59101", got, err, name)
	}
}
