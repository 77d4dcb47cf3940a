package beegfs

import (
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

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

// The host's shared read reports the services and the authentication file and certificate that
// the management checks on every node.
func init() {
	units.Share([]string{ServiceMgmtd + ".service", ServiceMeta + ".service", ServiceStorage + ".service", ServiceClient + ".service"},
		[]string{ConnAuthPath, TLSCertPath})
}
