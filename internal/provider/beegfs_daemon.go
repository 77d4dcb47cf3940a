package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// beegfsDaemon is a BeeGFS service whose data outlives the resource that runs it: destroy
// only stops it.
type beegfsDaemon struct {
	title   string // in diagnostics: "Cannot Stop " + title
	service string
	holds   string // what its data is, as in "Reading beegfs-meta's package, config, service and directory"
	// disable stops and disables the service and removes the provider's drop-in.
	disable func(context.Context, transport.Executor, beegfs.ServiceState) error
}

var (
	mgmtdDaemon = beegfsDaemon{title: "BeeGFS Management", service: beegfs.ServiceMgmtd, holds: "files", disable: beegfs.DisableMgmtd}
	metaDaemon  = beegfsDaemon{title: "BeeGFS Metadata", service: beegfs.ServiceMeta, holds: "directory", disable: beegfs.DisableMeta}
)

// daemonNode is the node of a BeeGFS daemon as read: the connection, its state (H is
// beegfs.MgmtdHost or beegfs.MetaHost) and the installed release.
type daemonNode[H any] struct {
	h   *transport.Host
	mh  H
	rel beegfs.Release
}

// daemonState is a daemon's state as read from its node, which names the installed release.
type daemonState interface {
	Release() (beegfs.Release, error)
}

// readDaemonNode connects to node and reads it for where (the database or the directory);
// diagnostics explain a failed read and a missing package.
func readDaemonNode[H daemonState](ctx context.Context, c *cluster, d beegfsDaemon, node, where string,
	read func(context.Context, transport.Executor, string) (H, error),
) (daemonNode[H], diag.Diagnostics) {
	var diags diag.Diagnostics
	var n daemonNode[H]
	h, ok := c.connect(ctx, node, &diags)
	if !ok {
		return n, diags
	}
	n.h = h
	var err error
	if n.mh, err = read(ctx, h, where); err != nil {
		diags.Append(nodeAttributeError(path.Root("node"), "Cannot Read "+d.title+" State", node,
			"Reading "+d.service+"'s package, config, service and "+d.holds+" failed", adviceRead, err))
		return n, diags
	}
	if n.rel, err = n.mh.Release(); err != nil {
		diags.Append(notInstalledError(path.Root("node"), node, err))
	}
	return n, diags
}

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

// startServer enables and starts, or restarts, beegfs-meta or beegfs-storage and confirms that
// the daemon stayed up and registered: their units are Type=simple, so systemctl's success only
// says the process was forked. A service already running and not restarted is left alone.
func startServer(ctx context.Context, h transport.Executor, node, service, title string, restart, running bool, advice string) diag.Diagnostics {
	var diags diag.Diagnostics
	if err := beegfs.StartServer(ctx, h, service, restart && running); err != nil {
		diags.Append(nodeError("Cannot Start "+title, node, "Starting "+service+" failed", advice, err))
		return diags
	}
	if running && !restart {
		return diags
	}
	return confirmServer(ctx, h, node, service, title, advice)
}

// confirmServer reports a daemon that ended after its start, or did not register in time,
// with the daemon's own line.
func confirmServer(ctx context.Context, h transport.Executor, node, service, title, advice string) diag.Diagnostics {
	var diags diag.Diagnostics
	err := beegfs.ConfirmServerStarted(ctx, h, service)
	var started *beegfs.ServerStartError
	switch {
	case err == nil:
	case errors.As(err, &started) && started.Exited:
		diags.Append(nodeError("Cannot Start "+title, node, service+" started and then exited; its own words are below", advice, err))
	case errors.As(err, &started):
		diags.Append(nodeError(title+" Not Registered", node,
			fmt.Sprintf("%s is running but did not register with the management service within %s", service, started.Deadline),
			"Check that beegfs-mgmtd runs on the management host and that the firewall lets this node reach its port 8008 (TCP and UDP), then apply again.", err))
	default:
		diags.Append(nodeError("Cannot Read "+title+" State", node, "Confirming that "+service+" started failed", adviceRead, err))
	}
	return diags
}
