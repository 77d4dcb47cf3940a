package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"gpucluster": providerserver.NewProtocol6WithError(New("test")()),
}

// labNodeBlocks are the provider's node blocks for every lab host.
func labNodeBlocks(l *lab.Lab) string {
	var nodes strings.Builder
	for _, h := range l.Hosts {
		fmt.Fprintf(&nodes, "  node {\n    name    = %q\n    address = %q\n  }\n", h.Name, h.Address)
	}
	return nodes.String()
}

// providerConfig points the provider at the lab the way an admin points it at a cluster:
// key file, known_hosts, sudo password, login01 as jump host. extra is added inside the block.
func providerConfig(l *lab.Lab, extra string) string {
	return labProvider(l, labNodeBlocks(l)+extra)
}

// labProvider is providerConfig with the given node blocks and settings in place of the lab's
// node blocks.
func labProvider(l *lab.Lab, body string) string {
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  known_hosts_file = %q
  sudo_password    = %q
  login_node       = "login01"
%s
}
`, l.AdminUser, l.AdminKeyPath, l.KnownHostsPath, l.AdminPassword, body)
}

func labNodeNames(l *lab.Lab) []string {
	names := make([]string, len(l.Hosts))
	for i, h := range l.Hosts {
		names[i] = h.Name
	}
	return names
}

func hclList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// onHost runs a script as root inside a lab host through the lab's own seam, never through
// the provider, so checks and hand-made drift do not depend on the code under test.
func onHost(t *testing.T, l *lab.Lab, host, script string) string {
	t.Helper()
	out, stderr, err := l.Exec(context.Background(), host, script)
	if err != nil {
		t.Fatalf("%s: %s: %v: %s", host, script, err, stderr)
	}
	return strings.TrimSpace(out)
}

func onHostErr(l *lab.Lab, host, script string) (string, error) {
	out, stderr, err := l.Exec(context.Background(), host, script)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w: %s", host, script, err, stderr)
	}
	return strings.TrimSpace(out), nil
}

func replaceSudoPassword(config, from, to string) string {
	return strings.Replace(config, fmt.Sprintf("sudo_password    = %q", from), fmt.Sprintf("sudo_password    = %q", to), 1)
}

// withHostKeys is a provider block whose known_hosts file holds the lab's real keys of the
// hosts in keep only, plus the pinned lines: a host left out and pinned wrongly must be refused.
func withHostKeys(t *testing.T, l *lab.Lab, keep []string, pinned ...string) string {
	t.Helper()
	content, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(content), "\n") {
		hosts, _, _ := strings.Cut(line, " ")
		for _, h := range keep {
			if slices.Contains(strings.Split(hosts, ","), h) {
				kept = append(kept, line)
			}
		}
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
provider "gpucluster" {
  user             = %q
  private_key_file = %q
  sudo_password    = %q
  login_node       = "login01"
  known_hosts_file = %q
  host_keys        = %s
%s}
`, l.AdminUser, l.AdminKeyPath, l.AdminPassword, file, hclList(pinned), labNodeBlocks(l))
}

// labHostKey is one of the host's own keys ("type base64") from the lab's known_hosts: of
// keyType ("ssh-ed25519", the key an unknown host is asked for first), or of any type when
// keyType is "".
func labHostKey(t *testing.T, l *lab.Lab, host, keyType string) string {
	t.Helper()
	content, err := os.ReadFile(l.KnownHostsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(content), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && (keyType == "" || fields[1] == keyType) && slices.Contains(strings.Split(fields[0], ","), host) {
			return fields[1] + " " + fields[2]
		}
	}
	t.Fatalf("no %s key for %s in %s", keyType, host, l.KnownHostsPath)
	return ""
}

// offlineProvider is a provider whose connection settings are all known but whose nodes sit in
// TEST-NET-1, where nothing answers: a refusal that must come before any host is asked shows as
// itself, and one that needed a host would show as a connection error instead.
const offlineProvider = `
provider "gpucluster" {
  login_node      = "login01"
  connect_timeout = "2s"
  node {
    name    = "login01"
    address = "192.0.2.10"
  }
  node {
    name    = "gpu01"
    address = "192.0.2.11"
    user    = "ops"
  }
}
`

// unknownConnectionProvider's user is known only at apply, so plan-time host checks wait and a
// configuration the provider accepts plans cleanly without a lab.
const unknownConnectionProvider = `
resource "terraform_data" "user" {
  input = "admin"
}

provider "gpucluster" {
  user       = terraform_data.user.output
  login_node = "login01"
}
`

