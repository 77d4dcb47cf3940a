package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// databaseUserValidator refuses MariaDB's own accounts as database_user, before any host is
// asked: the apply would set that account's password.
type databaseUserValidator struct{}

var _ validator.String = databaseUserValidator{}

func (databaseUserValidator) Description(context.Context) string {
	return "must not be one of MariaDB's own accounts: " + strings.Join(slurm.BuiltinDatabaseUsers, ", ")
}

func (v databaseUserValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (databaseUserValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := slurm.CheckDatabaseUserName(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.Append(settingError(req.Path, "MariaDB Account Reserved",
			"database_user "+req.ConfigValue.String()+" names an account of MariaDB itself: the apply would set its password, and MariaDB's root would lose its "+
				"unix_socket login, so that every later apply fails",
			"Use an account of slurmdbd's own, such as slurm (the default). No host was asked or changed.", err))
	}
}

// sameDatabaseUser tells that the resource already holds m's database user on m's node: an
// update, not a new account.
func (r *slurmAccountingResource) sameDatabaseUser(m, prior slurmAccountingModel) bool {
	return prior.DatabaseUser.Equal(m.DatabaseUser) && r.cluster.sameNode(prior.node().ValueString(), m.node().ValueString())
}

// databaseUserPolicy is what apply may do to an existing account the provider did not create:
// use it when the resource held it before (an import of accounting set up by hand), and set
// its password only when database_password_wo_version changed from a version the state knew.
// An import knows none, so the apply after it leaves the account's password alone.
func (r *slurmAccountingResource) databaseUserPolicy(m slurmAccountingModel, prior *slurmAccountingModel) slurm.DatabaseUserPolicy {
	if prior == nil || !r.sameDatabaseUser(m, *prior) {
		return slurm.DatabaseUserPolicy{}
	}
	return slurm.DatabaseUserPolicy{Adopted: true, Rotate: !prior.PasswordVersion.IsNull() && !prior.PasswordVersion.Equal(m.PasswordVersion)}
}

// checkDatabaseUser refuses at plan a database user that MariaDB on the node already has and
// the provider did not create, when the node can tell: MariaDB installed but stopped cannot,
// and apply asks again once it has started it, before the account is touched.
func (r *slurmAccountingResource) checkDatabaseUser(ctx context.Context, plan, prior slurmAccountingModel, updating bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if !r.cluster.settingsKnown() || plan.DatabaseUser.IsUnknown() || plan.Node.IsUnknown() || (updating && r.sameDatabaseUser(plan, prior)) {
		return diags
	}
	node := plan.Node.ValueString()
	h, err := r.cluster.host(ctx, node)
	if err != nil {
		d := connectError(node, err)
		diags.AddAttributeError(path.Root("node"), d.Summary(), d.Detail())
		return diags
	}
	u, err := slurm.ReadDatabaseUser(ctx, h, plan.DatabaseUser.ValueString(), nil)
	if err != nil {
		diags.Append(nodeAttributeError(path.Root("database_user"), "Cannot Read MariaDB Accounts", node, "Reading MariaDB's accounts named "+plan.DatabaseUser.ValueString()+" failed", adviceRead, err))
		return diags
	}
	if u.Foreign() {
		diags.Append(foreignDatabaseUser(node, &slurm.ForeignDatabaseUserError{User: u}, "The plan stops here and no host is changed."))
	}
	return diags
}

// foreignDatabaseUser is the refusal of an existing MariaDB account the provider did not create.
func foreignDatabaseUser(node string, err *slurm.ForeignDatabaseUserError, outcome string) diag.Diagnostic {
	return nodeAttributeError(path.Root("database_user"), "MariaDB Account Not Created By The Provider", node,
		fmt.Sprintf("MariaDB there already has %s, which gpucluster_slurm_accounting did not create (%s does not list it): setting slurmdbd up with it would change its password and grants",
			err.User.Accounts(), slurm.DatabaseUsersPath),
		outcome+" Choose another database_user, or drop that account by hand if nothing uses it. For Slurm accounting set up by hand with this account, "+
			"import it instead (terraform import gpucluster_slurm_accounting.NAME NODE@CONTROLLER): the provider then uses the account as it is, "+
			"and sets its password only when database_password_wo_version changes. An account that an earlier release of the provider created, which kept no list, "+
			"is handed over by adding its name as a line of "+slurm.DatabaseUsersPath+".", err)
}

// databaseUserRefused turns EnsureSlurmdbd's refusals of the database user into their
// diagnostics; ok is false for any other error.
func databaseUserRefused(node string, err error) (diag.Diagnostic, bool) {
	var foreign *slurm.ForeignDatabaseUserError
	switch {
	case errors.As(err, &foreign):
		return foreignDatabaseUser(node, foreign, "Nothing was changed on the node."), true
	case errors.Is(err, slurm.ErrDatabasePasswordRefused):
		return nodeAttributeError(path.Root("database_password_wo"), "Database Password Refused", node,
			"database_password_wo does not open the database user's account, which the provider did not create, so it does not set its password",
			"Nothing was changed on the node. Set database_password_wo to the account's current password; to have the provider set a new one later, "+
				"change database_password_wo_version then.", err), true
	case errors.Is(err, slurm.ErrReservedDatabaseUser):
		return nodeAttributeError(path.Root("database_user"), "MariaDB Account Reserved", node, "database_user names an account of MariaDB itself",
			"Nothing was changed on the node. Use an account of slurmdbd's own, such as slurm (the default).", err), true
	}
	return nil, false
}
