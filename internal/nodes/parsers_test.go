package nodes

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestParseSlurmdC(t *testing.T) {
	tests := []struct {
		fixture string
		want    SlurmdConfig
	}{
		{"slurmd-C-22.05.txt", SlurmdConfig{NodeName: "gpu01", Hardware: Hardware{CPUs: 384, Boards: 1, SocketsPerBoard: 2,
			CoresPerSocket: 96, ThreadsPerCore: 2, RealMemoryMiB: 515000}, UpTime: "12-03:04:05"}},
		{"slurmd-C-23.11.txt", SlurmdConfig{NodeName: "gpu01", Hardware: Hardware{CPUs: 384, Boards: 1, SocketsPerBoard: 2,
			CoresPerSocket: 96, ThreadsPerCore: 2, RealMemoryMiB: 515000}, Gres: "gpu:nvidia_h100_80gb_hbm3:4", UpTime: "3-11:22:33"}},
		{"slurmd-C-24.11.txt", SlurmdConfig{NodeName: "gpu01", Hardware: Hardware{CPUs: 2, Boards: 1, SocketsPerBoard: 1,
			CoresPerSocket: 2, ThreadsPerCore: 1, RealMemoryMiB: 24105}, UpTime: "0-00:05:12"}},
		{"slurmd-C-25.11.txt", SlurmdConfig{NodeName: "gpu02", Hardware: Hardware{CPUs: 256, Boards: 1, SocketsPerBoard: 2,
			CoresPerSocket: 64, ThreadsPerCore: 2, RealMemoryMiB: 2063878}, Gres: "gpu:nvidia_a100-sxm4-80gb:8", UpTime: "41-07:00:59"}},
		{"slurmd-C-clustername.txt", SlurmdConfig{NodeName: "gpu03", Hardware: Hardware{CPUs: 64, Boards: 1, SocketsPerBoard: 2,
			CoresPerSocket: 16, ThreadsPerCore: 2, RealMemoryMiB: 257655}, UpTime: "1-00:00:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := ParseSlurmdC(transporttest.Testdata(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseSlurmdCErrors(t *testing.T) {
	tests := map[string]string{
		"":                             "no NodeName line",
		"slurmd: error: something\n":   "no NodeName line",
		"NodeName=x CPUs=2 Boards=1\n": "SocketsPerBoard missing",
		"NodeName=x CPUs=two Boards=1 SocketsPerBoard=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1": "CPUs=\"two\"",
		"NodeName=x CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=0":   "RealMemory",
	}
	for in, want := range tests {
		if _, err := ParseSlurmdC(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSlurmdC(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestParseSlurmdVersion(t *testing.T) {
	for in, want := range map[string]string{"slurm 24.11.5\n": "24.11.5", "slurm-wlm 24.11.5\n": "24.11.5", "slurm 22.05.8": "22.05.8", "slurm 25.11.0-1": "25.11.0-1"} {
		if got, err := ParseSlurmdVersion(in); err != nil || got != want {
			t.Errorf("ParseSlurmdVersion(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseSlurmdVersion("command not found"); err == nil {
		t.Error("accepted garbage")
	}
}

func TestParseLscpu(t *testing.T) {
	tests := []struct {
		fixture string
		want    CPUTopology
	}{
		{"lscpu-kvm-flat.txt", CPUTopology{CPUs: 2, SocketsPerBoard: 1, CoresPerSocket: 2, ThreadsPerCore: 1}},
		{"lscpu-epyc-2s-nested.txt", CPUTopology{CPUs: 384, SocketsPerBoard: 2, CoresPerSocket: 96, ThreadsPerCore: 2}},
		{"lscpu-arm-cluster.txt", CPUTopology{CPUs: 80, SocketsPerBoard: 1, CoresPerSocket: 80, ThreadsPerCore: 1}},
	}
	for _, tt := range tests {
		got, err := ParseLscpu(transporttest.Testdata(t, tt.fixture))
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v, want %+v", tt.fixture, got, err, tt.want)
		}
	}
	if _, err := ParseLscpu("Architecture: x86_64\nCPU(s): 4\n"); err == nil || !strings.Contains(err.Error(), "Thread(s) per core") {
		t.Errorf("incomplete lscpu: %v", err)
	}
}

func TestParseMeminfoMiB(t *testing.T) {
	got, err := ParseMeminfoMiB(transporttest.Testdata(t, "meminfo.txt"))
	if err != nil || got != 24684084/1024 {
		t.Errorf("got %d, %v, want %d", got, err, 24684084/1024)
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: lots\n"} {
		if _, err := ParseMeminfoMiB(bad); err == nil {
			t.Errorf("ParseMeminfoMiB(%q) accepted it", bad)
		}
	}
}

func TestParseNvidiaSMIList(t *testing.T) {
	tests := []struct {
		fixture string
		want    []string
	}{
		{"nvidia-smi-h100.txt", []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"}},
		{"nvidia-smi-mig.txt", []string{"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"}},
		{"nvidia-smi-lab.txt", []string{"NVIDIA Lab Stand-in", "NVIDIA Lab Stand-in"}},
		{"nvidia-smi-none.txt", nil},
	}
	for _, tt := range tests {
		if got := ParseNvidiaSMIList(transporttest.Testdata(t, tt.fixture)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.fixture, got, tt.want)
		}
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct {
		fixture             string
		id, version, pretty string
	}{
		{"os-release-trixie.txt", "debian", "13", "Debian GNU/Linux 13 (trixie)"},
		{"os-release-noble.txt", "ubuntu", "24.04", "Ubuntu 24.04.1 LTS"},
		{"os-release-rocky9.txt", "rocky", "9.4", "Rocky Linux 9.4 (Blue Onyx)"},
	}
	for _, tt := range tests {
		kv := ParseOSRelease(transporttest.Testdata(t, tt.fixture))
		if kv["ID"] != tt.id || kv["VERSION_ID"] != tt.version || kv["PRETTY_NAME"] != tt.pretty {
			t.Errorf("%s: got %q %q %q", tt.fixture, kv["ID"], kv["VERSION_ID"], kv["PRETTY_NAME"])
		}
	}
	kv := ParseOSRelease("A='single'\nB=\"with \\\"escape\\\"\"\nC=bare\n")
	if kv["A"] != "single" || kv["B"] != `with "escape"` || kv["C"] != "bare" {
		t.Errorf("quoting: %q", kv)
	}
}
