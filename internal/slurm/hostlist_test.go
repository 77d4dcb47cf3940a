package slurm

import (
	"reflect"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"gpu01", []string{"gpu01"}},
		{"gpu[01-03,07]", []string{"gpu01", "gpu02", "gpu03", "gpu07"}},
		{"gpu[9-11]", []string{"gpu9", "gpu10", "gpu11"}},
		{"gpu[08-10],login01", []string{"gpu08", "gpu09", "gpu10", "login01"}},
		{"rack[1-2]-n[01-02]", []string{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}},
		{"a[1]", []string{"a1"}},
		{"node[1-10]", []string{"node1", "node2", "node3", "node4", "node5", "node6", "node7", "node8", "node9", "node10"}},
		{"gpu[01-02],gpu[07-08]", []string{"gpu01", "gpu02", "gpu07", "gpu08"}},
		{"10.0.0.[11-12]", []string{"10.0.0.11", "10.0.0.12"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ExpandHostlist(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	for _, in := range []string{"", "gpu[01-03", "gpu01]", "gpu[03-01]", "gpu[a-b]", "gpu[[1]]", "gpu[1-99999999]", "a,,b", "gpu[-1]"} {
		t.Run(in, func(t *testing.T) {
			if got, err := ExpandHostlist(in); err == nil {
				t.Errorf("ExpandHostlist(%q) = %v, want an error", in, got)
			}
		})
	}
}

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"gpu01", "gpu01"},
		{"gpu01 gpu02 gpu03", "gpu[01-03]"},
		{"gpu07 gpu01 gpu03 gpu02", "gpu[01-03,07]"},
		{"gpu02 gpu01 gpu01", "gpu[01-02]"},
		{"gpu9 gpu10 gpu11", "gpu[9,10-11]"},
		{"gpu1 gpu01 gpu2 gpu02", "gpu[1-2,01-02]"},
		{"login01 gpu01 gpu02", "gpu[01-02],login01"},
		{"head gpu01", "gpu01,head"},
		{"a1 b1", "a1,b1"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := CompressHostlist(strings.Fields(tt.in)); got != tt.want {
				t.Errorf("CompressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Compressing and expanding again must give back the same set.
func TestHostlistRoundTrip(t *testing.T) {
	for _, in := range []string{"gpu[01-03,07]", "gpu[9-11]", "gpu[1-2,01-02]", "gpu[01-02],login01", "n[098-101]"} {
		names, err := ExpandHostlist(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ExpandHostlist(CompressHostlist(names))
		if err != nil {
			t.Fatal(err)
		}
		if !sameSet(names, again) {
			t.Errorf("%s: %v != %v", in, names, again)
		}
	}
}

func sameSet(a, b []string) bool {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	for _, x := range b {
		if !set[x] {
			return false
		}
	}
	return len(a) == len(b)
}
