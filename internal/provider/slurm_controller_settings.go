package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// controllerString ties a string attribute to its slurm.conf setting, so the schema, the
// defaults and the conversions in both directions come from one table.
type controllerString struct {
	attr, key, doc string
	field          func(*slurm.ControllerSettings) *string
	value          func(*slurmControllerModel) *types.String
}

var controllerStrings = []controllerString{
	{"cluster_name", "ClusterName", "Name of the cluster. slurmctld refuses to start when it differs from the name its state in `state_save_location` was saved under; the apply then restores the previous files.", func(s *slurm.ControllerSettings) *string { return &s.ClusterName }, func(m *slurmControllerModel) *types.String { return &m.ClusterName }},
	{"slurm_user", "SlurmUser", "User slurmctld runs as; Debian's packages create `slurm`.", func(s *slurm.ControllerSettings) *string { return &s.SlurmUser }, func(m *slurmControllerModel) *types.String { return &m.SlurmUser }},
	{"state_save_location", "StateSaveLocation", "Directory where slurmctld keeps its state.", func(s *slurm.ControllerSettings) *string { return &s.StateSaveLocation }, func(m *slurmControllerModel) *types.String { return &m.StateSaveLocation }},
	{"slurmd_spool_dir", "SlurmdSpoolDir", "Directory for slurmd's state on the compute nodes (and its configless cache).", func(s *slurm.ControllerSettings) *string { return &s.SlurmdSpoolDir }, func(m *slurmControllerModel) *types.String { return &m.SlurmdSpoolDir }},
	{"srun_port_range", "SrunPortRange", "Ports srun listens on for callbacks, so a firewall can allow them (the guide's firewall allows 60001-61000).", func(s *slurm.ControllerSettings) *string { return &s.SrunPortRange }, func(m *slurmControllerModel) *types.String { return &m.SrunPortRange }},
	{"scheduler_type", "SchedulerType", "Scheduler plugin.", func(s *slurm.ControllerSettings) *string { return &s.SchedulerType }, func(m *slurmControllerModel) *types.String { return &m.SchedulerType }},
	{"enforce_part_limits", "EnforcePartLimits", "`ANY` rejects impossible submissions (too many GPUs, a time over the maximum, a user outside AllowGroups) at submit time instead of leaving them pending forever.", func(s *slurm.ControllerSettings) *string { return &s.EnforcePartLimits }, func(m *slurmControllerModel) *types.String { return &m.EnforcePartLimits }},
	{"gres_types", "GresTypes", "Generic resources Slurm manages.", func(s *slurm.ControllerSettings) *string { return &s.GresTypes }, func(m *slurmControllerModel) *types.String { return &m.GresTypes }},
	{"select_type", "SelectType", "Resource selection plugin; changing it loses all job information.", func(s *slurm.ControllerSettings) *string { return &s.SelectType }, func(m *slurmControllerModel) *types.String { return &m.SelectType }},
	{"select_type_parameters", "SelectTypeParameters", "`CR_Core_Memory` makes cores and memory schedulable; with a GPU partition set `def_mem_per_gpu` on it (pitfall P4).", func(s *slurm.ControllerSettings) *string { return &s.SelectTypeParameters }, func(m *slurmControllerModel) *types.String { return &m.SelectTypeParameters }},
	{"proctrack_type", "ProctrackType", "Process tracking plugin. Inside containers whose cgroups are read-only (the lab) use `proctrack/linuxproc`.", func(s *slurm.ControllerSettings) *string { return &s.ProctrackType }, func(m *slurmControllerModel) *types.String { return &m.ProctrackType }},
	{"task_plugin", "TaskPlugin", "Task plugins, comma-separated. Inside containers whose cgroups are read-only (the lab) use `task/none`.", func(s *slurm.ControllerSettings) *string { return &s.TaskPlugin }, func(m *slurmControllerModel) *types.String { return &m.TaskPlugin }},
	{"mail_prog", "MailProg", "Program slurmctld runs to mail users about their jobs (`--mail-type`). The guide's listing leaves Slurm's default, `/bin/mail`, which a server without a mail client lacks, " +
		"and slurmctld then logs `Configured MailProg is invalid` at every start. `/bin/true` sends no mail and logs nothing; set your mail client (`/usr/bin/mail`, `/usr/bin/s-nail`) to mail job events.", func(s *slurm.ControllerSettings) *string { return &s.MailProg }, func(m *slurmControllerModel) *types.String { return &m.MailProg }},
	{"job_acct_gather_type", "JobAcctGatherType", "Job accounting gather plugin. Inside containers whose cgroups are read-only (the lab) use `jobacct_gather/none`.", func(s *slurm.ControllerSettings) *string { return &s.JobAcctGatherType }, func(m *slurmControllerModel) *types.String { return &m.JobAcctGatherType }},
}

