package main

import (
	"maps"
	"testing"
)

func TestSilenceUnreadLogs(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want map[string]string
	}{
		{map[string]string{"HOME": "/root"}, map[string]string{"HOME": "/root",
			"TF_LOG_PROVIDER": "off", "TF_LOG_SDK": "off", "TF_LOG_SDK_PROTO": "off", "TF_LOG_SDK_FRAMEWORK": "off"}},
		{map[string]string{"TF_LOG": "info"}, map[string]string{"TF_LOG": "info"}},
		{map[string]string{"TF_LOG_PROVIDER": "debug"}, map[string]string{"TF_LOG_PROVIDER": "debug"}},
		{map[string]string{"TF_LOG_PATH": "/tmp/tf.log"}, map[string]string{"TF_LOG_PATH": "/tmp/tf.log"}},
	} {
		env := maps.Clone(tc.env)
		silenceUnreadLogs(func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			func(k, v string) error { env[k] = v; return nil })
		if !maps.Equal(env, tc.want) {
			t.Errorf("environment %v became %v, want %v", tc.env, env, tc.want)
		}
	}
}

func TestVersionLine(t *testing.T) {
	if got := versionLine("0.1.0", "6f1d2ee"); got != "terraform-provider-gpucluster 0.1.0 (6f1d2ee)" {
		t.Errorf("release build: %q", got)
	}
	if got := versionLine("dev", ""); got != "terraform-provider-gpucluster dev" {
		t.Errorf("local build: %q", got)
	}
}
