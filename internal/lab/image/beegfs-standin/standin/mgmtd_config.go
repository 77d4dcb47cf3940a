package main

// STAND-IN: beegfs-mgmtd's settings. Every setting of the real service is a
// TOML key of the same kebab-case name and a --flag; the command line beats
// the file, the file beats the defaults; an unknown TOML key is refused
// (serde's deny_unknown_fields), and so is a key the real service only takes
// on the command line.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const mgmtdDefaultConfig = "/etc/beegfs/beegfs-mgmtd.toml"

// capLimits is one [cap-pool-*-limits] table, or the thresholds and limits
// of a [cap-pool-dynamic-*-limits] one.
type capLimits struct {
	InodesLow, InodesEmergency, SpaceLow, SpaceEmergency uint64
	Thresholds                                           map[string]uint64
}

type mgmtdConfig struct {
	Init, Upgrade                   bool
	FsUUID, ImportFromV7            string
	ConfigFile                      string
	DBFile                          string
	LogTarget, LogLevel             string
	BeeMsgPort, GRPCPort, PortShift uint64
	TLSDisable                      bool
	TLSCertFile, TLSKeyFile         string
	Interfaces                      []string
	IPv6Disable                     bool
	ConnectionLimit                 uint64
	AuthDisable                     bool
	AuthFile                        string
	RegistrationDisable             bool
	NodeOfflineTimeout              time.Duration
	ClientAutoRemoveTimeout         time.Duration
	LicenseDisable                  bool
	LicenseCertFile, LicenseLibFile string
	MaxBlockingThreads              uint64
	QuotaEnable, QuotaEnforce       bool
	QuotaUpdateInterval             time.Duration
	// Quota ID settings are kept as given: the stand-in has no quota.
	Quota                             map[string]string
	CapPoolMeta, CapPoolStorage       capLimits
	CapPoolDynMeta, CapPoolDynStorage *capLimits
	Daemonize                         bool
	DaemonizePidFile                  string
}

func defaultMgmtdConfig() *mgmtdConfig {
	return &mgmtdConfig{
		ConfigFile: mgmtdDefaultConfig, DBFile: "/var/lib/beegfs/mgmtd.sqlite",
		LogTarget: "journald", LogLevel: "warn",
		BeeMsgPort: portMgmtdBeeMsg, GRPCPort: portMgmtdGRPC,
		TLSCertFile: "/etc/beegfs/cert.pem", TLSKeyFile: "/etc/beegfs/key.pem",
		ConnectionLimit: 12, AuthFile: "/etc/beegfs/conn.auth",
		NodeOfflineTimeout: 180 * time.Second, ClientAutoRemoveTimeout: 30 * time.Minute,
		LicenseCertFile: "/etc/beegfs/license.pem", LicenseLibFile: "/opt/beegfs/lib/libbeegfs_license.so",
		MaxBlockingThreads: 128, QuotaUpdateInterval: 30 * time.Second,
		Quota:            map[string]string{},
		CapPoolMeta:      capLimits{InodesLow: 10_000_000, InodesEmergency: 1_000_000, SpaceLow: 10 << 30, SpaceEmergency: 3 << 30},
		CapPoolStorage:   capLimits{InodesLow: 10_000_000, InodesEmergency: 1_000_000, SpaceLow: 512 << 30, SpaceEmergency: 10 << 30},
		DaemonizePidFile: "/run/beegfs/mgmtd.pid",
	}
}

// settingKind says how a setting's value is read.
type settingKind int

const (
	kindPath settingKind = iota
	kindBool
	kindUint
	kindDuration
	kindEnum
	kindList
	kindRange
	kindUUID
)

// mgmtdSetting is one setting, in the real service's order.
type mgmtdSetting struct {
	Name string
	Kind settingKind
	// Max bounds a kindUint; Enum lists a kindEnum's values (aliases after "=").
	Max  uint64
	Enum []string
	// CLIOnly settings are serde(skip): refused in the TOML.
	CLIOnly bool
	set     func(c *mgmtdConfig, v any)
}

