package beegfs

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The services the guide guards with a systemd drop-in.
const (
	ServiceMgmtd   = "beegfs-mgmtd"
	ServiceMeta    = "beegfs-meta"
	ServiceStorage = "beegfs-storage"
	ServiceClient  = "beegfs-client"
)

// dropInName is the file name of a drop-in without ".conf": systemd reads
// any name, so a plain word keeps the path unambiguous.
var dropInName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// RequiresMountsDropIn is the second layer of the interlock: systemd does not
// start service before mountpoint is mounted. The guide's form is
// /etc/systemd/system/beegfs-storage.service.d/storage.conf with
// "[Unit]\nRequiresMountsFor=/data".
func RequiresMountsDropIn(service, name, mountpoint string) (transport.File, error) {
	switch service {
	case ServiceMgmtd, ServiceMeta, ServiceStorage:
	default:
		return transport.File{}, fmt.Errorf("no RequiresMountsFor drop-in is defined for %q", service)
	}
	if !dropInName.MatchString(name) {
		return transport.File{}, fmt.Errorf("drop-in name %q must be letters, digits, '-' or '_'", name)
	}
	// RequiresMountsFor takes a blank-separated list, so a path with a blank
	// would name two mountpoints.
	if err := ValidatePath(mountpoint); err != nil {
		return transport.File{}, fmt.Errorf("mountpoint: %w", err)
	}
	return transport.File{
		Path:    SystemdUnitDir + "/" + service + ".service.d/" + name + ".conf",
		Content: []byte("[Unit]\nRequiresMountsFor=" + mountpoint + "\n"),
		Owner:   "root",
		Group:   "root",
		Mode:    fs.FileMode(0o644),
	}, nil
}

// DropInGuards reports whether the service is kept from starting before
// mountpoint is mounted: by the provider's own drop-in want, which must then
// hold exactly its content, or, while that file is absent, by drop-ins an
// admin wrote under other names (the guide's storage.conf), whose
// RequiresMountsFor systemd adds up into required.
func DropInGuards(own FileState, want transport.File, required []string, mountpoint string) bool {
	if own.Exists {
		return string(own.Content) == string(want.Content)
	}
	return requires(required, mountpoint)
}

// GuardedByHand reports whether drop-ins an admin wrote under other names
// already require mountpoint while the provider's own is absent: then the
// provider writes none, and an apply on an adopted node adds no file.
func GuardedByHand(own FileState, required []string, mountpoint string) bool {
	return !own.Exists && requires(required, mountpoint)
}

func requires(required []string, mountpoint string) bool {
	for _, m := range required {
		if path.Clean(m) == path.Clean(mountpoint) {
			return true
		}
	}
	return false
}

// MountsConf is /etc/beegfs/beegfs-mounts.conf: one line per mount, the
// mountpoint and the client config file, as the guide writes it with
// "/home /etc/beegfs/beegfs-client.conf".
func MountsConf(mountpoint string) (transport.File, error) {
	if err := ValidatePath(mountpoint); err != nil {
		return transport.File{}, fmt.Errorf("mountpoint: %w", err)
	}
	return transport.File{
		Path:    MountsConfPath,
		Content: []byte(mountpoint + " " + ClientConfPath + "\n"),
		Owner:   "root",
		Group:   "root",
		Mode:    fs.FileMode(0o644),
	}, nil
}
