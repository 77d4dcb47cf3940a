package main

// STAND-IN: the management service's database. The real one is SQLite
// (schema in beegfs-rust mgmtd/src/db/schema); the stand-in keeps the same
// entities (nodes, targets, the default pool, the metadata root) as JSON in
// the db-file, written whole and renamed into place on every change.

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// mgmtdDBVersion is what --init reports: the number of schema migrations of
// beegfs-rust v8.3.1.
const mgmtdDBVersion = 5

// mgmtdDBMagic opens every stand-in database, so that a stray file is not
// taken for one.
const mgmtdDBMagic = "beegfs-mgmtd STAND-IN database (gpucluster lab)"

type dbNode struct {
	UID   uint64 `json:"uid"`
	Type  string `json:"type"`
	ID    uint32 `json:"id"`
	Alias string `json:"alias"`
	Addr  string `json:"addr,omitempty"`
	Port  int    `json:"port"`
	// LastContact is Unix seconds; 0 for never.
	LastContact int64 `json:"last_contact"`
}

type dbTarget struct {
	UID   uint64 `json:"uid"`
	Type  string `json:"type"` // meta or storage
	ID    uint32 `json:"id"`
	Alias string `json:"alias"`
	// NodeID is the owning node, 0 while unmapped.
	NodeID      uint32 `json:"node_id"`
	Pool        uint32 `json:"pool,omitempty"`
	Token       string `json:"reg_token,omitempty"`
	LastUpdate  int64  `json:"last_update"`
	Consistency string `json:"consistency"`
	SpaceTotal  uint64 `json:"space_total,omitempty"`
	SpaceFree   uint64 `json:"space_free,omitempty"`
	InodesTotal uint64 `json:"inodes_total,omitempty"`
	InodesFree  uint64 `json:"inodes_free,omitempty"`
}

type dbPool struct {
	UID   uint64 `json:"uid"`
	ID    uint32 `json:"id"`
	Alias string `json:"alias"`
}

type mgmtdState struct {
	Magic        string     `json:"magic"`
	Version      int        `json:"version"`
	FsUUID       string     `json:"fs_uuid"`
	InitDate     int64      `json:"fs_init_date_secs"`
	NextUID      uint64     `json:"next_uid"`
	LastClientID uint32     `json:"last_client_id"`
	RootMeta     uint32     `json:"root_meta"`
	Nodes        []dbNode   `json:"nodes"`
	Targets      []dbTarget `json:"targets"`
	Pools        []dbPool   `json:"pools"`
}

// mgmtdDB is the open database: the state and where it is saved.
type mgmtdDB struct {
	mu    sync.Mutex
	path  string
	state mgmtdState
	// now is the clock, replaceable in tests.
	now func() time.Time
}

const managementUID = 1

func newMgmtdState(fsUUID string, now time.Time) mgmtdState {
	return mgmtdState{
		Magic: mgmtdDBMagic, Version: mgmtdDBVersion, FsUUID: fsUUID, InitDate: now.Unix(), NextUID: 3,
		Nodes: []dbNode{{UID: managementUID, Type: nodeManagement, ID: 1, Alias: "management", Port: portMgmtdBeeMsg}},
		Pools: []dbPool{{UID: 2, ID: 1, Alias: "storage_pool_default"}},
	}
}

func newUUIDv4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// initMgmtdDB creates a new database at path: the real --init.
func initMgmtdDB(path, fsUUID string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("Database file %q already exists", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("Creating database file %q failed: %s", path, osErrorText(err))
	}
	if fsUUID == "" {
		fsUUID = newUUIDv4()
	}
	db := &mgmtdDB{path: path, state: newMgmtdState(fsUUID, time.Now()), now: time.Now}
	if err := db.save(); err != nil {
		return fmt.Errorf("Creating database file %q failed: %s", path, osErrorText(err))
	}
	return nil
}

// openMgmtdDB opens an existing database.
func openMgmtdDB(path string) (*mgmtdDB, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	db := &mgmtdDB{path: path, now: time.Now}
	if err := json.Unmarshal(raw, &db.state); err != nil || db.state.Magic != mgmtdDBMagic {
		return nil, errors.New("file is not a database")
	}
	return db, nil
}

func (db *mgmtdDB) save() error {
	raw, err := json.MarshalIndent(&db.state, "", "  ")
	if err != nil {
		return err
	}
	tmp := db.path + ".tmp"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, db.path)
}

func (db *mgmtdDB) newUID() uint64 {
	uid := db.state.NextUID
	db.state.NextUID++
	return uid
}

func (db *mgmtdDB) node(typ string, id uint32) *dbNode {
	for i := range db.state.Nodes {
		if n := &db.state.Nodes[i]; n.Type == typ && n.ID == id {
			return n
		}
	}
	return nil
}

