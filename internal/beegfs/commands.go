package beegfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The one-time setup tools (confirmed: their names and options, from the
// guide and the scripts' usage text).
const (
	SetupStorageTool = SbinDir + "/beegfs-setup-storage"
	SetupMetaTool    = SbinDir + "/beegfs-setup-meta"
	SetupClientTool  = SbinDir + "/beegfs-setup-client"
	SetupMgmtdTool   = SbinDir + "/beegfs-setup-mgmtd" // 7.x only
	MgmtdDaemon      = SbinDir + "/beegfs-mgmtd"
)

// ValidateMgmtdHost accepts an IP address or a DNS name. The setup scripts
// splice the management host into a sed expression delimited by '/', so only
// plain names and addresses are safe to pass.
func ValidateMgmtdHost(host string) error {
	if net.ParseIP(host) != nil || transport.IsHostName(host) {
		return nil
	}
	return fmt.Errorf("management host %q is not an address or host name", host)
}

// StorageSetup is one beegfs-setup-storage run.
type StorageSetup struct {
	Path      string
	NodeNumID int64
	TargetID  int64
	Mgmtd     string
}

// SetupStorageCommand is "beegfs-setup-storage -p PATH -s NODE -i TARGET -m
// MGMT". The script also writes storeAllowFirstRunInit = false and appends
// the UUID of PATH's filesystem to storeFsUUID (confirmed: it does so
// unless -u is given); the provider still verifies both afterwards.
func SetupStorageCommand(s StorageSetup) (string, error) {
	if err := ValidatePath(s.Path); err != nil {
		return "", err
	}
	if err := ValidateNumID("node_num_id", s.NodeNumID); err != nil {
		return "", err
	}
	if err := ValidateNumID("target_id", s.TargetID); err != nil {
		return "", err
	}
	if err := ValidateMgmtdHost(s.Mgmtd); err != nil {
		return "", err
	}
	return transport.Command(SetupStorageTool,
		"-p", s.Path,
		"-s", strconv.FormatInt(s.NodeNumID, 10),
		"-i", strconv.FormatInt(s.TargetID, 10),
		"-m", s.Mgmtd), nil
}

// SetupMetaCommand is "beegfs-setup-meta -p PATH -s ID -m MGMT".
func SetupMetaCommand(path string, nodeNumID int64, mgmtd string) (string, error) {
	if err := ValidatePath(path); err != nil {
		return "", err
	}
	if err := ValidateNumID("node_num_id", nodeNumID); err != nil {
		return "", err
	}
	if err := ValidateMgmtdHost(mgmtd); err != nil {
		return "", err
	}
	return transport.Command(SetupMetaTool, "-p", path, "-s", strconv.FormatInt(nodeNumID, 10), "-m", mgmtd), nil
}

// SetupClientCommand is "beegfs-setup-client -m MGMT". Unlike the others it
// only sets sysMgmtdHost and may run again.
func SetupClientCommand(mgmtd string) (string, error) {
	if err := ValidateMgmtdHost(mgmtd); err != nil {
		return "", err
	}
	return transport.Command(SetupClientTool, "-m", mgmtd), nil
}

// MgmtdInitCommand initialises the management store once: 8.x
// "beegfs-mgmtd --init", which creates db-file from beegfs-mgmtd.toml;
// 7.x "beegfs-setup-mgmtd -p DIR".
func MgmtdInitCommand(r Release, v7StoreDir string) (string, error) {
	if r.Major != 7 {
		return transport.Command(MgmtdDaemon, "--init"), nil
	}
	if err := ValidatePath(v7StoreDir); err != nil {
		return "", err
	}
	return transport.Command(SetupMgmtdTool, "-p", v7StoreDir), nil
}

// Outcome is what a one-time setup command did.
type Outcome int

const (
	// Initialised: the command succeeded now.
	Initialised Outcome = iota
	// AlreadyInitialised: the tool refused because its directory or database
	// is not new. For the setup scripts that only means "not empty": the
	// caller confirms it is the expected target by reading the ID files.
	AlreadyInitialised
	// Failed: anything else.
	Failed
)

func (o Outcome) String() string {
	switch o {
	case Initialised:
		return "initialised"
	case AlreadyInitialised:
		return "already initialised"
	default:
		return "failed"
	}
}

// alreadyInitialisedSigns are the tools' own words for "not new".
//   - beegfs-setup-storage: " * ERROR: Storage target directory is not
//     empty. ...", exit 1, printed on stdout (confirmed: the script echoes
//     without >&2).
//   - beegfs-setup-meta: " * ERROR: Storage directory is not empty. ...",
//     exit 1, stdout (confirmed); 7.x beegfs-setup-mgmtd is assumed to word
//     it the same way, being written from the same template.
//   - 8.x beegfs-mgmtd --init: exit 1 with "Creating database file ...
//     failed" on stderr (confirmed: main.rs prints the error chain with
//     {:#} and returns 1); the cause "File exists (os error 17)" is assumed
//     from its create-only open. "Database schema is up to date" is the
//     migration step's refusal on an existing current database (confirmed).
var alreadyInitialisedSigns = []string{
	"directory is not empty",
	"File exists (os error 17)",
	"Database schema is up to date",
}

// ClassifySetup sorts the result of a setup command. runErr is what the
// Executor returned; a transport failure (not an *ExitError) is passed
// through, since the command may not have run at all.
func ClassifySetup(tool string, res transport.Result, runErr error) (Outcome, error) {
	if runErr == nil {
		return Initialised, nil
	}
	var exit *transport.ExitError
	if !errors.As(runErr, &exit) {
		return Failed, fmt.Errorf("run %s: %w", tool, runErr)
	}
	output := string(res.Stdout) + "\n" + string(res.Stderr) + "\n" + exit.Stderr
	if exit.Status == 1 {
		for _, sign := range alreadyInitialisedSigns {
			if strings.Contains(output, sign) {
				return AlreadyInitialised, nil
			}
		}
	}
	return Failed, fmt.Errorf("%s on %s exited with status %d: %s", tool, exit.Host, exit.Status, toolMessage(res, exit))
}

// setupOutcome is ClassifySetup that also logs an initialisation as a change on the node.
func setupOutcome(ctx context.Context, ex transport.Executor, cmd, tool string, res transport.Result, runErr error) (Outcome, error) {
	out, err := ClassifySetup(tool, res, runErr)
	if out == Initialised {
		transport.Changed(ctx, ex, "ran "+cmd)
	}
	return out, err
}

// toolMessage picks the line that explains a failure. The setup scripts
// print their errors on stdout, so stderr alone is often empty.
func toolMessage(res transport.Result, exit *transport.ExitError) string {
	for _, out := range []string{string(res.Stdout), string(res.Stderr), exit.Stderr} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "ERROR") {
				return strings.TrimSpace(line)
			}
		}
	}
	if msg := strings.TrimSpace(exit.Stderr); msg != "" {
		return msg
	}
	return strings.TrimSpace(string(res.Stdout))
}
