package nodes

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Where the CPU and memory facts came from.
const (
	SourceSlurmd = "slurmd -C"
	SourceLscpu  = "lscpu"
)

// Facts describe one node. Tools that are missing leave their fields zero
// and, when that is worth knowing, add a warning.
type Facts struct {
	Hostname     string
	OSID         string
	OSVersionID  string
	OSPrettyName string
	Kernel       string

	Hardware
	FactsSource string

	GPUCount int
	GPUs     []string

	TimeSynchronized bool
	// TimeSyncDetail says how TimeSynchronized was decided, or why it is false.
	TimeSyncDetail string

	// SlurmdVersion is empty when slurmd is not installed.
	SlurmdVersion string

	// SSHAllowGroups are the groups of the AllowGroupsPath drop-in, nil
	// when the file does not exist.
	SSHAllowGroups []string

	Warnings []string
}

// The exit status a shell gives a command it cannot find; the script uses it
// for tools that are not installed.
const statusNotFound = 127

// readFuncs: run runs a tool in a section of its own, with the tool's status, 127 when it is not
// installed, and returns that status; runall is run with the tool's stderr in the section too.
// readf reads a file into $c as cat would print it, but with the shell's own read, so the files
// and /proc entries that need no tool cost no process; secf prints the first of its files that
// it can read as a section. hardware reads lscpu and /proc/meminfo, which parseHardware needs
// only where slurmd -C does not answer.
//
//go:embed read_funcs.sh
var readFuncs string

// kernelClockPerl prints the kernel clock's maximum error (adjtimex(2), which changes nothing
// with modes 0), in microseconds. It is what timedatectl's NTPSynchronized reports (systemd's
// ntp_synced(): synchronised while under 16 s), without timedatectl's cost: systemd-timedated
// is started over D-Bus for each call once it has idled out, as on every plan, and that costs
// each node more than the rest of its facts. perl is there (the root shell is Perl); the
// syscall number is per architecture, uname -m's machine, which the kernel also gives as
// /proc/sys/kernel/arch (uname runs only on kernels without it); on an architecture not listed
// (exit 3) timedatectl answers. maxerror is struct timex's fourth field: after an int padded
// to a long, and two longs.
//
//go:embed kernel_clock.pl
var kernelClockPerl string

// factsScript starts at most four programs where slurmd -C answers (slurmd -C and -V,
// nvidia-smi, perl) and reads everything else with the shell's builtins: the kernel's release and the
// hostname from /proc/sys/kernel, which are what uname(2) returns. It runs lscpu only where
// slurmd -C fails; where slurmd -C answers something ParseSlurmdC cannot read, Gather asks for
// lscpu in a second round trip (lscpuScript). A read shared within the run: gpucluster_node and
// gpucluster_slurm_node read the same node.
var factsScript = transport.NewScript().Text(transport.SectionFuncs+readFuncs).
	Set("kernel_clock", kernelClockPerl).Set("allow_groups", AllowGroupsPath).Text(factsText).String()

//go:embed facts.sh
var factsText string

var lscpuScript = transport.ScriptEnv + transport.SectionFuncs + readFuncs + "hardware\n"

// Gather reads a node's facts in one round trip, two where slurmd -C answers what cannot be read.
func Gather(ctx context.Context, ex transport.Executor) (Facts, error) {
	secs, err := transport.ReadSections(ctx, ex, factsScript, "gather facts")
	if err != nil {
		return Facts{}, err
	}
	if _, err := slurmdHardware(secs); err != nil && !hasSection(secs, "lscpu") {
		more, err := transport.ReadSections(ctx, ex, lscpuScript, "gather facts")
		if err != nil {
			return Facts{}, err
		}
		secs["lscpu"], secs["meminfo"] = more["lscpu"], more["meminfo"]
	}
	return parseSections(secs)
}

// ParseFacts parses the output of the facts script, with the lscpu section where it is needed.
func ParseFacts(out []byte) (Facts, error) {
	secs, err := transport.ParseSections(out)
	if err != nil {
		return Facts{}, fmt.Errorf("gather facts: %w", err)
	}
	return parseSections(secs)
}

