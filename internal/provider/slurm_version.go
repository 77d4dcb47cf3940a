package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	slurmVersionPath     = path.Root("slurm_version")
	installedVersionPath = path.Root("installed_version")
)

// slurmVersionAttribute is the optional pin of a role's Slurm packages; what documents the
// order is shared, so the controller's and the compute node's docs cannot drift apart.
func slurmVersionAttribute(role string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The Debian version of Slurm's packages on this node (" + role + "), as `apt-cache policy slurmctld` lists it, for example `24.11.5-4+deb13u1`. " +
			"Unset (the default) installs the version apt offers where the packages are missing and never upgrades. Set, the packages are installed at that version, " +
			"and a change upgrades them: the plan shows `installed_version` going from the installed version to this one and warns, and refuses a downgrade and a step of more than " +
			fmt.Sprintf("%d", slurm.MaxReleasesPerUpgrade) + " major releases (24.05 to 25.05 is allowed, 23.11 to 25.05 is not). " + upgradeOrderDoc,
		Optional:   true,
		Validators: []validator.String{stringvalidator.RegexMatches(packages.VersionPattern, "must be a Debian package version, such as 24.11.5-4+deb13u1")},
	}
}

// upgradeOrderDoc is Slurm's upgrade order as the resources keep it.
const upgradeOrderDoc = "The apply follows Slurm's order: on the controller's node, slurmctld is stopped, its `StateSaveLocation` copied to a tar file in `" + slurm.BackupDir +
	"`, every Slurm package of the node (slurmdbd's too, when accounting runs there: Debian's packages depend on each other's exact version) installed at the version in one apt " +
	"transaction with the packages' own restarts held, then slurmdbd restarted and answering, then slurmctld; `gpucluster_slurm_compute`, applied after the activation, upgrades slurmd " +
	"and refuses a version newer than the controller's slurmctld."

func installedVersionAttribute(pkg string) schema.StringAttribute {
	return computedKeptAttribute("The Debian version of `" + pkg + "` installed on the node (`dpkg-query -W " + pkg + "`). A plan that changes `slurm_version` shows it going from the installed version to the wanted one.")
}

// planSlurmVersion shows a pinned version as the installed one after apply, refuses what Slurm
// cannot upgrade across, and warns about an upgrade with its order. The daemon's version is
// unknown until the upgrade ran.
func planSlurmVersion(ctx context.Context, resp *resource.ModifyPlanResponse, node string, wanted, installed types.String, daemon string) {
	if wanted.IsNull() || wanted.IsUnknown() {
		return
	}
	to, from := wanted.ValueString(), ""
	if !installed.IsNull() && !installed.IsUnknown() {
		from = installed.ValueString()
	}
	if err := slurm.CheckUpgrade(from, to); err != nil {
		resp.Diagnostics.Append(nodeAttributeError(slurmVersionPath, "Slurm Upgrade Refused", node,
			fmt.Sprintf("slurm_version asks for %s where %s is installed; nothing was changed", to, from),
			"Set slurm_version to a version Slurm can upgrade to from the installed one.", err))
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, installedVersionPath, wanted)...)
	if from == "" || packages.CompareVersions(from, to) == 0 {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("version"), types.StringUnknown())...)
	resp.Diagnostics.AddWarning("Slurm Upgrade Planned",
		fmt.Sprintf("On %s, Slurm's packages go from %s to %s, and %s restarts. %s", node, from, to, daemon, upgradeOrderDoc))
}

// upgradeSlurm brings the node's Slurm packages to the pinned version (see slurm.UpgradeNode).
func upgradeSlurm(ctx context.Context, h transport.Executor, node string, u slurm.NodeUpgrade) (slurm.UpgradeResult, diag.Diagnostics) {
	var diags diag.Diagnostics
	res, err := slurm.UpgradeNode(ctx, h, u)
	if errors.Is(err, slurm.ErrAccountingDump) {
		diags.Append(nodeAttributeError(slurmVersionPath, "Cannot Back Up Slurm Accounting Database", node,
			"Dumping the accounting database into "+slurm.BackupDir+" before upgrading slurmdbd to "+u.Version+" failed, so no package was changed",
			"Check that MariaDB runs there (systemctl status mariadb), that mariadb-dump works as root and that "+slurm.BackupDir+" has room, then apply again.", err))
		return res, diags
	}
	if err != nil {
		what := "Installing Slurm's packages at " + u.Version + " failed"
		if res.Backup != "" {
			what += " after the state was backed up to " + res.Backup
		}
		diags.Append(nodeAttributeError(slurmVersionPath, "Cannot Upgrade Slurm", node, what,
			"Check that apt-cache policy "+strings.Join(u.Packages, " ")+" lists "+u.Version+" there and journalctl -u slurmdbd -u slurmctld -u slurmd, then apply again: "+
				"packages already at the version are left as they are, and a daemon that did not start is started again.", err))
	}
	return res, diags
}

// installedVersion reads the Debian version of pkg on the node, null when not installed.
func installedVersion(ctx context.Context, h transport.Executor, node, pkg string) (types.String, diag.Diagnostics) {
	var diags diag.Diagnostics
	v, err := packages.Installed(ctx, h, pkg)
	if err != nil {
		diags.Append(nodeError("Cannot Read Installed Version", node, "Asking dpkg for the version of "+pkg+" failed", "", err))
		return types.StringNull(), diags
	}
	if v[pkg] == "" {
		return types.StringNull(), diags
	}
	return types.StringValue(v[pkg]), diags
}
