package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// envPrefix names every environment fallback: GPUCLUSTER_ and the attribute in capitals, so the
// name of each variable follows from the schema and needs no table to look up.
const envPrefix = "GPUCLUSTER_"

func envName(attribute string) string { return envPrefix + strings.ToUpper(attribute) }

// envString is one string attribute that the environment may set, and what its value must be.
// The schema's validators never see a value from the environment, so these checks repeat them.
type envString struct {
	attribute string
	field     func(*providerModel) *types.String
	check     func(string) error
}

var envStrings = []envString{
	{"user", func(m *providerModel) *types.String { return &m.User }, matches(userNamePattern, "a POSIX user name")},
	{"private_key", func(m *providerModel) *types.String { return &m.PrivateKey }, nil},
	{"private_key_file", func(m *providerModel) *types.String { return &m.PrivateKeyFile }, nil},
	{"private_key_passphrase", func(m *providerModel) *types.String { return &m.PrivateKeyPassphrase }, nil},
	{"known_hosts_file", func(m *providerModel) *types.String { return &m.KnownHostsFile }, nil},
	{"login_node", func(m *providerModel) *types.String { return &m.LoginNode }, nil},
	{"jump_host", func(m *providerModel) *types.String { return &m.JumpHost }, nil},
	{"connect_timeout", func(m *providerModel) *types.String { return &m.ConnectTimeout }, isDuration},
	{"command_timeout", func(m *providerModel) *types.String { return &m.CommandTimeout }, isDuration},
	{"keepalive_interval", func(m *providerModel) *types.String { return &m.KeepaliveInterval }, isDuration},
	{"sudo_exe", func(m *providerModel) *types.String { return &m.SudoExe }, matches(absPathOrWordPattern, "an absolute path or a command name")},
	{"sudo_password", func(m *providerModel) *types.String { return &m.SudoPassword }, nil},
}

// envAttributes lists the attributes with an environment fallback, for the schema's descriptions
// and the docs.
func envAttributes() []string {
	names := make([]string, 0, len(envStrings)+1)
	for _, e := range envStrings {
		names = append(names, e.attribute)
	}
	return append(names, "port")
}

// applyEnvironment fills every attribute the configuration leaves null from its GPUCLUSTER_
// variable. A value in the configuration wins, and so does one not yet known: the environment
// must not stand in for a value another resource will supply at apply.
func applyEnvironment(m *providerModel, getenv func(string) string) diag.Diagnostics {
	var diags diag.Diagnostics
	// The key and the key file are one choice: a configuration that makes it takes no key from
	// the environment, and the environment may make it only once.
	keyConfigured := !m.PrivateKey.IsNull() || !m.PrivateKeyFile.IsNull()
	if !keyConfigured && getenv(envName("private_key")) != "" && getenv(envName("private_key_file")) != "" {
		diags.AddAttributeError(path.Root("private_key"), "Conflicting Environment Variables",
			fmt.Sprintf("Both %s and %s are set, and only one key can be used.\n\nUnset one of them, or set private_key or private_key_file in the provider block.",
				envName("private_key"), envName("private_key_file")))
	}
	for _, e := range envStrings {
		if keyConfigured && (e.attribute == "private_key" || e.attribute == "private_key_file") {
			continue
		}
		field := e.field(m)
		value := getenv(envName(e.attribute))
		if !field.IsNull() || value == "" {
			continue
		}
		if e.check != nil {
			if err := e.check(value); err != nil {
				diags.Append(invalidEnvironment(e.attribute, value, err))
				continue
			}
		}
		*field = types.StringValue(value)
	}
	if value := getenv(envName("port")); m.Port.IsNull() && value != "" {
		port, err := parsePort(value)
		if err != nil {
			diags.Append(invalidEnvironment("port", value, err))
		} else {
			m.Port = types.Int64Value(port)
		}
	}
	return diags
}

func invalidEnvironment(attribute, value string, err error) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root(attribute), "Invalid Environment Variable",
		fmt.Sprintf("%s is set to %q, which cannot be used as %s: %s.\n\nCorrect or unset %s, or set %s in the provider block, which takes precedence.",
			envName(attribute), value, attribute, err, envName(attribute), attribute))
}

func matches(pattern *regexp.Regexp, what string) func(string) error {
	return func(s string) error {
		if !pattern.MatchString(s) {
			return fmt.Errorf("it must be %s", what)
		}
		return nil
	}
}

func isDuration(s string) error {
	if _, err := time.ParseDuration(s); err != nil {
		return fmt.Errorf("it must be a duration such as 30s or 2m")
	}
	return nil
}

func parsePort(s string) (int64, error) {
	port, err := strconv.ParseInt(s, 10, 64)
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("it must be a port number from 1 to 65535")
	}
	return port, nil
}