func parseSections(secs map[string]transport.Section) (Facts, error) {
	var f Facts
	for _, step := range []func(*Facts, map[string]transport.Section) error{
		parseIdentity, parseHardware, parseGPUs, parseTimeSync, parseAllowGroups,
	} {
		if err := step(&f, secs); err != nil {
			return Facts{}, fmt.Errorf("gather facts: %w", err)
		}
	}
	return f, nil
}

func parseIdentity(f *Facts, secs map[string]transport.Section) error {
	osr, err := required(secs, "os-release")
	if err != nil {
		return err
	}
	kv := ParseOSRelease(strings.Join(osr, "\n"))
	f.OSID, f.OSVersionID, f.OSPrettyName = kv["ID"], kv["VERSION_ID"], kv["PRETTY_NAME"]
	kernel, err := required(secs, "kernel")
	if err != nil {
		return err
	}
	f.Kernel = strings.TrimSpace(kernel[0])
	host, err := required(secs, "hostname")
	if err != nil {
		return err
	}
	f.Hostname = strings.TrimSpace(host[0])
	return nil
}

func hasSection(secs map[string]transport.Section, key string) bool {
	_, ok := secs[key]
	return ok
}

// errNoSlurmd: slurmd -C did not run (not installed) or failed.
var errNoSlurmd = errors.New("slurmd -C gave no answer")

// slurmdHardware is the hardware slurmd -C reported, or why lscpu has to give it instead.
func slurmdHardware(secs map[string]transport.Section) (Hardware, error) {
	s, ok := secs["slurmd-C"]
	if !ok || s.Status != 0 {
		return Hardware{}, errNoSlurmd
	}
	cfg, err := ParseSlurmdC(strings.Join(s.Lines, "\n"))
	return cfg.Hardware, err
}

// parseHardware prefers slurmd -C, because that is what Slurm will compare
// the node's declaration against; lscpu and /proc/meminfo are the fallback.
func parseHardware(f *Facts, secs map[string]transport.Section) error {
	if s, ok := secs["slurmd-V"]; ok && s.Status == 0 {
		v, err := ParseSlurmdVersion(strings.Join(s.Lines, "\n"))
		if err != nil {
			f.Warnings = append(f.Warnings, err.Error())
		}
		f.SlurmdVersion = v
	}
	hw, err := slurmdHardware(secs)
	if err == nil {
		f.Hardware = hw
		f.FactsSource = SourceSlurmd
		return nil
	}
	if !errors.Is(err, errNoSlurmd) {
		f.Warnings = append(f.Warnings, fmt.Sprintf("%v; using lscpu instead", err))
	}
	lscpu, err := required(secs, "lscpu")
	if err != nil {
		return err
	}
	topo, err := ParseLscpu(strings.Join(lscpu, "\n"))
	if err != nil {
		return err
	}
	meminfo, err := required(secs, "meminfo")
	if err != nil {
		return err
	}
	mem, err := ParseMeminfoMiB(strings.Join(meminfo, "\n"))
	if err != nil {
		return err
	}
	f.Hardware = Hardware{
		CPUs: topo.CPUs, Boards: 1, SocketsPerBoard: topo.SocketsPerBoard,
		CoresPerSocket: topo.CoresPerSocket, ThreadsPerCore: topo.ThreadsPerCore, RealMemoryMiB: mem,
	}
	f.FactsSource = SourceLscpu
	return nil
}

func parseGPUs(f *Facts, secs map[string]transport.Section) error {
	s, ok := secs["nvidia-smi"]
	if !ok || s.Status == statusNotFound {
		return nil
	}
	out := strings.Join(s.Lines, "\n")
	f.GPUs = ParseNvidiaSMIList(out)
	f.GPUCount = len(f.GPUs)
	if s.Status != 0 && s.Status != nvidiaSMINoDevices {
		f.Warnings = append(f.Warnings, fmt.Sprintf("nvidia-smi -L exited with status %d: %s", s.Status, firstLine(out)))
	}
	return nil
}

// maxSyncedError is the kernel clock's maximum error (microseconds) from which systemd, and
// so timedatectl's NTPSynchronized, counts the clock as not synchronised.
const maxSyncedError = 16_000_000

