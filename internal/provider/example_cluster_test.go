package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// Issue #27: nothing applied examples/cluster anywhere; the lab ran a near copy of it. This is the
// admin who follows examples/cluster/README.md on the lab: the example's own files, only its
// variables set (examples/lab-cluster/lab.tfvars and the lab's connection settings), the
// firewall rolled out to login01 first, then the rest, a no-op plan, and the guide's
// verification run on the hosts: sinfo, a one-GPU srun as a cluster user, findmnt /home.
func TestAccExample_clusterOnLab(t *testing.T) {
	l := lab.Require(t)
	tf := clusterExampleOnLab(t, l)
	gpus := l.HostsWithRole(lab.RoleGPU)
	if len(gpus) < 2 {
		t.Fatalf("the lab has %d GPU servers; the guide's srun -N2 needs two", len(gpus))
	}
	destroyAtEnd(t, tf)

	tf.run(0, "apply", "-auto-approve", "-target=gpucluster_firewall.login01")
	if got := ufwStatus(t, l, "login01"); got != "active" {
		t.Fatalf("after the rollout step, UFW on login01 is %q, want active", got)
	}
	tf.run(0, "apply", "-auto-approve")
	tf.run(0, "plan", "-detailed-exitcode")

	states := onHost(t, l, "login01", "sinfo -a -h -N -o %N:%T | sort -u")
	for _, g := range gpus {
		if !slices.Contains(strings.Fields(states), g.Name+":idle") {
			t.Errorf("sinfo -a on login01 shows %q; want %s idle", states, g.Name)
		}
	}
	asAlice := "runuser -u alice -- env -C /home/alice "
	gpu := onHost(t, l, "login01", asAlice+`srun -t 1 --gres=gpu:1 sh -c 'echo "$CUDA_VISIBLE_DEVICES"'`)
	if len(strings.Split(gpu, ",")) != 1 || gpu == "" {
		t.Errorf("alice's srun --gres=gpu:1 saw CUDA_VISIBLE_DEVICES=%q, want exactly one GPU", gpu)
	}
	hosts := onHost(t, l, "login01", asAlice+"srun -t 1 -N2 --gres=gpu:1 hostname | sort")
	if got := strings.Fields(hosts); len(got) != 2 || got[0] == got[1] {
		t.Errorf("alice's srun -N2 ran on %q, want two GPU servers", hosts)
	}
	// The guide's BeeGFS verification, run on login01 as the guide runs it: every node and
	// target registered and answering.
	if out := onHost(t, l, "login01", "beegfs health check --mgmtd-addr login01:8010 2>&1; echo status=$?"); !strings.HasSuffix(out, "status=0") {
		t.Errorf("the guide's beegfs health check on login01 failed:\n%s", out)
	}
	for _, h := range l.Hosts {
		if got := onHost(t, l, h.Name, "findmnt -n -o FSTYPE /home"); got != "tmpfs" {
			t.Errorf("findmnt /home on %s = %q, want the lab's BeeGFS stand-in (tmpfs)", h.Name, got)
		}
		if got := onHost(t, l, h.Name, "id -u alice"); got != "1001" {
			t.Errorf("alice's UID on %s = %q, want 1001", h.Name, got)
		}
	}

	tf.run(0, "destroy", "-auto-approve")
	for _, h := range l.Hosts {
		if out, err := onHostErr(l, h.Name, "getent passwd alice bob"); err == nil || out != "" {
			t.Errorf("after destroy, %s still has cluster users: %q", h.Name, out)
		}
		if got := ufwStatus(t, l, h.Name); got != "inactive" {
			t.Errorf("after destroy, UFW on %s is %q, want inactive", h.Name, got)
		}
	}
}

