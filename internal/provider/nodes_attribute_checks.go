package provider

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// notAmongNodes refuses the value of the node attribute name (home_on, controller) when the
// resource's nodes do not list it; todo says why the node must be one of them.
func notAmongNodes(attr path.Path, summary, name, value string, nodeNames []string, todo string) diag.Diagnostics {
	if slices.Contains(nodeNames, value) {
		return nil
	}
	return diag.Diagnostics{diag.NewAttributeErrorDiagnostic(attr, summary,
		fmt.Sprintf("%s is %q, which is not one of nodes %v. %s", name, value, nodeNames, todo))}
}
