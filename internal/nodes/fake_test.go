package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// fakeHost answers Sudo like transporttest.Fake and records written files.
type fakeHost struct {
	transporttest.Fake
	writes   []transport.File
	changed  bool
	writeErr error
}

func (f *fakeHost) WriteFile(_ context.Context, file transport.File) (bool, error) {
	f.writes = append(f.writes, file)
	return f.changed, f.writeErr
}

// out is one section of the facts script's output.
type out struct {
	text   string
	status int
}

// scriptOutput renders sections the way the facts script prints them.
func scriptOutput(secs map[string]out) []byte {
	var b strings.Builder
	for key, s := range secs {
		fmt.Fprintf(&b, "@@gpucluster %s\n%s\n@@rc %d\n", key, s.text, s.status)
	}
	return []byte(transporttest.Sections(b.String()))
}