func (db *mgmtdDB) target(typ string, id uint32) *dbTarget {
	for i := range db.state.Targets {
		if t := &db.state.Targets[i]; t.Type == typ && t.ID == id {
			return t
		}
	}
	return nil
}

// lowestFreeID is the real find_new_id over 1..=65535.
func lowestFreeID(taken func(uint32) bool) (uint32, error) {
	for id := uint32(1); id <= 0xFFFF; id++ {
		if !taken(id) {
			return id, nil
		}
	}
	return 0, errors.New("No free ID found")
}

// entityString is how the real service shows a node or target in messages:
// alias[type:id, uid:N].
func entityString(alias, typ string, id uint32, uid uint64) string {
	return fmt.Sprintf("%s[%s:%d, uid:%d]", alias, typ, id, uid)
}

func (n *dbNode) String() string { return entityString(n.Alias, n.Type, n.ID, n.UID) }

func (t *dbTarget) String() string { return entityString(t.Alias, t.Type, t.ID, t.UID) }

// registration is what the database decides about a heartbeat.
type registration struct {
	reply heartbeatReply
	// logs are the info lines the real service would log.
	logs []string
}

// register handles a heartbeat from addr: the real update_node plus, for
// storage targets, RegisterTarget and MapTargets.
func (db *mgmtdDB) register(hb heartbeat, addr string, registrationDisable bool) (registration, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	now := db.now().Unix()
	var reg registration
	var node *dbNode
	switch hb.Type {
	case nodeMeta, nodeStorage, nodeClient:
	default:
		return reg, fmt.Errorf("Invalid node type %q", hb.Type)
	}
	if hb.NodeID != 0 {
		node = db.node(hb.Type, hb.NodeID)
	}
	if node != nil && hb.Type == nodeMeta {
		if t := db.target(nodeMeta, node.ID); t != nil {
			if t.Token != "" && t.Token != hb.Token {
				return reg, fmt.Errorf("Meta node %s has already been registered and its registration token (%s) does not match the stored token (%s)", node, hb.Token, t.Token)
			}
			if t.Token == "" && hb.Token != "" {
				t.Token = hb.Token
			}
		}
	}
	if node == nil {
		n, err := db.insertNode(hb, registrationDisable)
		if err != nil {
			return reg, err
		}
		node = n
		reg.logs = append(reg.logs, fmt.Sprintf("Registered new node %s (Requested Numeric Id: %d)", node, hb.NodeID))
	}
	node.Addr, node.Port, node.LastContact = addr, hb.Port, now
	if hb.Type == nodeMeta {
		if t := db.target(nodeMeta, node.ID); t != nil {
			t.LastUpdate = now
		}
	}
	reg.reply.NodeID = node.ID
	if hb.Type == nodeStorage {
		targets, logs, err := db.registerTargets(node.ID, hb.Targets, registrationDisable, now)
		if err != nil {
			return reg, err
		}
		reg.reply.Targets = targets
		reg.logs = append(reg.logs, logs...)
	}
	return reg, db.save()
}

func (db *mgmtdDB) insertNode(hb heartbeat, registrationDisable bool) (*dbNode, error) {
	if hb.Type != nodeClient && registrationDisable {
		return nil, errors.New("Registration of new nodes is not allowed")
	}
	id := hb.NodeID
	alias := ""
	if hb.Type == nodeClient {
		db.state.LastClientID++
		id = db.state.LastClientID
		alias = hb.Alias
	}
	if id == 0 {
		var err error
		id, err = lowestFreeID(func(id uint32) bool { return db.node(hb.Type, id) != nil })
		if err != nil {
			return nil, err
		}
	}
	if alias == "" || !validAlias(alias) || db.aliasTaken(alias) {
		alias = fmt.Sprintf("node_%s_%d", hb.Type, id)
	}
	db.state.Nodes = append(db.state.Nodes, dbNode{UID: db.newUID(), Type: hb.Type, ID: id, Alias: alias})
	if hb.Type == nodeMeta {
		db.state.Targets = append(db.state.Targets, dbTarget{
			UID: db.newUID(), Type: nodeMeta, ID: id, Alias: fmt.Sprintf("target_meta_%d", id),
			NodeID: id, Token: hb.Token, Consistency: "good",
		})
		if db.state.RootMeta == 0 {
			db.state.RootMeta = id
		}
	}
	return &db.state.Nodes[len(db.state.Nodes)-1], nil
}