// diagPattern matches Terraform's rendering of an error: its summary, the configuration line it
// names (so the attribute is the one the error is about), then phrases of its detail, which
// Terraform wraps at any space.
func diagPattern(summary, configLine string, details ...string) *regexp.Regexp {
	parts := []string{regexp.QuoteMeta("Error: " + summary), regexp.QuoteMeta(configLine)}
	for _, d := range details {
		parts = append(parts, strings.Join(strings.Fields(regexp.QuoteMeta(d)), `\s+`))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// block is a resource block named x of type typ with one argument per line.
func block(typ string, args ...string) string {
	return fmt.Sprintf("resource %q \"x\" {\n  %s\n}\n", typ, strings.Join(args, "\n  "))
}

// guideFirewallRows is the guide's firewall table, in the HCL of examples/cluster: a
// row per rule and group of nodes. slurmdFrom is the slurmd row's source (the guide's: the
// subnet).
func guideFirewallRows(slurmdFrom string) string {
	return fmt.Sprintf(`[
    { group = "controller", port = "22", proto = "tcp", src = "any", comment = "SSH" },
    { group = "compute", port = "22", proto = "tcp", src = "10.0.0.10", comment = "SSH from login node" },
    { group = "controller", port = "6817", proto = "tcp", src = "10.0.0.0/24", comment = "slurmctld" },
    { group = "compute", port = "6818", proto = "tcp", src = %q, comment = "slurmd" },
    { group = "all", port = "60001:61000", proto = "tcp", src = "10.0.0.0/24", comment = "srun callbacks" },
    { group = "all", port = "8004", proto = "udp", src = "10.0.0.0/24", comment = "BeeGFS client" },
    { group = "controller", port = "8005", proto = "any", src = "10.0.0.0/24", comment = "BeeGFS meta" },
    { group = "controller", port = "8008", proto = "any", src = "10.0.0.0/24", comment = "BeeGFS mgmtd" },
    { group = "controller", port = "8010", proto = "tcp", src = "10.0.0.0/24", comment = "BeeGFS mgmtd API" },
    { group = "beegfs_storage", port = "8003", proto = "any", src = "10.0.0.0/24", comment = "BeeGFS storage" },
  ]`, slurmdFrom)
}

// checkOnHost runs a script through the lab's own seam and compares its output.
func checkOnHost(l *lab.Lab, node, script, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := onHostErr(l, node, script)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s: %s printed %q, want %q", node, script, got, want)
		}
		return nil
	}
}

// checkOnHosts is checkOnHost on each node.
func checkOnHosts(l *lab.Lab, nodes []string, script, want string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, n := range nodes {
			if err := checkOnHost(l, n, script, want)(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// expectPrior checks an attribute of the refreshed prior state a plan starts from, which is
// where a hand-made change shows up; the built-in checks only look at planned values.
func expectPrior(address, attr string, check func(value any) error) plancheck.PlanCheck {
	return priorCheck{address: address, attr: attr, check: check}
}

// expectBefore checks one entry of a map attribute of the prior state.
func expectBefore(address, attr, key, want string) plancheck.PlanCheck {
	return expectPrior(address, attr, func(v any) error {
		entries, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("prior state has no map %s", attr)
		}
		if got := entries[key]; got != want {
			return fmt.Errorf("prior %s[%q] = %v, want %q", attr, key, got, want)
		}
		return nil
	})
}

// expectBeforeValue checks a top-level attribute of the prior state: what Read found on the
// host, before the plan proposes to change it.
func expectBeforeValue(address, attr string, want any) plancheck.PlanCheck {
	return expectPrior(address, attr, func(v any) error {
		if v != want {
			return fmt.Errorf("prior %s = %v, want %v", attr, v, want)
		}
		return nil
	})
}

// expectPriorString checks a string attribute of the refreshed prior state of a plan.
func expectPriorString(address, attr string, want *regexp.Regexp) plancheck.PlanCheck {
	return expectPrior(address, attr, func(v any) error {
		if got, _ := v.(string); !want.MatchString(got) {
			return fmt.Errorf("prior %s = %q, want a match for %s", attr, got, want)
		}
		return nil
	})
}

// expectRefused applies each configuration against the lab and wants it refused with an error
// matching want.
func expectRefused(t *testing.T, cases map[string]struct{ config, want string }) {
	t.Helper()
	eachRefused(t, cases, resource.TestStep{}, func(t *testing.T, c resource.TestCase) { resource.Test(t, c) })
}

// eachRefused runs step with each case's configuration after step's own, in a test case of its
// own through run, and wants it refused with an error matching the case's want.
func eachRefused(t *testing.T, cases map[string]struct{ config, want string }, step resource.TestStep, run func(*testing.T, resource.TestCase)) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := step
			s.Config += tc.config
			s.ExpectError = regexp.MustCompile(tc.want)
			run(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{s}})
		})
	}
}

