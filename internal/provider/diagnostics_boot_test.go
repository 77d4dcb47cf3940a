package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// A node that never came up is explained on boot_timeout: which node, where, how long was
// waited and how often, the last cause, and what to do.
func TestBootWaitErrorSaysWhatWasWaitedFor(t *testing.T) {
	last := errors.New(`connect to 10.0.0.13:22 through jump host login01: ssh: rejected: connect failed ("No route to host")`)
	err := &transport.WaitTimeoutError{Node: "10.0.0.13", Address: "10.0.0.13:22", Waiting: "ssh", Attempts: 41, Waited: 10*time.Minute + 300*time.Millisecond, Last: last}
	d := bootWaitError("gpu03", 10*time.Minute, err)
	detail := d.Detail()
	if d.Summary() != "Node Did Not Come Up" {
		t.Errorf("summary %q", d.Summary())
	}
	for _, want := range []string{"on node gpu03", "10.0.0.13:22", "waited 10m0s (boot_timeout = 10m)", "did not answer SSH in 41 attempts",
		"raise boot_timeout", "machine's console", "Original Error: " + last.Error()} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
	booted := bootWaitError("gpu03", time.Minute, fmt.Errorf("reading the boot state: %w", fmt.Errorf("%w: systemd's system state is \"maintenance\"", nodes.ErrBootFailed)))
	if booted.Summary() != "Node Boot Failed" || !strings.Contains(booted.Detail(), "maintenance") {
		t.Errorf("a failed boot: %s: %s", booted.Summary(), booted.Detail())
	}
}

// Only a node with boot_timeout that is created, or dialled at a new address, waits.
func TestWaitsForBootOnCreateAndNewAddress(t *testing.T) {
	r := &nodeResource{}
	node := func(address, timeout string) nodeModel {
		m := nodeModel{Name: types.StringValue("gpu03"), Address: types.StringValue(address), BootTimeout: types.StringNull()}
		if timeout != "" {
			m.BootTimeout = types.StringValue(timeout)
		}
		return m
	}
	same, moved := node("10.0.0.13", ""), node("10.0.0.14", "")
	cases := []struct {
		name  string
		m     nodeModel
		prior *nodeModel
		want  bool
	}{
		{"create with boot_timeout", node("10.0.0.13", "10m"), nil, true},
		{"create without", node("10.0.0.13", ""), nil, false},
		{"new address", node("10.0.0.13", "10m"), &moved, true},
		{"same address", node("10.0.0.13", "10m"), &same, false},
		{"boot_timeout unknown", nodeModel{Name: types.StringValue("gpu03"), BootTimeout: types.StringUnknown()}, nil, false},
	}
	for _, c := range cases {
		if got := r.waitsForBoot(c.m, c.prior); got != c.want {
			t.Errorf("%s: waitsForBoot %v, want %v", c.name, got, c.want)
		}
	}
}
