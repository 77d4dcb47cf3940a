package slurm

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckTime(t *testing.T) {
	good := []string{"30", "30:00", "1:00:00", "3-0", "3-12", "3-00:00", "3-00:00:00", "0", "90:75",
		"UNLIMITED", "unlimited", "INFINITE", "-1", "24855"}
	for _, v := range good {
		if err := CheckTime(v); err != nil {
			t.Errorf("CheckTime(%q) = %v, want nil", v, err)
		}
	}
	bad := map[string]string{
		"forever":              "not a time",
		"3d":                   "not a time",
		"1:2:3:4":              "not a time",
		"1-2-3":                "not a time",
		"1:00-3":               "not a time",
		"-5":                   "not a time",
		"":                     "not a time",
		"3-":                   "not a time",
		":30":                  "not a time",
		"1.5":                  "not a time",
		"99999999999":          "too large",
		"99999999999999999999": "too large",
		"24856-00:00:00":       "longer than Slurm can hold",
		"35791395":             "longer than Slurm can hold",
	}
	for v, want := range bad {
		err := CheckTime(v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckTime(%q) = %v, want an error saying %q", v, err, want)
		}
	}
	if err := CheckTime("forever"); !strings.Contains(err.Error(), "days-hours:minutes:seconds") {
		t.Errorf("the error for forever does not list the formats: %v", err)
	}
}

func TestCheckMemory(t *testing.T) {
	for _, v := range []string{"120000", "0", "UNLIMITED", "infinite"} {
		if err := CheckMemory(v); err != nil {
			t.Errorf("CheckMemory(%q) = %v, want nil", v, err)
		}
	}
	bad := map[string]string{
		"120G": "(120G is 122880)",
		"64GB": "(64GB is 65536)",
		"2T":   "(2T is 2097152)",
		"512M": "(512M is 512)",
		"1.5G": "whole number of megabytes",
		"-1":   "whole number of megabytes",
		"lots": "whole number of megabytes",
		"512K": "without a unit",
	}
	for v, want := range bad {
		err := CheckMemory(v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckMemory(%q) = %v, want an error containing %q", v, err, want)
		}
	}
}

func TestCheckSettingStates(t *testing.T) {
	for _, v := range []string{"UNKNOWN", "future", "Cloud", "DRAIN"} {
		if err := CheckSetting(NodeLine, "State", v); err != nil {
			t.Errorf("node State=%s: %v", v, err)
		}
	}
	if err := CheckSetting(NodeLine, "State", "IDLE"); err == nil || !strings.Contains(err.Error(), "write UNKNOWN") {
		t.Errorf("node State=IDLE: %v, want the advice to write UNKNOWN", err)
	}
	if err := CheckSetting(NodeLine, "State", "UP"); err == nil {
		t.Error("node State=UP passed; UP is a partition state")
	}
	if err := CheckSetting(PartitionLine, "state", "inactive"); err != nil {
		t.Errorf("partition state=inactive: %v", err)
	}
	if err := CheckSetting(PartitionLine, "State", "UNKNOWN"); err == nil || !strings.Contains(err.Error(), "UP, DOWN, DRAIN, INACTIVE") {
		t.Errorf("partition State=UNKNOWN: %v, want the partition states listed", err)
	}
	// Keys Slurm takes as they are, and keys of another kind of line, pass.
	for _, c := range []struct {
		line       Line
		key, value string
	}{{PartitionLine, "Hidden", "whatever"}, {ControllerLine, "MaxTime", "forever"}, {NodeLine, "DefaultTime", "x"}, {PartitionLine, "MaxTime", ""}} {
		if err := CheckSetting(c.line, c.key, c.value); err != nil {
			t.Errorf("CheckSetting(%v, %s, %q) = %v, want nil", c.line, c.key, c.value, err)
		}
	}
}

// Fragments are written only with values Slurm reads; the error names the field that holds the
// value, which the provider maps to its attribute.
func TestFragmentsRefuseValuesSlurmRejects(t *testing.T) {
	cases := []struct {
		name  string
		write func() error
		field string
		want  string
	}{
		{"partition MaxTime", func() error {
			_, err := PartitionFragment(PartitionDef{Name: "gpu", Nodes: []string{"gpu01"}, MaxTime: "forever", State: "UP"})
			return err
		}, "MaxTime", "partition gpu: MaxTime=forever: not a time"},
		{"partition extra DefaultTime", func() error {
			_, err := PartitionFragment(PartitionDef{Name: "gpu", Nodes: []string{"gpu01"}, State: "UP", Extra: map[string]string{"DefaultTime": "1h"}})
			return err
		}, ExtraField, "partition gpu extra: DefaultTime=1h: not a time"},
		{"partition extra memory", func() error {
			_, err := PartitionFragment(PartitionDef{Name: "gpu", Nodes: []string{"gpu01"}, State: "UP", Extra: map[string]string{"MaxMemPerNode": "500G"}})
			return err
		}, ExtraField, "(500G is 512000)"},
		{"node State", func() error {
			_, err := NodeFragment(NodeDef{Name: "gpu01", CPUs: 4, RealMemory: 1000, State: "IDLE"})
			return err
		}, "State", "node gpu01: State=IDLE: not a state"},
		{"node extra TmpDisk", func() error {
			_, err := NodeFragment(NodeDef{Name: "gpu01", CPUs: 4, RealMemory: 1000, State: "UNKNOWN", Extra: map[string]string{"TmpDisk": "1T"}})
			return err
		}, ExtraField, "TmpDisk=1T: not a memory size"},
		{"controller extra", func() error {
			s := DefaultControllerSettings("login01")
			s.Extra = map[string]string{"DefMemPerCPU": "4G"}
			_, err := ControllerFragment(s)
			return err
		}, ExtraField, "controller extra: DefMemPerCPU=4G"},
	}
	for _, c := range cases {
		err := c.write()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", c.name, err, c.field, c.want)
		}
	}
	if _, err := PartitionFragment(PartitionDef{Name: "gpu", Nodes: []string{"gpu01"}, MaxTime: "3-00:00:00", State: "UP",
		Extra: map[string]string{"DefaultTime": "1:00:00", "DefMemPerCPU": "4096"}}); err != nil {
		t.Errorf("the guide's partition with valid extras: %v", err)
	}
}

// A fragment an older provider wrote with such a value still reads back, so its resource can be
// corrected instead of failing every refresh.
func TestParseKeepsOldFragmentsReadable(t *testing.T) {
	frag, err := PartitionFragment(PartitionDef{Name: "gpu", Nodes: []string{"gpu01"}, MaxTime: "3-00:00:00", State: "UP"})
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(frag.Content), "3-00:00:00", "forever", 1)
	p, err := ParsePartitionFragment([]byte(old))
	if err != nil || p.MaxTime != "forever" {
		t.Errorf("ParsePartitionFragment(old fragment) = %+v, %v; want it read back as it is", p, err)
	}
}
