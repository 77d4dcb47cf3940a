package beegfs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Files in a BeeGFS directory. The setup scripts write format.conf, which
// marks a directory as set up (the daemons' checkStorageFormatFileExists),
// and nodeNumID and targetNumID when given -s and -i, each one decimal number
// and a newline; otherwise the daemons write them once the management service
// has numbered the node and target. The storage daemon keeps each target's
// string ID in targetID and the metadata daemon (8.3 and later) its token in
// registrationToken. BeeGFS 8 keeps 7.x's originalNodeID only as
// originalNodeID.v7, with a note appended, and never writes originalNodeID.
const (
	TargetNumIDFile       = "targetNumID"
	NodeNumIDFile         = "nodeNumID"
	FormatFile            = "format.conf"
	TargetIDFile          = "targetID"
	RegistrationTokenFile = "registrationToken"
	OriginalNodeIDV7File  = "originalNodeID.v7"
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

// ParseOriginalNodeID reads an originalNodeID.v7 file: the 7.x node's string
// ID (usually the hostname), first line only, as 7.x read it; the note BeeGFS 8
// appends follows it.
func ParseOriginalNodeID(content []byte) (string, error) {
	first, _, _ := strings.Cut(string(content), "\n")
	id := strings.TrimSpace(first)
	if id == "" {
		return "", fmt.Errorf("%s is empty", OriginalNodeIDV7File)
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

// IDFile is one ID file and the number it should hold.
type IDFile struct {
	Name string
	ID   int64
}

// WriteAwaitedIDs writes into dir, set up without -s or -i, the ID files those options would
// have written, one decimal number and a newline each, as root. An ID file already there is
// left as it is: the caller reads the directory again and compares.
func WriteAwaitedIDs(ctx context.Context, ex transport.Executor, dir string, files ...IDFile) error {
	if err := ValidatePath(dir); err != nil {
		return err
	}
	s := transport.NewScript().Set("d", dir)
	for _, f := range files {
		if err := ValidateNumID(f.Name, f.ID); err != nil {
			return err
		}
		s.Set("f", f.Name).Set("n", strconv.FormatInt(f.ID, 10)).
			Text(`[ -e "$d/$f" ] || { umask 022; echo "$n" > "$d/$f"; }`)
	}
	if _, err := ex.Sudo(ctx, s.String(), nil); err != nil {
		return fmt.Errorf("write the ID files of %s: %w", dir, err)
	}
	transport.Changed(ctx, ex, "wrote the ID files of "+dir)
	return nil
}
