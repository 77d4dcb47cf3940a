// Package beegfs knows the files and commands of a BeeGFS installation as the
// guide sets it up: the management, metadata and storage services on their
// own filesystems, guarded by the safety interlock, and the client mounted
// over /home. It holds no Terraform types; the provider's resources build on
// it.
//
// Sources. Facts marked "confirmed" below were read in ThinkParQ's published
// scripts and sources (beegfs-setup-storage, beegfs-setup-meta,
// beegfs-setup-client, StorageTk's ID file names, the Rust management
// service's main and config) and in the guide. Facts marked "assumed" were
// not found in a source and are written so a wrong guess fails closed.
package beegfs

import (
	"context"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Executor runs a script as root on one host.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

// Where the guide installs BeeGFS (confirmed: the setup scripts' defaults).
const (
	SbinDir         = "/opt/beegfs/sbin"
	ConfDir         = "/etc/beegfs"
	StorageConfPath = ConfDir + "/beegfs-storage.conf"
	MetaConfPath    = ConfDir + "/beegfs-meta.conf"
	ClientConfPath  = ConfDir + "/beegfs-client.conf"
	MountsConfPath  = ConfDir + "/beegfs-mounts.conf"
	MgmtdTOMLPath   = ConfDir + "/beegfs-mgmtd.toml"
	MgmtdConfV7Path = ConfDir + "/beegfs-mgmtd.conf"
	ConnAuthPath    = ConfDir + "/conn.auth"
	TLSCertPath     = ConfDir + "/cert.pem"
	SystemdUnitDir  = "/etc/systemd/system"
)
