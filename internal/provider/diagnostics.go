package provider

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// nodeError builds the house diagnostic: what happened on which node, what to do, then the
// original error.
func nodeError(summary, node, happened, todo string, err error) diag.Diagnostic {
	return diag.NewErrorDiagnostic(summary, nodeDetail(node, happened, todo, err))
}

func nodeAttributeError(p path.Path, summary, node, happened, todo string, err error) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(p, summary, nodeDetail(node, happened, todo, err))
}

func nodeDetail(node, happened, todo string, err error) string {
	detail := fmt.Sprintf("%s on node %s.", happened, node)
	if todo != "" {
		detail += "\n\n" + todo
	}
	if err != nil {
		detail += "\n\nOriginal Error: " + err.Error()
	}
	return detail
}

// connectError explains a failed connection; a changed host key gets its own advice because
// it may be an attack and must never be waved through.
func connectError(node string, err error) diag.Diagnostic {
	var hk *transport.HostKeyError
	if errors.As(err, &hk) {
		return nodeError("Host Key Verification Failed", node,
			"The SSH host key presented does not match the known key, or no key is known",
			"If the node was reinstalled, verify the new key out of band and update known_hosts_file or host_keys. "+
				"Otherwise someone may be impersonating the node: do not proceed.", err)
	}
	return nodeError("Cannot Connect To Node", node,
		"The provider could not open an SSH session",
		"Check that the node is up, that its address resolves from the jump host, and the provider's user, key and sudo settings.", err)
}
