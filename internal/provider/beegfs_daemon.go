package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

// beegfsDaemon is a BeeGFS service whose data outlives the resource that runs it: destroy
// only stops it.
type beegfsDaemon struct {
	title   string // in diagnostics: "Cannot Stop " + title
	service string
	// disable stops and disables the service and removes the provider's drop-in.
	disable func(context.Context, beegfs.Executor, beegfs.ServiceState) error
}

var (
	mgmtdDaemon = beegfsDaemon{title: "BeeGFS Management", service: beegfs.ServiceMgmtd, disable: beegfs.DisableMgmtd}
	metaDaemon  = beegfsDaemon{title: "BeeGFS Metadata", service: beegfs.ServiceMeta, disable: beegfs.DisableMeta}
)

// deleteDaemon is Delete of the resource that runs d: the service stopped and disabled, the
// provider's drop-in removed, the data and drop-ins written by hand left alone.
func deleteDaemon[M onNode](ctx context.Context, c *cluster, d beegfsDaemon, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, h, ok := stateOnNode[M](ctx, c, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	node := m.nodeName()
	s, err := beegfs.ReadService(ctx, h, d.service)
	if err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Read "+d.title+" State", node, "Reading "+d.service+"'s service before stopping it failed", adviceRead, err))
		return
	}
	if err := d.disable(ctx, h, s); err != nil {
		resp.Diagnostics.Append(nodeError("Cannot Stop "+d.title, node, "Stopping and disabling "+d.service+" or removing its drop-in failed", adviceStop, err))
	}
}
