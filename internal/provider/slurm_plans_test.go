package provider

import (
	"strings"
	"sync"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// The activation's plan sees every change the Slurm resources planned on its controller,
// also when they plan at once, and no other controller's.
func TestSlurmPlansPerController(t *testing.T) {
	c := testCluster("login01")
	var wg sync.WaitGroup
	for _, name := range []string{"gpu03", "gpu01", "gpu02"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := slurm.RemoveFragment(slurm.NodeFile(name))
			c.planSlurmChange("login01", &f)
		}()
	}
	wg.Wait()
	c.planSlurmChange("login01", nil)
	p := slurm.RemoveFragment(slurm.PartitionFile("gpu"))
	c.planSlurmChange("login02", &p)

	changes, unknown := c.slurmPlans.planned("login01")
	var files []string
	for _, f := range changes {
		files = append(files, f.File)
	}
	if strings.Join(files, ",") != "node-gpu01.conf,node-gpu02.conf,node-gpu03.conf" || unknown != 1 {
		t.Errorf("login01: %v and %d unknown, want the three nodes in order and one unknown", files, unknown)
	}
	if changes, unknown := c.slurmPlans.planned("login03"); len(changes) != 0 || unknown != 0 {
		t.Errorf("a controller nothing was planned on: %v %d", changes, unknown)
	}
	var unconfigured *cluster
	unconfigured.planSlurmChange("login01", &p)
}
