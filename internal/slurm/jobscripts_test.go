package slurm

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

const testProlog = "#!/bin/sh\n\n# a blank line and an = sign survive the fragment\nlogger -t prolog job=$SLURM_JOB_ID\n"

// A script must be something slurmd can execute; the key it sets is the script's while one is
// set, and Extra's otherwise.
func TestCheckJobScript(t *testing.T) {
	for script, want := range map[string]string{
		"":                       "",
		testProlog:               "",
		"echo hi\n":              "interpreter line",
		"#!/bin/sh\necho \x00\n": "NUL",
		"#!/bin/sh\n" + strings.Repeat("#", MaxJobScriptSize): "more than",
	} {
		err := CheckJobScript(script)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckJobScript(%.20q) = %v, want %q", script, err, want)
		}
	}
	c, _, _ := guideExample()
	c.Prolog = "echo hi\n"
	var fe *FieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Field != PrologField {
		t.Errorf("a prolog without an interpreter line: %v, want a FieldError on %s", err, PrologField)
	}
	c.Prolog, c.Extra = "", map[string]string{"Prolog": "/etc/slurm/own-prolog.sh"}
	if err := c.Validate(); err != nil {
		t.Errorf("Prolog in extra without a prolog script: %v", err)
	}
	c.Prolog = testProlog
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "typed attribute Prolog") {
		t.Errorf("Prolog in extra beside a prolog script: %v", err)
	}
}

func TestJobScriptFragmentRoundTrip(t *testing.T) {
	c, _, _ := guideExample()
	c.Prolog, c.Epilog = testProlog, "#!/bin/bash\nexit 0\n"
	frag, err := ControllerFragment(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseControllerFragment(frag.Content); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("got %+v, %v\nwant %+v\n%s", got, err, c, frag.Content)
	}
}

// The activation writes the scripts beside slurm.conf with the keys naming them, a change of a
// script alone is a reconfigure, a hand edit is pending, an apply without a change touches
// nothing, and an unset script loses its file and its key.
func TestJobScriptsActivation(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	c, _, _ := guideExample()
	withScripts := func(prolog, epilog string) Fragment {
		c.Prolog, c.Epilog = prolog, epilog
		f, err := ControllerFragment(c)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s.calls()

	out, err := apply(ctx, s, withScripts(testProlog, "#!/bin/sh\nexit 0\n"))
	if err != nil || out.Class != Reconfigure {
		t.Fatalf("scripts added: %+v %v", out, err)
	}
	if got := s.read(ConfDir + "/" + PrologFile); got != testProlog {
		t.Errorf("%s: %q", PrologFile, got)
	}
	conf := s.read(ConfDir + "/slurm.conf")
	for _, line := range []string{"\nProlog=" + PrologFile + "\n", "\nEpilog=" + EpilogFile + "\n"} {
		if !strings.Contains(conf, line) {
			t.Errorf("slurm.conf lacks %q:\n%s", line, conf)
		}
	}
	if got := s.calls(); strings.Join(got, "|") != "scontrol show hostnames localhost|scontrol reconfigure|scontrol ping" {
		t.Errorf("calls %q", got)
	}

	s.writes = nil
	if out, err := apply(ctx, s, withScripts(testProlog, "#!/bin/sh\nexit 0\n")); err != nil || out.Class != NoChange || len(s.writes) > 0 || len(s.calls()) > 0 {
		t.Errorf("no-op: %+v %v, wrote %v", out, err, s.writes)
	}

	out, err = apply(ctx, s, withScripts(testProlog+"exit 0\n", "#!/bin/sh\nexit 0\n"))
	if err != nil || out.Class != Reconfigure || strings.Join(out.Reasons, ",") != PrologFile+" changed" {
		t.Errorf("prolog changed: %+v %v", out, err)
	}

	if err := os.WriteFile(s.root+ConfDir+"/"+PrologFile, []byte("#!/bin/sh\nby hand\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := Preview(ctx, s); err != nil || out.Class != Reconfigure || out.CurrentSHA256 == out.NextSHA256 {
		t.Errorf("after a hand edit: %+v %v, want a reconfigure pending", out, err)
	}

	if _, err := apply(ctx, s, withScripts("", "#!/bin/sh\nexit 0\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.root + ConfDir + "/" + PrologFile); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", PrologFile, err)
	}
	if conf := s.read(ConfDir + "/slurm.conf"); strings.Contains(conf, "Prolog=") || !strings.Contains(conf, "Epilog="+EpilogFile) {
		t.Errorf("slurm.conf:\n%s", conf)
	}
}
