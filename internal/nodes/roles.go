package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// RoleUnits names, per node role, the systemd unit whose being enabled shows that a node has the
// role. Roles live only in the configuration; an imported node's roles are read from these.
var RoleUnits = []struct{ Role, Unit string }{
	{"controller", "slurmctld.service"},
	{"compute", "slurmd.service"},
	{"storage", "beegfs-storage.service"},
}

func rolesScript() string {
	units := make([]string, len(RoleUnits))
	for i, ru := range RoleUnits {
		units[i] = transport.Quote(ru.Unit)
	}
	// is-enabled exits non-zero for a disabled or missing unit; its word is what matters.
	return transport.ScriptEnv + "for u in " + strings.Join(units, " ") + `; do printf '%s %s\n' "$u" "$(systemctl is-enabled "$u" 2>/dev/null)"; done` + "\n"
}

// Roles returns the roles whose unit is enabled on the node, in RoleUnits order.
func Roles(ctx context.Context, ex transport.Executor) ([]string, error) {
	res, err := ex.Read(ctx, rolesScript())
	if err != nil {
		return nil, fmt.Errorf("read enabled units: %w", err)
	}
	return ParseRoles(string(res.Stdout)), nil
}

// ParseRoles reads the "UNIT STATE" lines of the roles script.
func ParseRoles(out string) []string {
	enabled := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		unit, state, _ := strings.Cut(strings.TrimSpace(line), " ")
		enabled[unit] = state == "enabled"
	}
	var roles []string
	for _, ru := range RoleUnits {
		if enabled[ru.Unit] && !slices.Contains(roles, ru.Role) {
			roles = append(roles, ru.Role)
		}
	}
	return roles
}
