package transport

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError reports a host key that is not trusted: unknown, changed or
// revoked. It is never retried: a changed key may be an attack.
type HostKeyError struct {
	Host    string // node name
	Address string // host:port that was dialed
	// Algorithm, Fingerprint and Offered describe the key the server offered;
	// Offered is its authorized_keys form, ready to pin after verification.
	Algorithm   string
	Fingerprint string
	Offered     string
	// Line is the offered key as a known_hosts line naming the node under the names the
	// provider checks: the form both a known_hosts file and host_keys take.
	Line string
	// Known lists the trusted keys for this host as "TYPE SHA256:...".
	// Empty means the host is unknown.
	Known          []string
	Revoked        bool
	KnownHostsFile string
}

func (e *HostKeyError) Error() string {
	offered := fmt.Sprintf("%s %s", e.Algorithm, e.Fingerprint)
	switch {
	case e.Revoked:
		return fmt.Sprintf("host key of %s (%s) is revoked in known_hosts: the server offered %s", e.Host, e.Address, offered)
	case len(e.Known) > 0:
		return fmt.Sprintf("host key of %s (%s) has changed: the server offered %s but the trusted keys are %s. "+
			"This is either a man-in-the-middle attack or a reinstalled host; verify the new key out of band "+
			"before replacing the old one in known_hosts or host_keys", e.Host, e.Address, offered, strings.Join(e.Known, ", "))
	default:
		return fmt.Sprintf("host key of %s (%s) is not known: the server offered %s. After verifying the fingerprint "+
			"out of band, add this line to %s or to the provider's host_keys: %s",
			e.Host, e.Address, offered, e.knownHostsName(), e.Line)
	}
}

func (e *HostKeyError) knownHostsName() string {
	if e.KnownHostsFile == "" {
		return "a known_hosts file"
	}
	return e.KnownHostsFile
}

// hostKeyChecker decides whether a server's key is trusted for one node,
// from a known_hosts file and keys pinned in configuration.
type hostKeyChecker struct {
	cfg        Config
	knownHosts ssh.HostKeyCallback
	pinned     []ssh.PublicKey
}

func newHostKeyChecker(cfg Config) (*hostKeyChecker, error) {
	h := &hostKeyChecker{cfg: cfg}
	if cfg.KnownHostsFile != "" {
		cb, err := readKnownHosts(cfg)
		if err != nil {
			return nil, fmt.Errorf("read known_hosts for %s: %w", cfg.Name, err)
		}
		h.knownHosts = cb
	}
	for i, line := range cfg.HostKeys {
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("pinned host key %d of %s: %w", i+1, cfg.Name, err)
		}
		// A known_hosts line parses as a key with "options" (its host list); taking it would
		// trust the key for every host, so only bare "type base64" pins are accepted.
		if len(options) > 0 {
			return nil, fmt.Errorf("pinned host key %d of %s has a host list or options; pin only \"type base64\"", i+1, cfg.Name)
		}
		h.pinned = append(h.pinned, key)
	}
	return h, nil
}

// names are the known_hosts names this node may be listed under: the address
// it is dialed at, and its name (a key listed for the name proves the server
// is that node, the way ssh's HostKeyAlias does).
func (h *hostKeyChecker) names() []string {
	port := strconv.Itoa(h.cfg.Port)
	names := []string{net.JoinHostPort(h.cfg.Address, port)}
	if h.cfg.Name != "" && h.cfg.Name != h.cfg.Address {
		names = append(names, net.JoinHostPort(h.cfg.Name, port))
	}
	return names
}

func (h *hostKeyChecker) check(_ string, remote net.Addr, key ssh.PublicKey) error {
	if slices.ContainsFunc(h.pinned, func(p ssh.PublicKey) bool { return sameKey(p, key) }) {
		return nil
	}
	hkErr := &HostKeyError{
		Host:           h.cfg.Name,
		Address:        h.cfg.hostPort(),
		Algorithm:      key.Type(),
		Fingerprint:    ssh.FingerprintSHA256(key),
		Offered:        strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))),
		Line:           knownhosts.Line(h.names(), key),
		KnownHostsFile: h.cfg.KnownHostsFile,
	}
	known := slices.Clone(h.pinned)
	if h.knownHosts != nil {
		for _, name := range h.names() {
			err := h.knownHosts(name, tcpAddrOf(remote), key)
			if err == nil {
				return nil
			}
			var keyErr *knownhosts.KeyError
			var revoked *knownhosts.RevokedError
			switch {
			case errors.As(err, &revoked):
				hkErr.Revoked = true
				return hkErr
			case errors.As(err, &keyErr):
				for _, k := range keyErr.Want {
					known = append(known, k.Key)
				}
			default:
				return fmt.Errorf("check host key of %s: %w", h.cfg.describe(), err)
			}
		}
	}
	if len(known) == 0 && h.cfg.AcceptNewHostKeys {
		return h.acceptNew(remote, key, hkErr)
	}
	for _, k := range known {
		hkErr.Known = append(hkErr.Known, k.Type()+" "+ssh.FingerprintSHA256(k))
	}
	hkErr.Known = uniqueSorted(hkErr.Known)
	return hkErr
}

// knownKeys lists every trusted key of this node. knownhosts has no lookup,
// so it is asked to check a throwaway key: the mismatch lists what it knows.
func (h *hostKeyChecker) knownKeys() []ssh.PublicKey {
	keys := slices.Clone(h.pinned)
	if h.knownHosts == nil {
		return keys
	}
	for _, name := range h.names() {
		var keyErr *knownhosts.KeyError
		if err := h.knownHosts(name, &net.TCPAddr{IP: net.IPv4zero}, probeKey()); errors.As(err, &keyErr) {
			for _, k := range keyErr.Want {
				keys = append(keys, k.Key)
			}
		}
	}
	return keys
}

// algorithms lists the host key algorithms to offer, so the server presents
// a key we can check instead of its preferred type we know nothing about.
// When no key is known, OpenSSH's order: the key the unknown-host error shows,
// or accept-new records, is the ed25519 key wherever the node has one.
func (h *hostKeyChecker) algorithms() []string {
	var algos []string
	for _, key := range h.knownKeys() {
		algos = append(algos, algorithmsForKeyType(key.Type())...)
	}
	if len(algos) == 0 {
		return []string{ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return uniqueSorted(algos)
}

// FingerprintCommand is the command that shows, on the node itself, the fingerprint of the
// key the server offered.
func (e *HostKeyError) FingerprintCommand() string {
	kind := strings.TrimPrefix(e.Algorithm, "ssh-")
	if strings.HasPrefix(kind, "ecdsa") {
		kind = "ecdsa"
	}
	return "ssh-keygen -lf /etc/ssh/ssh_host_" + kind + "_key.pub"
}

func algorithmsForKeyType(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		// The key type ssh-rsa signs with SHA-2 (or SHA-1, which x/crypto
		// and OpenSSH 8.8+ refuse).
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return []string{keyType}
}

// tcpAddrOf gives knownhosts the *net.TCPAddr it insists on, even for a
// connection tunneled through a jump host.
func tcpAddrOf(a net.Addr) net.Addr {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

var probeKey = sync.OnceValue(func() ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("generate probe key: %v", err))
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		panic(fmt.Sprintf("wrap probe key: %v", err))
	}
	return key
})

func sameKey(a, b ssh.PublicKey) bool {
	return string(a.Marshal()) == string(b.Marshal())
}

func uniqueSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
