package fakehost

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"strings"
)

// MUNGE as Debian packages it: munge and libmunge2, a munge system account, /etc/munge with a
// key made at install, and munged, which reads the key when it starts. A credential made with
// munge -n decodes with unmunge on any host whose munged runs with the same key, once per host.
const (
	MungeVersion = "0.5.15-2"
	mungeKeyPath = "/etc/munge/munge.key"
	mungeUID     = 106
)

// mungeState is munged's memory: the key it started with and the credentials it decoded.
type mungeState struct {
	key     []byte
	decoded map[string]bool
	made    int
}

func addMunge(h *Host) {
	// The programs come with the package, so they are not on the host before it is installed.
	for name, c := range map[string]Command{"munge": mungeCmd, "unmunge": unmunge, "mungekey": mungekey, "journalctl": journalctl} {
		h.commands[name] = c
	}
	h.AddPackage("libmunge2", Package{Version: MungeVersion})
	h.AddPackage("munge", Package{Version: MungeVersion, Install: installMunge})
}

func installMunge(h *Host) {
	if h.Installed("libmunge2") == "" {
		h.InstallPackage("libmunge2")
	}
	for _, p := range []string{"/usr/bin/munge", "/usr/bin/unmunge", "/usr/sbin/mungekey", "/usr/sbin/munged"} {
		must(h.FS.WriteFile(p, []byte("#!fakehost\n"), 0o755))
	}
	h.addSystemAccount("munge", mungeUID, "/nonexistent")
	must(h.FS.MkdirAll("/etc/munge", 0o700))
	must(h.FS.Chown("/etc/munge", mungeUID, mungeUID))
	if _, err := h.FS.Stat(mungeKeyPath, false); err != nil {
		must(h.FS.WriteFile(mungeKeyPath, randomKey(), 0o600))
		must(h.FS.Chown(mungeKeyPath, mungeUID, mungeUID))
	}
	h.InstallUnit("munge.service", func() error { return h.startMunged() })
	h.Units.mu.Lock()
	defer h.Units.mu.Unlock()
	u := h.Units.state("munge.service")
	if err := h.startMunged(); err == nil {
		u.Enabled, u.Active = true, true
		u.Starts++
	}
}

func randomKey() []byte {
	key := make([]byte, 128)
	_, _ = rand.Read(key) // crypto/rand.Read never fails on Linux
	return key
}

// startMunged loads the key as munged does, refusing one it would refuse.
func (h *Host) startMunged() error {
	key, err := h.FS.ReadFile(mungeKeyPath)
	if err != nil {
		return err
	}
	fi, err := h.FS.Stat(mungeKeyPath, true)
	if err != nil {
		return err
	}
	uid, _ := ownerOf(fi)
	switch {
	case len(key) < 32 || len(key) > 1024:
		return errors.New("munged: Error: Keyfile size is invalid")
	case uid != mungeUID || fi.Mode().Perm()&0o077 != 0:
		return errors.New("munged: Error: Keyfile is insecure")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.munge.key = key
	h.munge.decoded = map[string]bool{}
	return nil
}

func (h *Host) mungedKey() ([]byte, bool) {
	if !h.Units.Get("munge.service").Active {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.munge.key, true
}

const mungeSocketError = `Error: Failed to access "/run/munge/munge.socket.2": No such file or directory`

func keyTag(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// mungeCmd models `munge -n`: an empty credential, tagged with munged's key.
func mungeCmd(c *Call) int {
	f, _, ok := parseFlags(c, c.Args[1:], "n", "", map[string]byte{"--no-input": 'n'})
	if !ok {
		return 127
	}
	if !f.has('n') {
		return c.NotModelled("munge with input")
	}
	key, up := c.Host.mungedKey()
	if !up {
		return c.Errorf(1, "%s", mungeSocketError)
	}
	c.Host.mu.Lock()
	c.Host.munge.made++
	n := c.Host.munge.made
	c.Host.mu.Unlock()
	c.Printf("MUNGE:%s:%s:%d:\n", keyTag(key), c.Host.Name, n)
	return 0
}

// unmunge decodes a credential from stdin: Success once per host with the same key, then
// Replayed; Invalid with another key.
func unmunge(c *Call) int {
	if len(c.Args) > 1 {
		return c.NotModelled("unmunge options")
	}
	cred, _ := io.ReadAll(c.Stdin)
	key, up := c.Host.mungedKey()
	if !up {
		return c.Errorf(1, "%s", mungeSocketError)
	}
	fields := strings.Split(strings.TrimSpace(string(cred)), ":")
	if len(fields) != 5 || fields[0] != "MUNGE" {
		c.Println("STATUS:          Invalid credential format (9)")
		return c.Errorf(9, "Error: Invalid credential format")
	}
	if fields[1] != keyTag(key) {
		c.Println("STATUS:          Invalid credential (15)")
		return c.Errorf(15, "Error: Invalid credential")
	}
	c.Host.mu.Lock()
	replayed := c.Host.munge.decoded[string(cred)]
	c.Host.munge.decoded[string(cred)] = true
	c.Host.mu.Unlock()
	if replayed {
		c.Println("STATUS:          Replayed credential (17)")
		return c.Errorf(17, "Error: Replayed credential")
	}
	c.Printf("STATUS:          Success (0)\nENCODE_HOST:     %s\nUID:             root (0)\nGID:             root (0)\nLENGTH:          0\n\n", fields[2])
	return 0
}

// mungekey models `mungekey --create --force --keyfile PATH [--bits N]`.
func mungekey(c *Call) int {
	f, _, ok := parseFlags(c, c.Args[1:], "cf", "kb", map[string]byte{"--create": 'c', "--force": 'f', "--keyfile": 'k', "--bits": 'b'})
	if !ok {
		return 127
	}
	if !f.has('c') {
		return c.NotModelled("mungekey without --create")
	}
	p := mungeKeyPath
	if f.has('k') {
		p = c.Path(f['k'])
	}
	key := randomKey()
	if f.has('b') {
		bits, err := strconv.Atoi(f['b'])
		if err != nil || bits%8 != 0 {
			return c.Errorf(1, "invalid number of bits")
		}
		key = make([]byte, bits/8)
		_, _ = rand.Read(key)
	}
	if _, err := c.Host.FS.Stat(p, false); err == nil && !f.has('f') {
		return c.Errorf(1, "Failed to create \"%s\": File exists", p)
	}
	if err := c.Host.FS.WriteFile(p, key, 0o600); err != nil {
		return errStatus(c, err)
	}
	if err := c.Host.FS.Chmod(p, 0o600); err != nil {
		return errStatus(c, err)
	}
	return 0
}

// journalctl has nothing to show: a fake daemon leaves no log.
func journalctl(c *Call) int {
	_, _, ok := parseFlags(c, c.Args[1:], "P", "uno", map[string]byte{"--no-pager": 'P'})
	if !ok {
		return 127
	}
	return 0
}
