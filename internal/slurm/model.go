package slurm

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ControllerSettings are slurm.conf's cluster-wide settings. An empty string
// or zero leaves the line out, so Slurm's own default applies.
type ControllerSettings struct {
	ClusterName          string
	SlurmctldHost        string
	SlurmUser            string
	AuthType             string
	CredType             string
	StateSaveLocation    string
	SlurmdSpoolDir       string
	SlurmctldPort        int
	SlurmdPort           int
	SrunPortRange        string
	SlurmctldParameters  []string
	SchedulerType        string
	EnforcePartLimits    string
	ReturnToService      int
	GresTypes            string
	SelectType           string
	SelectTypeParameters string
	ProctrackType        string
	TaskPlugin           string
	JobAcctGatherType    string
	// MailProg is not in the guide's listing: Slurm's default, /bin/mail, is missing on a
	// server without a mail client, and slurmctld then logs "Configured MailProg is invalid"
	// at every start.
	MailProg string
	// Prolog and Epilog are the contents of the job scripts slurmd runs on a compute node
	// before and after each job; empty sets none. They are files beside slurm.conf, named by
	// a relative Prolog= and Epilog=, which configless slurmd fetches with slurm.conf.
	Prolog, Epilog string
	// HealthCheckProgram is the content of the program slurmd runs on every compute node
	// every HealthCheckInterval seconds; empty sets none. Configless Slurm does not send it,
	// so it is written on each node at HealthCheckPath.
	HealthCheckProgram   string
	HealthCheckInterval  int
	HealthCheckNodeState []string
	// Extra holds any other slurm.conf setting, by its Slurm name.
	Extra  map[string]string
	Cgroup CgroupSettings
}

// CgroupSettings are cgroup.conf's settings.
type CgroupSettings struct {
	CgroupPlugin      string
	ConstrainCores    bool
	ConstrainDevices  bool
	ConstrainRAMSpace bool
	Extra             map[string]string
}

// NodeDef is one compute node's NodeName line. Nodes with equal hardware
// share one line in slurm.conf.
type NodeDef struct {
	Name            string
	CPUs            int
	Boards          int
	SocketsPerBoard int
	CoresPerSocket  int
	ThreadsPerCore  int
	RealMemory      int64
	// Gres is the node's Gres= value, e.g. "gpu:4".
	Gres string
	// GPUFiles, when set, lists the GPU device files for gres.conf
	// ("/dev/nvidia[0-3]"); when empty, GPUs are found with AutoDetect=nvml.
	GPUFiles string
	State    string
	// DrainReason, when set, is a declared drain: the activation drains the node with this
	// reason, a runtime state set with scontrol, never a line of slurm.conf. Empty means the
	// node is to take jobs, and a node drained otherwise is resumed.
	DrainReason string
	Extra       map[string]string
}

// PartitionDef is one PartitionName line.
type PartitionDef struct {
	Name         string
	Nodes        []string
	Default      bool
	MaxTime      string
	State        string
	AllowGroups  []string
	DefMemPerGPU int64
	Extra        map[string]string
}

// DefaultControllerSettings are the guide's values, with controller as
// SlurmctldHost.
func DefaultControllerSettings(controller string) ControllerSettings {
	return ControllerSettings{ //nolint:gosec // G101: AuthType and CredType name the MUNGE plugins; no secret is here.
		ClusterName:          "cluster",
		SlurmctldHost:        controller,
		SlurmUser:            "slurm",
		AuthType:             "auth/munge",
		CredType:             "cred/munge",
		StateSaveLocation:    "/var/spool/slurmctld",
		SlurmdSpoolDir:       "/var/spool/slurmd",
		SlurmctldPort:        6817,
		SlurmdPort:           6818,
		SrunPortRange:        "60001-61000",
		SlurmctldParameters:  []string{"enable_configless", "reconfig_on_restart"},
		SchedulerType:        "sched/backfill",
		EnforcePartLimits:    "ANY",
		ReturnToService:      2,
		GresTypes:            "gpu",
		SelectType:           "select/cons_tres",
		SelectTypeParameters: "CR_Core_Memory",
		ProctrackType:        "proctrack/cgroup",
		TaskPlugin:           "task/cgroup,task/affinity",
		JobAcctGatherType:    "jobacct_gather/cgroup",
		MailProg:             DefaultMailProg,
		Cgroup:               DefaultCgroupSettings(),
	}
}

// DefaultCgroupSettings are the guide's: cores and devices are enforced,
// memory is scheduled but not enforced.
func DefaultCgroupSettings() CgroupSettings {
	return CgroupSettings{CgroupPlugin: "autodetect", ConstrainCores: true, ConstrainDevices: true}
}

// DefaultMailProg sends no mail and exists on every system, so slurmctld starts without an
// error about it; a cluster that mails job events sets its mail client instead.
const DefaultMailProg = "/bin/true"

