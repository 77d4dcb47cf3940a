package slurm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// HealthCheckPath is the health check program on every compute node. Configless slurmctld
// sends a Prolog and an Epilog to the nodes but not HealthCheckProgram (fetch_config.c), so
// slurmd runs the program at this absolute path of its own node, which must hold it.
const HealthCheckPath = ConfDir + "/gpucluster-healthcheck.sh"

// HealthCheckField is the FieldError field of the health check program's content, apart from
// slurm.conf's HealthCheckProgram key, which names its path.
const HealthCheckField = "HealthCheckScript"

// HealthCheckNodeStates are HealthCheckNodeState's values that Slurm 24.11 knows
// (slurm.conf(5)); 25.11's START_ONLY would make the interval a program needs pointless.
var HealthCheckNodeStates = []string{"ANY", "ALLOC", "MIXED", "IDLE", "NONDRAINED_IDLE", "CYCLE"}

// healthCheckSettings are the health check keys, only while a program is set: a cluster
// without one may still name its own in Extra.
func (s ControllerSettings) healthCheckSettings() []setting {
	if s.HealthCheckProgram == "" {
		return nil
	}
	return []setting{
		{"HealthCheckProgram", HealthCheckPath}, {"HealthCheckInterval", itoa(int64(s.HealthCheckInterval))},
		{"HealthCheckNodeState", strings.Join(s.HealthCheckNodeState, ",")},
	}
}

// checkHealthCheck refuses a program slurmd could not run, and an interval or node states
// without a program. slurmd runs the program only while HealthCheckInterval is set (24.11
// has no other trigger), so a program needs one.
func (s ControllerSettings) checkHealthCheck() error {
	if err := CheckJobScript(s.HealthCheckProgram); err != nil {
		return &FieldError{Field: HealthCheckField, Err: fmt.Errorf("controller health check program: %w", err)}
	}
	switch {
	case s.HealthCheckInterval < 0:
		return &FieldError{Field: "HealthCheckInterval", Err: fmt.Errorf("controller: HealthCheckInterval %d is negative", s.HealthCheckInterval)}
	case s.HealthCheckProgram != "" && s.HealthCheckInterval == 0:
		return &FieldError{Field: HealthCheckField, Err: errors.New("controller: a health check program needs HealthCheckInterval, without which slurmd never runs it")}
	case s.HealthCheckProgram == "" && s.HealthCheckInterval != 0:
		return &FieldError{Field: "HealthCheckInterval", Err: errors.New("controller: HealthCheckInterval needs a health check program to run")}
	case s.HealthCheckProgram == "" && len(s.HealthCheckNodeState) > 0:
		return &FieldError{Field: "HealthCheckNodeState", Err: errors.New("controller: HealthCheckNodeState needs a health check program to run")}
	}
	for _, st := range s.HealthCheckNodeState {
		if !slices.Contains(HealthCheckNodeStates, st) {
			return &FieldError{Field: "HealthCheckNodeState", Err: fmt.Errorf("controller: HealthCheckNodeState %q: use %s", st, strings.Join(HealthCheckNodeStates, ", "))}
		}
	}
	return nil
}

// NamesHealthCheck tells whether slurm.conf's content names this provider's health check
// program, so the nodes may still hold it.
func NamesHealthCheck(slurmConf []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(slurmConf))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.EqualFold(key, "HealthCheckProgram") && value == HealthCheckPath {
			return true
		}
	}
	return false
}

// HealthCheckState is what a node holds at HealthCheckPath.
type HealthCheckState struct {
	// SHA256 is the file's digest, empty when there is no file.
	SHA256 string
	// Owner is "user:group:mode", as stat prints it ("root:root:755").
	Owner string
}

// healthCheckOwner is the owner and mode the program is written with: root runs it.
const healthCheckOwner = "root:root:755"

// readHealthCheckScript is not a shared read: the activation reads right before it writes.
var readHealthCheckScript = transport.NewScript().Set("p", HealthCheckPath).Text(readHealthCheck).String()

//go:embed read_health_check.sh
var readHealthCheck string

// ReadHealthCheck reads the node's health check program's digest, owner and mode.
func ReadHealthCheck(ctx context.Context, ex transport.Executor) (HealthCheckState, error) {
	res, err := ex.Sudo(ctx, readHealthCheckScript, nil)
	if err != nil {
		return HealthCheckState{}, fmt.Errorf("read %s: %w", HealthCheckPath, err)
	}
	fields := strings.Fields(string(res.Stdout))
	switch len(fields) {
	case 0:
		return HealthCheckState{}, nil
	case 2:
		return HealthCheckState{SHA256: fields[0], Owner: fields[1]}, nil
	}
	return HealthCheckState{}, fmt.Errorf("read %s: unexpected output %q", HealthCheckPath, res.Stdout)
}

// Problem says what differs from the program content, "" for none; content "" wants no file.
func (st HealthCheckState) Problem(content string) string {
	switch {
	case content == "" && st.SHA256 != "":
		return HealthCheckPath + " is left over"
	case content == "":
		return ""
	case st.SHA256 == "":
		return HealthCheckPath + " is missing"
	case st.SHA256 != contentSHA256(content):
		return HealthCheckPath + " differs"
	case st.Owner != healthCheckOwner:
		return fmt.Sprintf("%s has owner and mode %s, not %s", HealthCheckPath, st.Owner, healthCheckOwner)
	}
	return ""
}

func contentSHA256(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// HealthCheckHost is what writing the program on a node needs.
type HealthCheckHost interface {
	transport.Executor
	transport.FileWriter
}

// WriteHealthCheck writes the program on a node, whole (a temp file renamed over it), owned
// by root with mode 0755, and only when it differs. ConfDir is made first: the activation
// writes to a new GPU server before gpucluster_slurm_compute installs slurmd there.
func WriteHealthCheck(ctx context.Context, h HealthCheckHost, content string) (changed bool, err error) {
	if _, err := h.Sudo(ctx, transport.ScriptEnv+"mkdir -p -- "+transport.Quote(ConfDir), nil); err != nil {
		return false, fmt.Errorf("create %s: %w", ConfDir, err)
	}
	changed, err = h.WriteFile(ctx, transport.File{Path: HealthCheckPath, Content: []byte(content), Owner: "root", Group: "root", Mode: 0o755})
	if err != nil {
		return false, fmt.Errorf("write %s: %w", HealthCheckPath, err)
	}
	return changed, nil
}

//go:embed remove_health_check.sh
var removeHealthCheck string

// RemoveHealthCheck removes the program from a node and tells whether there was one.
func RemoveHealthCheck(ctx context.Context, ex transport.Executor) (removed bool, err error) {
	script := transport.NewScript().Set("p", HealthCheckPath).Text(removeHealthCheck).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", HealthCheckPath, err)
	}
	return strings.TrimSpace(string(res.Stdout)) == "removed", nil
}
