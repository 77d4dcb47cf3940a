package slurm

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// The packages of a configless compute node. The NVML plugin belongs only on nodes with
// real NVIDIA GPUs (pitfall P11): without it slurmd fails there with "cannot create gpu
// context for gpu/nvml", and where no NVIDIA driver runs it has nothing to load.
const (
	SlurmdPackage     = "slurmd"
	NVMLPluginPackage = "slurm-wlm-nvml-plugin"
	// ClientPackage holds srun, which a batch job runs on its first node to start its steps
	// (`srun hostname` inside sbatch); without it the job step fails with exit 127.
	ClientPackage = "slurm-client"
)

// NVIDIADriverMarker exists where the NVIDIA kernel driver is loaded: the sign of real GPUs,
// which device files alone (the lab's stand-ins) are not.
const NVIDIADriverMarker = "/proc/driver/nvidia/version"

// ComputeState is a compute node as one round trip and the host's shared read of unit states
// find it.
type ComputeState struct {
	// Defaults is SlurmdDefaultsPath's content, nil when it does not exist.
	Defaults []byte
	Active   bool
	Enabled  bool
	// LocalSlurmConf: the node has its own ConfDir/slurm.conf, which a configless node
	// must not keep.
	LocalSlurmConf bool
	RealGPUs       bool
	// Client: srun is installed.
	Client bool
	// Controller: the node holds the controller fragment, so its ConfDir/slurm.conf is the
	// cluster's, not a stale local copy. Decided on the host, not by comparing names: a
	// node block "login01" and slurmctld_host "login01.example.org" are the same machine.
	Controller bool
	// Version is nil when slurmd is not installed.
	Version *version.Version
}

var computeStateScript = transport.NewScript().Text(transport.SectionFuncs).
	Set("defaults", SlurmdDefaultsPath).Set("missing", strconv.Itoa(missingFile)).Set("localconf", ConfDir+"/slurm.conf").
	Set("driver", NVIDIADriverMarker).Set("controller", FragmentDir+"/"+ControllerFile).
	Text(computeState).Text(versionSection("version", "slurmd")).String()

//go:embed compute_state.sh
var computeState string

// The host's shared read reports slurmd's unit, which every compute node's plan reads, and the
// Slurm packages' versions, which the pinned versions' plans read.
func init() {
	units.Share([]string{slurmdService}, nil)
	packages.Share(PackageFamily...)
}

const slurmdService = "slurmd.service"

// ReadCompute reads a compute node's ComputeState.
func ReadCompute(ctx context.Context, ex transport.Executor) (ComputeState, error) {
	sections, err := transport.ReadSections(ctx, ex, computeStateScript, "read the compute node's state")
	if err != nil {
		return ComputeState{}, err
	}
	st := ComputeState{
		LocalSlurmConf: sections["localconf"].Status == 0,
		RealGPUs:       sections["gpus"].Status == 0,
		Client:         sections["client"].Status == 0,
		Controller:     sections["controller"].Status == 0,
	}
	if d, ok := sections["defaults"]; !ok {
		return ComputeState{}, fmt.Errorf("read the compute node's state: no answer for %s", SlurmdDefaultsPath)
	} else if d.Status != missingFile {
		if st.Defaults, err = decodeSection(SlurmdDefaultsPath, d); err != nil {
			return ComputeState{}, err
		}
	}
	if st.Version, err = parseVersionSection("slurmd", sections["version"]); err != nil {
		return ComputeState{}, err
	}
	u, err := units.Read(ctx, ex, slurmdService)
	if err != nil {
		return ComputeState{}, fmt.Errorf("read the compute node's state: %w", err)
	}
	st.Active, st.Enabled = u.IsActive(), u.IsEnabled()
	return st, nil
}

// Packages are what the node needs: slurmd, srun for the steps of batch jobs, and the NVML
// plugin where real GPUs are.
func (s ComputeState) Packages() []string {
	if s.RealGPUs {
		return []string{SlurmdPackage, ClientPackage, NVMLPluginPackage}
	}
	return []string{SlurmdPackage, ClientPackage}
}