// DefaultNodeState is the State= of a node line, as the guide writes it.
const DefaultNodeState = "UNKNOWN"

// setting is one rendered key=value line.
type setting struct{ key, value string }

// controllerGroups are slurm.conf's typed settings in the guide's order, one
// slice per paragraph.
func (s ControllerSettings) groups() [][]setting {
	return [][]setting{
		{
			{"ClusterName", s.ClusterName}, {"SlurmctldHost", s.SlurmctldHost}, {"SlurmUser", s.SlurmUser},
			{"AuthType", s.AuthType}, {"CredType", s.CredType},
		},
		{
			{"StateSaveLocation", s.StateSaveLocation}, {"SlurmdSpoolDir", s.SlurmdSpoolDir},
			{"SlurmctldPort", itoa(int64(s.SlurmctldPort))}, {"SlurmdPort", itoa(int64(s.SlurmdPort))},
			{"SrunPortRange", s.SrunPortRange},
		},
		{
			{"SlurmctldParameters", strings.Join(s.SlurmctldParameters, ",")}, {"SchedulerType", s.SchedulerType},
			{"EnforcePartLimits", s.EnforcePartLimits}, {"ReturnToService", returnToService(s.ReturnToService)},
			{"MailProg", s.MailProg},
		},
		{
			{"GresTypes", s.GresTypes}, {"SelectType", s.SelectType}, {"SelectTypeParameters", s.SelectTypeParameters},
			{"ProctrackType", s.ProctrackType}, {"TaskPlugin", s.TaskPlugin}, {"JobAcctGatherType", s.JobAcctGatherType},
		},
		s.scriptSettings(),
		s.healthCheckSettings(),
	}
}

// Job scripts beside slurm.conf. Configless slurmctld sends a Prolog or Epilog to the nodes
// only when its name has no path separator; the prefix keeps an admin's own prolog.sh apart.
const (
	PrologFile = "gpucluster-prolog.sh"
	EpilogFile = "gpucluster-epilog.sh"
)

// scriptSettings are the keys naming the job scripts that are set, and only those: a
// cluster without them may still name its own scripts in Extra.
func (s ControllerSettings) scriptSettings() []setting {
	var out []setting
	if s.Prolog != "" {
		out = append(out, setting{"Prolog", PrologFile})
	}
	if s.Epilog != "" {
		out = append(out, setting{"Epilog", EpilogFile})
	}
	return out
}

// returnToService keeps an explicit 0 (Slurm's default) out of the file like
// every other unset value.
func returnToService(v int) string {
	if v == 0 {
		return ""
	}
	return itoa(int64(v))
}

func (c CgroupSettings) settings() []setting {
	return []setting{
		{"CgroupPlugin", c.CgroupPlugin},
		{"ConstrainCores", yesNo(c.ConstrainCores)},
		{"ConstrainDevices", yesNo(c.ConstrainDevices)},
		{"ConstrainRAMSpace", yesNo(c.ConstrainRAMSpace)},
	}
}

func (n NodeDef) hardware() []setting {
	return []setting{
		{"CPUs", itoa(int64(n.CPUs))}, {"Boards", itoa(int64(n.Boards))},
		{"SocketsPerBoard", itoa(int64(n.SocketsPerBoard))}, {"CoresPerSocket", itoa(int64(n.CoresPerSocket))},
		{"ThreadsPerCore", itoa(int64(n.ThreadsPerCore))}, {"RealMemory", itoa(n.RealMemory)},
		{"Gres", n.Gres}, {"State", n.State},
	}
}

