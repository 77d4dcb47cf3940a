package slurm

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestSettingClass(t *testing.T) {
	for key, want := range map[string]ChangeClass{
		"SlurmctldPort": RestartController, "selecttype": RestartController, "SchedulerType": Reconfigure,
		"SelectTypeParameters": Reconfigure, "ClusterName": RestartController,
		"SlurmdPort": OrderedRestart, "authtype": OrderedRestart, "CredType": OrderedRestart,
	} {
		if got := SettingClass(key); got != want {
			t.Errorf("SettingClass(%s) = %v, want %v", key, got, want)
		}
	}
}

// The documentation's lists come from the table Classify uses, every key in it.
func TestSettingsOfClass(t *testing.T) {
	for _, class := range []ChangeClass{RestartController, OrderedRestart} {
		keys := SettingsOfClass(class)
		if len(keys) == 0 || !sort.StringsAreSorted(keys) {
			t.Errorf("%v: %v", class, keys)
		}
		for _, k := range keys {
			if SettingClass(k) != class {
				t.Errorf("%s is listed under %v but classed %v", k, class, SettingClass(k))
			}
		}
	}
	if got := len(SettingsOfClass(RestartController)) + len(SettingsOfClass(OrderedRestart)); got != len(controllerRestartKeys)+len(allDaemonsRestartKeys) {
		t.Errorf("%d keys listed, the tables hold %d", got, len(controllerRestartKeys)+len(allDaemonsRestartKeys))
	}
}

// A hand edit of the files on the controller is a pending activation, named by setting,
// that the next activation repairs.
func TestPendingHandEdit(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	st, err := ReadStatus(ctx, s)
	if err != nil || st.Version == nil || st.Fragments.Controller == nil {
		t.Fatalf("after apply: %+v %v", st, err)
	}
	conf := strings.Replace(s.read("/etc/slurm/slurm.conf"), "SchedulerType=sched/backfill", "SchedulerType=sched/builtin", 1)
	if _, err := s.WriteFile(ctx, configFile("/etc/slurm/slurm.conf", []byte(conf))); err != nil {
		t.Fatal(err)
	}
	touch(t, s.root+"/etc/slurm/gres.conf")
	out, err := Preview(ctx, s)
	if want := "SchedulerType changed|gres.conf changed"; err != nil || out.Class != Reconfigure || strings.Join(out.Reasons, "|") != want {
		t.Errorf("pending %+v %v, want a reconfigure for %q", out, err, want)
	}
	out, err = Activate(ctx, s, testWait)
	if err != nil || out.Class != Reconfigure {
		t.Errorf("repair: %v %v", out.Class, err)
	}
}

func TestPreviewChangesNothing(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, true)
	frags := guideFragments(t)
	if _, err := apply(ctx, s, frags...); err != nil {
		t.Fatal(err)
	}
	s.calls()
	s.writes = nil
	out, err := Preview(ctx, s, RemoveFragment(NodeFile("gpu03")), mustPartition(t, "gpu01", "gpu02"))
	if err != nil || out.Class != OrderedRestart || strings.Join(out.RestartNodes, ",") != "gpu01,gpu02" {
		t.Errorf("preview: %+v %v", out, err)
	}
	if _, err := Preview(ctx, s, mustPartition(t, "gpu01", "gpu09")); err == nil || !strings.Contains(err.Error(), "gpu09") {
		t.Errorf("P14: %v", err)
	}
	if len(s.writes) > 0 || len(s.calls()) > 0 {
		t.Errorf("preview changed something: %v", s.writes)
	}
}

// P10: a host where munged does not decode its own credential is refused, with a typed error.
func TestCheckMunge(t *testing.T) {
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{
		{},
		{Err: &transport.ExitError{Host: "gpu01", Status: 1, Stderr: "unmunge: Error: Munged communication error"}},
	}}
	if err := CheckMunge(context.Background(), fake); err != nil {
		t.Errorf("munged runs: %v", err)
	}
	err := CheckMunge(context.Background(), fake)
	var me *MungeError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "Munged communication error") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(fake.Calls[0].Script, "munge -n | unmunge") {
		t.Errorf("script:\n%s", fake.Calls[0].Script)
	}
}
