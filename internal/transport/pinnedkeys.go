package transport

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// PinnedKey is one pinned host key in known_hosts form (the provider's host_keys): the hosts
// it vouches for and the key.
type PinnedKey struct {
	hosts []string
	key   string
}

// ParsePinnedKeys reads pinned keys in known_hosts form. A line without a host list is
// refused: a key pinned for no host in particular would be trusted for every node.
func ParsePinnedKeys(lines []string) ([]PinnedKey, error) {
	pins := make([]PinnedKey, 0, len(lines))
	for i, line := range lines {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("host_keys[%d]: want \"HOST[,HOST...] TYPE BASE64\" as in known_hosts, got %q", i, line)
		}
		key := fields[1] + " " + fields[2]
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key)); err != nil {
			return nil, fmt.Errorf("host_keys[%d]: %w", i, err)
		}
		pins = append(pins, PinnedKey{hosts: strings.Split(fields[0], ","), key: key})
	}
	return pins, nil
}

// KeysFor returns the pinned keys whose host list names the node under any of its names, in
// the "[host]:port" form known_hosts uses for ports other than 22.
func KeysFor(pins []PinnedKey, port int, names ...string) []string {
	var wanted []string
	for _, n := range names {
		if n != "" {
			wanted = append(wanted, knownhosts.Normalize(net.JoinHostPort(n, strconv.Itoa(port))))
		}
	}
	var keys []string
	for _, p := range pins {
		if slices.ContainsFunc(p.hosts, func(h string) bool { return slices.Contains(wanted, knownhosts.Normalize(h)) }) {
			keys = append(keys, p.key)
		}
	}
	return keys
}