func (p PartitionDef) settings() []setting {
	def := ""
	if p.Default {
		def = "YES"
	}
	return []setting{
		{"Nodes", CompressHostlist(p.Nodes)}, {"Default", def}, {"MaxTime", p.MaxTime}, {"State", p.State},
		{"AllowGroups", strings.Join(p.AllowGroups, ",")}, {"DefMemPerGPU", itoa(p.DefMemPerGPU)},
	}
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// extraSettings are an Extra map's lines, sorted so the output is stable.
func extraSettings(extra map[string]string) []setting {
	keys := slices.Sorted(maps.Keys(extra))
	out := make([]setting, len(keys))
	for i, k := range keys {
		out[i] = setting{k, extra[k]}
	}
	return out
}

var (
	// slurmKey matches a setting name; Slurm's are CamelCase words.
	slurmKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	// NamePattern matches node and partition names that are safe as file
	// names and in hostlists.
	NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// ValuePattern matches a value that fits a key=value line: whitespace
	// ends a value in slurm.conf, "#" starts a comment.
	ValuePattern = regexp.MustCompile(`^[^\s#]+$`)
)

// checkValue refuses what would break a key=value line or a fragment; an
// empty value leaves the line out.
func checkValue(key, value string) error {
	if value != "" && !ValuePattern.MatchString(value) {
		return fmt.Errorf("%s=%q: a value cannot contain whitespace or '#'", key, value)
	}
	return nil
}

// checkExtra refuses Extra keys that a typed field (or the line's own
// name) owns. Slurm reads keys case-insensitively, so AUTHTYPE would
// override AuthType just the same. field is the FieldError's Field.
func checkExtra(where, field string, extra map[string]string, owned []setting, reserved ...string) error {
	taken := map[string]string{}
	for _, s := range owned {
		taken[strings.ToLower(s.key)] = s.key
	}
	for _, r := range reserved {
		taken[strings.ToLower(r)] = r
	}
	for _, s := range extraSettings(extra) {
		var err error
		switch owner, ok := taken[strings.ToLower(s.key)]; {
		case !slurmKey.MatchString(s.key):
			err = fmt.Errorf("%s extra: %q is not a Slurm setting name", where, s.key)
		case ok:
			err = fmt.Errorf("%s extra: %q is set by the typed attribute %s; set it there instead", where, s.key, owner)
		case s.value == "":
			err = fmt.Errorf("%s extra: %s has an empty value", where, s.key)
		default:
			if e := checkValue(s.key, s.value); e != nil {
				err = fmt.Errorf("%s extra: %w", where, e)
			}
		}
		if err != nil {
			return &FieldError{Field: field, Err: err}
		}
	}
	return nil
}

// checkSettings refuses a typed value that does not fit its line; the
// FieldError names the setting with prefix before its key.
func checkSettings(where, prefix string, settings []setting) error {
	for _, s := range settings {
		if err := checkValue(s.key, s.value); err != nil {
			return &FieldError{Field: prefix + s.key, Err: fmt.Errorf("%s: %w", where, err)}
		}
	}
	return nil
}

// Validate checks what slurm.conf's syntax needs: values fit on one line
// and Extra does not shadow a typed field.
func (s ControllerSettings) Validate() error {
	var owned []setting
	for _, g := range s.groups() {
		owned = append(owned, g...)
	}
	if err := checkSettings("controller", "", owned); err != nil {
		return err
	}
	for _, js := range []struct{ field, key, content string }{{PrologField, "Prolog", s.Prolog}, {EpilogField, "Epilog", s.Epilog}} {
		if err := CheckJobScript(js.content); err != nil {
			return &FieldError{Field: js.field, Err: fmt.Errorf("controller %s script: %w", js.key, err)}
		}
	}
	if err := s.checkHealthCheck(); err != nil {
		return err
	}
	// Node and partition lines belong to their own resources; Include
	// would pull in files nobody manages.
	if err := checkExtra("controller", ExtraField, s.Extra, owned, "NodeName", "PartitionName", "NodeSet", "DownNodes", "FrontendName", "Include"); err != nil {
		return err
	}
	if err := checkSettings("cgroup", cgroupField, s.Cgroup.settings()); err != nil {
		return err
	}
	return checkExtra("cgroup", cgroupField+ExtraField, s.Cgroup.Extra, s.Cgroup.settings())
}

// Validate checks the node's name and values.
func (n NodeDef) Validate() error {
	if !NamePattern.MatchString(n.Name) {
		return &FieldError{Field: "NodeName", Err: fmt.Errorf("node name %q: use letters, digits, '.', '_' and '-'", n.Name)}
	}
	where := "node " + n.Name
	if err := checkSettings(where, "", append(n.hardware(), setting{"GPUFiles", n.GPUFiles})); err != nil {
		return err
	}
	if err := CheckDrainReason(n.DrainReason); err != nil {
		return &FieldError{Field: "DrainReason", Err: fmt.Errorf("%s: %w", where, err)}
	}
	return checkExtra(where, ExtraField, n.Extra, n.hardware(), "NodeName")
}

// Validate checks the partition's name, node names and values.
func (p PartitionDef) Validate() error {
	if !NamePattern.MatchString(p.Name) {
		return &FieldError{Field: "PartitionName", Err: fmt.Errorf("partition name %q: use letters, digits, '.', '_' and '-'", p.Name)}
	}
	where := "partition " + p.Name
	for _, n := range p.Nodes {
		if !NamePattern.MatchString(n) {
			return &FieldError{Field: "Nodes", Err: fmt.Errorf("%s: node name %q: use letters, digits, '.', '_' and '-'", where, n)}
		}
	}
	for _, g := range p.AllowGroups {
		if g == "" || strings.ContainsAny(g, ", \t\r\n#") {
			return &FieldError{Field: "AllowGroups", Err: fmt.Errorf("%s: bad group name %q", where, g)}
		}
	}
	if err := checkSettings(where, "", p.settings()); err != nil {
		return err
	}
	return checkExtra(where, ExtraField, p.Extra, p.settings(), "PartitionName")
}
