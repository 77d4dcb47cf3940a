package main

// Messages between the stand-in's daemons and its management service, on the
// BeeMsg port (8008, connMgmtdPort), and the messages the mount sends to the
// metadata and storage services on theirs (8005, 8003). What a real
// service refuses comes back as reply.Error with the real service's text.

const (
	// msgHeartbeat registers a node (NodeID 0: a new one) and its targets, or
	// reports that a registered one is alive, as the real heartbeats do.
	msgHeartbeat = "heartbeat"
	// msgNodes lists the registered nodes, as a client needs them to mount.
	msgNodes = "nodes"
	// msgStatRoot asks a metadata node for the root directory's entry.
	msgStatRoot = "stat-root"
	// msgStatfs asks a storage node for its targets' free space.
	msgStatfs = "statfs"
)

// Node types as the real management service names them.
const (
	nodeMeta       = "meta"
	nodeStorage    = "storage"
	nodeClient     = "client"
	nodeManagement = "management"
)

// Default ports of the real services (connMgmtdPort, grpc-port, connMetaPort,
// connStoragePort, connClientPort).
const (
	portMgmtdBeeMsg = 8008
	portMgmtdGRPC   = 8010
	portMeta        = 8005
	portStorage     = 8003
	portClient      = 8004
)

// heartbeat is msgHeartbeat's body. The management service takes the
// node's address from the connection, as the real one records the NICs
// the node reports.
type heartbeat struct {
	Type   string `json:"type"`
	NodeID uint32 `json:"node_id"`
	Alias  string `json:"alias,omitempty"`
	Port   int    `json:"port"`
	// Token is a metadata node's registrationToken (8.3 and later).
	Token   string            `json:"token,omitempty"`
	Targets []heartbeatTarget `json:"targets,omitempty"`
}

// heartbeatTarget is one storage target of a heartbeat: TargetID 0 asks for
// a new numeric ID, StringID is the target's targetID file.
type heartbeatTarget struct {
	TargetID   uint32 `json:"target_id"`
	StringID   string `json:"string_id"`
	Path       string `json:"path"`
	SpaceTotal uint64 `json:"space_total"`
	SpaceFree  uint64 `json:"space_free"`
}

// heartbeatReply tells a node the IDs the management service holds for it.
type heartbeatReply struct {
	NodeID  uint32            `json:"node_id"`
	Targets []heartbeatTarget `json:"targets,omitempty"`
}

// nodesReply is msgNodes' answer.
type nodesReply struct {
	Nodes []registeredNode `json:"nodes"`
	// RootMeta is the metadata node holding the root directory, 0 for none yet.
	RootMeta uint32 `json:"root_meta"`
}

// registeredNode is a node as the management service knows it.
type registeredNode struct {
	Type  string `json:"type"`
	ID    uint32 `json:"id"`
	Alias string `json:"alias"`
	Addr  string `json:"addr"`
	Port  int    `json:"port"`
}
