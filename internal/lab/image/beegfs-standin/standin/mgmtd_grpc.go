package main

// STAND-IN: the management API the `beegfs` command uses (gRPC on
// grpc-port, 8010, in the real service), here as the stand-in's JSON lines
// over TCP, with TLS from tls-cert-file/tls-key-file unless tls-disable and
// the auth secret checked on every request, with the real error texts.

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Messages of the management API (the real rpc names, kebab-cased).
const (
	grpcGetFsUUID    = "get-fs-uuid"
	grpcGetNodes     = "get-nodes"
	grpcGetTargets   = "get-targets"
	grpcDeleteTarget = "delete-target"
	grpcDeleteNode   = "delete-node"
	grpcGetLicense   = "get-license"
)

// entityID names a node or target the way the real API's EntityIdSet does:
// by uid, alias or legacy (type, numeric) ID, the first that is set.
type entityID struct {
	UID   uint64 `json:"uid,omitempty"`
	Alias string `json:"alias,omitempty"`
	Type  string `json:"type,omitempty"`
	ID    uint32 `json:"id,omitempty"`
}

func (e entityID) String() string {
	switch {
	case e.UID != 0:
		return "uid:" + strconv.FormatUint(e.UID, 10)
	case e.Alias != "":
		return e.Alias
	}
	return fmt.Sprintf("%s:%d", e.Type, e.ID)
}

// entity is an entity as the API returns it (alias, legacy ID and uid).
type entity struct {
	UID   uint64 `json:"uid"`
	Alias string `json:"alias"`
	Type  string `json:"type"`
	ID    uint32 `json:"id"`
}

type deleteRequest struct {
	Entity  entityID `json:"entity"`
	Execute bool     `json:"execute"`
}

type fsUUIDReply struct {
	FsUUID string `json:"fs_uuid"`
}

type apiNode struct {
	entity
	Addr string `json:"addr"`
	Port int    `json:"port"`
}

// apiTarget is a row of GetTargets. Pointers are the real optional fields.
type apiTarget struct {
	entity
	Node         *entity `json:"node,omitempty"`
	Pool         *entity `json:"pool,omitempty"`
	Reachability string  `json:"reachability"`
	LastContactS *int64  `json:"last_contact_s,omitempty"`
	Consistency  string  `json:"consistency"`
	CapPool      string  `json:"cap_pool"`
	SpaceTotal   *uint64 `json:"space_total,omitempty"`
	SpaceFree    *uint64 `json:"space_free,omitempty"`
	InodesTotal  *uint64 `json:"inodes_total,omitempty"`
	InodesFree   *uint64 `json:"inodes_free,omitempty"`
}

// listenGRPC binds the management API port; with TLS it reads the
// certificate and key first, with the real messages.
func (m *mgmtd) listenGRPC() error {
	var tlsConfig *tls.Config
	if m.cfg.TLSDisable {
		m.log.Warnf("gRPC server running with TLS disabled")
	} else {
		cert, err := os.ReadFile(m.cfg.TLSCertFile)
		if err != nil {
			return fmt.Errorf("Could not read TLS certificate file %q: %s", m.cfg.TLSCertFile, osErrorText(err))
		}
		key, err := os.ReadFile(m.cfg.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("Could not read TLS key file %q: %s", m.cfg.TLSKeyFile, osErrorText(err))
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("Creating TLS identity failed: %v", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", ":"+strconv.FormatUint(m.cfg.GRPCPort, 10))
	if err != nil {
		return fmt.Errorf("Binding gRPC port %d failed: %s", m.cfg.GRPCPort, osErrorText(err))
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	m.grpc = ln
	return nil
}

func (m *mgmtd) serveGRPC() {
	for {
		conn, err := m.grpc.Accept()
		if err != nil {
			return
		}
		go m.answerGRPC(conn)
	}
}

// answerGRPC answers one request. A plain-text server that is sent a TLS
// handshake answers in plain text at once, so the client's TLS fails the
// way grpc-go's does against a server without TLS.
func (m *mgmtd) answerGRPC(conn net.Conn) {
	defer func() { _ = conn.Close() }() // the peer reads until the newline
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	if m.cfg.TLSDisable {
		if first, err := r.Peek(1); err == nil && first[0] == 0x16 {
			_ = json.NewEncoder(conn).Encode(reply{Error: "malformed message"})
			return
		}
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	var req request
	rep := reply{}
	if err := json.Unmarshal(line, &req); err != nil {
		rep.Error = "code = Internal desc = malformed message"
	} else if body, err := m.handleGRPC(req); err != nil {
		rep.Error = err.Error()
	} else if rep.Body, err = json.Marshal(body); err == nil {
		rep.OK = true
	}
	_ = json.NewEncoder(conn).Encode(rep)
}

// grpcStatus is a gRPC status as the CLI prints it after "rpc error: ".
func grpcStatus(code, context string, err error) error {
	if context != "" {
		return fmt.Errorf("code = %s desc = %s: %v", code, context, err)
	}
	return fmt.Errorf("code = %s desc = %v", code, err)
}

func (m *mgmtd) handleGRPC(req request) (any, error) {
	if m.secret != "" {
		switch req.Auth {
		case "":
			return nil, grpcStatus("Unauthenticated", "", errors.New("Request requires authentication but no secret was provided"))
		case m.secret:
		default:
			return nil, grpcStatus("Unauthenticated", "", errors.New("Request requires authentication but provided secret doesn't match"))
		}
	}
	switch req.Msg {
	case grpcGetFsUUID:
		return fsUUIDReply{FsUUID: m.db.fsUUID()}, nil
	case grpcGetNodes:
		return m.db.apiNodes(), nil
	case grpcGetTargets:
		return m.db.apiTargets(m.db.now(), m.cfg.NodeOfflineTimeout, m.cfg.CapPoolMeta, m.cfg.CapPoolStorage), nil
	case grpcGetLicense:
		if m.license == nil {
			return nil, grpcStatus("Unknown", "Get license", errors.New("License verification library not loaded."))
		}
		return m.license, nil
	case grpcDeleteTarget, grpcDeleteNode:
		var d deleteRequest
		if err := decodeBody(req, &d); err != nil {
			return nil, grpcStatus("InvalidArgument", "", err)
		}
		if req.Msg == grpcDeleteTarget {
			e, err := m.db.deleteTarget(d.Entity, d.Execute)
			if err != nil {
				return nil, grpcStatus("Unknown", "Delete target", err)
			}
			if d.Execute {
				m.log.Infof("Target deleted: %s", entityString(e.Alias, e.Type, e.ID, e.UID))
			}
			return e, nil
		}
		e, err := m.db.deleteNode(d.Entity, d.Execute)
		if err != nil {
			return nil, grpcStatus("Unknown", "Delete node", err)
		}
		if d.Execute {
			m.log.Infof("Node deleted: %s", entityString(e.Alias, e.Type, e.ID, e.UID))
		}
		return e, nil
	}
	return nil, grpcStatus("Unimplemented", "", fmt.Errorf("unknown method %s", req.Msg))
}

func decodeBody(req request, out any) error {
	if len(req.Body) == 0 {
		return fmt.Errorf("message %s has no body", req.Msg)
	}
	if err := json.Unmarshal(req.Body, out); err != nil {
		return fmt.Errorf("message %s: %w", req.Msg, err)
	}
	return nil
}
