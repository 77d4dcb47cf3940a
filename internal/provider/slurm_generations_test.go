package provider

import (
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// slurmGeneration is what the Slurm acceptance tests expect of the Slurm a
// lab release ships (GPUCLUSTER_LAB_RELEASE), so that the same tests run on
// both generations and say where they differ.
type slurmGeneration struct {
	// series is the release slurmctld -V reports, without the maintenance number.
	series string
	// cgroupPlugin is the CgroupPlugin the lab's slurmd starts with. 26.05's
	// slurmd refuses to start where it sees cgroup v1 and v2 together ("Hybrid
	// mode is not supported"), which forky's hosts do on a machine with hybrid
	// cgroups; 24.11's autodetect tolerates it, so trixie's lab keeps the
	// guide's default.
	cgroupPlugin string
	// unknownKey is a slurm.conf setting the installed Slurm does not know, and
	// refusal the plan's error about it (whitespace may wrap).
	unknownKey, unknownValue, refusal string
}

var slurmGenerations = map[string]slurmGeneration{
	"trixie": {
		series: "24.11", cgroupPlugin: "autodetect",
		unknownKey: "MetricsType", unknownValue: "metrics/openmetrics",
		refusal: `MetricsType\s+was\s+added\s+in\s+Slurm\s+25\.11;\s+the\s+installed\s+Slurm\s+is\s+24\.11\.`,
	},
	"forky": {
		series: "26.05", cgroupPlugin: "disabled",
		unknownKey: "GetEnvTimeout", unknownValue: "2",
		refusal: `GetEnvTimeout\s+was\s+removed\s+in\s+Slurm\s+25\.05;\s+the\s+installed\s+Slurm\s+is\s+26\.05\.`,
	},
}

// labSlurm is the Slurm generation of the lab's release
// (TestSlurmGenerationsCoverReleases keeps the table complete).
func labSlurm(l *lab.Lab) slurmGeneration { return slurmGenerations[l.ReleaseName()] }

func TestSlurmGenerationsCoverReleases(t *testing.T) {
	for _, r := range lab.Releases {
		if g, ok := slurmGenerations[r]; !ok || g.series == "" || g.cgroupPlugin == "" || g.refusal == "" {
			t.Errorf("lab release %s has no complete Slurm generation: %+v", r, g)
		}
	}
}

// labCgroup is the controller's cgroup attribute on the lab: the lab's
// CgroupPlugin (nothing where it is the default) and inner, more attributes.
func labCgroup(l *lab.Lab, inner string) string {
	var attrs []string
	if p := labSlurm(l).cgroupPlugin; p != "autodetect" {
		attrs = append(attrs, `plugin = "`+p+`"`)
	}
	if inner != "" {
		attrs = append(attrs, inner)
	}
	if len(attrs) == 0 {
		return ""
	}
	return "  cgroup = { " + strings.Join(attrs, ", ") + " }\n"
}
