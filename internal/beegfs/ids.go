package beegfs

import (
	"fmt"
	"strconv"
	"strings"
)

// ID files in an initialised directory (confirmed: beegfs-setup-storage
// writes targetNumID and nodeNumID with echo, one decimal number and a
// newline; beegfs-setup-meta writes nodeNumID; the daemons keep
// originalNodeID, "contains first-run nodeID", a single line, per StorageTk).
const (
	TargetNumIDFile    = "targetNumID"
	NodeNumIDFile      = "nodeNumID"
	OriginalNodeIDFile = "originalNodeID"
	FormatFile         = "format.conf"
)

// Numeric IDs are 16-bit and 0 means "none" (confirmed: the setup scripts'
// usage text, "range 1..65535").
const (
	MinNumID = 1
	MaxNumID = 65535
)

// ParseNumID reads a targetNumID or nodeNumID file.
func ParseNumID(name string, content []byte) (uint16, error) {
	text := strings.TrimSuffix(string(content), "\n")
	if strings.ContainsAny(text, "\n") {
		return 0, fmt.Errorf("%s holds more than one line", name)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%s holds %q, not a number in %d..%d: %w", name, text, MinNumID, MaxNumID, err)
	}
	if n < MinNumID {
		return 0, fmt.Errorf("%s holds %d, outside %d..%d", name, n, MinNumID, MaxNumID)
	}
	return uint16(n), nil
}

// ParseOriginalNodeID reads an originalNodeID file: the node's string ID
// (its alias in 8.x, usually the hostname), first line only, as the daemon
// reads it.
func ParseOriginalNodeID(content []byte) (string, error) {
	first, _, _ := strings.Cut(string(content), "\n")
	id := strings.TrimSpace(first)
	if id == "" {
		return "", fmt.Errorf("%s is empty", OriginalNodeIDFile)
	}
	return id, nil
}

// ValidateNumID checks a numeric node or target ID given in configuration.
func ValidateNumID(what string, id int64) error {
	if id < MinNumID || id > MaxNumID {
		return fmt.Errorf("%s %d is outside BeeGFS's range %d..%d", what, id, MinNumID, MaxNumID)
	}
	return nil
}

// MaxSchemeNodeNumID is the largest node ID the guide's scheme can number:
// 655*100+1 = 65501 is the last target ID that fits in 16 bits.
const MaxSchemeNodeNumID = (MaxNumID - 1) / 100

// DefaultTargetID is the guide's numbering, <node>01: node 2 gets target
// 201, so the node is readable from the target ID.
func DefaultTargetID(nodeNumID int64) (int64, error) {
	if err := ValidateNumID("node_num_id", nodeNumID); err != nil {
		return 0, err
	}
	if nodeNumID > MaxSchemeNodeNumID {
		return 0, fmt.Errorf("node_num_id %d is above %d, the largest the guide's <node>01 target numbering fits in %d; set target_id explicitly",
			nodeNumID, MaxSchemeNodeNumID, MaxNumID)
	}
	return nodeNumID*100 + 1, nil
}

// TargetIdentity is one storage target as the provider tracks it.
type TargetIdentity struct {
	Host      string
	Directory string
	NodeNumID int64
	TargetID  int64
	// Declared marks a target another resource of the configuration plans, as opposed to one
	// found on disk, so a conflict with it is not described as what the host runs.
	Declared bool
}

// CheckIDConflicts refuses a candidate whose target ID is taken by another
// target, or whose node ID is taken by a storage service on another host. A
// second target on the same host shares its node's ID, as in the setup
// script's own example (node 4 with targets 401 and 402).
func CheckIDConflicts(existing []TargetIdentity, candidate TargetIdentity) error {
	if err := ValidateNumID("node_num_id", candidate.NodeNumID); err != nil {
		return err
	}
	if err := ValidateNumID("target_id", candidate.TargetID); err != nil {
		return err
	}
	for _, e := range existing {
		if e.Host == candidate.Host && e.Directory == candidate.Directory {
			continue // the candidate itself
		}
		if e.TargetID == candidate.TargetID {
			return fmt.Errorf("target_id %d is already %s %s:%s", e.TargetID, e.usedBy(), e.Host, e.Directory)
		}
		if e.NodeNumID == candidate.NodeNumID && e.Host != candidate.Host {
			return fmt.Errorf("node_num_id %d is already %s the storage service on %s", e.NodeNumID, e.usedBy(), e.Host)
		}
		if e.Host == candidate.Host && e.NodeNumID != candidate.NodeNumID {
			return fmt.Errorf("%s; a host has one storage service, so its targets share one node_num_id, and this target's is %d",
				e.runs(), candidate.NodeNumID)
		}
	}
	return nil
}

func (t TargetIdentity) usedBy() string {
	if t.Declared {
		return "declared for"
	}
	return "used by"
}

// runs says which storage node the target puts on its host: the one on disk, or the one
// another resource declares.
func (t TargetIdentity) runs() string {
	if t.Declared {
		return fmt.Sprintf("another target in the configuration, %s:%s, declares storage node %d on %s", t.Host, t.Directory, t.NodeNumID, t.Host)
	}
	return fmt.Sprintf("%s already runs storage node %d (target %s)", t.Host, t.NodeNumID, t.Directory)
}