// parseTimeSync trusts the kernel's NTP-synchronised state (read directly, or through
// timedatectl), then chrony, then systemd-timesyncd's marker file.
func parseTimeSync(f *Facts, secs map[string]transport.Section) error {
	var reasons []string
	if s, ok := secs["kernel-clock"]; ok && s.Status == 0 {
		_, v, _ := strings.Cut(strings.Join(s.Lines, ""), "maxerror=")
		maxError, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			reasons = append(reasons, fmt.Sprintf("kernel clock: unexpected output %q", strings.Join(s.Lines, " ")))
		case maxError < maxSyncedError:
			f.TimeSynchronized = true
			f.TimeSyncDetail = fmt.Sprintf("kernel clock: maximum error %d us (timedatectl: NTPSynchronized=yes)", maxError)
			return nil
		default:
			reasons = append(reasons, fmt.Sprintf("kernel clock: maximum error %d us (timedatectl: NTPSynchronized=no)", maxError))
		}
	} else if s, ok := secs["timedatectl"]; ok && s.Status == 0 {
		kv := map[string]string{}
		for _, l := range s.Lines {
			if k, v, ok := strings.Cut(l, "="); ok {
				kv[k] = v
			}
		}
		if kv["NTPSynchronized"] == "yes" {
			f.TimeSynchronized, f.TimeSyncDetail = true, "timedatectl: NTPSynchronized=yes"
			return nil
		}
		reasons = append(reasons, fmt.Sprintf("timedatectl: NTPSynchronized=%s, NTP=%s", kv["NTPSynchronized"], kv["NTP"]))
	} else {
		reasons = append(reasons, "timedatectl: "+toolProblem(secs["timedatectl"], ok))
	}
	if s, ok := secs["chronyc"]; ok && s.Status == 0 {
		leap := chronyLeapStatus(s.Lines)
		if leap == "Normal" {
			f.TimeSynchronized, f.TimeSyncDetail = true, "chronyc tracking: Leap status Normal"
			return nil
		}
		reasons = append(reasons, "chronyc tracking: Leap status "+leap)
	} else if ok && s.Status != statusNotFound {
		reasons = append(reasons, "chronyc: "+toolProblem(s, ok))
	}
	if s, ok := secs["timesyncd"]; ok && s.Status == 0 {
		f.TimeSynchronized, f.TimeSyncDetail = true, "systemd-timesyncd: /run/systemd/timesync/synchronized exists"
		return nil
	}
	f.TimeSyncDetail = strings.Join(reasons, "; ")
	return nil
}

func parseAllowGroups(f *Facts, secs map[string]transport.Section) error {
	s, ok := secs["allow-groups"]
	switch {
	case !ok || s.Status == statusNotFound:
		return nil
	case s.Status != 0:
		return fmt.Errorf("read %s: status %d", AllowGroupsPath, s.Status)
	}
	f.SSHAllowGroups = append([]string{}, ParseAllowGroups(strings.Join(s.Lines, "\n"))...)
	return nil
}

func chronyLeapStatus(lines []string) string {
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Leap status" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func toolProblem(s transport.Section, present bool) string {
	switch {
	case !present || s.Status == statusNotFound:
		return "not installed"
	case len(s.Lines) > 0:
		return fmt.Sprintf("exited with status %d: %s", s.Status, firstLine(strings.Join(s.Lines, "\n")))
	}
	return fmt.Sprintf("exited with status %d", s.Status)
}

func required(secs map[string]transport.Section, key string) ([]string, error) {
	s, ok := secs[key]
	switch {
	case !ok:
		return nil, fmt.Errorf("no %s section in the output", key)
	case s.Status != 0:
		return nil, fmt.Errorf("%s failed with status %d", key, s.Status)
	case len(s.Lines) == 0:
		return nil, fmt.Errorf("%s printed nothing", key)
	}
	return s.Lines, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// CheckHostname refuses a node whose own hostname is not the declared name.
// A fully qualified hostname matches its first label, the short name that
// Slurm uses.
func CheckHostname(declared string, f Facts) error {
	short, _, _ := strings.Cut(f.Hostname, ".")
	if f.Hostname == declared || short == declared {
		return nil
	}
	return fmt.Errorf("host says its hostname is %q, but it is declared as %q: "+
		"set the hostname on the host (hostnamectl set-hostname %s) or fix the node's name, "+
		"since Slurm reaches nodes by these names", f.Hostname, declared, declared)
}
