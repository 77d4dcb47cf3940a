package slurm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The guide's own words, quoted by the checks so the admin reads the
// reason and the remedy where the plan fails.
const (
	guideP2 = `The guide ("Do Not Enable GPU Accounting Yet"): on Slurm 25.11 (and 24.11 and 26.05, tested) slurmctld refuses to start with ` +
		`"slurmdbd is required to run with TRES gres/gpu". GPU scheduling does not need accounting at all. ` +
		`When you do want job history, fair-share or per-user GPU hours, deploy MariaDB and slurmdbd first, ` +
		`then set AccountingStorageType=accounting_storage/slurmdbd, and only then add the TRES list.`
	guideP3 = `The guide: "NodeName values come from running sudo slurmd -C on a GPU server. ` +
		`Do not round RealMemory up: if it exceeds what the node reports, Slurm drains the node."`
	guideP4 = `The guide ("Memory: Scheduled, Not Enforced"): without a default, a job that omits --mem is allocated ` +
		`all of the node's memory. The first one-GPU job then blocks every other job on that node, and the other GPUs sit idle. ` +
		`Set DefMemPerGPU (the guide uses 120000 MB per GPU).`
	guideP14 = `Every node a partition lists needs its own gpucluster_slurm_node; slurmctld does not start with a partition ` +
		`naming an undefined node.`
)

// slurmdbdAccounting is the only storage that can hold gres and license TRES.
const slurmdbdAccounting = "accounting_storage/slurmdbd"

// lookup finds a setting in an Extra map the way Slurm does: by its name in
// any case.
func lookup(extra map[string]string, key string) (string, bool) {
	for k, v := range extra {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// CheckGPUAccounting refuses gres or license TRES in AccountingStorageTRES
// without slurmdbd accounting (pitfall P2). s is the controller's settings as
// slurm.conf gets them, the accounting fragment's lines included, so TRES is
// allowed exactly when that fragment, written once slurmdbd answered, or the
// controller's own extra configures slurmdbd. The error is an
// *AccountingRequiredError.
func CheckGPUAccounting(s ControllerSettings) error {
	tres, ok := lookup(s.Extra, "AccountingStorageTRES")
	if !ok {
		return nil
	}
	storage, _ := lookup(s.Extra, "AccountingStorageType")
	if strings.EqualFold(storage, slurmdbdAccounting) {
		return nil
	}
	for _, t := range strings.Split(tres, ",") {
		lower := strings.ToLower(strings.TrimSpace(t))
		if strings.HasPrefix(lower, "gres/") || strings.HasPrefix(lower, "license/") {
			return &AccountingRequiredError{TRES: tres}
		}
	}
	return nil
}

// CheckRealMemory refuses a RealMemory above what the node's slurmd -C
// reports (pitfall P3); rounding down is fine.
func CheckRealMemory(n NodeDef, reportedMiB int64) error {
	if n.RealMemory > reportedMiB {
		return fmt.Errorf("node %s: RealMemory=%d is above the %d MB that slurmd -C reports on the node. %s", n.Name, n.RealMemory, reportedMiB, guideP3)
	}
	return nil
}

// memorySelect matches SelectTypeParameters that make memory consumable:
// CR_Memory, CR_Core_Memory, CR_CPU_Memory, CR_Socket_Memory.
var memorySelect = regexp.MustCompile(`(?i)(^|,)CR_([A-Za-z]+_)?Memory(,|$)`)

// CheckDefMemPerGPU warns about a GPU partition that schedules memory but
// gives jobs no default (pitfall P4). It returns "" when all is well. Any
// of Slurm's memory defaults (per GPU, per CPU, per node, on the partition
// or the cluster) avoids the trap.
func CheckDefMemPerGPU(p PartitionDef, nodes []NodeDef, s ControllerSettings) string {
	if !memorySelect.MatchString(s.SelectTypeParameters) || p.DefMemPerGPU > 0 {
		return ""
	}
	for _, key := range []string{"DefMemPerGPU", "DefMemPerCPU", "DefMemPerNode"} {
		_, onPartition := lookup(p.Extra, key)
		_, onCluster := lookup(s.Extra, key)
		if onPartition || onCluster {
			return ""
		}
	}
	if !hasGPUNode(p, nodes) {
		return ""
	}
	return fmt.Sprintf("partition %s: SelectTypeParameters=%s schedules memory, but the partition sets no DefMemPerGPU. %s", p.Name, s.SelectTypeParameters, guideP4)
}

// CheckDefMemPerGPUFits refuses a DefMemPerGPU above the RealMemory of a GPU
// node in the partition: a one-GPU job without --mem could never start
// there. It warns when the default lets fewer jobs without --mem share a
// node than it has GPUs, the trap of pitfall P4 met from the other side.
func CheckDefMemPerGPUFits(p PartitionDef, nodes []NodeDef, s ControllerSettings) (warnings []string, err error) {
	if p.DefMemPerGPU <= 0 || !memorySelect.MatchString(s.SelectTypeParameters) {
		return nil, nil
	}
	byName := map[string]NodeDef{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, name := range p.Nodes {
		n := byName[name]
		gpus, ok := gpuCount(n.Gres)
		if !ok || n.RealMemory <= 0 {
			continue
		}
		if p.DefMemPerGPU > n.RealMemory {
			return nil, fmt.Errorf("partition %s: DefMemPerGPU=%d MB is above node %s's RealMemory=%d MB, so a one-GPU job without --mem can never start there: "+
				"Slurm keeps it pending, as it cannot give a job more memory than the node has. Use at most RealMemory divided by the node's GPUs (%d MB)",
				p.Name, p.DefMemPerGPU, n.Name, n.RealMemory, n.RealMemory/gpus)
		}
		if fit := n.RealMemory / p.DefMemPerGPU; fit < gpus {
			warnings = append(warnings, fmt.Sprintf("partition %s: DefMemPerGPU=%d MB lets only %d of node %s's %d GPUs run jobs without --mem at once (RealMemory=%d MB); "+
				"the other GPUs sit idle while such jobs wait. Use at most RealMemory divided by the GPUs (%d MB) to fill every GPU",
				p.Name, p.DefMemPerGPU, fit, n.Name, gpus, n.RealMemory, n.RealMemory/gpus))
		}
	}
	return warnings, nil
}

// gpuCount is the number of GPUs in a Gres value ("gpu:4", "gpu:a100:4").
func gpuCount(gres string) (int64, bool) {
	for _, entry := range strings.Split(gres, ",") {
		fields := strings.Split(entry, ":")
		if fields[0] != "gpu" {
			continue
		}
		n, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		return n, err == nil && n > 0
	}
	return 0, false
}

func hasGPUNode(p PartitionDef, nodes []NodeDef) bool {
	byName := map[string]NodeDef{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, name := range p.Nodes {
		if _, ok := gpuGres(byName[name].Gres); ok {
			return true
		}
	}
	return false
}

// CheckPartitionNodes refuses a partition that names a node no NodeDef
// defines (pitfall P14).
func CheckPartitionNodes(p PartitionDef, nodes []NodeDef) error {
	defined := map[string]bool{}
	for _, n := range nodes {
		defined[n.Name] = true
	}
	var missing []string
	for _, name := range p.Nodes {
		if !defined[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return &UndefinedNodesError{Partition: p.Name, Nodes: missing}
	}
	return nil
}
