package munge

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// The key's place and protection as the guide installs it.
const (
	KeyPath  = "/etc/munge/munge.key"
	KeyOwner = "munge"
	KeyGroup = "munge"
	KeyMode  = fs.FileMode(0o400)
	Package  = "munge"
	service  = "munge"
	keyDir   = "/etc/munge"
)

// The host's shared read reports munged's unit, the key and MUNGE's packages, which every
// node's plan reads.
func init() {
	units.Share([]string{service + ".service"}, []string{KeyPath})
	packages.Share(PinnedPackages...)
}

// munged's own limits on the key length (MUNGE_KEY_LEN_MIN_BYTES and _MAX_BYTES).
const (
	minKeyBytes = 32
	maxKeyBytes = 1024
)

// KeyWriter installs a file as root, its content on stdin.
type KeyWriter interface {
	transport.Executor
	transport.FileWriter
}

// Fingerprint identifies a key without revealing it: the hex SHA-256 of its bytes.
func Fingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// NodeState is what one node shows of its key and daemon, read without
// reading the key itself.
type NodeState struct {
	KeyExists   bool
	Fingerprint string
	Owner       string
	Group       string
	Mode        fs.FileMode
	Active      bool
	Enabled     bool
}

// ReadState reads the key's fingerprint, owner and mode, and munged's state, from the host's
// shared read of unit states and key files (units.SharedFiles has KeyPath): only the key's
// checksum crosses the wire.
func ReadState(ctx context.Context, ex transport.Executor) (NodeState, error) {
	key, err := units.ReadFile(ctx, ex, KeyPath)
	if err != nil {
		return NodeState{}, fmt.Errorf("read MUNGE state: %w", err)
	}
	u, err := units.Read(ctx, ex, service+".service")
	if err != nil {
		return NodeState{}, fmt.Errorf("read MUNGE state: %w", err)
	}
	return NodeState{
		KeyExists: key.Exists, Fingerprint: key.SHA256, Owner: key.Owner, Group: key.Group, Mode: key.Mode,
		Active: u.Active == "active", Enabled: u.Enabled == "enabled",
	}, nil
}

// Problems says in words what differs on node from a key with fingerprint
// want, installed as the guide says, with munged running and enabled.
func Problems(node, want string, st NodeState) []string {
	if !st.KeyExists {
		problems := []string{"missing on " + node}
		if !st.Active {
			problems = append(problems, "munge not running on "+node)
		}
		return problems
	}
	var problems []string
	if st.Fingerprint != want {
		problems = append(problems, "different key on "+node)
	}
	if st.Owner != KeyOwner || st.Group != KeyGroup {
		problems = append(problems, fmt.Sprintf("owner %s:%s on %s, want %s:%s", st.Owner, st.Group, node, KeyOwner, KeyGroup))
	}
	if st.Mode != KeyMode {
		problems = append(problems, fmt.Sprintf("mode %04o on %s, want %04o", uint32(st.Mode), node, uint32(KeyMode)))
	}
	if !st.Active {
		problems = append(problems, "munge not running on "+node)
	} else if !st.Enabled {
		problems = append(problems, "munge not enabled on "+node)
	}
	return problems
}

// generateScript makes a new key with mungekey in a private temporary file
// next to the real one, prints it and removes it: the key that is in use is
// replaced only by Install, on every node alike.
var generateScript = transport.NewScript().Set("dir", keyDir).Text(generateKey).String()

//go:embed generate_key.sh
var generateKey string

// GenerateKey makes a new random key on the host with mungekey and returns
// it. Nothing on the host changes.
func GenerateKey(ctx context.Context, ex transport.Executor) ([]byte, error) {
	res, err := ex.Sudo(ctx, generateScript, nil)
	if err != nil {
		return nil, fmt.Errorf("generate a MUNGE key with mungekey: %w", err)
	}
	if err := checkKeySize(len(res.Stdout)); err != nil {
		return nil, fmt.Errorf("generate a MUNGE key with mungekey: %w", err)
	}
	return res.Stdout, nil
}

// ReadKey reads the key in use on the host; exists is false when it has none.
func ReadKey(ctx context.Context, r transport.FileReader) (key []byte, exists bool, err error) {
	key, exists, err = r.ReadFile(ctx, KeyPath)
	if err != nil || !exists {
		return nil, exists, err
	}
	if err := checkKeySize(len(key)); err != nil {
		return nil, true, fmt.Errorf("%s: %w", KeyPath, err)
	}
	return key, true, nil
}

// checkKeySize refuses what munged would refuse, naming only the size.
func checkKeySize(n int) error {
	if n < minKeyBytes || n > maxKeyBytes {
		return fmt.Errorf("the key is %d bytes; munged needs %d to %d", n, minKeyBytes, maxKeyBytes)
	}
	return nil
}
