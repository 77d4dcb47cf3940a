package beegfs

import (
	"context"
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/packages"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// PinPackage brings a service's package to version (packages.Pin), with the package's own
// restarts held, and reports whether the service ran the replaced files: the caller then
// restarts it in its own start-up, which confirms that the daemon came back. A package already
// at version is only read, and a downgrade refused before anything changes.
func PinPackage(ctx context.Context, ex transport.Executor, service, pkg, version string) (restart bool, err error) {
	s, err := ReadService(ctx, ex, service)
	if err != nil {
		return false, fmt.Errorf("read %s before its upgrade: %w", service, err)
	}
	changed, err := packages.Pin(ctx, ex, version, pkg)
	if err != nil {
		return false, err
	}
	return len(changed) > 0 && s.Running(), nil
}
