package lab

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPlanHost(t *testing.T) {
	tests := []struct {
		name    string
		want    PlannedHost
		wantErr bool
	}{
		{name: "login01", want: PlannedHost{Name: "login01", Address: "10.0.0.10", Role: RoleLogin}},
		{name: "gpu01", want: PlannedHost{Name: "gpu01", Address: "10.0.0.11", Role: RoleGPU}},
		{name: "gpu02", want: PlannedHost{Name: "gpu02", Address: "10.0.0.12", Role: RoleGPU}},
		{name: "gpu32", want: PlannedHost{Name: "gpu32", Address: "10.0.0.42", Role: RoleGPU}},
		{name: "gpu00", wantErr: true},
		{name: "gpu33", wantErr: true},
		{name: "gpu1", wantErr: true},
		{name: "login02", wantErr: true},
		{name: "gpu01;rm", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlanHost(tt.name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("PlanHost(%q) error = %v, wantErr %v", tt.name, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("PlanHost(%q) = %+v, want %+v", tt.name, got, tt.want)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		gpus      int
		wantNames []string
		wantErr   bool
	}{
		{gpus: 1, wantNames: []string{"login01", "gpu01"}},
		{gpus: 3, wantNames: []string{"login01", "gpu01", "gpu02", "gpu03"}},
		{gpus: 0, wantErr: true},
		{gpus: 33, wantErr: true},
	}
	for _, tt := range tests {
		hosts, err := Plan(tt.gpus)
		if (err != nil) != tt.wantErr {
			t.Fatalf("Plan(%d) error = %v, wantErr %v", tt.gpus, err, tt.wantErr)
		}
		var names []string
		for _, h := range hosts {
			names = append(names, h.Name)
		}
		if !reflect.DeepEqual(names, tt.wantNames) {
			t.Errorf("Plan(%d) names = %v, want %v", tt.gpus, names, tt.wantNames)
		}
	}
}

func TestRenderHostsFile(t *testing.T) {
	hosts, err := Plan(2)
	if err != nil {
		t.Fatal(err)
	}
	got := RenderHostsFile(hosts)
	want := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"10.0.0.1\tlab-client\n10.0.0.10\tlogin01\n10.0.0.11\tgpu01\n10.0.0.12\tgpu02\n"
	if got != want {
		t.Errorf("RenderHostsFile =\n%s\nwant\n%s", got, want)
	}
}

func TestRenderNetworkFile(t *testing.T) {
	got := RenderNetworkFile("10.0.0.11")
	for _, line := range []string{"Name=host0", "Address=10.0.0.11/24", "DHCP=no", "LinkLocalAddressing=no", "IPv6AcceptRA=no"} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("network file lacks %q:\n%s", line, got)
		}
	}
}

func TestRenderKnownHosts(t *testing.T) {
	h := PlannedHost{Name: "gpu01", Address: "10.0.0.11"}
	tests := []struct {
		name    string
		keys    []string
		want    string
		wantErr bool
	}{
		{
			name: "drops the key comment",
			keys: []string{"ssh-ed25519 AAAAC3 root@build\n", "ecdsa-sha2-nistp256 AAAAE2 root@build\n"},
			want: "gpu01,10.0.0.11 ssh-ed25519 AAAAC3\ngpu01,10.0.0.11 ecdsa-sha2-nistp256 AAAAE2\n",
		},
		{name: "malformed key", keys: []string{"garbage"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RenderKnownHosts(h, tt.keys)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFakeGPUDevices(t *testing.T) {
	got := fakeGPUDevices()
	for i, want := range []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"} {
		if !strings.Contains(got, "c! "+want+" 0666 root root - 1:3\n") {
			t.Errorf("device %d (%s) missing from:\n%s", i, want, got)
		}
	}
}

func TestDescriptorRoundTrip(t *testing.T) {
	want := &Lab{
		AdminUser: "admin", AdminKeyPath: "/k", AdminPassword: "pw", KnownHostsPath: "/kh",
		Netns: NetnsName, Bridge: BridgeName, Subnet: Subnet, ClientAddress: ClientAddress, Image: "trixie-x",
		Command: "/bin/gpucluster-lab",
		Hosts: []Host{
			{Name: "login01", Address: "10.0.0.10", Role: RoleLogin, PID: 42, LauncherPID: 41, Dir: "/d", Cgroups: []string{"/c"}},
			{Name: "gpu01", Address: "10.0.0.11", Role: RoleGPU, PID: 52},
		},
	}
	path := filepath.Join(t.TempDir(), "lab.json")
	if err := want.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip = %+v, want %+v", got, want)
	}
	if h := got.Host("gpu01"); h.PID != 52 {
		t.Errorf("Host(gpu01).PID = %d, want 52", h.PID)
	}
	if h := got.Host("gpu09"); h.Name != "" {
		t.Errorf("Host(gpu09) = %+v, want zero Host", h)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := writeFileAtomic(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("Load of malformed JSON succeeded")
	}
}

func TestParseMountInfoLine(t *testing.T) {
	line := `36 35 98:0 /mnt1 /var/lib/gpucluster-lab/gpu01/root\040x rw,noatime master:1 - overlay overlay rw,lowerdir=/a`
	got, ok := parseMountInfoLine(line)
	if !ok {
		t.Fatal("line not parsed")
	}
	if got.MountPoint != "/var/lib/gpucluster-lab/gpu01/root x" || got.FSType != "overlay" {
		t.Errorf("got %+v", got)
	}
}

func TestCgroupMountPoint(t *testing.T) {
	mounts := []mountInfo{
		{MountPoint: "/sys/fs/cgroup/unified", FSType: "cgroup2", SuperOpts: []string{"rw"}},
		{MountPoint: "/sys/fs/cgroup/systemd", FSType: "cgroup", SuperOpts: []string{"rw", "xattr", "name=systemd"}},
		{MountPoint: "/sys/fs/cgroup/cpu,cpuacct", FSType: "cgroup", SuperOpts: []string{"rw", "cpu", "cpuacct"}},
	}
	tests := map[string]string{
		"":             "/sys/fs/cgroup/unified",
		"name=systemd": "/sys/fs/cgroup/systemd",
		"cpu,cpuacct":  "/sys/fs/cgroup/cpu,cpuacct",
	}
	for controllers, want := range tests {
		if got, ok := cgroupMountPoint(mounts, controllers); !ok || got != want {
			t.Errorf("cgroupMountPoint(%q) = %q, %v; want %q", controllers, got, ok, want)
		}
	}
	if _, ok := cgroupMountPoint(mounts, "memory"); ok {
		t.Error("found a mount for an unmounted controller")
	}
}

// The UUIDs are the ones the stand-in once worked out on the host with md5sum, so a host keeps
// its GPUs' identities.
func TestFakeGPUUUIDs(t *testing.T) {
	got := strings.Split(strings.TrimSuffix(fakeGPUUUIDs("gpu01"), "\n"), "\n")
	if len(got) != GPUsPerServer {
		t.Fatalf("%d lines, want %d:\n%s", len(got), GPUsPerServer, strings.Join(got, "\n"))
	}
	// printf gpu01-0 | md5sum
	if want := "0 GPU-cfb902ae-bda6-b179-7184-fb3c78412893"; got[0] != want {
		t.Errorf("line 0 = %q, want %q", got[0], want)
	}
	if got[0] == got[1] || fakeGPUUUIDs("gpu02") == fakeGPUUUIDs("gpu01") {
		t.Error("UUIDs repeat across GPUs or hosts")
	}
}
