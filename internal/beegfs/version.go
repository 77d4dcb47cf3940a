package beegfs

import (
	"fmt"
	"regexp"
	"strings"

	version "github.com/hashicorp/go-version"
)

// Release is an installed BeeGFS version, reduced to the major release the
// provider gates on.
type Release struct {
	Version *version.Version
	Major   int
}

// versionToken finds a version in what a package manager or a daemon
// prints: "8.4.0" from dpkg-query's ${Version}, "7.4.6-1" with a Debian
// revision, "1:8.4.0" with an epoch, or "beegfs-mgmtd 8.4.0" from a clap
// --version (the 8.x management service is a Rust clap program).
var versionToken = regexp.MustCompile(`(?:^|\s)(?:\d+:)?(\d+\.\d+(?:\.\d+)?)(?:[-~+][0-9A-Za-z.~+-]*)?(?:\s|$)`)

// ParseRelease reads an installed version. Only 7.x and 8.x are known; an
// older or newer major is refused rather than treated like a neighbour,
// because the files this package edits changed between majors.
func ParseRelease(out string) (Release, error) {
	m := versionToken.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return Release{}, fmt.Errorf("no BeeGFS version in %q", strings.TrimSpace(out))
	}
	v, err := version.NewVersion(m[1])
	if err != nil {
		return Release{}, fmt.Errorf("parse BeeGFS version %q: %w", m[1], err)
	}
	major := v.Segments()[0]
	if major != 7 && major != 8 {
		return Release{}, fmt.Errorf("BeeGFS %s is not supported: the provider knows the 7.x and 8.x file layouts", v)
	}
	return Release{Version: v, Major: major}, nil
}

// ConfigKind is how a file is written.
type ConfigKind int

const (
	// KeyValue is BeeGFS's "key = value" format (Conf).
	KeyValue ConfigKind = iota
	// TOML is the 8.x management service's format (SetTOMLString).
	TOML
)

// Layout is what differs between the majors in the files and commands the
// provider touches. Each field says where it comes from.
type Layout struct {
	// MgmtdConfigPath and MgmtdConfigKind: 8.x reads beegfs-mgmtd.toml
	// (confirmed: the guide, BeeGFS 8.4); 7.x reads beegfs-mgmtd.conf
	// (confirmed: beegfs-setup-mgmtd's DEFAULT_CFG_PATH).
	MgmtdConfigPath string
	MgmtdConfigKind ConfigKind
	// MgmtdStoreKey names where the management data lives: 8.x db-file, a
	// SQLite file (confirmed: the guide; the Rust service's config); 7.x
	// storeMgmtdDirectory, a directory (confirmed: beegfs-setup-mgmtd).
	MgmtdStoreKey string
	// MgmtdAuthKey names the shared-secret file in the management config:
	// 7.x connAuthFile like every other daemon (confirmed: 7.x configs);
	// 8.x auth-file (assumed: the Rust service's config field auth_file
	// with its file keys spelled in kebab case, as db-file is).
	MgmtdAuthKey string
	// ServerAuthKey names the shared-secret file in beegfs-meta.conf,
	// beegfs-storage.conf and beegfs-client.conf: connAuthFile in both
	// majors (confirmed for 7.x by the shipped storage config; assumed
	// unchanged in 8.x, whose meta/storage/client remain the C++ daemons).
	ServerAuthKey string
	// NeedsTLSCert: 8.x clients and tools reach the management API over
	// TLS with cert.pem (confirmed: the guide); 7.x has no such API.
	NeedsTLSCert bool
}

// Layout returns the file layout of the release.
func (r Release) Layout() Layout {
	if r.Major == 7 {
		return Layout{
			MgmtdConfigPath: MgmtdConfV7Path,
			MgmtdConfigKind: KeyValue,
			MgmtdStoreKey:   "storeMgmtdDirectory",
			MgmtdAuthKey:    "connAuthFile",
			ServerAuthKey:   "connAuthFile",
		}
	}
	return Layout{
		MgmtdConfigPath: MgmtdTOMLPath,
		MgmtdConfigKind: TOML,
		MgmtdStoreKey:   "db-file",
		MgmtdAuthKey:    "auth-file",
		ServerAuthKey:   "connAuthFile",
		NeedsTLSCert:    true,
	}
}
