package beegfs

import (
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// journalOnFailure follows a failed systemctl action with the unit's last
// journal lines on stderr: a daemon's refusal (the interlock saying which
// filesystem it expected) is written there, not in systemctl's own message.
const journalOnFailure = `{ rc=$?; journalctl -u "$unit" -n 15 --no-pager -o cat >&2; exit $rc; }`

func systemctl(ctx context.Context, ex transport.Executor, service, action, done string) error {
	if !transport.UnitNamePattern.MatchString(service) {
		return fmt.Errorf("unit name %q is not valid", service)
	}
	script := transport.NewScript().Set("unit", service+".service").Text(action + " || " + journalOnFailure).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("%s: %w", service, err)
	}
	transport.Changed(ctx, ex, done+" "+service)
	return nil
}

// EnableNow enables and starts a service; an already running one is left
// alone, as systemctl does.
func EnableNow(ctx context.Context, ex transport.Executor, service string) error {
	return systemctl(ctx, ex, service, `systemctl enable --now "$unit"`, "enabled and started")
}

// Restart restarts a service so it reads a changed config, and enables it.
func Restart(ctx context.Context, ex transport.Executor, service string) error {
	return systemctl(ctx, ex, service, `systemctl enable "$unit" && systemctl restart "$unit"`, "restarted")
}

// StartServer enables and starts beegfs-meta or beegfs-storage, or restarts it. The unit's
// failed state and start-limit counter are reset first: the provider's starts are deliberate
// and confirmed afterwards (ConfirmServerStarted), so systemd's guard against a crash loop
// must not refuse an apply that follows a refused start, or a few quick ones.
func StartServer(ctx context.Context, ex transport.Executor, service string, restart bool) error {
	if restart {
		return systemctl(ctx, ex, service, `systemctl reset-failed "$unit" 2>/dev/null; systemctl enable "$unit" && systemctl restart "$unit"`, "restarted")
	}
	return systemctl(ctx, ex, service, `systemctl reset-failed "$unit" 2>/dev/null; systemctl enable --now "$unit"`, "enabled and started")
}

// DisableNow stops and disables a service. Its data is not touched.
func DisableNow(ctx context.Context, ex transport.Executor, service string) error {
	return systemctl(ctx, ex, service, `systemctl disable --now "$unit"`, "stopped and disabled")
}

// DaemonReload makes systemd read changed unit files and drop-ins.
func DaemonReload(ctx context.Context, ex transport.Executor) error {
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+"systemctl daemon-reload\n", nil); err != nil {
		return fmt.Errorf("systemctl daemon-reload: %w", err)
	}
	transport.Changed(ctx, ex, "reloaded systemd's units")
	return nil
}

// WriteDropIn writes a drop-in and reloads systemd when it changed, so the
// next start of the service honours it. The unit's .d directory is created
// first: WriteFile writes through a temporary file next to the target, and a
// fresh host has no such directory.
func WriteDropIn(ctx context.Context, w transport.FileWriter, ex transport.Executor, f transport.File) (changed bool, err error) {
	dir := path.Dir(f.Path)
	if err := ValidatePath(dir); err != nil {
		return false, err
	}
	if _, err := ex.Sudo(ctx, transport.ScriptEnv+"mkdir -p -m 0755 -- "+transport.Quote(dir)+"\n", nil); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	changed, err = w.WriteFile(ctx, f)
	if err != nil || !changed {
		return changed, err
	}
	return true, DaemonReload(ctx, ex)
}

// WriteConf writes an edited config file back over the content it was read
// from, failing with transport.ErrWriteConflict when another writer changed
// it in between. Only a changed content is written.
func WriteConf(ctx context.Context, w transport.FileWriter, path string, read FileState, c *Conf, mode fs.FileMode) (changed bool, err error) {
	content := c.Bytes()
	if read.Exists && string(read.Content) == string(content) {
		return false, nil
	}
	return w.WriteFile(ctx, transport.File{
		Path:         path,
		Content:      content,
		Owner:        "root",
		Group:        "root",
		Mode:         mode,
		ExpectSHA256: read.SHA256(),
	})
}

// RemoveDropIn deletes a drop-in and reloads systemd when there was one.
func RemoveDropIn(ctx context.Context, ex transport.Executor, path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	script := transport.NewScript().Set("p", path).Text(`if [ -e "$p" ]; then rm -f -- "$p" && systemctl daemon-reload; fi`).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// ReadService reads what systemd says of one service, for a step that needs nothing else
// of the host: starting or stopping a daemon.
func ReadService(ctx context.Context, ex transport.Executor, service string) (ServiceState, error) {
	st, err := ReadHost(ctx, ex, HostQuery{Services: []string{service}})
	if err != nil {
		return ServiceState{}, err
	}
	return st.Services[service], nil
}