type priorCheck struct {
	address, attr string
	check         func(value any) error
}

func (c priorCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, ok := rc.Change.Before.(map[string]any)
		if !ok {
			resp.Error = fmt.Errorf("%s: no prior state in the plan", c.address)
			return
		}
		if err := c.check(before[c.attr]); err != nil {
			resp.Error = fmt.Errorf("%s: %w", c.address, err)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", c.address)
}

// labControllerSettings are the lab's overrides: the containers' cgroups are read-only, so
// Slurm's cgroup plugins cannot work there. They are settings of the lab, never defaults.
// extra that sets cgroup itself takes labCgroup's place.
func labControllerSettings(l *lab.Lab, extra string) string {
	settings := `  proctrack_type       = "proctrack/linuxproc"
  task_plugin          = "task/none"
  job_acct_gather_type = "jobacct_gather/none"
`
	if !strings.Contains(extra, "cgroup = ") {
		settings += labCgroup(l, "")
	}
	return settings
}

// slurmMungeConfig is the MUNGE key every Slurm test starts from (pitfall P10).
func slurmMungeConfig(l *lab.Lab) string {
	return providerConfig(l, "") + fmt.Sprintf(`
resource "gpucluster_munge_key" "test" {
  controller = "login01"
  nodes      = %s
}
`, hclList(labNodeNames(l)))
}

func slurmControllerConfig(l *lab.Lab, extra string) string {
	return slurmMungeConfig(l) + `
resource "gpucluster_slurm_controller" "test" {
  node = "login01"
` + labControllerSettings(l, extra) + extra + `
  depends_on = [gpucluster_munge_key.test]
}
`
}

const slurmActivationAddr = "gpucluster_slurm_activation.test"

// slurmActivationConfig is the activation, after the controller and deps.
func slurmActivationConfig(deps ...string) string {
	return `
resource "gpucluster_slurm_activation" "test" {
  controller = gpucluster_slurm_controller.test.id
  depends_on = [` + strings.Join(deps, ", ") + `]
}
`
}

func checkSlurmConf(l *lab.Lab, lines ...string) resource.TestCheckFunc {
	return checkFileLines(l, slurm.ConfDir+"/slurm.conf", lines...)
}

// checkFileLines wants each line, whole, in the file on login01.
func checkFileLines(l *lab.Lab, file string, lines ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		content, err := onHostErr(l, "login01", "cat "+file)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, line := range strings.Split(content, "\n") {
			have[line] = true
		}
		for _, want := range lines {
			if !have[want] {
				return fmt.Errorf("%s on login01 lacks the line %q:\n%s", file, want, content)
			}
		}
		return nil
	}
}

func checkPing(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", "scontrol ping")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "is UP") {
			return fmt.Errorf("scontrol ping: %s", out)
		}
		return nil
	}
}

func slurmctldActiveSince(t *testing.T, l *lab.Lab) string {
	t.Helper()
	return onHost(t, l, "login01", "systemctl show slurmctld -p ActiveEnterTimestampMonotonic --value")
}

// checkActiveSince tells a restart of slurmctld (a new activation) from a reconfigure.
func checkActiveSince(l *lab.Lab, before string, wantRestart bool) error {
	after, err := onHostErr(l, "login01", "systemctl show slurmctld -p ActiveEnterTimestampMonotonic --value")
	if err != nil {
		return err
	}
	if restarted := after != before; restarted != wantRestart {
		return fmt.Errorf("slurmctld active since %s, before %s: restarted=%v, want %v", after, before, restarted, wantRestart)
	}
	return nil
}

