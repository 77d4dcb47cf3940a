package slurm

import (
	"context"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// ControllerHost is what a change of the controller's files needs.
type ControllerHost interface {
	transport.Executor
	transport.FileWriter
	Lock(ctx context.Context) (unlock func(), err error)
}
