package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/firewall"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// refuseLockout turns a firewall change that would drop the provider's own SSH connection into
// an error that says which rule is missing and, through advice, what to do.
func refuseLockout(ctx context.Context, h *transport.Host, node string, rules []firewall.Rule, enabled bool, incoming, change string, attr path.Path,
	advice func(string, firewall.Connection) string) diag.Diagnostics {
	if !firewall.CanLockOut(rules, enabled, incoming) {
		return nil
	}
	conn, err := firewall.SSHConnection(ctx, h)
	if err != nil {
		return diag.Diagnostics{nodeError("Cannot Check For Lockout", node, "Finding the address the provider connects from failed, so it cannot prove the change keeps it connected", "", err)}
	}
	err = firewall.CheckLockout(rules, enabled, incoming, conn, change)
	if err == nil {
		return nil
	}
	if attr.Equal(path.Empty()) {
		return diag.Diagnostics{nodeError("Firewall Would Lock Out The Provider", node, "The change was refused", advice(node, conn), err)}
	}
	return diag.Diagnostics{nodeAttributeError(attr, "Firewall Would Lock Out The Provider", node, "The change was refused", advice(node, conn), err)}
}

// sshRuleExample is a rule that admits conn on node, in configuration.
func sshRuleExample(node string, conn firewall.Connection) string {
	return fmt.Sprintf("  resource \"gpucluster_firewall_rule\" \"ssh\" {\n    node    = %q\n    port    = \"%d\"\n    from    = %q\n    comment = \"SSH\"\n  }",
		node, conn.Port, conn.Source.String())
}

// denyRuleAdvice is what to do when a deny rule would lock the provider out.
func denyRuleAdvice(node string, conn firewall.Connection) string {
	return fmt.Sprintf("Nothing was changed on the node. Narrow the rule's from so that it leaves out %s, or put an allow rule for it first. "+
		"Terraform adds the rules in any order, so only a rule already on the node counts; for example, apply this one first:\n\n%s",
		conn.Source, sshRuleExample(node, conn))
}

// keepRuleAdvice is what to do when removing a rule would lock the provider out.
func keepRuleAdvice(node string, conn firewall.Connection) string {
	return "Nothing was changed on the node. Keep this rule until another one admits the connection: declare that rule, apply, and only then remove this one " +
		"(Terraform deletes a replaced rule before it adds the new one, so the rule that admits SSH cannot be replaced in one apply). For example:\n\n" +
		sshRuleExample(node, conn)
}

// declareRuleAdvice is what to do when enabling UFW would lock the provider out.
func declareRuleAdvice(node string, conn firewall.Connection) string {
	return "Nothing was changed. Declare the rule first and refer to it from gpucluster_firewall.ssh_rule (or depends_on):\n\n" + sshRuleExample(node, conn)
}
