package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
)

// factsModel is shared by gpucluster_node and the gpucluster_node_facts data source so both
// report a host the same way.
type factsModel struct {
	Hostname         types.String `tfsdk:"hostname"`
	OSID             types.String `tfsdk:"os_id"`
	OSVersionID      types.String `tfsdk:"os_version_id"`
	OSPrettyName     types.String `tfsdk:"os_pretty_name"`
	Kernel           types.String `tfsdk:"kernel"`
	CPUs             types.Int64  `tfsdk:"cpus"`
	Boards           types.Int64  `tfsdk:"boards"`
	SocketsPerBoard  types.Int64  `tfsdk:"sockets_per_board"`
	CoresPerSocket   types.Int64  `tfsdk:"cores_per_socket"`
	ThreadsPerCore   types.Int64  `tfsdk:"threads_per_core"`
	RealMemory       types.Int64  `tfsdk:"real_memory"`
	FactsSource      types.String `tfsdk:"facts_source"`
	GPUCount         types.Int64  `tfsdk:"gpu_count"`
	TimeSynchronized types.Bool   `tfsdk:"time_synchronized"`
}

func factsFrom(f nodes.Facts) factsModel {
	return factsModel{
		Hostname:         types.StringValue(f.Hostname),
		OSID:             types.StringValue(f.OSID),
		OSVersionID:      types.StringValue(f.OSVersionID),
		OSPrettyName:     types.StringValue(f.OSPrettyName),
		Kernel:           types.StringValue(f.Kernel),
		CPUs:             types.Int64Value(int64(f.CPUs)),
		Boards:           types.Int64Value(int64(f.Boards)),
		SocketsPerBoard:  types.Int64Value(int64(f.SocketsPerBoard)),
		CoresPerSocket:   types.Int64Value(int64(f.CoresPerSocket)),
		ThreadsPerCore:   types.Int64Value(int64(f.ThreadsPerCore)),
		RealMemory:       types.Int64Value(int64(f.RealMemoryMiB)),
		FactsSource:      types.StringValue(f.FactsSource),
		GPUCount:         types.Int64Value(int64(f.GPUCount)),
		TimeSynchronized: types.BoolValue(f.TimeSynchronized),
	}
}

// factKind is the Terraform type of a fact, shared by the resource and data source schemas.
func factKind(name string) string {
	switch name {
	case "time_synchronized":
		return "bool"
	case "cpus", "boards", "sockets_per_board", "cores_per_socket", "threads_per_core", "real_memory", "gpu_count":
		return "int"
	default:
		return "string"
	}
}

// factDescriptions documents each fact once for the resource and the data source.
var factDescriptions = map[string]string{
	"hostname":          "Hostname the node reports (`hostname`).",
	"os_id":             "`ID` from /etc/os-release, for example `ubuntu` or `debian`.",
	"os_version_id":     "`VERSION_ID` from /etc/os-release.",
	"os_pretty_name":    "`PRETTY_NAME` from /etc/os-release.",
	"kernel":            "Running kernel release (`uname -r`).",
	"cpus":              "CPUs as Slurm counts them (`slurmd -C`), or from lscpu when slurmd is not installed.",
	"boards":            "Boards, as in a Slurm NodeName line.",
	"sockets_per_board": "Sockets per board.",
	"cores_per_socket":  "Cores per socket.",
	"threads_per_core":  "Threads per core.",
	"real_memory":       "Memory in MB as `slurmd -C` reports it for RealMemory (Slurm's megabytes, 1,048,576 bytes each), or, before slurmd is installed, MemTotal from /proc/meminfo in the same unit. Never round it up in slurm.conf.",
	"facts_source":      "Where the hardware facts came from: `slurmd -C` or `lscpu`.",
	"gpu_count":         "GPUs listed by `nvidia-smi -L`; 0 when the tool is missing or lists none.",
	"time_synchronized": "Whether the clock is synchronised (timedatectl's NTPSynchronized). MUNGE rejects credentials when clocks drift apart.",
}
