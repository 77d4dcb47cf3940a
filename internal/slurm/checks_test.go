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

func TestCheckDefMemPerGPUFits(t *testing.T) {
	c, nodes, parts := guideExample()
	tests := []struct {
		name          string
		defMemPerGPU  int64
		selectParams  string
		wantErr, warn string
	}{
		{"guide: 4 x 120000 MB in 500000 MB", 120000, "", "", ""},
		{"above the node's memory", 500001, "", "is above node gpu01's RealMemory=500000 MB", ""},
		{"only 3 of 4 GPUs fit", 150000, "", "", "lets only 3 of node gpu01's 4 GPUs"},
		{"memory not scheduled", 500001, "CR_Core", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := c, parts[0]
			p.DefMemPerGPU = tt.defMemPerGPU
			if tt.selectParams != "" {
				c.SelectTypeParameters = tt.selectParams
			}
			warnings, err := CheckDefMemPerGPUFits(p, nodes, c)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			got := strings.Join(warnings, "\n")
			if (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
				t.Errorf("warnings %q, want %q", got, tt.warn)
			}
		})
	}
}

func TestGPUCount(t *testing.T) {
	for gres, want := range map[string]int64{"gpu:4": 4, "gpu:a100:8": 8, "shard:2,gpu:2": 2, "gpu": 0, "shard:4": 0} {
		got, ok := gpuCount(gres)
		if got != want || ok != (want > 0) {
			t.Errorf("%s: %d, %v; want %d", gres, got, ok, want)
		}
	}
}
