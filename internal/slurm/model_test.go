package slurm

import (
	"strings"
	"testing"
)

func TestValidateExtra(t *testing.T) {
	c := DefaultControllerSettings("login01")
	tests := []struct {
		name  string
		apply func()
		want  string
	}{
		{"typed key", func() { c.Extra = map[string]string{"SlurmctldPort": "7000"} }, `"SlurmctldPort" is set by the typed attribute SlurmctldPort`},
		{"typed key in other case", func() { c.Extra = map[string]string{"selecttype": "select/linear"} }, "typed attribute SelectType"},
		{"node line", func() { c.Extra = map[string]string{"NodeName": "x"} }, "typed attribute NodeName"},
		{"include", func() { c.Extra = map[string]string{"include": "/tmp/x"} }, "Include"},
		{"cgroup typed", func() { c.Cgroup.Extra = map[string]string{"constraincores": "no"} }, "typed attribute ConstrainCores"},
		{"bad name", func() { c.Extra = map[string]string{"Foo Bar": "1"} }, "not a Slurm setting name"},
		{"empty value", func() { c.Extra = map[string]string{"SlurmctldDebug": ""} }, "empty value"},
		{"space in value", func() { c.Extra = map[string]string{"SlurmctldDebug": "a b"} }, "whitespace"},
		{"comment in typed value", func() { c.ClusterName = "a#b" }, "whitespace or '#'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c = DefaultControllerSettings("login01")
			tt.apply()
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	c = DefaultControllerSettings("login01")
	c.Extra = map[string]string{"SlurmctldDebug": "info"}
	if err := c.Validate(); err != nil {
		t.Errorf("valid extra refused: %v", err)
	}
}

func TestValidateNodeAndPartition(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"node name", NodeDef{Name: "../x"}.Validate(), "node name"},
		{"node typed extra", NodeDef{Name: "gpu01", Extra: map[string]string{"realmemory": "1"}}.Validate(), "typed attribute RealMemory"},
		{"node name in extra", NodeDef{Name: "gpu01", Extra: map[string]string{"NodeName": "x"}}.Validate(), "typed attribute NodeName"},
		{"partition name", PartitionDef{Name: "a b"}.Validate(), "partition name"},
		{"partition node", PartitionDef{Name: "gpu", Nodes: []string{"gpu[01-02]"}}.Validate(), "node name"},
		{"partition group", PartitionDef{Name: "gpu", AllowGroups: []string{"a,b"}}.Validate(), "bad group name"},
		{"partition typed extra", PartitionDef{Name: "gpu", Extra: map[string]string{"MAXTIME": "1"}}.Validate(), "typed attribute MaxTime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", tt.err, tt.want)
			}
		})
	}
}
