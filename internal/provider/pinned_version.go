package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// pinnedPackages describes, for the docs and the diagnostics, one role's packages that a
// version attribute pins: MUNGE's or a BeeGFS service's. Unlike Slurm's, their upgrade has no
// order the resources enforce between nodes; where BeeGFS wants one, depends_on gives it.
type pinnedPackages struct {
	attrName string   // the version attribute, e.g. munge_version
	what     string   // e.g. MUNGE
	names    []string // the packages, installed together at the version
	daemon   string   // restarted after an upgrade where it ran
	example  string   // a version to show in the docs
	unset    string   // what happens without the attribute
	where    string   // where the packages are, e.g. "on this node"
	shownIn  string   // the computed attribute a plan shows the upgrade in
	note     string   // a last sentence for the docs, or ""
}

// noting adds a last sentence to the attribute's docs.
func (p pinnedPackages) noting(sentence string) pinnedPackages {
	p.note = " " + sentence
	return p
}

func (p pinnedPackages) path() path.Path { return path.Root(p.attrName) }

func (p pinnedPackages) list() string { return "`" + strings.Join(p.names, "`, `") + "`" }

// schemaAttribute is the optional pin itself.
func (p pinnedPackages) schemaAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The Debian version of " + p.list() + " " + p.where + ", as `apt-cache policy " + p.names[len(p.names)-1] + "` lists it, for example `" + p.example + "`. " +
			p.unset + " Set, the packages are installed at that version in one apt transaction, with the packages' own restarts held, and a change upgrades them: " +
			"the plan shows `" + p.shownIn + "` going from the installed version to this one and warns, and refuses a version older than the installed one. " +
			"After an upgrade the apply restarts " + p.daemon + " where it was running, and only there; an apply with every package at the version installs nothing and restarts nothing." + p.note,
		Optional:   true,
		Validators: []validator.String{stringvalidator.RegexMatches(packages.VersionPattern, "must be a Debian package version, such as "+p.example)},
	}
}

// refuseDowngrade is the plan's error for a pin older than what a node has.
func (p pinnedPackages) refuseDowngrade(node, from, to string) diag.Diagnostic {
	return nodeAttributeError(p.path(), p.what+" Downgrade Refused", node,
		fmt.Sprintf("%s asks for %s where %s is installed; nothing was changed", p.attrName, to, from),
		"Set "+p.attrName+" to "+from+" or a later version. To go back to an older build, install it by hand with apt-get install --allow-downgrades, then set "+p.attrName+" to it.",
		packages.CheckNoDowngrade(from, to))
}

// upgradeWarning says what an apply that changes the packages does on nodes.
func (p pinnedPackages) upgradeWarning(nodes []string, from map[string]string, to string) diag.Diagnostic {
	steps := make([]string, len(nodes))
	for i, n := range nodes {
		steps[i] = fmt.Sprintf("%s from %s", n, from[n])
	}
	return diag.NewAttributeWarningDiagnostic(p.path(), p.what+" Upgrade Planned",
		fmt.Sprintf("%s goes to %s on %s. The apply installs %s at %s in one apt transaction on each of these nodes and restarts %s there where it runs.",
			p.what, to, strings.Join(steps, ", "), p.list(), to, p.daemon))
}

// installError is the apply's error when apt did not install the pinned version.
func (p pinnedPackages) installError(node, version string, err error) diag.Diagnostic {
	return nodeAttributeError(p.path(), "Cannot Install "+p.what, node, "Installing "+strings.Join(p.names, " ")+" at "+version+" with apt failed",
		"Check that apt-cache policy "+strings.Join(p.names, " ")+" lists "+version+" there, then apply again: packages already at the version are left as they are.", err)
}

