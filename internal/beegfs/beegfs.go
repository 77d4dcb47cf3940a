package beegfs

import "github.com/gpucluster/terraform-provider-gpucluster/internal/transport"

// Executor runs a script as root on one host.
type Executor = transport.Executor

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