// validAlias is the real Alias rule: a letter first, then letters, digits,
// '-', '_' and '.'.
func validAlias(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(r >= '0' && r <= '9') && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

func (db *mgmtdDB) aliasTaken(alias string) bool {
	for _, n := range db.state.Nodes {
		if n.Alias == alias {
			return true
		}
	}
	for _, t := range db.state.Targets {
		if t.Alias == alias {
			return true
		}
	}
	return false
}

// registerTargets registers and maps a storage node's targets.
func (db *mgmtdDB) registerTargets(nodeID uint32, targets []heartbeatTarget, registrationDisable bool, now int64) ([]heartbeatTarget, []string, error) {
	var out []heartbeatTarget
	var logs []string
	for _, ht := range targets {
		t := db.target(nodeStorage, ht.TargetID)
		if ht.TargetID == 0 || t == nil {
			if registrationDisable {
				return nil, nil, errors.New("Registration of new targets is not allowed")
			}
			id := ht.TargetID
			if id == 0 {
				var err error
				id, err = lowestFreeID(func(id uint32) bool { return db.target(nodeStorage, id) != nil })
				if err != nil {
					return nil, nil, err
				}
			}
			db.state.Targets = append(db.state.Targets, dbTarget{
				UID: db.newUID(), Type: nodeStorage, ID: id, Alias: fmt.Sprintf("target_storage_%d", id),
				Pool: 1, Token: ht.StringID, Consistency: "good",
			})
			t = &db.state.Targets[len(db.state.Targets)-1]
			logs = append(logs, fmt.Sprintf("Registered new storage target with Id %d", id))
		} else if t.Token != "" && t.Token != ht.StringID {
			return nil, nil, fmt.Errorf("Storage target %s has already been registered and its registration token (%s) does not match the stored token (%s)", t, ht.StringID, t.Token)
		} else if t.Token == "" {
			t.Token = ht.StringID
		}
		t.NodeID, t.LastUpdate = nodeID, now
		t.SpaceTotal, t.SpaceFree = ht.SpaceTotal, ht.SpaceFree
		ht.TargetID = t.ID
		out = append(out, ht)
	}
	return out, logs, nil
}

// nodes answers msgNodes: every node, sorted as the real lists are.
func (db *mgmtdDB) nodes() nodesReply {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := nodesReply{RootMeta: db.state.RootMeta, Nodes: []registeredNode{}}
	for _, n := range db.state.Nodes {
		out.Nodes = append(out.Nodes, registeredNode{Type: n.Type, ID: n.ID, Alias: n.Alias, Addr: n.Addr, Port: n.Port})
	}
	sort.SliceStable(out.Nodes, func(i, j int) bool {
		a, b := out.Nodes[i], out.Nodes[j]
		if typeOrder(a.Type) != typeOrder(b.Type) {
			return typeOrder(a.Type) < typeOrder(b.Type)
		}
		return a.ID < b.ID
	})
	return out
}

// typeOrder is the CLI's sort order of node types.
func typeOrder(t string) int {
	switch t {
	case nodeClient:
		return 0
	case nodeMeta:
		return 1
	case nodeStorage:
		return 2
	}
	return 3
}

// touchManagement records the BeeMsg port on the management node at every
// start, as the real service does.
func (db *mgmtdDB) touchManagement(port int) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if n := db.node(nodeManagement, 1); n != nil {
		n.Port = port
	}
	return db.save()
}

func (db *mgmtdDB) fsUUID() string {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.state.FsUUID
}

func (n *dbNode) entity() entity { return entity{UID: n.UID, Alias: n.Alias, Type: n.Type, ID: n.ID} }

func (t *dbTarget) entity() entity { return entity{UID: t.UID, Alias: t.Alias, Type: t.Type, ID: t.ID} }

func (db *mgmtdDB) apiNodes() []apiNode {
	sorted := db.nodes()
	db.mu.Lock()
	defer db.mu.Unlock()
	out := []apiNode{}
	for _, rn := range sorted.Nodes {
		n := db.node(rn.Type, rn.ID)
		out = append(out, apiNode{entity: n.entity(), Addr: n.Addr, Port: n.Port})
	}
	return out
}

// reachability is the real rule: Online up to half the node offline
// timeout since the target's last report, then Probably-offline, and
// Offline past the whole timeout.
func reachability(age, timeout time.Duration) string {
	switch {
	case age > timeout:
		return "offline"
	case age > timeout/2:
		return "poffline"
	}
	return "online"
}

// capPool is the real static capacity pool of a target's free space and
// inodes.
func capPool(l capLimits, freeSpace, freeInodes uint64) string {
	switch {
	case freeSpace >= l.SpaceLow && freeInodes >= l.InodesLow:
		return "normal"
	case freeSpace >= l.SpaceEmergency && freeInodes >= l.InodesEmergency:
		return "low"
	}
	return "emergency"
}