func checkControllerDestroyed(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", fmt.Sprintf("ls %s/%s %s/slurm.conf 2>/dev/null; systemctl is-active slurmctld || true",
			slurm.FragmentDir, slurm.ControllerFile, slurm.ConfDir))
		if err != nil {
			return err
		}
		if out != "inactive" && out != "failed" {
			return fmt.Errorf("after destroy, on login01: %q, want no fragment, no slurm.conf and slurmctld inactive", out)
		}
		return checkMungeStillRunning(l, labNodeNames(l))(nil)
	}
}

// The cluster user of the GPU-job test: in group users, as the guide's AllowGroups wants.
const (
	slurmTestUser = "tacc_slurm_alice"
	slurmTestUID  = 1801
)

// labCluster is the guide's Slurm setup on the lab: controller on login01, the GPU servers as
// nodes with the stand-in GPUs, one partition, configless compute nodes, and alice.
type labCluster struct {
	computeNodes []string
	// nodeExtra is added to one node's resource, by node.
	nodeExtra map[string]string
	// partitionNodes overrides the partition's node list, HCL.
	partitionNodes string
	// extra is appended to the configuration.
	extra string
	// controllerExtra is added to the controller's resource.
	controllerExtra string
	// computeExtra is added to every compute node's resource.
	computeExtra string
	// activationDeps are the resources of extra that the activation depends on too.
	activationDeps []string
}

func (c labCluster) config(l *lab.Lab) string {
	var b strings.Builder
	b.WriteString(slurmControllerConfig(l, c.controllerExtra))
	var ids []string
	for _, n := range c.computeNodes {
		fmt.Fprintf(&b, `
resource "gpucluster_slurm_node" %[1]q {
  controller = gpucluster_slurm_controller.test.id
  name       = %[1]q
  gres       = "gpu:4"
  gpu_files  = "/dev/nvidia[0-3]"
%[2]s}

resource "gpucluster_slurm_compute" %[1]q {
  node       = gpucluster_slurm_node.%[1]s.id
  controller = gpucluster_slurm_controller.test.slurmctld_host
  depends_on = [gpucluster_munge_key.test, gpucluster_slurm_activation.test]
%[3]s}
`, n, c.nodeExtra[n], c.computeExtra)
		ids = append(ids, fmt.Sprintf("gpucluster_slurm_node.%s.id", n))
	}
	deps := append([]string{"gpucluster_slurm_partition.gpu"}, c.activationDeps...)
	for _, n := range c.computeNodes {
		deps = append(deps, "gpucluster_slurm_node."+n)
	}
	b.WriteString(slurmActivationConfig(deps...))
	nodes := "[" + strings.Join(ids, ", ") + "]"
	if c.partitionNodes != "" {
		nodes = c.partitionNodes
	}
	fmt.Fprintf(&b, `
resource "gpucluster_slurm_partition" "gpu" {
  controller      = gpucluster_slurm_controller.test.id
  name            = "gpu"
  nodes           = %s
  default         = true
  max_time        = "3-00:00:00"
  allow_groups    = ["users"]
  def_mem_per_gpu = 1000
}

resource "gpucluster_user" "alice" {
  name  = %q
  uid   = %d
  group = "users"
  nodes = %s
}
%s`, nodes, slurmTestUser, slurmTestUID, hclList(labNodeNames(l)), c.extra)
	return b.String()
}

func positive(v int64) error {
	if v <= 0 {
		return fmt.Errorf("%d is not positive", v)
	}
	return nil
}

// checkSinfo polls sinfo on login01 until it shows want, node counts by state (%D:%T: "2:idle").
func checkSinfo(l *lab.Lab, want string) resource.TestCheckFunc {
	return checkSinfoShows(l, "sinfo -a -h -o %D:%T", want)
}

// checkNodeStates polls sinfo on login01 until it shows want, each node's state
// ("gpu01:idle\ngpu02:drained").
func checkNodeStates(l *lab.Lab, want string) resource.TestCheckFunc {
	return checkSinfoShows(l, "sinfo -a -h -N -o %N:%T | sort -u", want)
}

// checkSinfoShows polls command on login01 until it prints want, for at most a minute: after a
// restart of slurmctld the nodes show unk for a few seconds.
func checkSinfoShows(l *lab.Lab, command, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", command)
			if err != nil {
				return err
			}
			if out != want {
				return fmt.Errorf("%s = %q, want %q", command, out, want)
			}
			return nil
		})
	}
}

