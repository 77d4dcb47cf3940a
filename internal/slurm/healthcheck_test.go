package slurm

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

const testHealthCheck = "#!/bin/sh\n\n# a blank line and an = sign survive the fragment\necho ok=$SLURMD_NODENAME > /tmp/hc\n"

// The health check program needs an interval and a script slurmd can run; the interval and
// the node states need a program; Extra names its own program only while none is set.
func TestHealthCheckValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		program  string
		interval int
		states   []string
		field    string
	}{
		"no interpreter line":    {program: "echo hi\n", interval: 30, field: HealthCheckField},
		"no interval":            {program: testHealthCheck, field: HealthCheckField},
		"negative interval":      {program: testHealthCheck, interval: -1, field: "HealthCheckInterval"},
		"interval alone":         {interval: 30, field: "HealthCheckInterval"},
		"node states alone":      {states: []string{"IDLE"}, field: "HealthCheckNodeState"},
		"an unknown node state":  {program: testHealthCheck, interval: 30, states: []string{"IDLE", "BUSY"}, field: "HealthCheckNodeState"},
		"program and interval":   {program: testHealthCheck, interval: 30},
		"with node states, too":  {program: testHealthCheck, interval: 30, states: []string{"IDLE", "CYCLE"}},
		"nothing set, as before": {},
	} {
		c, _, _ := guideExample()
		c.HealthCheckProgram, c.HealthCheckInterval, c.HealthCheckNodeState = tc.program, tc.interval, tc.states
		err := c.Validate()
		var fe *FieldError
		if tc.field == "" && err != nil || tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
			t.Errorf("%s: %v, want a FieldError on %q", name, err, tc.field)
		}
	}
	c, _, _ := guideExample()
	c.Extra = map[string]string{"HealthCheckProgram": "/usr/sbin/nhc", "HealthCheckInterval": "300"}
	if err := c.Validate(); err != nil {
		t.Errorf("the admin's own program in extra: %v", err)
	}
	c.HealthCheckProgram, c.HealthCheckInterval = testHealthCheck, 30
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "typed attribute HealthCheck") {
		t.Errorf("HealthCheckProgram in extra beside a program: %v", err)
	}
}

// The program travels in the controller's fragment; slurm.conf names its absolute path on
// the nodes with the interval and the node states, and NamesHealthCheck finds it there.
func TestHealthCheckFragmentAndKeys(t *testing.T) {
	c, nodes, parts := guideExample()
	c.HealthCheckProgram, c.HealthCheckInterval, c.HealthCheckNodeState = testHealthCheck, 30, []string{"IDLE", "CYCLE"}
	frag, err := ControllerFragment(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseControllerFragment(frag.Content); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("got %+v, %v\nwant %+v\n%s", got, err, c, frag.Content)
	}
	conf := RenderSlurmConf(c, nodes, parts)
	want := "\nHealthCheckProgram=" + HealthCheckPath + "\nHealthCheckInterval=30\nHealthCheckNodeState=IDLE,CYCLE\n"
	if !strings.Contains(string(conf), want) || !NamesHealthCheck(conf) {
		t.Errorf("slurm.conf lacks %q:\n%s", want, conf)
	}
	c.HealthCheckProgram, c.HealthCheckInterval, c.HealthCheckNodeState = "", 0, nil
	if conf := RenderSlurmConf(c, nodes, parts); strings.Contains(string(conf), "HealthCheck") || NamesHealthCheck(conf) {
		t.Errorf("without a program slurm.conf still names one:\n%s", conf)
	}
	if NamesHealthCheck([]byte("HealthCheckProgram=/usr/sbin/nhc\n")) {
		t.Error("the admin's own program counted as the provider's")
	}
}

