package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// node is where slurmdbd runs: node, or the controller when node is unset.
func (m slurmAccountingModel) node() types.String {
	if m.Node.IsNull() || m.Node.IsUnknown() {
		return m.Controller
	}
	return m.Node
}

// settings is the fragment's content; known is false while a value is unknown.
func (m slurmAccountingModel) settings(ctx context.Context, diags *diag.Diagnostics) (slurm.AccountingSettings, bool) {
	if m.DbdHost.IsUnknown() || m.DbdPort.IsUnknown() || !fullyKnown(m.TRES) || !fullyKnown(m.Enforce) {
		return slurm.AccountingSettings{}, false
	}
	return slurm.AccountingSettings{
		StorageHost: m.DbdHost.ValueString(), StoragePort: int(m.DbdPort.ValueInt64()),
		TRES: setStrings(ctx, m.TRES, diags), Enforce: setStrings(ctx, m.Enforce, diags),
	}, true
}

func (m *slurmAccountingModel) setSettings(a slurm.AccountingSettings) {
	m.DbdHost = types.StringValue(a.StorageHost)
	port := a.StoragePort
	if port == 0 {
		port = slurm.DefaultDbdPort
	}
	m.DbdPort = types.Int64Value(int64(port))
	m.TRES = stringSetOrNull(a.TRES)
	m.Enforce = stringSetOrNull(a.Enforce)
}

// slurmdbd is slurmdbd.conf's settings for the model; slurmUser comes from the controller.
func (m slurmAccountingModel) slurmdbd(slurmUser string) slurm.Slurmdbd {
	return slurm.Slurmdbd{DbdHost: m.DbdHost.ValueString(), DbdPort: int(m.DbdPort.ValueInt64()), SlurmUser: slurmUser,
		Database: m.Database.ValueString(), DatabaseUser: m.DatabaseUser.ValueString()}
}

// accountingAttr is the attribute that holds a slurm.FieldError's field.
func accountingAttr(field string) path.Path {
	switch field {
	case "AccountingStoragePort":
		return path.Root("dbd_port")
	case "AccountingStorage":
		return path.Root("tres")
	}
	return path.Empty()
}