// planInstalledVersions is the installed_version map a plan shows for nodes: the pinned
// version on every node when pinned (refusing a downgrade and warning about an upgrade),
// else the versions in state when every node has one and the nodes stay, else unknown.
func (p pinnedPackages) planInstalledVersions(nodes []string, pin types.String, prior types.Map, sameNodes bool, diags *diag.Diagnostics) types.Map {
	from := versionsOf(prior)
	if pin.IsUnknown() {
		return types.MapUnknown(types.StringType)
	}
	if pin.IsNull() {
		for _, n := range nodes {
			if from[n] == "" || !sameNodes {
				return types.MapUnknown(types.StringType)
			}
		}
		return prior
	}
	to := pin.ValueString()
	planned := make(map[string]string, len(nodes))
	var upgraded []string
	for _, n := range nodes {
		if packages.CheckNoDowngrade(from[n], to) != nil {
			diags.Append(p.refuseDowngrade(n, from[n], to))
			continue
		}
		if from[n] != "" && packages.CompareVersions(from[n], to) != 0 {
			upgraded = append(upgraded, n)
		}
		planned[n] = to
	}
	if len(upgraded) > 0 {
		diags.Append(p.upgradeWarning(upgraded, from, to))
	}
	return versionMap(planned)
}

// versionsOf reads an installed_version map; an unknown or null one holds nothing.
func versionsOf(m types.Map) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	for n, v := range m.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out[n] = s.ValueString()
		}
	}
	return out
}

// versionMap is an installed_version map of the nodes that have the packages.
func versionMap(versions map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(versions))
	for n, v := range versions {
		if v != "" {
			elems[n] = types.StringValue(v)
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// readInstalledVersions asks every node for the version of pkg, in parallel.
func readInstalledVersions(ctx context.Context, c *cluster, nodes []string, pkg string) (map[string]string, []nodeFailure) {
	versions, failures := readOnEachNode(ctx, c, nodes, func(h *transport.Host) (string, error) {
		v, err := packages.Installed(ctx, h, pkg)
		return v[pkg], err
	})
	sort.Slice(failures, func(i, j int) bool { return failures[i].node < failures[j].node })
	return versions, failures
}

// planVersion shows a pin as the package's `version` after apply, refuses a downgrade from
// installed ("" when not known), and warns about an upgrade: for a resource on one node.
func (p pinnedPackages) planVersion(ctx context.Context, resp *resource.ModifyPlanResponse, node string, pin types.String, installed string) {
	if v, ok := p.plannedVersion(node, pin, installed, &resp.Diagnostics); ok {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("version"), v)...)
	}
}

// plannedVersion is the `version` a plan shows under a pin (ok false: no pin, or refused).
func (p pinnedPackages) plannedVersion(node string, pin types.String, installed string, diags *diag.Diagnostics) (v types.String, ok bool) {
	switch {
	case pin.IsNull():
		return v, false
	case pin.IsUnknown():
		return types.StringUnknown(), true
	}
	to := pin.ValueString()
	if packages.CheckNoDowngrade(installed, to) != nil {
		diags.Append(p.refuseDowngrade(node, installed, to))
		return v, false
	}
	if installed != "" && packages.CompareVersions(installed, to) != 0 {
		diags.Append(p.upgradeWarning([]string{node}, map[string]string{node: installed}, to))
	}
	return pin, true
}

// pinBeegfs brings a BeeGFS service's package on node to the pin, before the resource reads the
// node for its setup; restart says the running service must be restarted onto the new files.
func (p pinnedPackages) pinBeegfs(ctx context.Context, c *cluster, node, service string, pin types.String) (restart bool, diags diag.Diagnostics) {
	if pin.IsNull() {
		return false, nil
	}
	h, ok := c.connect(ctx, node, &diags)
	if !ok {
		return false, diags
	}
	restart, err := beegfs.PinPackage(ctx, h, service, p.names[0], pin.ValueString())
	if err != nil {
		diags.Append(p.installError(node, pin.ValueString(), err))
	}
	return restart, diags
}

// beegfsPackages is what beegfs_version pins on a BeeGFS resource's node.
func beegfsPackages(pkg, service string) pinnedPackages {
	return pinnedPackages{
		attrName: "beegfs_version", what: "BeeGFS", names: []string{pkg}, daemon: service, example: "8.4.0",
		unset: "The package must be installed (from ThinkParQ's repository) before the plan, pinned or not; unset (the default), it is left at the version installed.",
		where: "on `node`", shownIn: "version",
	}
}
