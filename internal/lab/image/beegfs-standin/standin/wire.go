package main

// The stand-in's own protocol between its daemons, clients and the `beegfs`
// command. It is NOT BeeGFS's wire format (BeeMsg, gRPC): the lab needs the
// same reachability, ports, firewall effects and authentication failures as
// the real services, not byte compatibility. One JSON object per line each
// way, over TCP, on the real services' ports.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"time"
)

// request is one message to a stand-in service. Auth is authSecret of the
// sender's connAuthFile, empty when the sender has authentication disabled.
type request struct {
	Msg  string `json:"msg"`
	Auth string `json:"auth,omitempty"`
	// Body holds the message's own fields.
	Body json.RawMessage `json:"body,omitempty"`
	// Addr is the sender's IP address as the receiver saw it (never sent).
	Addr string `json:"-"`
}

// reply answers a request: OK, or the refusal the real service would log.
type reply struct {
	OK    bool            `json:"ok"`
	Error string          `json:"error,omitempty"`
	Body  json.RawMessage `json:"body,omitempty"`
}

// authSecret derives what a peer proves it holds the shared secret with,
// so that the secret itself never crosses the lab's network.
func authSecret(connAuthFile string) (string, error) {
	secret, err := os.ReadFile(connAuthFile) //nolint:gosec // G304: the sender's configured shared-secret file
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:]), nil
}

// call sends one request to addr and decodes the reply's body into out
// (when non-nil). A refusal comes back as an error carrying its text.
func call(addr string, timeout time.Duration, msg, auth string, body, out any) error {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // a finished exchange: nothing left to flush
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	req := request{Msg: msg, Auth: auth}
	if body != nil {
		if req.Body, err = json.Marshal(body); err != nil {
			return err
		}
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("no reply from %s: %w", addr, err)
	}
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return fmt.Errorf("bad reply from %s: %w", addr, err)
	}
	if !rep.OK {
		return fmt.Errorf("%s", rep.Error)
	}
	if out != nil && rep.Body != nil {
		return json.Unmarshal(rep.Body, out)
	}
	return nil
}

// serve answers requests on ln with handle until ln is closed; handle
// returns the reply's body or the refusal's text.
func serve(ln net.Listener, handle func(req request) (any, error)) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go answer(conn, handle)
	}
}

func answer(conn net.Conn, handle func(req request) (any, error)) {
	defer func() { _ = conn.Close() }() // the peer reads until the newline
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return
	}
	req := request{Addr: peerIP(conn)}
	rep := reply{}
	if err := json.Unmarshal(line, &req); err != nil {
		rep.Error = "malformed message"
	} else if body, err := handle(req); err != nil {
		rep.Error = err.Error()
	} else {
		rep.OK = true
		if body != nil {
			if rep.Body, err = json.Marshal(body); err != nil {
				rep = reply{Error: "cannot encode reply: " + err.Error()}
			}
		}
	}
	_ = json.NewEncoder(conn).Encode(rep)
}

// peerIP is the IP address at the other end of conn.
func peerIP(conn net.Conn) string {
	host, _, err := net.SplitHostPort(conn.RemoteAddr().String())
	if err != nil {
		return conn.RemoteAddr().String()
	}
	return host
}
