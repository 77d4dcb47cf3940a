package transport

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// testServer is an SSH server on 127.0.0.1 that runs exec requests with the
// local /bin/sh and forwards direct-tcpip channels, enough to act as a
// node or a jump host.
type testServer struct {
	t        *testing.T
	listener net.Listener
	hostKey  ssh.Signer
	config   *ssh.ServerConfig

	handshakes      atomic.Int32
	tunnels         atomic.Int32
	sessions        atomic.Int32 // open as sshd counts them, freed sessionLag late
	active          atomic.Int32 // running commands, for maxSessions
	maxSessions     atomic.Int32
	ignoreKeepalive atomic.Bool
	// sessionLimit, when set, refuses a session beyond it as sshd's MaxSessions does, and
	// sshd's slot stays taken for sessionLag after the session closed.
	sessionLimit atomic.Int32
	sessionLag   time.Duration
	refused      atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
}

// testClient is the client identity every test server accepts.
type testClient struct {
	keyPEM []byte
	signer ssh.Signer
}

func newTestClient(t *testing.T) testClient {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return testClient{keyPEM: pemEncode(block), signer: signer}
}

func newTestServer(t *testing.T, client testClient) *testServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, hostKey: hostKey}
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if sameKey(key, client.signer.PublicKey()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	s.config.AddHostKey(hostKey)
	s.listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.serve()
	t.Cleanup(func() {
		_ = s.listener.Close()
		s.dropConnections()
	})
	return s
}

func (s *testServer) port() int {
	addr, _ := s.listener.Addr().(*net.TCPAddr)
	return addr.Port
}

func (s *testServer) knownHostsLine() string {
	return knownhosts.Line([]string{net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port()))}, s.hostKey.PublicKey())
}

// dropConnections cuts every connection, as a crashed sshd or network would.
func (s *testServer) dropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

func (s *testServer) serve() {
	for {
		nc, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, nc)
		s.mu.Unlock()
		go s.handleConn(nc)
	}
}

func (s *testServer) handleConn(nc net.Conn) {
	_, chans, reqs, err := ssh.NewServerConn(nc, s.config)
	if err != nil {
		return
	}
	s.handshakes.Add(1)
	go s.handleGlobalRequests(reqs)
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			if limit := s.sessionLimit.Load(); s.sessions.Add(1) > limit && limit > 0 {
				s.sessions.Add(-1)
				s.refused.Add(1)
				_ = nch.Reject(ssh.ConnectionFailed, "open failed")
				continue
			}
			go s.handleSession(nch)
		case "direct-tcpip":
			go s.handleTunnel(nch)
		default:
			_ = nch.Reject(ssh.UnknownChannelType, "unsupported")
		}
	}
}

func (s *testServer) handleGlobalRequests(reqs <-chan *ssh.Request) {
	for req := range reqs {
		if s.ignoreKeepalive.Load() {
			continue // never answered: the client must time out
		}
		if req.WantReply {
			_ = req.Reply(false, nil) // what OpenSSH answers to keepalive@openssh.com
		}
	}
}

// handleSession serves one open session; its slot is freed sessionLag after it ends.
func (s *testServer) handleSession(nch ssh.NewChannel) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		s.sessions.Add(-1)
		return
	}
	n := s.active.Add(1)
	defer func() {
		s.active.Add(-1)
		_ = ch.Close()
		if s.sessionLag == 0 {
			s.sessions.Add(-1)
			return
		}
		time.AfterFunc(s.sessionLag, func() { s.sessions.Add(-1) })
	}()
	for {
		m := s.maxSessions.Load()
		if n <= m || s.maxSessions.CompareAndSwap(m, n) {
			break
		}
	}
	for req := range reqs {
		if req.Type != "exec" {
			_ = req.Reply(false, nil)
			continue
		}
		command := string(req.Payload[4:])
		_ = req.Reply(true, nil)
		status := runLocally(command, ch)
		_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(status)))
		return
	}
}

func runLocally(command string, ch ssh.Channel) int {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout = ch
	cmd.Stderr = ch.Stderr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 255
	}
	if err := cmd.Start(); err != nil {
		return 127
	}
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	}
	if err != nil {
		return 255
	}
	return 0
}

func (s *testServer) handleTunnel(nch ssh.NewChannel) {
	var target struct {
		Host       string
		Port       uint32
		OriginHost string
		OriginPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &target); err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, "bad request")
		return
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(target.Host, strconv.Itoa(int(target.Port))), 5*time.Second)
	if err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		_ = conn.Close()
		return
	}
	s.tunnels.Add(1)
	go ssh.DiscardRequests(reqs)
	go func() {
		_, _ = io.Copy(conn, ch)
		_ = conn.Close()
	}()
	_, _ = io.Copy(ch, conn)
	_ = ch.Close()
}

// clientConfig returns a Config that reaches s with the client's key and
// a known_hosts listing the given servers.
func clientConfig(t *testing.T, client testClient, s *testServer, known ...*testServer) Config {
	t.Helper()
	var lines []byte
	for _, k := range known {
		lines = append(lines, k.knownHostsLine()+"\n"...)
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	return Config{
		Name:           "node-" + strconv.Itoa(s.port()),
		Address:        "127.0.0.1",
		Port:           s.port(),
		User:           "admin",
		PrivateKey:     client.keyPEM,
		KnownHostsFile: path,
		ConnectTimeout: 5 * time.Second,
	}
}

func pemEncode(block *pem.Block) []byte { return pem.EncodeToMemory(block) }
