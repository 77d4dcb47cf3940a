package transport

import (
	"context"
	"fmt"
	"io/fs"
)

// StateDir is where the provider keeps its records on a node: the UID ledger on the login
// node, the firewall's ownership ledger and marker on every node.
const StateDir = "/var/lib/gpucluster"

// StateDirMode is StateDir's one mode, owned by root:root. Only root writes the records; anyone
// may read them, as they hold nothing that /etc/passwd and UFW's own files do not.
const StateDirMode fs.FileMode = 0o755

// StateDirText creates StateDir and sets its owner and mode also when it exists, so the
// directory ends the same whichever writer comes first, and one that an earlier version or a
// root shell's umask left otherwise is put right. A script that writes in StateDir starts with
// it instead of paying EnsureStateDir's round trip; it ends the script when it fails.
var StateDirText = Command("mkdir", "-p", "--", StateDir) + " &&\n" +
	Command("chown", "root:root", "--", StateDir) + " &&\n" +
	Command("chmod", fmt.Sprintf("%04o", uint32(StateDirMode)), "--", StateDir) + " || exit\n"

var stateDirScript = NewScript().Text(StateDirText).String()

// EnsureStateDir makes StateDir exist, root:root with StateDirMode. Every writer of a file in
// StateDir calls it before writing.
func EnsureStateDir(ctx context.Context, ex Executor) error {
	if _, err := ex.Sudo(ctx, stateDirScript, nil); err != nil {
		return fmt.Errorf("create %s: %w", StateDir, err)
	}
	return nil
}