var mgmtdSettings = []mgmtdSetting{
	{Name: "init", Kind: kindBool, CLIOnly: true, set: func(c *mgmtdConfig, v any) { c.Init = v.(bool) }},
	{Name: "fs-uuid", Kind: kindUUID, CLIOnly: true, set: func(c *mgmtdConfig, v any) { c.FsUUID = v.(string) }},
	{Name: "upgrade", Kind: kindBool, CLIOnly: true, set: func(c *mgmtdConfig, v any) { c.Upgrade = v.(bool) }},
	{Name: "import-from-v7", Kind: kindPath, CLIOnly: true, set: func(c *mgmtdConfig, v any) { c.ImportFromV7 = v.(string) }},
	{Name: "config-file", Kind: kindPath, CLIOnly: true, set: func(c *mgmtdConfig, v any) { c.ConfigFile = v.(string) }},
	{Name: "db-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.DBFile = v.(string) }},
	{Name: "log-target", Kind: kindEnum, Enum: []string{"journald", "stderr", "std=stderr"}, set: func(c *mgmtdConfig, v any) { c.LogTarget = v.(string) }},
	{Name: "log-level", Kind: kindEnum, Enum: []string{"off", "error", "warn", "info", "debug", "trace"}, set: func(c *mgmtdConfig, v any) { c.LogLevel = v.(string) }},
	{Name: "beemsg-port", Kind: kindUint, Max: 65535, set: func(c *mgmtdConfig, v any) { c.BeeMsgPort = v.(uint64) }},
	{Name: "grpc-port", Kind: kindUint, Max: 65535, set: func(c *mgmtdConfig, v any) { c.GRPCPort = v.(uint64) }},
	{Name: "port-shift", Kind: kindUint, Max: 65535, set: func(c *mgmtdConfig, v any) { c.PortShift = v.(uint64) }},
	{Name: "tls-disable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.TLSDisable = v.(bool) }},
	{Name: "tls-cert-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.TLSCertFile = v.(string) }},
	{Name: "tls-key-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.TLSKeyFile = v.(string) }},
	{Name: "interfaces", Kind: kindList, set: func(c *mgmtdConfig, v any) { c.Interfaces = v.([]string) }},
	{Name: "ipv6-disable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.IPv6Disable = v.(bool) }},
	{Name: "connection-limit", Kind: kindUint, Max: 1<<64 - 1, set: func(c *mgmtdConfig, v any) { c.ConnectionLimit = v.(uint64) }},
	{Name: "auth-disable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.AuthDisable = v.(bool) }},
	{Name: "auth-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.AuthFile = v.(string) }},
	{Name: "registration-disable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.RegistrationDisable = v.(bool) }},
	{Name: "node-offline-timeout", Kind: kindDuration, set: func(c *mgmtdConfig, v any) { c.NodeOfflineTimeout = v.(time.Duration) }},
	{Name: "client-auto-remove-timeout", Kind: kindDuration, set: func(c *mgmtdConfig, v any) { c.ClientAutoRemoveTimeout = v.(time.Duration) }},
	{Name: "license-disable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.LicenseDisable = v.(bool) }},
	{Name: "license-cert-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.LicenseCertFile = v.(string) }},
	{Name: "license-lib-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.LicenseLibFile = v.(string) }},
	{Name: "max-blocking-threads", Kind: kindUint, Max: 1<<64 - 1, set: func(c *mgmtdConfig, v any) { c.MaxBlockingThreads = v.(uint64) }},
	{Name: "quota-enable", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.QuotaEnable = v.(bool) }},
	{Name: "quota-enforce", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.QuotaEnforce = v.(bool) }},
	{Name: "quota-update-interval", Kind: kindDuration, set: func(c *mgmtdConfig, v any) { c.QuotaUpdateInterval = v.(time.Duration) }},
	quotaSetting("quota-user-system-ids-min", kindUint),
	quotaSetting("quota-user-ids-file", kindPath),
	quotaSetting("quota-user-ids-range", kindRange),
	quotaSetting("quota-group-system-ids-min", kindUint),
	quotaSetting("quota-group-ids-file", kindPath),
	quotaSetting("quota-group-ids-range", kindRange),
	{Name: "daemonize", Kind: kindBool, set: func(c *mgmtdConfig, v any) { c.Daemonize = v.(bool) }},
	{Name: "daemonize-pid-file", Kind: kindPath, set: func(c *mgmtdConfig, v any) { c.DaemonizePidFile = v.(string) }},
}

func quotaSetting(name string, kind settingKind) mgmtdSetting {
	return mgmtdSetting{Name: name, Kind: kind, Max: 1<<32 - 1, set: func(c *mgmtdConfig, v any) { c.Quota[name] = fmt.Sprint(v) }}
}

// capPoolTables are the TOML-only tables, in the real order among the keys.
var capPoolTables = []string{"cap-pool-meta-limits", "cap-pool-dynamic-meta-limits", "cap-pool-storage-limits", "cap-pool-dynamic-storage-limits"}

var capPoolKeys = []string{"inodes-low", "inodes-emergency", "space-low", "space-emergency"}
var capPoolDynamicKeys = []string{"inodes-normal-threshold", "inodes-low-threshold", "space-normal-threshold", "space-low-threshold", "inodes-low", "inodes-emergency", "space-low", "space-emergency"}

// tomlFieldNames is serde's "expected one of" list: the keys the file may hold.
func tomlFieldNames() []string {
	var names []string
	for _, s := range mgmtdSettings {
		if s.CLIOnly {
			continue
		}
		if s.Name == "daemonize" {
			names = append(names, capPoolTables...)
		}
		names = append(names, s.Name)
	}
	return names
}

func findSetting(name string) *mgmtdSetting {
	for i := range mgmtdSettings {
		if mgmtdSettings[i].Name == name {
			return &mgmtdSettings[i]
		}
	}
	return nil
}

var (
	durationRE    = regexp.MustCompile(`^(\d+) *(([num]?s|[mhd])?)$`)
	integerUnitRE = regexp.MustCompile(`^(\d+) *([kMGTPE]?i?)[[:alpha:]]*$`)
	rangeRE       = regexp.MustCompile(`^\s*(\d+)\s*-\s*(\d+)\s*$`)
	uuidV4RE      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)
)

const durationExpect = `a positive integer representing a time span in seconds or a string containing a positive integer n with appended time unit in the form "<n>[[n|u|m]s|m|h|d]"`
const integerUnitExpect = `a positive integer representing the base value or a string containing a positive integer n with appended arbitrary unit with optional SI prefix in the form "<integer>[k|M|G|T|P|E][i][unit]"`

func parseDuration(s string) (time.Duration, bool) {
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(m[1], 10, 63)
	if err != nil {
		return 0, false
	}
	unit := map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, true
}

func parseIntegerUnit(s string) (uint64, bool) {
	m := integerUnitRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]uint64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
		"ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
	f, ok := mult[m[2]]
	if !ok {
		return 0, false
	}
	return n * f, true
}

// unexpected names a TOML value the way serde does in "invalid type" errors.
func unexpected(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean `%t`", v)
	case int64:
		return fmt.Sprintf("integer `%d`", v)
	default:
		return "sequence"
	}
}

// convertTOML turns a TOML value into the setting's type, or serde's error.
func (s *mgmtdSetting) convertTOML(v any) (any, error) {
	switch s.Kind {
	case kindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("invalid type: %s, expected a boolean", unexpected(v))
	case kindUint:
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("invalid type: %s, expected %s", unexpected(v), uintName(s.Max))
		}
		if n < 0 || uint64(n) > s.Max {
			return nil, fmt.Errorf("invalid value: integer `%d`, expected %s", n, uintName(s.Max))
		}
		return uint64(n), nil
	case kindDuration:
		switch v := v.(type) {
		case int64:
			if v < 0 {
				return nil, fmt.Errorf("invalid value: integer `%d`, expected %s", v, durationExpect)
			}
			return time.Duration(v) * time.Second, nil
		case string:
			if d, ok := parseDuration(v); ok {
				return d, nil
			}
			return nil, fmt.Errorf("invalid value: string %q, expected %s", v, durationExpect)
		}
		return nil, fmt.Errorf("invalid type: %s, expected %s", unexpected(v), durationExpect)
	case kindList:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("invalid type: %s, expected a sequence", unexpected(v))
		}
		var out []string
		for _, it := range items {
			str, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("invalid type: %s, expected a string", unexpected(it))
			}
			out = append(out, str)
		}
		return out, nil
	}
	str, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("invalid type: %s, expected %s", unexpected(v), kindExpect(s))
	}
	return s.convertString(str)
}

func uintName(maxValue uint64) string {
	switch maxValue {
	case 65535:
		return "u16"
	case 1<<32 - 1:
		return "u32"
	}
	return "usize"
}

func kindExpect(s *mgmtdSetting) string {
	switch s.Kind {
	case kindEnum:
		return "enum " + map[string]string{"log-target": "LogTarget", "log-level": "LogLevel"}[s.Name]
	case kindRange:
		return "a string"
	}
	return "path string"
}

// convertString reads a string value (a flag's, or a string TOML value).
func (s *mgmtdSetting) convertString(v string) (any, error) {
	switch s.Kind {
	case kindBool:
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("invalid value '%s': expected 'true' or 'false'", v)
	case kindUint:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > s.Max {
			return nil, fmt.Errorf("invalid digit found in string")
		}
		return n, nil
	case kindDuration:
		if d, ok := parseDuration(v); ok {
			return d, nil
		}
		return nil, fmt.Errorf("%s", durationExpect)
	case kindList:
		return strings.Split(v, ","), nil
	case kindEnum:
		var names []string
		for _, e := range s.Enum {
			name, canonical, alias := strings.Cut(e, "=")
			if !alias {
				names = append(names, "`"+name+"`")
				canonical = name
			}
			if v == name {
				return canonical, nil
			}
		}
		if len(names) == 2 {
			return nil, fmt.Errorf("unknown variant `%s`, expected %s or %s", v, names[0], names[1])
		}
		return nil, fmt.Errorf("unknown variant `%s`, expected one of %s", v, strings.Join(names, ", "))
	case kindRange:
		m := rangeRE.FindStringSubmatch(v)
		if m == nil {
			return nil, fmt.Errorf("invalid range %q", v)
		}
		return v, nil
	case kindUUID:
		if !uuidV4RE.MatchString(v) {
			return nil, fmt.Errorf("invalid UUID %q", v)
		}
		return strings.ToLower(v), nil
	}
	return v, nil
}

// applyTOML sets what the file says; an error is the real parser's.
func (c *mgmtdConfig) applyTOML(doc string) error {
	entries, err := parseTOML(doc)
	if err != nil {
		return err
	}
	tables := map[string][]tomlEntry{}
	var order []string
	for _, e := range entries {
		if e.Table != "" {
			if _, ok := tables[e.Table]; !ok {
				order = append(order, e.Table)
			}
			tables[e.Table] = append(tables[e.Table], e)
			continue
		}
		s := findSetting(e.Key)
		if s == nil || s.CLIOnly || isCapPoolTable(e.Key) {
			return unknownField(e.Line, e.Col, len(e.Key), e.Text, e.Key)
		}
		v, err := s.convertTOML(e.Value)
		if err != nil {
			return &tomlError{Line: e.Line, Col: e.ValueCol, Width: len(strings.TrimSpace(stripComment(e.Text[e.ValueCol-1:]))), Text: e.Text, Msg: err.Error()}
		}
		s.set(c, v)
	}
	for _, name := range order {
		if err := c.applyCapPool(name, tables[name], doc); err != nil {
			return err
		}
	}
	return nil
}

func isCapPoolTable(name string) bool {
	for _, t := range capPoolTables {
		if t == name {
			return true
		}
	}
	return false
}

func unknownField(line, col, width int, text, key string) error {
	quoted := make([]string, 0, len(mgmtdSettings))
	for _, n := range tomlFieldNames() {
		quoted = append(quoted, "`"+n+"`")
	}
	return &tomlError{Line: line, Col: col, Width: width, Text: text,
		Msg: fmt.Sprintf("unknown field `%s`, expected one of %s", key, strings.Join(quoted, ", "))}
}

// applyCapPool reads one cap-pool table: every key of it is required, and
// unknown keys inside it are ignored, as the real structs have no default
// and no deny_unknown_fields.
func (c *mgmtdConfig) applyCapPool(name string, entries []tomlEntry, doc string) error {
	header := tableHeaderLine(doc, name)
	if !isCapPoolTable(name) {
		return unknownField(header.line, header.col, len(name)+2, header.text, name)
	}
	keys := capPoolKeys
	if strings.Contains(name, "dynamic") {
		keys = capPoolDynamicKeys
	}
	values := map[string]uint64{}
	for _, e := range entries {
		if !contains(keys, e.Key) {
			continue
		}
		n, err := integerUnit(e.Value)
		if err != nil {
			return &tomlError{Line: e.Line, Col: e.ValueCol, Width: len(strings.TrimSpace(stripComment(e.Text[e.ValueCol-1:]))), Text: e.Text, Msg: err.Error()}
		}
		values[e.Key] = n
	}
	for _, k := range keys {
		if _, ok := values[k]; !ok {
			return &tomlError{Line: header.line, Col: header.col, Width: len(name) + 2, Text: header.text, Msg: fmt.Sprintf("missing field `%s`", k)}
		}
	}
	l := capLimits{InodesLow: values["inodes-low"], InodesEmergency: values["inodes-emergency"], SpaceLow: values["space-low"], SpaceEmergency: values["space-emergency"]}
	switch name {
	case "cap-pool-meta-limits":
		c.CapPoolMeta = l
	case "cap-pool-storage-limits":
		c.CapPoolStorage = l
	default:
		l.Thresholds = values
		if strings.Contains(name, "meta") {
			c.CapPoolDynMeta = &l
		} else {
			c.CapPoolDynStorage = &l
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func integerUnit(v any) (uint64, error) {
	switch v := v.(type) {
	case int64:
		if v >= 0 {
			return uint64(v), nil
		}
	case string:
		if n, ok := parseIntegerUnit(v); ok {
			return n, nil
		}
		return 0, fmt.Errorf("invalid value: string %q, expected %s", v, integerUnitExpect)
	}
	return 0, fmt.Errorf("invalid type: %s, expected %s", unexpected(v), integerUnitExpect)
}

type headerPos struct {
	line, col int
	text      string
}

func tableHeaderLine(doc, name string) headerPos {
	for i, raw := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(stripComment(raw))
		if strings.HasPrefix(t, "[") && strings.TrimSpace(strings.Trim(t, "[]")) == name {
			return headerPos{line: i + 1, col: strings.Index(raw, "[") + 1, text: strings.TrimRight(raw, "\r")}
		}
	}
	return headerPos{line: 1, col: 1}
}

// checkValidity is the real check_validity, run after file and flags.
func (c *mgmtdConfig) checkValidity() error {
	if c.QuotaEnforce && !c.QuotaEnable {
		return fmt.Errorf("Quota enforcement requires quota being enabled")
	}
	if err := c.CapPoolMeta.check("The low limit is lower than the emergency limit"); err != nil {
		return fmt.Errorf("Capacity pool meta limits: %w", err)
	}
	if err := c.CapPoolStorage.check("The low limit is lower than the emergency limit"); err != nil {
		return fmt.Errorf("Capacity pool storage limits: %w", err)
	}
	for _, d := range []struct {
		dyn  *capLimits
		base capLimits
		kind string
	}{{c.CapPoolDynMeta, c.CapPoolMeta, "meta"}, {c.CapPoolDynStorage, c.CapPoolStorage, "storage"}} {
		if d.dyn == nil {
			continue
		}
		if err := d.dyn.check("the low limit is lower than the emergency limit"); err != nil {
			return fmt.Errorf("Capacity pool dynamic %s limits: %w", d.kind, err)
		}
		if d.dyn.SpaceLow < d.base.SpaceLow || d.dyn.InodesLow < d.base.InodesLow || d.dyn.SpaceEmergency < d.base.SpaceEmergency || d.dyn.InodesEmergency < d.base.InodesEmergency {
			return fmt.Errorf("At least one of the default or user configured limits in cap-pool-dynamic-%s-limits is lower than the cap-pool-%s-limits", d.kind, d.kind)
		}
	}
	return nil
}

func (l capLimits) check(msg string) error {
	if l.SpaceLow < l.SpaceEmergency || l.InodesLow < l.InodesEmergency {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// usageError is clap's refusal of the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func clapError(format string, a ...any) error {
	return &usageError{msg: "error: " + fmt.Sprintf(format, a...) + "\n\nUsage: mgmtd [OPTIONS]\n\nFor more information, try '--help'."}
}

// parseMgmtdFlags reads the command line into a fresh settings map; help and
// version come back as the flag's name in action.
func parseMgmtdFlags(args []string) (flags map[string]any, action string, err error) {
	flags = map[string]any{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "-h", "--help":
			return nil, "help", nil
		case "-V", "--version":
			return nil, "version", nil
		}
		if !strings.HasPrefix(arg, "--") {
			return nil, "", clapError("unexpected argument '%s' found", arg)
		}
		name, value, hasValue := strings.Cut(arg[2:], "=")
		s := findSetting(name)
		if s == nil {
			return nil, "", clapError("unexpected argument '--%s' found", name)
		}
		if !hasValue {
			switch {
			case s.Kind == kindBool && (i+1 >= len(args) || strings.HasPrefix(args[i+1], "-")):
				value = "true"
			case i+1 < len(args):
				i++
				value = args[i]
			default:
				return nil, "", clapError("a value is required for '--%s <%s>' but none was supplied", name, valueName(s))
			}
		}
		v, err := s.convertString(value)
		if err != nil {
			return nil, "", clapError("invalid value '%s' for '--%s <%s>': %v", value, name, valueName(s), err)
		}
		flags[name] = v
	}
	return flags, "", nil
}

func valueName(s *mgmtdSetting) string {
	switch s.Kind {
	case kindPath:
		return "PATH"
	case kindEnum:
		return "IDENT"
	case kindDuration:
		return "DURATION"
	case kindBool:
		return strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
	case kindList:
		return "FILTERS"
	case kindRange:
		return "RANGE"
	case kindUUID:
		return "UUID"
	}
	if strings.HasSuffix(s.Name, "port") {
		return "PORT"
	}
	return "LIMIT"
}

// loadMgmtdConfig is the real load_and_parse: flags, then the file they
// name (a missing default file is ignored), then the flags again on top.
func loadMgmtdConfig(flags map[string]any) (*mgmtdConfig, error) {
	c := defaultMgmtdConfig()
	path := mgmtdDefaultConfig
	if p, ok := flags["config-file"]; ok {
		path = p.(string)
	}
	doc, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := c.applyTOML(string(doc)); err != nil {
			return nil, fmt.Errorf("Could not parse config file: %w", err)
		}
	case path != mgmtdDefaultConfig:
		return nil, fmt.Errorf("Could not open config file at %q: %s", path, osErrorText(err))
	}
	for _, s := range mgmtdSettings {
		if v, ok := flags[s.Name]; ok {
			s.set(c, v)
		}
	}
	if err := c.checkValidity(); err != nil {
		return nil, fmt.Errorf("Invalid config: %w", err)
	}
	c.BeeMsgPort = (c.BeeMsgPort + c.PortShift) & 0xffff
	c.GRPCPort = (c.GRPCPort + c.PortShift) & 0xffff
	return c, nil
}
