package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// TestAccSlurm_addGPUServers is the guide's "Adding a GPU Server", four at once: with
// login01, gpu01 and gpu02 applied and a job running on gpu01, bare gpu03 to gpu06 join the lab
// and the configuration gains their node entries and their names in the partition. The
// apply installs and registers slurmd on each, slurm.conf names gpu[01-06] on one line, not
// one file under /etc of gpu01 or gpu02 changes, the job keeps running, the new nodes are
// idle, and the guide's verification passes. The hosts' own journals count the restarts: one
// activation, so slurmctld starts once and slurmd once on every GPU server.
func TestAccSlurm_addGPUServers(t *testing.T) {
	l := lab.Require(t)
	existing := []string{"gpu01", "gpu02"}
	added := []string{"gpu03", "gpu04", "gpu05", "gpu06"}
	for _, h := range added {
		if l.Host(h).Name != "" {
			t.Fatalf("the lab already has %s; this test adds it to a lab as `make lab-up` starts it", h)
		}
	}
	all := append(slices.Clone(existing), added...)
	grown := labWith(t, l, added...)
	var jobID string
	var etcBefore map[string]string
	var cursors map[string]string
	t.Cleanup(func() { _ = cancelJobs(l)(nil) })

	preApply := []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("gpucluster_slurm_partition.gpu", plancheck.ResourceActionUpdate),
		plancheck.ExpectResourceAction(slurmActivationAddr, plancheck.ResourceActionUpdate),
	}
	for _, n := range added {
		preApply = append(preApply,
			plancheck.ExpectResourceAction("gpucluster_slurm_node."+n, plancheck.ResourceActionCreate),
			plancheck.ExpectResourceAction("gpucluster_slurm_compute."+n, plancheck.ResourceActionCreate))
	}
	for _, n := range existing {
		preApply = append(preApply,
			plancheck.ExpectResourceAction("gpucluster_slurm_node."+n, plancheck.ResourceActionNoop),
			plancheck.ExpectResourceAction("gpucluster_slurm_compute."+n, plancheck.ResourceActionNoop))
	}
	nodeStates := map[string]knownvalue.Check{"gpu01": knownvalue.StringExact("mixed")}
	wantStates := "gpu01:mixed"
	for _, n := range all[1:] {
		nodeStates[n] = knownvalue.StringExact("idle")
		wantStates += "\n" + n + ":idle"
	}
	once := map[string]int{}
	for _, n := range all {
		once[n] = 1
	}

	testFromIdleCluster(t, l, labCluster{computeNodes: existing}, all, []resource.TestStep{
		{
			// The lab adds the servers to every host's /etc/hosts, as DNS would learn new
			// servers; that is not the provider's doing, so /etc is compared from then on.
			PreConfig: func() {
				jobID = startBatchJob(t, l, "gpu01")
				for _, n := range added {
					addLabHost(t, l, n)
				}
				etcBefore = etcChecksums(t, l, existing)
				cursors = journalCursors(t, l, append([]string{"login01"}, all...))
			},
			Config: labCluster{computeNodes: all}.config(grown) + clusterCheckConfig(all),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             preApply,
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("ok"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.gpucluster_cluster_check.test", tfjsonpath.New("node_status"), knownvalue.MapExact(nodeStates)),
				statecheck.ExpectKnownValue(slurmActivationAddr, tfjsonpath.New("change_class"), knownvalue.StringExact(slurm.OrderedRestart.String())),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				// Counted first, before a check could start anything.
				func(*terraform.State) error {
					return checkStarts(l, cursors, "slurmctld", map[string]int{"login01": 1})
				},
				func(*terraform.State) error { return checkStarts(l, cursors, "slurmd", once) },
				checkSlurmdInstalled(l, added...),
				checkConfigless(l, all),
				checkNodeStates(l, wantStates),
				checkSlurmConfRegexp(l, `(?m)^NodeName=gpu\[01-06\] CPUs=\d+ .*Gres=gpu:4 State=UNKNOWN$`),
				checkOneNodeNameLine(l),
				checkSlurmConfRegexp(l, `(?m)^PartitionName=gpu Nodes=gpu\[01-06\] `),
				func(*terraform.State) error { return checkEtcUnchanged(l, etcBefore) },
				func(*terraform.State) error { return checkJobRunning(l, jobID, "gpu01") },
				checkPing(l),
				cancelJobs(l),
			),
		},
	})
}

// journalCursors is the journal's position on each host now, so checkStarts counts only what
// happens after it.
func journalCursors(t *testing.T, l *lab.Lab, hosts []string) map[string]string {
	t.Helper()
	cursors := map[string]string{}
	for _, h := range hosts {
		out := onHost(t, l, h, "journalctl -q -n 0 --show-cursor")
		cursor, ok := strings.CutPrefix(out, "-- cursor: ")
		if !ok {
			t.Fatalf("%s: journalctl --show-cursor printed %q", h, out)
		}
		cursors[h] = cursor
	}
	return cursors
}

// checkStarts counts systemd's "Started" lines for unit in each host's own journal since its
// cursor, and wants the number want gives that host.
func checkStarts(l *lab.Lab, cursors map[string]string, unit string, want map[string]int) error {
	var wrong []string
	for _, h := range slices.Sorted(maps.Keys(want)) {
		out, err := onHostErr(l, h, fmt.Sprintf("journalctl -q -o cat -u %s --after-cursor='%s' | grep -c '^Started %s' || true", unit, cursors[h], unit))
		if err != nil {
			return err
		}
		if out != fmt.Sprint(want[h]) {
			wrong = append(wrong, fmt.Sprintf("%s started %s times on %s, want %d", unit, out, h, want[h]))
		}
	}
	if len(wrong) > 0 {
		return errors.New(strings.Join(wrong, "; "))
	}
	return nil
}

