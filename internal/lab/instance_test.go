package lab

import "testing"

func TestInstanceNames(t *testing.T) {
	tests := []struct {
		name                                        string
		netns, bridge, descriptor, state, log, cgrp string
	}{
		// The default lab keeps the names every helper and the Makefile use.
		{"", "gpucluster-lab", "gclab0", DefaultDescriptorPath, StateRoot, LogRoot, "lab-gpu01"},
		{"iso", "gpucluster-lab-iso", "gclab-iso", "/run/gpucluster-lab-iso/lab.json",
			"/var/lib/gpucluster-lab-iso", "/var/log/gpucluster-lab-iso", "lab-iso-gpu01"},
		{"b2345678", "gpucluster-lab-b2345678", "gclab-b2345678", "/run/gpucluster-lab-b2345678/lab.json",
			"/var/lib/gpucluster-lab-b2345678", "/var/log/gpucluster-lab-b2345678", "lab-b2345678-gpu01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := NewInstance(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{inst.Netns(), inst.Bridge(), inst.DescriptorPath(), inst.stateRoot(), inst.logRoot(), inst.cgroupLeaf("gpu01")}
			want := []string{tt.netns, tt.bridge, tt.descriptor, tt.state, tt.log, tt.cgrp}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("name %d = %q, want %q", i, got[i], want[i])
				}
			}
			if len(inst.Bridge()) > 15 {
				t.Errorf("bridge name %q exceeds the kernel's 15 characters", inst.Bridge())
			}
		})
	}
}

func TestNewInstanceRefuses(t *testing.T) {
	for _, name := range []string{"B", "1a", "a-b", "a/b", "toolongname", "../x", " a"} {
		if _, err := NewInstance(name); err == nil {
			t.Errorf("NewInstance(%q) accepted", name)
		}
	}
}

func TestDescriptorPathFromEnv(t *testing.T) {
	t.Setenv(EnvDescriptor, "")
	t.Setenv(EnvInstance, "iso")
	if got, err := DescriptorPath(); err != nil || got != "/run/gpucluster-lab-iso/lab.json" {
		t.Errorf("DescriptorPath() = %q, %v", got, err)
	}
	t.Setenv(EnvDescriptor, "/x/lab.json")
	if got, err := DescriptorPath(); err != nil || got != "/x/lab.json" {
		t.Errorf("DescriptorPath() with %s = %q, %v", EnvDescriptor, got, err)
	}
	t.Setenv(EnvDescriptor, "")
	t.Setenv(EnvInstance, "Bad!")
	if _, err := DescriptorPath(); err == nil {
		t.Error("DescriptorPath() accepted an invalid instance")
	}
}
