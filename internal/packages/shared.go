package packages

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// sharedSection is where the host's shared read (units.ShareCommand) reports the shared
// packages' status.
const sharedSection = "packages"

// shared are the packages whose status the host's shared read reports, so that every
// resource reading a version on a host costs it no round trip of its own: a no-op plan reads
// a node's daemons, key files and packages in one command.
var shared struct {
	mu    sync.RWMutex
	names []string
}

// Share adds packages to the host's shared read. It is for the owning package's init, as
// units.Share is; a name that is not a Debian package name is a mistake in the program, and
// panics.
func Share(names ...string) {
	if err := validateNames(names); err != nil {
		panic(fmt.Sprintf("packages.Share: %v", err))
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, n := range names {
		if !slices.Contains(shared.names, n) {
			shared.names = append(slices.Clone(shared.names), n)
		}
	}
	units.ShareCommand(sharedSection, queryArgv(shared.names)...)
}

func sharedAll(names []string) bool {
	shared.mu.RLock()
	defer shared.mu.RUnlock()
	for _, n := range names {
		if !slices.Contains(shared.names, n) {
			return false
		}
	}
	return true
}
