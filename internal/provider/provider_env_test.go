package provider

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func envOf(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestEnvironmentFillsEveryConnectionSetting(t *testing.T) {
	s, diags := settingsFromModel(context.Background(), providerModel{}, envOf(map[string]string{
		"GPUCLUSTER_USER":               "ops",
		"GPUCLUSTER_PORT":               "2222",
		"GPUCLUSTER_PRIVATE_KEY":        "PEM",
		"GPUCLUSTER_KNOWN_HOSTS_FILE":   "/etc/gpucluster/known_hosts",
		"GPUCLUSTER_LOGIN_NODE":         "login01",
		"GPUCLUSTER_JUMP_HOST":          "bastion",
		"GPUCLUSTER_CONNECT_TIMEOUT":    "5s",
		"GPUCLUSTER_COMMAND_TIMEOUT":    "10m",
		"GPUCLUSTER_KEEPALIVE_INTERVAL": "7s",
		"GPUCLUSTER_SUDO_EXE":           "/usr/bin/sudo.ws",
		"GPUCLUSTER_SUDO_PASSWORD":      "secret",
	}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	got := []any{s.user, s.port, string(s.privateKey), s.knownHostsFile, s.loginNode, s.jumpHost,
		s.connectTimeout.String(), s.commandTimeout.String(), s.keepalive.String(), s.sudoExe, string(s.sudoPassword)}
	want := []any{"ops", 2222, "PEM", "/etc/gpucluster/known_hosts", "login01", "bastion",
		"5s", "10m0s", "7s", "/usr/bin/sudo.ws", "secret"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("setting %d from the environment: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestEnvironmentReadsKeyFile(t *testing.T) {
	file := t.TempDir() + "/id"
	if err := os.WriteFile(file, []byte("KEY FROM FILE"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, diags := settingsFromModel(context.Background(), providerModel{}, envOf(map[string]string{"GPUCLUSTER_PRIVATE_KEY_FILE": file}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if string(s.privateKey) != "KEY FROM FILE" || s.useAgent {
		t.Errorf("GPUCLUSTER_PRIVATE_KEY_FILE: key %q, agent %v; want the file's key and no agent", s.privateKey, s.useAgent)
	}
}

func TestConfigurationWinsOverEnvironment(t *testing.T) {
	m := providerModel{User: types.StringValue("admin"), Port: types.Int64Value(22), LoginNode: types.StringUnknown()}
	s, diags := settingsFromModel(context.Background(), m, envOf(map[string]string{
		"GPUCLUSTER_USER": "ops", "GPUCLUSTER_PORT": "2222", "GPUCLUSTER_LOGIN_NODE": "login01",
	}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if s.user != "admin" || s.port != 22 {
		t.Errorf("user %q port %d, want the configuration's admin and 22", s.user, s.port)
	}
	// A login node another resource supplies at apply must not be replaced by the environment.
	if s.loginNode != "" || !s.unknown {
		t.Errorf("unknown login_node became %q (unknown=%v); want it left unknown", s.loginNode, s.unknown)
	}
}

func TestInvalidEnvironmentNamesVariableAndAttribute(t *testing.T) {
	for variable, value := range map[string]string{
		"GPUCLUSTER_PORT":            "70000",
		"GPUCLUSTER_USER":            "root; rm -rf /",
		"GPUCLUSTER_CONNECT_TIMEOUT": "soon",
		"GPUCLUSTER_SUDO_EXE":        "sudo -u root",
	} {
		_, diags := settingsFromModel(context.Background(), providerModel{}, envOf(map[string]string{variable: value}))
		if diags.ErrorsCount() != 1 {
			t.Errorf("%s=%q: %d errors, want 1", variable, value, diags.ErrorsCount())
			continue
		}
		d := diags.Errors()[0]
		attribute := strings.ToLower(strings.TrimPrefix(variable, envPrefix))
		if d.Summary() != "Invalid Environment Variable" || !strings.Contains(d.Detail(), variable) || !strings.Contains(d.Detail(), attribute) {
			t.Errorf("%s=%q: %s: %s; want the variable and %s named", variable, value, d.Summary(), d.Detail(), attribute)
		}
	}
}

func TestSchemaDocumentsEveryEnvironmentVariable(t *testing.T) {
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	for _, name := range envAttributes() {
		if !strings.Contains(resp.Schema.Attributes[name].GetMarkdownDescription(), "`"+envName(name)+"`") {
			t.Errorf("the description of %s does not name %s", name, envName(name))
		}
	}
}

func TestConfiguredKeyFileWinsOverKeyInEnvironment(t *testing.T) {
	file := t.TempDir() + "/id"
	if err := os.WriteFile(file, []byte("KEY FROM FILE"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, diags := settingsFromModel(context.Background(), providerModel{PrivateKeyFile: types.StringValue(file)},
		envOf(map[string]string{"GPUCLUSTER_PRIVATE_KEY": "KEY FROM ENVIRONMENT"}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if string(s.privateKey) != "KEY FROM FILE" {
		t.Errorf("private_key_file in the configuration, GPUCLUSTER_PRIVATE_KEY set: the key used is %q", s.privateKey)
	}
}

func TestKeyAndKeyFileInEnvironmentConflict(t *testing.T) {
	_, diags := settingsFromModel(context.Background(), providerModel{},
		envOf(map[string]string{"GPUCLUSTER_PRIVATE_KEY": "PEM", "GPUCLUSTER_PRIVATE_KEY_FILE": "/nonexistent"}))
	if !diags.HasError() || diags.Errors()[0].Summary() != "Conflicting Environment Variables" {
		t.Errorf("both key variables set: %v, want one Conflicting Environment Variables error", diags)
	}
}
