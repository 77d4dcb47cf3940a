package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Executor runs a script as root on one host.
type Executor interface {
	Sudo(ctx context.Context, script string, stdin []byte) (transport.Result, error)
}

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

const factsScript = transport.ScriptEnv + transport.SectionFuncs + `
run() { name=$1; shift; sec "$name"; if command -v "$1" >/dev/null 2>&1; then "$@"; end $?; else end 127; fi; }
sec os-release; cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release; end $?
sec kernel; uname -r; end $?
sec hostname; uname -n; end $?
run slurmd-C slurmd -C 2>/dev/null
run slurmd-V slurmd -V 2>/dev/null
run lscpu lscpu
sec meminfo; cat /proc/meminfo; end $?
run nvidia-smi nvidia-smi -L 2>&1
run timedatectl timedatectl show -p NTP -p NTPSynchronized 2>&1
run chronyc chronyc -n tracking 2>&1
sec timesyncd; test -e /run/systemd/timesync/synchronized; end $?
sec allow-groups; if [ -e ` + AllowGroupsPath + ` ]; then cat ` + AllowGroupsPath + `; end $?; else end 127; fi
`

// Gather reads a node's facts in one round trip.
func Gather(ctx context.Context, ex Executor) (Facts, error) {
	res, err := ex.Sudo(ctx, factsScript, nil)
	if err != nil {
		return Facts{}, fmt.Errorf("gather facts: %w", err)
	}
	return ParseFacts(res.Stdout)
}

// ParseFacts parses the output of the facts script.
func ParseFacts(out []byte) (Facts, error) {
	secs, err := transport.ParseSections(out)
	if err != nil {
		return Facts{}, fmt.Errorf("gather facts: %w", err)
	}
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
	if s, ok := secs["slurmd-C"]; ok && s.Status == 0 {
		cfg, err := ParseSlurmdC(strings.Join(s.Lines, "\n"))
		if err == nil {
			f.Hardware = cfg.Hardware
			f.FactsSource = SourceSlurmd
			return nil
		}
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

// parseTimeSync trusts timedatectl (the kernel's NTP-synchronised flag),
// then chrony, then systemd-timesyncd's marker file.
func parseTimeSync(f *Facts, secs map[string]transport.Section) error {
	var reasons []string
	if s, ok := secs["timedatectl"]; ok && s.Status == 0 {
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