// pollLab retries check with a short backoff until it passes or timeout ends.
func pollLab(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

func checkSlurmConfRegexp(l *lab.Lab, pattern string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		content, err := onHostErr(l, "login01", "cat "+slurm.ConfDir+"/slurm.conf")
		if err != nil {
			return err
		}
		if !regexp.MustCompile(pattern).MatchString(content) {
			return fmt.Errorf("slurm.conf on login01 has no match for %s:\n%s", pattern, content)
		}
		return nil
	}
}

// checkConfigless wants the guide's one line in /etc/default/slurmd and no slurm.conf on
// each compute node.
func checkConfigless(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, n := range nodes {
			out, err := onHostErr(l, n, "cat "+slurm.SlurmdDefaultsPath+"; test ! -e "+slurm.ConfDir+"/slurm.conf && echo no-local-conf; systemctl is-active slurmd")
			if err != nil {
				return err
			}
			if want := "SLURMD_OPTIONS=\"--conf-server login01:6817\"\nno-local-conf\nactive"; out != want {
				return fmt.Errorf("%s: %q, want %q", n, out, want)
			}
		}
		return nil
	}
}

// checkGPUJobs is the guide's test, as the cluster user: two single-GPU jobs without --mem
// run at the same time on one node, and each sees exactly one GPU, a different one. The jobs
// sleep inside (their runtime, not a wait of the test); the test polls squeue and cancels
// them when done.
func checkGPUJobs(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		dir := "/tmp/" + slurmTestUser + "-jobs"
		start := fmt.Sprintf(`set -u
rm -rf %[1]s && mkdir -m 0777 %[1]s && cd /tmp
for i in 1 2; do
	runuser -u %[2]s -- setsid srun -w %[3]s --gres=gpu:1 -J gpujob$i -t 2 sh -c 'echo "gpu $CUDA_VISIBLE_DEVICES"; exec sleep 60' > %[1]s/job$i.out 2>&1 < /dev/null &
done
`, dir, slurmTestUser, node)
		if _, err := onHostErr(l, "login01", start); err != nil {
			return err
		}
		defer func() { _, _ = onHostErr(l, "login01", "scancel -u "+slurmTestUser+"; rm -rf "+dir) }()
		err := pollLab(time.Minute, func() error {
			out, err := onHostErr(l, "login01", "squeue -u "+slurmTestUser+" -h -t RUNNING -o %j:%N | sort; grep -h '^gpu ' "+dir+"/job1.out "+dir+"/job2.out")
			if err != nil {
				return err
			}
			lines := strings.Split(out, "\n")
			if len(lines) != 4 || lines[0] != "gpujob1:"+node || lines[1] != "gpujob2:"+node {
				why, _ := onHostErr(l, "login01", "squeue -a -o '%i %j %T %r %N %m %b'; scontrol show node "+node+" | grep -E 'TRES|State'")
				return fmt.Errorf("want gpujob1 and gpujob2 RUNNING on %s together, each printing its GPU; got:\n%s\n%s", node, out, why)
			}
			a, b := strings.Fields(lines[2]), strings.Fields(lines[3])
			if len(a) != 2 || len(b) != 2 || strings.Contains(a[1], ",") || strings.Contains(b[1], ",") || a[1] == b[1] {
				return fmt.Errorf("each job must see exactly one GPU, a different one (CUDA_VISIBLE_DEVICES):\n%s", out)
			}
			return nil
		})
		return err
	}
}

// checkMultiNode is the guide's `srun -N2 hostname`, as the cluster user.
func checkMultiNode(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", "cd /tmp && timeout 60 runuser -u "+slurmTestUser+" -- srun -N2 --gres=gpu:1 -t 1 hostname | sort")
		if err != nil {
			return err
		}
		if out != "gpu01\ngpu02" {
			return fmt.Errorf("srun -N2 hostname: %q, want gpu01 and gpu02", out)
		}
		return nil
	}
}

// startLongJob starts a job as the cluster user on node that outlives the steps it must
// survive, and returns once it runs.
func startLongJob(t *testing.T, l *lab.Lab, node string) {
	t.Helper()
	onHost(t, l, "login01", fmt.Sprintf("cd /tmp && runuser -u %s -- setsid srun -w %s --gres=gpu:1 -J survivor -t 4 sleep 230 > /dev/null 2>&1 < /dev/null &", slurmTestUser, node))
	if err := checkLongJobRunning(l, node)(nil); err != nil {
		t.Fatal(err)
	}
}

