package nodes

import (
	"context"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func baseSections(t *testing.T) map[string]out {
	return map[string]out{
		"os-release":   {transporttest.Testdata(t, "os-release-trixie.txt"), 0},
		"kernel":       {"6.1.0-28-amd64", 0},
		"hostname":     {"gpu01", 0},
		"slurmd-C":     {transporttest.Testdata(t, "slurmd-C-24.11.txt"), 0},
		"slurmd-V":     {"slurm 24.11.5", 0},
		"lscpu":        {transporttest.Testdata(t, "lscpu-kvm-flat.txt"), 0},
		"meminfo":      {transporttest.Testdata(t, "meminfo.txt"), 0},
		"nvidia-smi":   {transporttest.Testdata(t, "nvidia-smi-lab.txt"), 0},
		"timedatectl":  {"NTP=yes\nNTPSynchronized=yes", 0},
		"chronyc":      {"", 127},
		"timesyncd":    {"", 0},
		"allow-groups": {"", 127},
	}
}

func TestParseFactsGPUServer(t *testing.T) {
	f, err := ParseFacts(scriptOutput(baseSections(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := Facts{
		Hostname: "gpu01", OSID: "debian", OSVersionID: "13", OSPrettyName: "Debian GNU/Linux 13 (trixie)",
		Kernel: "6.1.0-28-amd64", FactsSource: SourceSlurmd, GPUCount: 2,
		Hardware:         Hardware{CPUs: 2, Boards: 1, SocketsPerBoard: 1, CoresPerSocket: 2, ThreadsPerCore: 1, RealMemoryMiB: 24105},
		GPUs:             []string{"NVIDIA Lab Stand-in", "NVIDIA Lab Stand-in"},
		TimeSynchronized: true, TimeSyncDetail: "timedatectl: NTPSynchronized=yes", SlurmdVersion: "24.11.5",
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("got  %+v\nwant %+v", f, want)
	}
}

func TestParseFactsVariants(t *testing.T) {
	tests := []struct {
		name   string
		change map[string]out
		check  func(*testing.T, Facts)
	}{
		{"no slurmd: lscpu and meminfo", map[string]out{"slurmd-C": {"", 127}, "slurmd-V": {"", 127}},
			func(t *testing.T, f Facts) {
				if f.FactsSource != SourceLscpu || f.CPUs != 2 || f.Boards != 1 || f.RealMemoryMiB != 24105 || f.SlurmdVersion != "" {
					t.Errorf("%+v", f)
				}
			}},
		{"slurmd -C garbage falls back with a warning", map[string]out{"slurmd-C": {"slurmd: fatal: oops", 0}},
			func(t *testing.T, f Facts) {
				if f.FactsSource != SourceLscpu || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "using lscpu") {
					t.Errorf("%+v", f)
				}
			}},
		{"no nvidia-smi", map[string]out{"nvidia-smi": {"", 127}},
			func(t *testing.T, f Facts) {
				if f.GPUCount != 0 || f.GPUs != nil || len(f.Warnings) != 0 {
					t.Errorf("%+v", f)
				}
			}},
		{"no devices", map[string]out{"nvidia-smi": {"No devices were found", 6}},
			func(t *testing.T, f Facts) {
				if f.GPUCount != 0 || len(f.Warnings) != 0 {
					t.Errorf("%+v", f)
				}
			}},
		{"driver failure is a warning", map[string]out{"nvidia-smi": {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", 9}},
			func(t *testing.T, f Facts) {
				if f.GPUCount != 0 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "status 9: NVIDIA-SMI has failed") {
					t.Errorf("%+v", f)
				}
			}},
		{"MIG instances are not GPUs", map[string]out{"nvidia-smi": {transporttest.Testdata(t, "nvidia-smi-mig.txt"), 0}},
			func(t *testing.T, f Facts) {
				if f.GPUCount != 2 {
					t.Errorf("GPUCount = %d", f.GPUCount)
				}
			}},
		{"chrony when timedatectl cannot reach the bus", map[string]out{
			"timedatectl": {"Failed to connect to bus: No such file or directory", 1},
			"chronyc":     {"Reference ID    : C0A80101 (192.168.1.1)\nStratum         : 3\nLeap status     : Normal", 0},
			"timesyncd":   {"", 1},
		}, func(t *testing.T, f Facts) {
			if !f.TimeSynchronized || f.TimeSyncDetail != "chronyc tracking: Leap status Normal" {
				t.Errorf("%+v", f)
			}
		}},
		{"not synchronised, with reasons", map[string]out{
			"timedatectl": {"NTP=no\nNTPSynchronized=no", 0},
			"chronyc":     {"Leap status     : Not synchronised", 0},
			"timesyncd":   {"", 1},
		}, func(t *testing.T, f Facts) {
			want := "timedatectl: NTPSynchronized=no, NTP=no; chronyc tracking: Leap status Not synchronised"
			if f.TimeSynchronized || f.TimeSyncDetail != want {
				t.Errorf("detail %q, want %q", f.TimeSyncDetail, want)
			}
		}},
		{"the kernel clock read directly, under 16 s of error", map[string]out{"kernel-clock": {"maxerror=250000", 0}, "timedatectl": {"NTPSynchronized=no", 0}},
			func(t *testing.T, f Facts) {
				if !f.TimeSynchronized || f.TimeSyncDetail != "kernel clock: maximum error 250000 us (timedatectl: NTPSynchronized=yes)" {
					t.Errorf("%+v", f)
				}
			}},
		{"the kernel clock at 16 s of error is not synchronised", map[string]out{"kernel-clock": {"maxerror=16000000", 0}, "timesyncd": {"", 1}},
			func(t *testing.T, f Facts) {
				if f.TimeSynchronized || f.TimeSyncDetail != "kernel clock: maximum error 16000000 us (timedatectl: NTPSynchronized=no)" {
					t.Errorf("%+v", f)
				}
			}},
		{"timedatectl where the kernel clock cannot be read", map[string]out{"kernel-clock": {"", 3}, "timedatectl": {"NTP=yes\nNTPSynchronized=yes", 0}},
			func(t *testing.T, f Facts) {
				if !f.TimeSynchronized || f.TimeSyncDetail != "timedatectl: NTPSynchronized=yes" {
					t.Errorf("%+v", f)
				}
			}},
		{"no time tools at all", map[string]out{"timedatectl": {"", 127}, "timesyncd": {"", 1}},
			func(t *testing.T, f Facts) {
				if f.TimeSynchronized || f.TimeSyncDetail != "timedatectl: not installed" {
					t.Errorf("%+v", f)
				}
			}},
		{"allow-groups drop-in present", map[string]out{"allow-groups": {"# managed\nAllowGroups sudo admins", 0}},
			func(t *testing.T, f Facts) {
				if !reflect.DeepEqual(f.SSHAllowGroups, []string{"sudo", "admins"}) {
					t.Errorf("SSHAllowGroups = %q", f.SSHAllowGroups)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs := baseSections(t)
			for k, v := range tt.change {
				secs[k] = v
			}
			f, err := ParseFacts(scriptOutput(secs))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, f)
		})
	}
}

func TestParseFactsErrors(t *testing.T) {
	tests := []struct {
		name    string
		change  map[string]out
		wantErr string
	}{
		{"no os-release", map[string]out{"os-release": {"", 1}}, "os-release failed"},
		{"no CPU facts at all", map[string]out{"slurmd-C": {"", 127}, "lscpu": {"", 127}}, "lscpu failed with status 127"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs := baseSections(t)
			for k, v := range tt.change {
				secs[k] = v
			}
			if _, err := ParseFacts(scriptOutput(secs)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := ParseFacts([]byte("@@gpucluster 0 8 kernel\n6.1\n")); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated output: %v", err)
	}
}

// The real script on this machine: no slurmd, no nvidia-smi, and no systemd
// as PID 1, so lscpu is the source and timedatectl cannot answer.
func TestGatherLocalShell(t *testing.T) {
	f, err := Gather(context.Background(), transporttest.Shell{})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if f.Hostname != host || f.Kernel == "" || f.OSID == "" || f.CPUs < 1 || f.RealMemoryMiB < 1 || f.FactsSource == "" {
		t.Errorf("facts = %+v", f)
	}
	if f.ThreadsPerCore*f.CoresPerSocket*f.SocketsPerBoard*f.Boards != f.CPUs {
		t.Errorf("topology %d boards x %d sockets x %d cores x %d threads != %d CPUs",
			f.Boards, f.SocketsPerBoard, f.CoresPerSocket, f.ThreadsPerCore, f.CPUs)
	}
	if !f.TimeSynchronized && f.TimeSyncDetail == "" {
		t.Error("time not synchronised and no reason given")
	}
}

func TestCheckHostname(t *testing.T) {
	tests := []struct {
		declared, actual string
		ok               bool
	}{
		{"gpu01", "gpu01", true},
		{"gpu01", "gpu01.cluster.example", true},
		{"gpu01.cluster.example", "gpu01.cluster.example", true},
		{"gpu01", "gpu02", false},
		{"gpu01", "gpu011", false},
		{"gpu01", "localhost", false},
	}
	for _, tt := range tests {
		err := CheckHostname(tt.declared, Facts{Hostname: tt.actual})
		if (err == nil) != tt.ok {
			t.Errorf("CheckHostname(%q, %q) = %v", tt.declared, tt.actual, err)
		}
		if err != nil && !strings.Contains(err.Error(), tt.actual) {
			t.Errorf("error %q does not name the host's hostname", err)
		}
	}
}

// lscpu and /proc/meminfo cost a round trip of their own only where slurmd -C exits 0 with what
// cannot be read; where slurmd -C answers, neither is read; where it fails, both come in the
// same script.
func TestGatherAsksForLscpuOnlyWhenNeeded(t *testing.T) {
	withoutFallback := func(change map[string]out) string {
		secs := baseSections(t)
		delete(secs, "lscpu")
		delete(secs, "meminfo")
		for k, v := range change {
			secs[k] = v
		}
		return string(scriptOutput(secs))
	}
	fallback := map[string]out{"lscpu": {transporttest.Testdata(t, "lscpu-kvm-flat.txt"), 0}, "meminfo": {transporttest.Testdata(t, "meminfo.txt"), 0}}
	slurmdFailed := map[string]out{"slurmd-C": {"", 127}}
	for k, v := range fallback {
		slurmdFailed[k] = v
	}
	tests := []struct {
		name       string
		replies    []transporttest.Reply
		wantSource string
		wantCalls  int
	}{
		{"slurmd -C answers", []transporttest.Reply{{Stdout: withoutFallback(nil)}}, SourceSlurmd, 1},
		{"slurmd -C failed, lscpu ran with it", []transporttest.Reply{{Stdout: withoutFallback(slurmdFailed)}}, SourceLscpu, 1},
		{"slurmd -C garbage", []transporttest.Reply{{Stdout: withoutFallback(map[string]out{"slurmd-C": {"slurmd: fatal: oops", 0}})}, {Stdout: string(scriptOutput(fallback))}}, SourceLscpu, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &transporttest.Fake{T: t, Replies: tt.replies}
			f, err := Gather(context.Background(), fake)
			if err != nil {
				t.Fatal(err)
			}
			if f.FactsSource != tt.wantSource || len(fake.Calls) != tt.wantCalls {
				t.Errorf("source %q in %d round trips, want %q in %d", f.FactsSource, len(fake.Calls), tt.wantSource, tt.wantCalls)
			}
			if f.CPUs != 2 || f.RealMemoryMiB != 24105 {
				t.Errorf("hardware %+v, want 2 CPUs and 24105 MiB", f.Hardware)
			}
		})
	}
}

// readf, the script's cat without a process, reads what cat prints: a last line without a
// newline stays without one, blank lines and backslashes stay, and a file that cannot be read
// fails.
func TestReadfReadsWhatCatPrints(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"plain":      "ID=debian\nVERSION_ID=\"13\"\n",
		"no-newline": "# Managed\nAllowGroups sudo",
		"odd":        "  leading and trailing  \n\n\ta\\tb \\\n%s %d\n",
		"empty":      "",
	} {
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			got, err := exec.Command("/bin/sh", "-c", readFuncs+`readf "$1" && printf '%s' "$c"`, "sh", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != content {
				t.Errorf("readf read %q, the file holds %q", got, content)
			}
		})
	}
	if err := exec.Command("/bin/sh", "-c", readFuncs+`readf "$1" 2>/dev/null`, "sh", dir+"/missing").Run(); err == nil {
		t.Error("readf of a missing file succeeded")
	}
}

// The sections read without a program hold what the programs print on this machine: uname -r
// and uname -n for the kernel and hostname, cat for os-release.
func TestFactsScriptMatchesUnameAndCat(t *testing.T) {
	res, err := transporttest.Shell{}.Sudo(context.Background(), factsScript, nil)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := transport.ParseSections(res.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	osRelease := "/etc/os-release"
	if _, err := os.Stat(osRelease); err != nil {
		osRelease = "/usr/lib/os-release"
	}
	for key, argv := range map[string][]string{
		"kernel": {"uname", "-r"}, "hostname": {"uname", "-n"}, "os-release": {"cat", osRelease},
	} {
		want, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatal(err)
		}
		wantLines, _ := transport.ParseSections([]byte(transporttest.Sections("@@gpucluster x\n" + string(want) + "\n@@rc 0\n")))
		if got := secs[key]; got.Status != 0 || !reflect.DeepEqual(got.Lines, wantLines["x"].Lines) {
			t.Errorf("section %s = %q (status %d), %s prints %q", key, got.Lines, got.Status, strings.Join(argv, " "), want)
		}
	}
}

// The real scripts on this machine where slurmd -C answers what cannot be read: the second
// round trip brings lscpu and /proc/meminfo, which the first no longer reads.
func TestGatherLocalShellSecondRoundTrip(t *testing.T) {
	rounds := 0
	sh := transporttest.Shell{Rewrite: func(script string) string {
		rounds++
		return strings.Replace(script, "run slurmd-C slurmd -C", "run slurmd-C echo NodeName=garbled", 1)
	}}
	f, err := Gather(context.Background(), sh)
	if err != nil {
		t.Fatal(err)
	}
	if rounds != 2 || f.FactsSource != SourceLscpu || f.CPUs < 1 || f.RealMemoryMiB < 1 || len(f.Warnings) != 1 {
		t.Errorf("%d round trips, facts %+v", rounds, f)
	}
}

// Without /proc/sys/kernel/arch (kernels before it), the clock read takes uname -m's machine.
func TestKernelClockWithoutProcArch(t *testing.T) {
	sh := transporttest.Shell{Rewrite: func(script string) string {
		if !strings.Contains(script, "/proc/sys/kernel/arch") {
			t.Fatal("the facts script no longer reads /proc/sys/kernel/arch")
		}
		return strings.Replace(script, "/proc/sys/kernel/arch", "/nonexistent/arch", 1)
	}}
	f, err := Gather(context.Background(), sh)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.TimeSyncDetail, "kernel clock: maximum error ") {
		t.Errorf("time sync detail %q, want the kernel clock's", f.TimeSyncDetail)
	}
}
