package beegfs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

//go:embed server_started.sh
var serverStartedScript string

// ServerRegisterDeadline bounds how long a started metadata or storage daemon
// has to register with the management service. The real daemons wait for it
// forever, so only a deadline turns an unreachable management service into
// an answer.
var ServerRegisterDeadline = 30 * time.Second

// registeredLine is what the metadata and storage daemons log once the
// management service has accepted their heartbeat.
const registeredLine = "Node registration successful."

// Exit statuses of server_started.sh.
const (
	serverExited        = 10
	serverNotRegistered = 11
)

// ServerStartError says why a started metadata or storage daemon is not
// serving: it ended, or it did not register in time. Line is the daemon's
// own refusal ("Error: ...") or its last line.
type ServerStartError struct {
	Service  string
	Exited   bool
	State    string
	Line     string
	Deadline time.Duration
}

func (e *ServerStartError) Error() string {
	line := e.Line
	if line == "" {
		line = "(no line in its journal)"
	}
	if e.Exited {
		return fmt.Sprintf("%s started, then ended (%s): %s", e.Service, e.State, line)
	}
	return fmt.Sprintf("%s did not register with the management service within %s; its last line: %s", e.Service, e.Deadline, line)
}

// ConfirmServerStarted waits, up to ServerRegisterDeadline, until the daemon
// systemctl has just started (or restarted) logs its registration, and
// fails as soon as it ends.
func ConfirmServerStarted(ctx context.Context, ex transport.Executor, service string) error {
	if !transport.UnitNamePattern.MatchString(service) {
		return fmt.Errorf("unit name %q is not valid", service)
	}
	deadline := ServerRegisterDeadline
	script := transport.NewScript().
		Set("unit", service+".service").
		Set("deadline", strconv.Itoa(int(deadline.Seconds()))).
		Set("registered", registeredLine).
		Text(serverStartedScript).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err == nil {
		return nil
	}
	var exit *transport.ExitError
	if !errors.As(err, &exit) || (exit.Status != serverExited && exit.Status != serverNotRegistered) {
		return fmt.Errorf("confirm that %s started: %w", service, err)
	}
	state, lines := parseServerLines(string(res.Stdout))
	return &ServerStartError{
		Service:  service,
		Exited:   exit.Status == serverExited,
		State:    state,
		Line:     daemonLine(lines),
		Deadline: deadline,
	}
}

func parseServerLines(out string) (state string, lines []string) {
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(l, "state="); ok && state == "" {
			state = s
			continue
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return state, lines
}

// daemonLine picks the line that explains the outcome: the daemon's
// "Error: ..." or "Unrecoverable error: ..." refusal, else its last line.
func daemonLine(lines []string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "Unrecoverable error: ") {
			return l
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}