// Setting the program is a reconfigure that names it; a new program alone changes no file on
// the controller and touches no daemon (the nodes hold it); unsetting it drops the keys.
func TestHealthCheckActivation(t *testing.T) {
	ctx := context.Background()
	s := guideSandbox(t)
	c, _, _ := guideExample()
	withProgram := func(program string, interval int) Fragment {
		c.HealthCheckProgram, c.HealthCheckInterval = program, interval
		f, err := ControllerFragment(c)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s.calls()

	out, err := apply(ctx, s, withProgram(testHealthCheck, 30))
	if err != nil || out.Class != Reconfigure {
		t.Fatalf("program set: %+v %v", out, err)
	}
	if st, err := ReadStatus(ctx, s); err != nil || !st.NamesHealthCheck || st.Fragments.Controller.HealthCheckProgram != testHealthCheck {
		t.Errorf("after the program was set: %v, names it %v", err, st.NamesHealthCheck)
	}
	if _, err := os.Stat(s.root + HealthCheckPath); !os.IsNotExist(err) {
		t.Errorf("the controller holds %s: %v", HealthCheckPath, err)
	}

	s.calls()
	s.writes = nil
	if out, err := apply(ctx, s, withProgram(testHealthCheck+"exit 0\n", 30)); err != nil || out.Class != NoChange || len(s.writes) != 1 || len(s.calls()) > 0 {
		t.Errorf("a new program alone: %+v %v, wrote %v", out, err, s.writes)
	}

	if out, err := apply(ctx, s, withProgram("", 0)); err != nil || out.Class != Reconfigure {
		t.Errorf("program unset: %+v %v", out, err)
	}
	if conf := s.read(ConfDir + "/slurm.conf"); strings.Contains(conf, "HealthCheck") {
		t.Errorf("slurm.conf after the program was unset:\n%s", conf)
	}
	if st, err := ReadStatus(ctx, s); err != nil || st.NamesHealthCheck {
		t.Errorf("after the program was unset: %v, names it %v", err, st.NamesHealthCheck)
	}
}

// recordingNode is a sandbox node that keeps the files written to it.
type recordingNode struct {
	*sandbox
	files []transport.File
}

func (n *recordingNode) WriteFile(ctx context.Context, f transport.File) (bool, error) {
	n.files = append(n.files, f)
	return n.sandbox.WriteFile(ctx, f)
}

// On a node without /etc/slurm yet (slurmd not installed), the program is written whole as
// root with mode 0755; read back it is in sync apart from the sandbox's own owner; removed
// once, it is gone, and removing it again removes nothing.
func TestHealthCheckOnNode(t *testing.T) {
	ctx := context.Background()
	n := &recordingNode{sandbox: newSandbox(t, false)}
	if err := os.RemoveAll(n.root + ConfDir); err != nil {
		t.Fatal(err)
	}
	st, err := ReadHealthCheck(ctx, n)
	if err != nil || st.Problem(testHealthCheck) != HealthCheckPath+" is missing" || st.Problem("") != "" {
		t.Fatalf("no program yet: %+v %v", st, err)
	}
	if _, err := WriteHealthCheck(ctx, n, testHealthCheck); err != nil {
		t.Fatal(err)
	}
	want := transport.File{Path: HealthCheckPath, Content: []byte(testHealthCheck), Owner: "root", Group: "root", Mode: 0o755}
	if len(n.files) != 1 || !reflect.DeepEqual(n.files[0], want) || n.read(HealthCheckPath) != testHealthCheck {
		t.Errorf("wrote %+v", n.files)
	}
	st, err = ReadHealthCheck(ctx, n)
	if err != nil || st.SHA256 != contentSHA256(testHealthCheck) {
		t.Errorf("read back: %+v %v", st, err)
	}
	st.Owner = healthCheckOwner
	if p := st.Problem(testHealthCheck); p != "" {
		t.Errorf("in sync: %q", p)
	}
	if p := st.Problem(""); p != HealthCheckPath+" is left over" {
		t.Errorf("no program wanted: %q", p)
	}
	for i, want := range []bool{true, false} {
		if removed, err := RemoveHealthCheck(ctx, n); err != nil || removed != want {
			t.Errorf("remove #%d: %v %v", i+1, removed, err)
		}
	}
}

func TestHealthCheckProblem(t *testing.T) {
	sum := contentSHA256(testHealthCheck)
	for _, tc := range []struct {
		st      HealthCheckState
		content string
		want    string
	}{
		{HealthCheckState{}, "", ""},
		{HealthCheckState{}, testHealthCheck, "is missing"},
		{HealthCheckState{SHA256: sum, Owner: healthCheckOwner}, testHealthCheck, ""},
		{HealthCheckState{SHA256: contentSHA256("#!/bin/sh\nby hand\n"), Owner: healthCheckOwner}, testHealthCheck, "differs"},
		{HealthCheckState{SHA256: sum, Owner: "root:root:644"}, testHealthCheck, "owner and mode root:root:644"},
		{HealthCheckState{SHA256: sum, Owner: healthCheckOwner}, "", "is left over"},
	} {
		got := tc.st.Problem(tc.content)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v with %.10q: %q, want %q", tc.st, tc.content, got, tc.want)
		}
	}
}
