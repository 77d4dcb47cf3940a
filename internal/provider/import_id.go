package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// Every import ID has the form OBJECT[@NODE[,NODE...]]: the object the resource manages, then
// the nodes it is found on. A Slurm object is found on its controller, whose slurm.conf or
// slurmdbd holds it; an account or the MUNGE key on every node that holds a copy. The guide
// docs/guides/import-ids.md lists each resource's form, and TestImportIDGuide parses every
// example it gives, so the two cannot drift apart.

// importIDGrammar closes every Invalid Import ID error.
const importIDGrammar = "Every import ID has the form OBJECT[@NODE[,NODE...]], where @ names the nodes the object is found on; " +
	"the provider's guide \"Import IDs\" (docs/guides/import-ids.md) gives each resource's form. Nothing was read or changed on any host."

// slurmObjectForm is the import form of the objects defined on a Slurm controller.
const slurmObjectForm = "NAME@CONTROLLER, or NAME alone when the controller is the provider's login_node"

// parseNameAtController splits NAME@CONTROLLER. A bare NAME, which is what the resource's id
// shows, is found on loginNode: the guide's login node is the Slurm controller. Without a
// login_node a bare NAME names no controller and is refused.
func parseNameAtController(id, example, loginNode string) (name, controller string, diags diag.Diagnostics) {
	name, controller, hasController := strings.Cut(id, "@")
	if !hasController {
		controller = loginNode
	}
	switch {
	case !slurm.NamePattern.MatchString(name):
		diags.Append(invalidImportID(id, slurmObjectForm, example, fmt.Sprintf("%q is not a Slurm name.", name)))
	case !hasController && controller == "":
		diags.Append(invalidImportID(id, slurmObjectForm, example,
			"It names no controller and the provider sets no login_node: add @CONTROLLER, the node that runs slurmctld."))
	case !nodeRefPattern.MatchString(controller):
		diags.Append(invalidImportID(id, slurmObjectForm, example, fmt.Sprintf("%q is not a node name or address.", controller)))
	}
	return name, controller, diags
}

// importLoginNode is the login node bare Slurm import IDs are found on, empty when the provider
// sets none.
func (c *cluster) importLoginNode() string {
	if c == nil {
		return ""
	}
	return c.settings.loginNode
}
