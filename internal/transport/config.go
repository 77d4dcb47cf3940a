package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Defaults applied to a zero Config field.
const (
	DefaultPort              = 22
	DefaultConnectTimeout    = 30 * time.Second
	DefaultKeepaliveInterval = 15 * time.Second
	DefaultSudoExe           = "sudo"
	// DefaultCommandTimeout bounds one command on a host, so a hung command cannot hold a
	// run forever. It is long: an apt install or an ordered restart may take minutes.
	DefaultCommandTimeout = 30 * time.Minute
)

// Config holds the resolved connection settings of one node.
type Config struct {
	// Name labels the node in messages; Address is used when it is empty.
	Name    string
	Address string
	Port    int
	User    string

	PrivateKey           []byte
	PrivateKeyPassphrase []byte
	// UseAgent adds the signers of the ssh-agent at $SSH_AUTH_SOCK.
	UseAgent bool

	// KnownHostsFile and HostKeys (authorized_keys format lines pinned for
	// this node) are both trusted; a host found in neither is refused.
	KnownHostsFile string
	HostKeys       []string
	// InsecureIgnoreHostKey skips host key checking. The caller warns.
	InsecureIgnoreHostKey bool
	// AcceptNewHostKeys trusts a host that neither KnownHostsFile nor HostKeys lists on first
	// contact and records its key in KnownHostsFile, as OpenSSH's StrictHostKeyChecking=accept-new
	// does; a key that differs from a known one is still refused.
	AcceptNewHostKeys bool

	ConnectTimeout    time.Duration
	KeepaliveInterval time.Duration
	// CommandTimeout caps the deadline of each command; a command past it is killed.
	CommandTimeout time.Duration

	SudoExe string
	// SudoPassword empty means passwordless sudo (sudo -n).
	SudoPassword []byte

	// Jump is the host to tunnel through; nil connects directly.
	Jump *Config
}

func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.KeepaliveInterval == 0 {
		c.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if c.CommandTimeout == 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.SudoExe == "" {
		c.SudoExe = DefaultSudoExe
	}
	if c.Name == "" {
		c.Name = c.Address
	}
	if c.Jump != nil {
		jump := c.Jump.withDefaults()
		c.Jump = &jump
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Address == "" {
		errs = append(errs, errors.New("address is empty"))
	}
	if c.User == "" {
		errs = append(errs, errors.New("user is empty"))
	}
	if c.Port < 1 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is out of range", c.Port))
	}
	if !c.InsecureIgnoreHostKey && c.KnownHostsFile == "" && len(c.HostKeys) == 0 {
		errs = append(errs, errors.New("no known_hosts file and no pinned host keys: host keys cannot be checked"))
	}
	if c.AcceptNewHostKeys && c.KnownHostsFile == "" {
		errs = append(errs, errors.New("accepting new host keys needs a known_hosts file to record them in"))
	}
	if len(c.PrivateKey) == 0 && !c.UseAgent {
		errs = append(errs, errors.New("neither a private key nor ssh-agent is configured"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("connection settings for %s: %w", c.Name, err)
	}
	if c.Jump != nil {
		if err := c.Jump.validate(); err != nil {
			return fmt.Errorf("jump host of %s: %w", c.Name, err)
		}
	}
	return nil
}

// hostPort is the address dialed and checked against known_hosts.
func (c Config) hostPort() string {
	return net.JoinHostPort(c.Address, strconv.Itoa(c.Port))
}

// key identifies one connection: the same user on the same address reached
// through the same chain of jump hosts shares it. Trust and credentials are
// part of it, so a connection checked under one node's host keys is never
// handed to a node that pins different ones.
func (c Config) key() string {
	var b strings.Builder
	for hop := &c; hop != nil; hop = hop.Jump {
		if hop != &c {
			b.WriteString(" via ")
		}
		b.WriteString(hop.User + "@" + hop.hostPort() + "#" + hop.trustDigest())
	}
	return b.String()
}

func (c Config) trustDigest() string {
	h := sha256.New()
	for _, part := range append([]string{c.KnownHostsFile, strconv.FormatBool(c.InsecureIgnoreHostKey), strconv.FormatBool(c.AcceptNewHostKeys),
		strconv.FormatBool(c.UseAgent), string(c.PrivateKey), string(c.PrivateKeyPassphrase)}, c.HostKeys...) {
		// Length prefixes keep ("ab","c") and ("a","bc") apart.
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// machineKey identifies the remote machine regardless of the login user, so
// every Host on it shares one lock.
func (c Config) machineKey() string {
	key := c.hostPort()
	if c.Jump != nil {
		key += " via " + c.Jump.key()
	}
	return key
}

// describe names the node for messages: "gpu01 (10.0.0.11:22)".
func (c Config) describe() string {
	if c.Name == c.Address {
		return c.hostPort()
	}
	return fmt.Sprintf("%s (%s)", c.Name, c.hostPort())
}
