package provider

import (
	"sort"
	"sync"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
)

// slurmPlans collects, per controller, the fragment changes the Slurm resources plan in this
// run. Terraform plans every resource once per run in one provider process, and plans
// gpucluster_slurm_activation after the resources it depends on, so its plan can tell
// whether this apply changes the Slurm configuration and what activating it will do,
// before any fragment is written.
type slurmPlans struct {
	mu           sync.Mutex
	byController map[string]*plannedFragments
}

type plannedFragments struct {
	changes map[string]slurm.Fragment
	// unknown counts the changes whose content is known only at apply.
	unknown int
}

func (p *slurmPlans) get(controller string) *plannedFragments {
	if p.byController == nil {
		p.byController = map[string]*plannedFragments{}
	}
	pf := p.byController[controller]
	if pf == nil {
		pf = &plannedFragments{changes: map[string]slurm.Fragment{}}
		p.byController[controller] = pf
	}
	return pf
}

// change records a planned fragment change on controller.
func (p *slurmPlans) change(controller string, f slurm.Fragment) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.get(controller).changes[f.File] = f
}

// unknownChange records a planned change on controller whose content is known only at apply.
func (p *slurmPlans) unknownChange(controller string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.get(controller).unknown++
}

// planned is what was recorded for controller: the known changes, in a stable order, and
// how many more are known only at apply.
func (p *slurmPlans) planned(controller string) (changes []slurm.Fragment, unknown int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pf := p.byController[controller]
	if pf == nil {
		return nil, 0
	}
	for _, f := range pf.changes {
		changes = append(changes, f)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].File < changes[j].File })
	return changes, pf.unknown
}
