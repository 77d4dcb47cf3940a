package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

const allowNewUIDAttr = "allow_new_uid_for_retired_name"

const allowNewUIDDescription = "Allow a name that the UID ledger records as retired (a user destroyed earlier) to come back " +
	"with a UID other than its old one. Files on the shared /home are owned by number, so everything the earlier account left, " +
	"its home included, keeps the old UID: the new account does not own it until it is changed by hand (`chown`), and the old UID " +
	"stays retired, never given to anyone. Without this such a plan is refused, naming the old UID. Coming back with the old UID " +
	"is always allowed and gives the name its files back. Only the first apply needs it: from then on the ledger records the name " +
	"with the new UID. Defaults to `false`."

// checkLedger is the cluster's checkLedger for a user, which also refuses a retired name given a
// new UID unless the configuration allows it.
func (r *userResource) checkLedger(ctx context.Context, plan userModel) diag.Diagnostics {
	name, uid := plan.Name.ValueString(), plan.UID.ValueInt64()
	var checks []ledgerCheck
	if !plan.AllowNewUID.IsUnknown() && !plan.AllowNewUID.ValueBool() {
		checks = append(checks, func(ledger *users.Ledger, ledgerNode string) diag.Diagnostic {
			return retiredNameError(ledger, ledgerNode, name, uid)
		})
	}
	return r.cluster.checkLedger(ctx, users.KindUser, name, uid, path.Root("uid"), checks...)
}

func retiredNameError(ledger *users.Ledger, ledgerNode, name string, uid int64) diag.Diagnostic {
	err := ledger.CheckRetiredName(users.KindUser, name, uid)
	if err == nil {
		return nil
	}
	return nodeAttributeError(path.Root("uid"), "Retired User Name With A New UID", ledgerNode,
		fmt.Sprintf("The UID ledger records user %s as retired under another UID", name),
		fmt.Sprintf("Set uid to the old UID to give %s its files back, or set %s = true if a new UID is intended "+
			"(then hand the old files over by hand, for example with find /home -uid OLD -exec chown %s {} +). No host was changed.",
			name, allowNewUIDAttr, name), err)
}
