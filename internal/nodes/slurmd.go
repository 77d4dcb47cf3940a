package nodes

import (
	"fmt"
	"strconv"
	"strings"
)

// SlurmdConfig is what `slurmd -C` reports about the hardware.
//
// Output by version (one NodeName line, optional lines, then UpTime):
//   - 22.05: NodeName CPUs Boards SocketsPerBoard CoresPerSocket ThreadsPerCore RealMemory.
//   - 23.x-25.x: the same keys, plus " Gres=gpu:<type>:<n>" when gres.conf AutoDetect
//     finds GPUs, followed by a "Found gpu:... with Autodetect=nvml|nvidia ..." line.
//   - Releases before 20.02 printed "ClusterName=<name> " before NodeName when set.
type SlurmdConfig struct {
	NodeName string
	Hardware
	Gres   string
	UpTime string
}

// Hardware is what a Slurm node declaration says about the machine, in
// slurm.conf's terms.
type Hardware struct {
	CPUs            int
	Boards          int
	SocketsPerBoard int
	CoresPerSocket  int
	ThreadsPerCore  int
	RealMemoryMiB   int64
}

// ParseSlurmdC parses `slurmd -C` output. Unknown keys and lines are
// ignored so newer releases keep parsing.
func ParseSlurmdC(out string) (SlurmdConfig, error) {
	var cfg SlurmdConfig
	var kv map[string]string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "UpTime=") {
			cfg.UpTime = strings.TrimPrefix(line, "UpTime=")
		} else if kv == nil && strings.Contains(line, "NodeName=") {
			kv = keyValues(line)
		}
	}
	if kv == nil {
		return SlurmdConfig{}, fmt.Errorf("slurmd -C: no NodeName line in %q", out)
	}
	cfg.NodeName, cfg.Gres = kv["NodeName"], kv["Gres"]
	ints := []struct {
		key string
		dst *int
	}{
		{"CPUs", &cfg.CPUs}, {"Boards", &cfg.Boards}, {"SocketsPerBoard", &cfg.SocketsPerBoard},
		{"CoresPerSocket", &cfg.CoresPerSocket}, {"ThreadsPerCore", &cfg.ThreadsPerCore},
	}
	for _, f := range ints {
		n, err := positive(kv, f.key)
		if err != nil {
			return SlurmdConfig{}, fmt.Errorf("slurmd -C: %w", err)
		}
		*f.dst = int(n)
	}
	mem, err := positive(kv, "RealMemory")
	if err != nil {
		return SlurmdConfig{}, fmt.Errorf("slurmd -C: %w", err)
	}
	cfg.RealMemoryMiB = mem
	return cfg, nil
}

// ParseSlurmdVersion reads `slurmd -V`: "slurm 24.11.5" upstream,
// "slurm-wlm 24.11.5" in Debian's packages.
func ParseSlurmdVersion(out string) (string, error) {
	f := strings.Fields(out)
	if len(f) < 2 || (f[0] != "slurm" && !strings.HasPrefix(f[0], "slurm-")) {
		return "", fmt.Errorf("slurmd -V: unexpected output %q", out)
	}
	return f[1], nil
}

func keyValues(line string) map[string]string {
	kv := map[string]string{}
	for _, field := range strings.Fields(line) {
		if k, v, ok := strings.Cut(field, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

func positive(kv map[string]string, key string) (int64, error) {
	v, ok := kv[key]
	if !ok {
		return 0, fmt.Errorf("%s missing", key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive number", key, v)
	}
	return n, nil
}
