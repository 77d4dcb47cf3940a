package slurm

import (
	"context"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Executor runs a script as root on a host.
type Executor = transport.Executor

// ControllerHost is what a change of the controller's files needs.
type ControllerHost interface {
	Executor
	transport.FileWriter
	Lock(ctx context.Context) (unlock func(), err error)
}
