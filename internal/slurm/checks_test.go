package slurm

import (
	"strings"
	"testing"
)

func TestCheckGPUAccounting(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		fails bool
	}{
		{"none", nil, false},
		{"gres without slurmdbd", map[string]string{"AccountingStorageTRES": "gres/gpu"}, true},
		{"license, other case", map[string]string{"accountingstoragetres": "cpu,License/matlab"}, true},
		{"gres with filetxt", map[string]string{"AccountingStorageTRES": "gres/gpu", "AccountingStorageType": "accounting_storage/none"}, true},
		{"gres with slurmdbd", map[string]string{"AccountingStorageTRES": "gres/gpu", "AccountingStorageType": "accounting_storage/slurmdbd"}, false},
		{"plain TRES", map[string]string{"AccountingStorageTRES": "cpu,mem"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultControllerSettings("login01")
			c.Extra = tt.extra
			err := CheckGPUAccounting(c)
			if (err != nil) != tt.fails {
				t.Fatalf("err = %v, want failure %v", err, tt.fails)
			}
			if err != nil && !strings.Contains(err.Error(), `"slurmdbd is required to run with TRES gres/gpu"`) {
				t.Errorf("the error does not quote the guide: %v", err)
			}
		})
	}
}

func TestCheckRealMemory(t *testing.T) {
	n := NodeDef{Name: "gpu01", RealMemory: 500000}
	for _, tt := range []struct {
		reported int64
		fails    bool
	}{{500000, false}, {515000, false}, {499999, true}} {
		err := CheckRealMemory(n, tt.reported)
		if (err != nil) != tt.fails {
			t.Errorf("reported %d: err = %v", tt.reported, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Do not round RealMemory up") {
			t.Errorf("the error does not quote the guide: %v", err)
		}
	}
}

func TestCheckDefMemPerGPU(t *testing.T) {
	c, nodes, parts := guideExample()
	cpu := NodeDef{Name: "cpu01"}
	tests := []struct {
		name   string
		change func(c *ControllerSettings, p *PartitionDef)
		warns  bool
	}{
		{"guide", func(*ControllerSettings, *PartitionDef) {}, false},
		{"no default", func(_ *ControllerSettings, p *PartitionDef) { p.DefMemPerGPU = 0 }, true},
		{"cpu memory", func(c *ControllerSettings, p *PartitionDef) {
			p.DefMemPerGPU = 0
			c.SelectTypeParameters = "CR_CPU_Memory"
		}, true},
		{"memory not scheduled", func(c *ControllerSettings, p *PartitionDef) { p.DefMemPerGPU = 0; c.SelectTypeParameters = "CR_Core" }, false},
		{"DefMemPerCPU on the cluster", func(c *ControllerSettings, p *PartitionDef) {
			p.DefMemPerGPU = 0
			c.Extra = map[string]string{"defmempercpu": "4000"}
		}, false},
		{"no GPU nodes", func(_ *ControllerSettings, p *PartitionDef) { p.DefMemPerGPU = 0; p.Nodes = []string{"cpu01"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := c, parts[0]
			tt.change(&c, &p)
			w := CheckDefMemPerGPU(p, append(nodes, cpu), c)
			if (w != "") != tt.warns {
				t.Fatalf("warning %q, want one: %v", w, tt.warns)
			}
			if w != "" && !strings.Contains(w, "all of the node's memory") {
				t.Errorf("the warning does not explain: %s", w)
			}
		})
	}
}