// apiTargets answers GetTargets in database order, as the real one does.
func (db *mgmtdDB) apiTargets(now time.Time, offlineTimeout time.Duration, metaLimits, storageLimits capLimits) []apiTarget {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := []apiTarget{}
	for i := range db.state.Targets {
		t := &db.state.Targets[i]
		age := max(now.Unix()-t.LastUpdate, 0)
		at := apiTarget{entity: t.entity(), Reachability: reachability(time.Duration(age)*time.Second, offlineTimeout),
			LastContactS: &age, Consistency: t.Consistency, CapPool: "unspecified"}
		if n := db.node(t.Type, t.NodeID); t.NodeID != 0 && n != nil {
			e := n.entity()
			at.Node = &e
		}
		if t.Type == nodeStorage {
			for _, p := range db.state.Pools {
				if p.ID == t.Pool {
					at.Pool = &entity{UID: p.UID, Alias: p.Alias, Type: nodeStorage, ID: p.ID}
				}
			}
		}
		if t.SpaceTotal > 0 {
			total, free := t.SpaceTotal, t.SpaceFree
			at.SpaceTotal, at.SpaceFree = &total, &free
		}
		if t.InodesTotal > 0 {
			total, free := t.InodesTotal, t.InodesFree
			at.InodesTotal, at.InodesFree = &total, &free
		}
		// Like the real service, a target without both free values has no pool.
		if at.SpaceFree != nil && at.InodesFree != nil {
			limits := storageLimits
			if t.Type == nodeMeta {
				limits = metaLimits
			}
			at.CapPool = capPool(limits, *at.SpaceFree, *at.InodesFree)
		}
		out = append(out, at)
	}
	return out
}

// resolve finds a node or target ("node"/"target") by uid, alias or
// legacy ID, or the real "does not exist" error.
func (db *mgmtdDB) resolve(kind string, id entityID) (node *dbNode, target *dbTarget, err error) {
	match := func(e entity) bool {
		switch {
		case id.UID != 0:
			return e.UID == id.UID
		case id.Alias != "":
			return e.Alias == id.Alias
		}
		return e.Type == id.Type && e.ID == id.ID
	}
	if kind == "node" {
		for i := range db.state.Nodes {
			if match(db.state.Nodes[i].entity()) {
				return &db.state.Nodes[i], nil, nil
			}
		}
	} else {
		for i := range db.state.Targets {
			if match(db.state.Targets[i].entity()) {
				return nil, &db.state.Targets[i], nil
			}
		}
	}
	return nil, nil, fmt.Errorf("%s %s does not exist", kind, id)
}

// deleteTarget is the real DeleteTarget: storage targets only (the stand-in
// has no buddy groups); execute false checks without deleting.
func (db *mgmtdDB) deleteTarget(id entityID, execute bool) (entity, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	_, t, err := db.resolve("target", id)
	if err != nil {
		return entity{}, err
	}
	if t.Type != nodeStorage {
		return entity{}, errors.New("Only storage targets can be deleted directly")
	}
	e := t.entity()
	if !execute {
		return e, nil
	}
	db.removeTargets(func(x *dbTarget) bool { return x.UID == e.UID })
	return e, db.save()
}

// deleteNode is the real DeleteNode: not the management node; a meta node
// goes with its target unless that holds the root inode; a storage or
// client node only once no target is mapped to it.
func (db *mgmtdDB) deleteNode(id entityID, execute bool) (entity, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	n, _, err := db.resolve("node", id)
	if err != nil {
		return entity{}, err
	}
	if n.UID == managementUID {
		return entity{}, errors.New("Management node can not be deleted")
	}
	e := n.entity()
	if n.Type == nodeMeta {
		if db.state.RootMeta == n.ID {
			return entity{}, fmt.Errorf("The target belonging to meta node %s has the root inode", n)
		}
	} else {
		for _, t := range db.state.Targets {
			if t.Type == nodeStorage && t.NodeID == n.ID && n.Type == nodeStorage {
				return entity{}, fmt.Errorf("Node %s still has targets assigned", n)
			}
		}
	}
	if !execute {
		return e, nil
	}
	if n.Type == nodeMeta {
		db.removeTargets(func(x *dbTarget) bool { return x.Type == nodeMeta && x.NodeID == e.ID })
	}
	nodes := db.state.Nodes[:0]
	for _, x := range db.state.Nodes {
		if x.UID != e.UID {
			nodes = append(nodes, x)
		}
	}
	db.state.Nodes = nodes
	return e, db.save()
}

func (db *mgmtdDB) removeTargets(drop func(*dbTarget) bool) {
	kept := db.state.Targets[:0]
	for i := range db.state.Targets {
		if !drop(&db.state.Targets[i]) {
			kept = append(kept, db.state.Targets[i])
		}
	}
	db.state.Targets = kept
}