// settings converts the model; known is false while some value is unknown.
func (m slurmControllerModel) settings(ctx context.Context, diags *diag.Diagnostics) (s slurm.ControllerSettings, known bool) {
	if m.Node.IsUnknown() || m.SlurmctldHost.IsUnknown() || m.SlurmctldParameters.IsUnknown() || m.Extra.IsUnknown() ||
		m.Cgroup.IsUnknown() || m.SlurmctldPort.IsUnknown() || m.SlurmdPort.IsUnknown() || m.ReturnToService.IsUnknown() {
		return s, false
	}
	for _, cs := range controllerStrings {
		v := *cs.value(&m)
		if v.IsUnknown() {
			return s, false
		}
		*cs.field(&s) = v.ValueString()
	}
	s.SlurmctldHost = stringOr(m.SlurmctldHost, m.Node.ValueString())
	s.AuthType, s.CredType = slurm.DefaultControllerSettings("").AuthType, slurm.DefaultControllerSettings("").CredType
	s.SlurmctldPort, s.SlurmdPort = int(m.SlurmctldPort.ValueInt64()), int(m.SlurmdPort.ValueInt64())
	s.ReturnToService = int(m.ReturnToService.ValueInt64())
	if !m.SlurmctldParameters.IsNull() {
		diags.Append(m.SlurmctldParameters.ElementsAs(ctx, &s.SlurmctldParameters, false)...)
		for _, e := range m.SlurmctldParameters.Elements() {
			if e.IsUnknown() {
				return s, false
			}
		}
	}
	if m.Prolog.IsUnknown() || m.Epilog.IsUnknown() {
		return s, false
	}
	s.Prolog, s.Epilog = m.Prolog.ValueString(), m.Epilog.ValueString()
	if !m.healthCheck(ctx, &s, diags) {
		return s, false
	}
	s.Extra = mapValue(ctx, m.Extra, diags)
	for _, v := range m.Extra.Elements() {
		if v.IsUnknown() {
			return s, false
		}
	}
	s.Cgroup = slurm.DefaultCgroupSettings()
	if !m.Cgroup.IsNull() {
		var cg slurmCgroupModel
		diags.Append(m.Cgroup.As(ctx, &cg, basetypes.ObjectAsOptions{})...)
		if cg.Plugin.IsUnknown() || cg.ConstrainCores.IsUnknown() || cg.ConstrainDevices.IsUnknown() || cg.ConstrainRAMSpace.IsUnknown() || cg.Extra.IsUnknown() {
			return s, false
		}
		s.Cgroup = slurm.CgroupSettings{
			CgroupPlugin: cg.Plugin.ValueString(), ConstrainCores: cg.ConstrainCores.ValueBool(),
			ConstrainDevices: cg.ConstrainDevices.ValueBool(), ConstrainRAMSpace: cg.ConstrainRAMSpace.ValueBool(),
			Extra: mapValue(ctx, cg.Extra, diags),
		}
	}
	return s, true
}