func checkLongJobRunning(l *lab.Lab, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return pollLab(30*time.Second, func() error {
			out, err := onHostErr(l, "login01", "squeue -u "+slurmTestUser+" -h -n survivor -o %T:%N")
			if err != nil {
				return err
			}
			if out != "RUNNING:"+node {
				return fmt.Errorf("job survivor: %q, want RUNNING:%s", out, node)
			}
			return nil
		})
	}
}

func cancelJobs(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := onHostErr(l, "login01", "command -v scancel >/dev/null || exit 0; scancel -u "+slurmTestUser+" 2>/dev/null; true")
		return err
	}
}

func checkLogHas(file, text string) error {
	content, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.Join(strings.Fields(string(content)), " "), text) {
		return fmt.Errorf("the Terraform log has no warning %q", text)
	}
	return nil
}

// checkClusterDestroyed wants slurmd stopped on the compute nodes, no fragment left on the
// controller, slurmctld stopped, and MUNGE still running.
func checkClusterDestroyed(l *lab.Lab, nodes []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, n := range nodes {
			out, err := onHostErr(l, n, "systemctl is-active slurmd || true")
			if err != nil {
				return err
			}
			if out == "active" {
				return fmt.Errorf("slurmd still runs on %s after destroy", n)
			}
		}
		out, err := onHostErr(l, "login01", "ls "+slurm.FragmentDir+" 2>/dev/null | wc -l")
		if err != nil {
			return err
		}
		if out != "0" {
			return fmt.Errorf("%s fragments left on login01 after destroy", out)
		}
		return checkControllerDestroyed(l)(s)
	}
}

// testFromIdleCluster runs steps after a first one that applies first and finds all its compute
// nodes idle; destroy must leave every node in destroyed as checkClusterDestroyed wants it.
func testFromIdleCluster(t *testing.T, l *lab.Lab, first labCluster, destroyed []string, steps []resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkClusterDestroyed(l, destroyed),
		Steps: append([]resource.TestStep{{
			Config: first.config(l),
			Check:  checkSinfo(l, fmt.Sprintf("%d:idle", len(first.computeNodes))),
		}}, steps...),
	})
}

const slurmAccountingAddr = "gpucluster_slurm_accounting.test"

// The test's database passwords: made up per run, so a leak of an earlier run's cannot pass
// for this one's, and long enough that no other text contains them by chance.
var (
	accountingPassword  = "acctgPw-" + randomToken()
	accountingPassword2 = "acctgPw2-" + randomToken()
)

func randomToken() string {
	b := make([]byte, 12)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		_, err = f.Read(b)
		_ = f.Close()
	}
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}

// accountingConfig is the accounting resource on login01, with extra attributes. The password
// comes, as it should in real use, from an ephemeral variable: a literal in the configuration
// would be in the plan's copy of the configuration, by Terraform's doing.
func accountingConfig(version int, extra string) string {
	return fmt.Sprintf(`
variable "db_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpucluster_slurm_accounting" "test" {
  controller                   = gpucluster_slurm_controller.test.id
  database_password_wo         = var.db_password
  database_password_wo_version = %d
%s}
`, version, extra)
}

// passwordVariable gives the configuration's db_password.
func passwordVariable(password string) config.Variables {
	return config.Variables{"db_password": config.StringVariable(password)}
}

// accountingCluster is the lab's Slurm cluster with accounting, its fragment activated with
// the rest.
func accountingCluster(version int, accountingExtra, extra string, deps ...string) labCluster {
	return labCluster{
		computeNodes:   []string{"gpu01"},
		extra:          accountingConfig(version, accountingExtra) + extra,
		activationDeps: append([]string{slurmAccountingAddr}, deps...),
	}
}

// checkAccountingDestroyed wants slurmdbd stopped, slurmdbd.conf gone, and the database, with
// the job records, still there.
func checkAccountingDestroyed(l *lab.Lab) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := onHostErr(l, "login01", "systemctl is-active slurmdbd || true; test -e "+slurm.SlurmdbdConfPath+" && echo conf; mysql -N -e \"SHOW DATABASES LIKE 'slurm_acct_db'\"")
		if err != nil {
			return err
		}
		if out != "inactive\nslurm_acct_db" {
			return fmt.Errorf("after destroy, want slurmdbd inactive, no slurmdbd.conf and the database kept; got %q", out)
		}
		return nil
	}
}