// Issue #27: the guide's rollout, the firewall on login01 alone first, planned 23 resources
// across every node (all nodes' rules, the MUNGE key, the controller, sshd on the GPU servers).
// The README's rollout step plans login01's firewall and login01's rules and nothing else, and
// applies only there: UFW is on on login01, still off on the GPU servers.
func TestAccExample_clusterFirewallLoginFirst(t *testing.T) {
	l := lab.Require(t)
	tf := clusterExampleOnLab(t, l)
	destroyAtEnd(t, tf)
	target := "-target=gpucluster_firewall.login01"

	tf.run(0, "plan", "-out=rollout.tfplan", target)
	changes := plannedChanges(t, tf, "rollout.tfplan")
	rules := 0
	for _, c := range changes {
		if c.node != "login01" {
			t.Errorf("the rollout step plans %s on %q, want login01 only", c.address, c.node)
		}
		switch c.kind {
		case "gpucluster_firewall_rule":
			rules++
		case "gpucluster_firewall":
		default:
			t.Errorf("the rollout step plans %s, which is not login01's firewall or one of its rules", c.address)
		}
	}
	// The guide's table gives login01 five controller rows and two rows for all nodes.
	if want := 7; rules != want || len(changes) != want+1 {
		t.Errorf("the rollout step plans %d resources, %d of them rules; want login01's firewall and its %d rules", len(changes), rules, want)
	}

	tf.run(0, "apply", "-auto-approve", target)
	for _, h := range l.Hosts {
		want := "inactive"
		if h.Name == "login01" {
			want = "active"
		}
		if got := ufwStatus(t, l, h.Name); got != want {
			t.Errorf("after the rollout step, UFW on %s is %q, want %s", h.Name, got, want)
		}
	}
	// The README's check before the rest: the provider still reaches login01 through UFW.
	tf.run(0, "plan", "-detailed-exitcode", target)
}

// clusterExampleOnLab is examples/cluster copied as a reader would copy it, with the lab's
// variables as `make demo` gives them (examples/lab-cluster/lab.tfvars and `gpucluster-lab
// tfvars`), as files Terraform reads by itself: the commands are the README's, unchanged.
func clusterExampleOnLab(t *testing.T, l *lab.Lab) *terraformCLI {
	t.Helper()
	tf := newTerraformCLI(t)
	copyExample(t, "../../examples/cluster", tf.dir)
	labVars, err := os.ReadFile("../../examples/lab-cluster/lab.tfvars")
	if err != nil {
		t.Fatal(err)
	}
	tf.write("lab.auto.tfvars", string(labVars))
	settings, err := json.Marshal(l.TFVars())
	if err != nil {
		t.Fatal(err)
	}
	tf.write("lab.auto.tfvars.json", string(settings))
	return tf
}

// destroyAtEnd destroys what the example left on the lab when the test ends early, so later
// tests find bare hosts.
func destroyAtEnd(t *testing.T, tf *terraformCLI) {
	t.Cleanup(func() {
		if out, err := tf.command("destroy", "-auto-approve").CombinedOutput(); err != nil {
			t.Errorf("destroy at the end: %v\n%s", err, out)
		}
	})
}

// ufwStatus is UFW's status on a lab host as ufw itself reports it: active or inactive.
func ufwStatus(t *testing.T, l *lab.Lab, host string) string {
	t.Helper()
	return strings.TrimPrefix(onHost(t, l, host, "ufw status | head -n 1"), "Status: ")
}

type plannedChange struct{ address, kind, node string }

// plannedChanges lists what a saved plan changes (anything but no-op and reads), with the node
// each resource is on.
func plannedChanges(t *testing.T, tf *terraformCLI, planFile string) []plannedChange {
	t.Helper()
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Type    string `json:"type"`
			Mode    string `json:"mode"`
			Change  struct {
				Actions []string       `json:"actions"`
				After   map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(tf.run(0, "show", "-json", planFile)), &plan); err != nil {
		t.Fatal(err)
	}
	var changes []plannedChange
	for _, rc := range plan.ResourceChanges {
		if rc.Mode != "managed" || slices.Equal(rc.Change.Actions, []string{"no-op"}) {
			continue
		}
		changes = append(changes, plannedChange{rc.Address, rc.Type, fmt.Sprint(nodeOf(rc.Change.After))})
	}
	return changes
}

// nodeOf is where a planned resource is: its node, else all its nodes, its controller, its name.
func nodeOf(after map[string]any) any {
	if n, ok := after["node"]; ok {
		return n
	}
	if n, ok := after["nodes"].([]any); ok && len(n) > 0 {
		return n
	}
	if n, ok := after["controller"]; ok {
		return n
	}
	return after["name"]
}
