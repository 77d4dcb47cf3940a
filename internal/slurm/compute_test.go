package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestSlurmdDefaults(t *testing.T) {
	got, err := SlurmdDefaults("login01", 6817)
	if err != nil || string(got) != "SLURMD_OPTIONS=\"--conf-server login01:6817\"\n" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []struct {
		host string
		port int
	}{{"login01; rm -rf /", 6817}, {"", 6817}, {"login01", 0}, {"login01", 70000}} {
		if _, err := SlurmdDefaults(bad.host, bad.port); err == nil {
			t.Errorf("SlurmdDefaults(%q, %d): want an error", bad.host, bad.port)
		}
	}
}

func TestWaitNodeReady(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{Err: &transport.ExitError{Host: "login01", Status: 1, Stderr: "slurm_load_partitions: Unable to contact slurm controller"}},
		{Stdout: ""},
		{Stdout: "unknown*\n"},
		{Stdout: "idle\nidle\n"},
	}}
	state, err := WaitNodeReady(context.Background(), fake, "gpu03", time.Minute)
	if err != nil || state != "idle" {
		t.Fatalf("got %q, %v", state, err)
	}
	if len(fake.Calls) != 4 || !strings.Contains(fake.Calls[0].Script, "sinfo -a -h -N -n gpu03 -o %T") {
		t.Errorf("scripts: %q", fake.Scripts())
	}
}

func TestWaitNodeReadyGivesUp(t *testing.T) {
	replies := make([]transporttest.Reply, 50)
	for i := range replies {
		replies[i] = transporttest.Reply{Stdout: "drained\n"}
	}
	fake := &transporttest.Fake{T: t, Replies: replies}
	_, err := WaitNodeReady(context.Background(), fake, "gpu03", 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "node gpu03 is drained") || !errors.Is(err, errNotYet) {
		t.Errorf("err = %v", err)
	}
	if _, err := WaitNodeReady(context.Background(), fake, "gpu03;x", time.Second); err == nil {
		t.Error("a bad node name was accepted")
	}
}
