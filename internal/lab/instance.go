package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// EnvInstance selects a lab instance other than the default one, so that a
// second lab can run beside it: each instance has its own network namespace,
// descriptor, state, logs and cgroups, and so can reuse the same addresses.
const EnvInstance = "GPUCLUSTER_LAB_INSTANCE"

// Short enough that every name derived from it stays within the kernel's
// 15 characters for an interface name.
var instancePattern = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// Instance names everything one lab creates on the machine. The zero value
// is the default lab with the names in notes/common.md.
type Instance struct {
	name string
}

// NewInstance validates an instance name; "" is the default lab.
func NewInstance(name string) (Instance, error) {
	if name != "" && !instancePattern.MatchString(name) {
		return Instance{}, fmt.Errorf("invalid lab instance %q: want a lowercase letter and up to 7 more letters or digits", name)
	}
	return Instance{name: name}, nil
}

// InstanceFromEnv returns the instance named by GPUCLUSTER_LAB_INSTANCE.
func InstanceFromEnv() (Instance, error) {
	return NewInstance(os.Getenv(EnvInstance))
}

// Name is "" for the default lab.
func (i Instance) Name() string { return i.name }

func (i Instance) suffix() string {
	if i.name == "" {
		return ""
	}
	return "-" + i.name
}

// Netns is the network namespace that holds the instance's bridge and hosts.
func (i Instance) Netns() string { return NetnsName + i.suffix() }

// Bridge is the instance's bridge inside its netns.
func (i Instance) Bridge() string {
	if i.name == "" {
		return BridgeName
	}
	return "gclab-" + i.name
}

// DescriptorPath is where `gpucluster-lab up` writes the instance's descriptor
// unless GPUCLUSTER_LAB names another path.
func (i Instance) DescriptorPath() string {
	return filepath.Join("/run/gpucluster-lab"+i.suffix(), filepath.Base(DefaultDescriptorPath))
}

func (i Instance) stateRoot() string { return StateRoot + i.suffix() }
func (i Instance) logRoot() string   { return LogRoot + i.suffix() }

// netnsEtcDir is bind-mounted file by file over /etc by `ip netns exec`, so
// clients started that way resolve lab host names.
func (i Instance) netnsEtcDir() string { return filepath.Join("/etc/netns", i.Netns()) }

// cgroupLeaf names the cgroup of one host's launcher; instances must not share them.
func (i Instance) cgroupLeaf(host string) string { return "lab" + i.suffix() + "-" + host }

func (i Instance) bootLogPath(host string) string { return filepath.Join(i.logRoot(), host+".log") }

// DescriptorPath is the descriptor tests and the lab command use: the path in
// GPUCLUSTER_LAB, else the selected instance's default.
func DescriptorPath() (string, error) {
	if p := os.Getenv(EnvDescriptor); p != "" {
		return p, nil
	}
	inst, err := InstanceFromEnv()
	if err != nil {
		return "", err
	}
	return inst.DescriptorPath(), nil
}
