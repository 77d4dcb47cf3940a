package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHostsMu serialises accept-new's read-check-append of known_hosts files within the
// process, so two first dials of one host record one key and the second is checked against it.
var knownHostsMu sync.Mutex

// readKnownHosts loads the known_hosts file. With AcceptNewHostKeys a missing file is an empty
// one: the first contact creates it, as OpenSSH does.
func readKnownHosts(cfg Config) (ssh.HostKeyCallback, error) {
	cb, err := knownhosts.New(cfg.KnownHostsFile)
	if err != nil && cfg.AcceptNewHostKeys && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return cb, err
}

// acceptNew trusts a host no file or pin knows and records its key. The file is read again
// under the lock first: a key another dial recorded meanwhile decides, so a second, different
// key for the host is refused like any changed key.
func (h *hostKeyChecker) acceptNew(remote net.Addr, key ssh.PublicKey, unknown *HostKeyError) error {
	knownHostsMu.Lock()
	defer knownHostsMu.Unlock()
	cb, err := readKnownHosts(h.cfg)
	if err != nil {
		return fmt.Errorf("read known_hosts for %s: %w", h.cfg.Name, err)
	}
	if cb != nil {
		recheck := &hostKeyChecker{cfg: h.cfg, knownHosts: cb}
		recheck.cfg.AcceptNewHostKeys = false
		err := recheck.check("", remote, key)
		var hkErr *HostKeyError
		if !errors.As(err, &hkErr) || len(hkErr.Known) > 0 || hkErr.Revoked {
			return err
		}
	}
	if err := appendKnownHost(h.cfg.KnownHostsFile, unknown.Line); err != nil {
		return fmt.Errorf("record the new host key of %s (%s) in %s: %w", h.cfg.Name, unknown.Fingerprint, h.cfg.KnownHostsFile, err)
	}
	return nil
}

// appendKnownHost adds line to the file, after a line break when the file's last line lacks one.
func appendKnownHost(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600) //nolint:gosec // G304: the admin's own known_hosts_file.
	if err != nil {
		return err
	}
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