// Problems says in words what differs from a configless node running slurmd with the
// defaults file want.
func (s ComputeState) Problems(want []byte) []string {
	var problems []string
	switch {
	case s.Version == nil:
		problems = append(problems, "slurmd is not installed")
	case s.Defaults == nil:
		problems = append(problems, SlurmdDefaultsPath+" is missing")
	case !bytes.Equal(s.Defaults, want):
		problems = append(problems, SlurmdDefaultsPath+" differs")
	}
	if s.Version != nil && !s.Client {
		problems = append(problems, ClientPackage+" is not installed (srun inside a batch job fails)")
	}
	if s.LocalSlurmConf && !s.Controller {
		problems = append(problems, "a local "+ConfDir+"/slurm.conf exists")
	}
	if s.Version != nil && !s.Active {
		problems = append(problems, "slurmd is not running")
	}
	if s.Version != nil && !s.Enabled {
		problems = append(problems, "slurmd is not enabled")
	}
	return problems
}

var slurmdOptionsLine = regexp.MustCompile(`^SLURMD_OPTIONS="--conf-server ([^":\s]+):([0-9]+)"$`)

// ParseSlurmdDefaults reads back what SlurmdDefaults wrote: the controller and its port.
func ParseSlurmdDefaults(content []byte) (controller string, port int, err error) {
	for _, line := range strings.Split(string(content), "\n") {
		if m := slurmdOptionsLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			port, err := strconv.Atoi(m[2])
			if err != nil {
				return "", 0, fmt.Errorf("%s: port %q: %w", SlurmdDefaultsPath, m[2], err)
			}
			return m[1], port, nil
		}
	}
	return "", 0, fmt.Errorf("%s has no SLURMD_OPTIONS=\"--conf-server HOST:PORT\" line", SlurmdDefaultsPath)
}

// WriteSlurmdDefaults writes content (SlurmdDefaults') to SlurmdDefaultsPath, only when it differs.
func WriteSlurmdDefaults(ctx context.Context, w transport.FileWriter, content []byte) (changed bool, err error) {
	return w.WriteFile(ctx, transport.File{Path: SlurmdDefaultsPath, Content: content, Owner: "root", Group: "root", Mode: 0o644})
}

// ReadConfServer names the controller a configless slurmd takes its configuration from
// (--conf-server in SlurmdDefaultsPath); found is false when the file is missing or names
// none, as for a slurmd that finds its controller by DNS SRV or a local slurm.conf.
func ReadConfServer(ctx context.Context, r transport.FileReader) (controller string, found bool, err error) {
	content, exists, err := r.ReadFile(ctx, SlurmdDefaultsPath)
	if err != nil || !exists {
		return "", false, err
	}
	controller, _, err = ParseSlurmdDefaults(content)
	return controller, err == nil, nil
}

//go:embed start_slurmd.sh
var startSlurmd string

// StartSlurmd enables slurmd and (re)starts it when restart is set or it does not run;
// on failure the error carries slurmd's last log lines.
func StartSlurmd(ctx context.Context, ex transport.Executor, restart bool) error {
	r := "0"
	if restart {
		r = "1"
	}
	script := transport.NewScript().Text(units.EnableText("slurmd")+" || exit").Set("restart", r).Text(startSlurmd).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("start slurmd: %w", err)
	}
	if strings.TrimSpace(string(res.Stdout)) == "started" {
		transport.Changed(ctx, ex, "started slurmd")
	}
	return nil
}

//go:embed stop_slurmd.sh
var stopSlurmd string

// StopSlurmd stops and disables slurmd and removes the health check program, which only
// slurmd runs; a node without slurmd is fine.
func StopSlurmd(ctx context.Context, ex transport.Executor) error {
	script := transport.NewScript().Set("p", HealthCheckPath).Text(stopSlurmd).String()
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("stop slurmd: %w", err)
	}
	return nil
}

// RemoveLocalSlurmConf removes a node's own slurm.conf: a configless node fetches it from
// the controller, and a stale local copy only misleads whoever reads it. The check for the
// controller fragment runs in the same script, so the cluster's slurm.conf on the
// controller is never removed, whatever name the node was reached by.
func RemoveLocalSlurmConf(ctx context.Context, ex transport.Executor) error {
	script := transport.ScriptEnv + "[ -e " + transport.Quote(FragmentDir+"/"+ControllerFile) + " ] || rm -f -- " + transport.Quote(ConfDir+"/slurm.conf")
	if _, err := ex.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("remove the local slurm.conf: %w", err)
	}
	return nil
}