// labWith is l as it will be once hosts have joined: the configuration of the grown cluster
// is written before the hosts exist, which only needs their names and addresses.
func labWith(t *testing.T, l *lab.Lab, hosts ...string) *lab.Lab {
	t.Helper()
	grown := *l
	grown.Hosts = slices.Clone(l.Hosts)
	for _, host := range hosts {
		planned, err := lab.PlanHost(host)
		if err != nil {
			t.Fatal(err)
		}
		grown.Hosts = append(grown.Hosts, lab.Host{Name: planned.Name, Address: planned.Address, Role: planned.Role})
	}
	return &grown
}

// addLabHost starts host in the lab, bare, and removes it again once the test, its destroy
// included, is over.
func addLabHost(t *testing.T, l *lab.Lab, host string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := l.Add(ctx, host, testLogWriter{t}); err != nil {
		t.Fatalf("add %s to the lab: %v", host, err)
	}
	t.Cleanup(func() {
		if err := l.Remove(context.Background(), host, testLogWriter{t}); err != nil {
			t.Errorf("remove %s from the lab: %v", host, err)
		}
	})
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// clusterCheckConfig is the guide's verification, read after every compute node is applied.
func clusterCheckConfig(nodes []string) string {
	deps := make([]string, len(nodes))
	for i, n := range nodes {
		deps[i] = "gpucluster_slurm_compute." + n
	}
	return fmt.Sprintf(`
data "gpucluster_cluster_check" "test" {
  controller = "login01"
  nodes      = %s
  depends_on = [%s]
}
`, hclList(append([]string{"login01"}, nodes...)), strings.Join(deps, ", "))
}

// startBatchJob submits a one-GPU job as the cluster user on node and returns its id once it
// runs. The job sleeps inside, within its own time limit, and outlives the test's steps; the
// test cancels it.
func startBatchJob(t *testing.T, l *lab.Lab, node string) string {
	t.Helper()
	id := onHost(t, l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- sbatch --parsable -w %s --gres=gpu:1 -J grow-survivor -t 5 -o /dev/null --wrap 'exec sleep 290'",
		slurmTestUser, node))
	if !regexp.MustCompile(`^[0-9]+$`).MatchString(id) {
		t.Fatalf("sbatch --parsable printed %q, want a job id", id)
	}
	if err := checkJobRunning(l, id, node); err != nil {
		t.Fatal(err)
	}
	return id
}

func checkJobRunning(l *lab.Lab, id, node string) error {
	return pollLab(30*time.Second, func() error {
		out, err := onHostErr(l, "login01", "squeue -h -j "+id+" -o %T:%N")
		if err != nil {
			return err
		}
		if out != "RUNNING:"+node {
			return fmt.Errorf("job %s: %q, want RUNNING:%s", id, out, node)
		}
		return nil
	})
}

func checkSlurmdInstalled(l *lab.Lab, nodes ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, node := range nodes {
			out, err := onHostErr(l, node, "dpkg-query -W -f='${db:Status-Status}' slurmd; echo; systemctl is-active slurmd")
			if err != nil {
				return err
			}
			if out != "installed\nactive" {
				return fmt.Errorf("slurmd on %s: %q, want installed and active", node, out)
			}
		}
		return nil
	}
}

// checkOneNodeNameLine wants the guide's single hostlist line, not one line per node.
func checkOneNodeNameLine(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", "grep -c '^NodeName=' /etc/slurm/slurm.conf")
		if err != nil {
			return err
		}
		if out != "1" {
			return fmt.Errorf("slurm.conf has %s NodeName lines, want 1", out)
		}
		return nil
	}
}

// etcChecksums is the SHA-256 of every regular file under /etc of each node, by "node:path".
// Nothing is left out: adding a server must not touch the existing ones.
func etcChecksums(t *testing.T, l *lab.Lab, nodes []string) map[string]string {
	t.Helper()
	sums, err := etcChecksumsErr(l, nodes)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func etcChecksumsErr(l *lab.Lab, nodes []string) (map[string]string, error) {
	sums := map[string]string{}
	for _, n := range nodes {
		out, err := onHostErr(l, n, "find /etc -xdev -type f -exec sha256sum {} +")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(out, "\n") {
			sum, path, ok := strings.Cut(line, "  ")
			if !ok {
				return nil, fmt.Errorf("%s: unexpected sha256sum line %q", n, line)
			}
			sums[n+":"+path] = sum
		}
	}
	return sums, nil
}

func checkEtcUnchanged(l *lab.Lab, before map[string]string) error {
	var nodes []string
	for key := range before {
		node, _, _ := strings.Cut(key, ":")
		if !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	after, err := etcChecksumsErr(l, nodes)
	if err != nil {
		return err
	}
	var changed []string
	for key, sum := range before {
		if after[key] != sum {
			changed = append(changed, key)
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			changed = append(changed, key+" (new)")
		}
	}
	if len(before) == 0 || len(changed) > 0 {
		slices.Sort(changed)
		return fmt.Errorf("adding a GPU server changed files under /etc of the existing nodes (%d checked): %s", len(before), strings.Join(changed, ", "))
	}
	return nil
}