// healthCheck copies the health check attributes into s; false while one is unknown.
func (m slurmControllerModel) healthCheck(ctx context.Context, s *slurm.ControllerSettings, diags *diag.Diagnostics) bool {
	if m.HealthCheckProgram.IsUnknown() || m.HealthCheckInterval.IsUnknown() || m.HealthCheckNodeState.IsUnknown() {
		return false
	}
	s.HealthCheckProgram, s.HealthCheckInterval = m.HealthCheckProgram.ValueString(), int(m.HealthCheckInterval.ValueInt64())
	if m.HealthCheckNodeState.IsNull() {
		return true
	}
	diags.Append(m.HealthCheckNodeState.ElementsAs(ctx, &s.HealthCheckNodeState, false)...)
	for _, e := range m.HealthCheckNodeState.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

// setSettings writes what a controller fragment holds into the model; the extra maps keep the
// model's empty-or-null form when the fragment has none.
func (m *slurmControllerModel) setSettings(s slurm.ControllerSettings) {
	priorCgroupExtra := types.MapNull(types.StringType)
	if !m.Cgroup.IsNull() && !m.Cgroup.IsUnknown() {
		if v, ok := m.Cgroup.Attributes()["extra"].(types.Map); ok {
			priorCgroupExtra = v
		}
	}
	for _, cs := range controllerStrings {
		*cs.value(m) = types.StringValue(*cs.field(&s))
	}
	m.SlurmctldHost = types.StringValue(s.SlurmctldHost)
	m.SlurmctldPort, m.SlurmdPort = types.Int64Value(int64(s.SlurmctldPort)), types.Int64Value(int64(s.SlurmdPort))
	m.ReturnToService = types.Int64Value(int64(s.ReturnToService))
	m.SlurmctldParameters = stringList(s.SlurmctldParameters)
	m.Prolog, m.Epilog = stringOrNull(s.Prolog), stringOrNull(s.Epilog)
	m.HealthCheckProgram, m.HealthCheckInterval = stringOrNull(s.HealthCheckProgram), int64OrNull(int64(s.HealthCheckInterval))
	m.HealthCheckNodeState = types.ListNull(types.StringType)
	if len(s.HealthCheckNodeState) > 0 {
		m.HealthCheckNodeState = stringList(s.HealthCheckNodeState)
	}
	m.Extra = extraValue(m.Extra, s.Extra)
	m.Cgroup = cgroupObjectExtra(s.Cgroup, extraValue(priorCgroupExtra, s.Cgroup.Extra))
}

// settingsForValidation fills what config leaves unset with the defaults, which the schema
// applies only after validation.
func (m slurmControllerModel) settingsForValidation(ctx context.Context, diags *diag.Diagnostics) (slurm.ControllerSettings, bool) {
	def := slurm.DefaultControllerSettings("")
	for _, cs := range controllerStrings {
		if v := cs.value(&m); v.IsNull() {
			*v = types.StringValue(*cs.field(&def))
		}
	}
	if m.SlurmctldPort.IsNull() {
		m.SlurmctldPort = types.Int64Value(int64(def.SlurmctldPort))
	}
	if m.SlurmdPort.IsNull() {
		m.SlurmdPort = types.Int64Value(int64(def.SlurmdPort))
	}
	if m.ReturnToService.IsNull() {
		m.ReturnToService = types.Int64Value(int64(def.ReturnToService))
	}
	if m.Cgroup.IsNull() {
		m.Cgroup = cgroupObject(def.Cgroup)
	} else if !m.Cgroup.IsUnknown() {
		m.Cgroup = withCgroupDefaults(m.Cgroup)
	}
	return m.settings(ctx, diags)
}

// controllerAttr is the attribute that holds a slurm.FieldError's field.
func controllerAttr(field string) path.Path {
	if key, ok := (&slurm.FieldError{Field: field}).InCgroup(); ok {
		if key == slurm.ExtraField {
			return path.Root("cgroup").AtName("extra")
		}
		return path.Root("cgroup")
	}
	switch field {
	case slurm.ExtraField:
		return path.Root("extra")
	case slurm.PrologField:
		return path.Root("prolog")
	case slurm.EpilogField:
		return path.Root("epilog")
	case slurm.HealthCheckField:
		return path.Root("health_check_program")
	case "HealthCheckInterval":
		return path.Root("health_check_interval")
	case "HealthCheckNodeState":
		return path.Root("health_check_node_state")
	}
	for _, cs := range controllerStrings {
		if strings.EqualFold(cs.key, field) {
			return path.Root(cs.attr)
		}
	}
	return path.Empty()
}

type slurmCgroupModel struct {
	Plugin            types.String `tfsdk:"plugin"`
	ConstrainCores    types.Bool   `tfsdk:"constrain_cores"`
	ConstrainDevices  types.Bool   `tfsdk:"constrain_devices"`
	ConstrainRAMSpace types.Bool   `tfsdk:"constrain_ram_space"`
	Extra             types.Map    `tfsdk:"extra"`
}

var cgroupAttrTypes = map[string]attr.Type{
	"plugin": types.StringType, "constrain_cores": types.BoolType, "constrain_devices": types.BoolType,
	"constrain_ram_space": types.BoolType, "extra": types.MapType{ElemType: types.StringType},
}

func cgroupObject(c slurm.CgroupSettings) basetypes.ObjectValue {
	return cgroupObjectExtra(c, stringMapValue(c.Extra))
}

func cgroupObjectExtra(c slurm.CgroupSettings, extra types.Map) basetypes.ObjectValue {
	return types.ObjectValueMust(cgroupAttrTypes, map[string]attr.Value{
		"plugin":              types.StringValue(c.CgroupPlugin),
		"constrain_cores":     types.BoolValue(c.ConstrainCores),
		"constrain_devices":   types.BoolValue(c.ConstrainDevices),
		"constrain_ram_space": types.BoolValue(c.ConstrainRAMSpace),
		"extra":               extra,
	})
}

// withCgroupDefaults fills the nested attributes config leaves null.
func withCgroupDefaults(o types.Object) types.Object {
	def := cgroupObject(slurm.DefaultCgroupSettings()).Attributes()
	attrs := o.Attributes()
	filled := make(map[string]attr.Value, len(attrs))
	for k, v := range attrs {
		if v.IsNull() && k != "extra" {
			v = def[k]
		}
		filled[k] = v
	}
	return types.ObjectValueMust(cgroupAttrTypes, filled)
}
