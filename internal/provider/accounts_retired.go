package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/users"
)

const (
	allowNewUIDAttr = "allow_new_uid_for_retired_name"
	allowNewGIDAttr = "allow_new_gid_for_retired_name"
)

const allowNewUIDDescription = "Allow a name that the UID ledger records as retired (a user destroyed earlier) to come back " +
	"with a UID other than its old one. Files on the shared /home are owned by number, so everything the earlier account left, " +
	"its home included, keeps the old UID: the new account does not own it until it is changed by hand (`chown`), and the old UID " +
	"stays retired, never given to anyone. Without this such a plan is refused, naming the old UID. Coming back with the old UID " +
	"is always allowed and gives the name its files back. Only the first apply needs it: from then on the ledger records the name " +
	"with the new UID. Defaults to `false`."

const allowNewGIDDescription = "Allow a name that the UID ledger records as retired (a group destroyed earlier) to come back " +
	"with a GID other than its old one. Files on shared storage record their group by number, so everything that belonged to the " +
	"earlier group keeps the old GID: the new group does not have it until it is changed by hand (`chgrp`), and the old GID stays " +
	"retired, never given to anyone. Without this such a plan is refused, naming the old GID. Coming back with the old GID is always " +
	"allowed and gives the name its files back. Only the first apply needs it: from then on the ledger records the name with the new " +
	"GID. Defaults to `false`."

// retiredNameChecks are the ledger checks of a user's or group's plan beyond checkLedger's own:
// a retired name given a new ID is refused unless the configuration allows it. An allow not
// known yet waits for the apply's plan.
func retiredNameChecks(kind users.Kind, name string, id int64, allow types.Bool) []ledgerCheck {
	if allow.IsUnknown() || allow.ValueBool() {
		return nil
	}
	return []ledgerCheck{func(ledger *users.Ledger, ledgerNode string) diag.Diagnostic {
		return retiredNameError(ledger, ledgerNode, kind, name, id)
	}}
}

func retiredNameError(ledger *users.Ledger, ledgerNode string, kind users.Kind, name string, id int64) diag.Diagnostic {
	err := ledger.CheckRetiredName(kind, name, id)
	if err == nil {
		return nil
	}
	attr, idName := accountPlan{kind: kind}.idAttr()
	summary := "Retired User Name With A New UID"
	allowAttr, handOver := allowNewUIDAttr, fmt.Sprintf("find /home -uid OLD -exec chown %s {} +", name)
	if kind == users.KindGroup {
		summary = "Retired Group Name With A New GID"
		allowAttr, handOver = allowNewGIDAttr, fmt.Sprintf("find /home -gid OLD -exec chgrp %s {} +", name)
	}
	return nodeAttributeError(attr, summary, ledgerNode,
		fmt.Sprintf("The UID ledger records %s %s as retired under another %s", kind, name, strings.ToUpper(idName)),
		fmt.Sprintf("Set %s to the old %s to give %s its files back, or set %s = true if a new %s is intended "+
			"(then hand the old files over by hand, for example with %s). No host was changed.",
			idName, strings.ToUpper(idName), name, allowAttr, strings.ToUpper(idName), handOver), err)
}
