package fakehost

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// TB is what the server needs of a test: somewhere to fail and to clean up.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Client is an SSH identity, for the provider to log in with.
type Client struct {
	// KeyPEM is the private key in OpenSSH's PEM form, as a key file holds it.
	KeyPEM []byte
	signer ssh.Signer
}

// NewClient makes a fresh ed25519 identity.
func NewClient(t TB) Client {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	return Client{KeyPEM: pem.EncodeToMemory(block), signer: signer}
}

// Server serves one Host over SSH on 127.0.0.1, as sshd and sudo would: the client's key logs
// in as the admin account, sudo asks for SudoPassword (none when empty) and starts the
// provider's root shell, whose framed requests the server answers by running each script on
// the host. It forwards direct-tcpip channels to other loopback ports, so it can be a jump
// host for the others.
type Server struct {
	Host *Host
	// SudoPassword is the admin's password; when empty, sudo needs none (NOPASSWD).
	SudoPassword string

	listener net.Listener
	hostKey  ssh.Signer
	config   *ssh.ServerConfig

	// Logins counts SSH connections that authenticated; RootShells sudo starts that succeeded;
	// SudoFailures passwords sudo refused.
	Logins, RootShells, SudoFailures atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
}

// Serve starts a server for h that accepts client's key; it stops when the test ends.
func Serve(t TB, h *Host, client Client) *Server {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	s := &Server{Host: h, hostKey: hostKey}
	want := client.signer.PublicKey().Marshal()
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if meta.User() == AdminUser && string(key.Marshal()) == string(want) {
				return nil, nil
			}
			return nil, errors.New("fakehost: unknown user or key")
		},
	}
	s.config.AddHostKey(hostKey)
	s.listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// Address is the address the server listens on.
func (s *Server) Address() string { return "127.0.0.1" }

// Port is the port the server listens on.
func (s *Server) Port() int {
	addr, _ := s.listener.Addr().(*net.TCPAddr)
	return addr.Port
}

// KnownHostsLine is the known_hosts line for the server's host key at its address and port.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{net.JoinHostPort(s.Address(), strconv.Itoa(s.Port()))}, s.hostKey.PublicKey())
}

// Close stops listening and cuts every connection.
func (s *Server) Close() {
	_ = s.listener.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

func (s *Server) serve() {
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

func (s *Server) handleConn(nc net.Conn) {
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.config)
	if err != nil {
		return
	}
	s.Logins.Add(1)
	go func() {
		for req := range reqs {
			if req.WantReply {
				_ = req.Reply(false, nil) // as OpenSSH answers keepalive@openssh.com
			}
		}
	}()
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			go s.handleSession(nch, sshConnection(conn))
		case "direct-tcpip":
			go forward(nch)
		default:
			_ = nch.Reject(ssh.UnknownChannelType, "unsupported")
		}
	}
}

// sshConnection is the SSH_CONNECTION sshd sets: client address and port, server address and
// port.
func sshConnection(conn *ssh.ServerConn) string {
	split := func(a net.Addr) string {
		host, port, _ := net.SplitHostPort(a.String())
		return host + " " + port
	}
	return split(conn.RemoteAddr()) + " " + split(conn.LocalAddr())
}

func (s *Server) handleSession(nch ssh.NewChannel, sshConn string) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	defer func() { _ = ch.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	started := false
	for {
		select {
		case req, ok := <-reqs:
			if !ok {
				return
			}
			switch {
			case req.Type == "exec" && !started && len(req.Payload) >= 4:
				started = true
				_ = req.Reply(true, nil)
				command := string(req.Payload[4:])
				go func() { done <- s.execute(ctx, command, sshConn, ch) }()
			case req.Type == "signal":
				// The client gave up on the command (a sudo prompt asking again): the
				// session ends at once, as the killed process would end it.
				cancel()
				return
			case req.WantReply:
				_ = req.Reply(false, nil)
			}
		case status := <-done:
			_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(exitByte(status))))
			return
		}
	}
}

// execute runs one session's command. The transport starts each as "cd / && exec COMMAND":
// COMMAND is either sudo starting the root shell or /bin/sh -c running a script as the admin.
func (s *Server) execute(ctx context.Context, command, sshConn string, ch ssh.Channel) int {
	argv, err := words(strings.TrimPrefix(command, "cd / && exec "))
	if err != nil || len(argv) == 0 {
		_, _ = fmt.Fprintf(ch.Stderr(), "fakehost: cannot parse the command %q: %v\n", command, err)
		return 2
	}
	if argv[0] == "sudo" {
		return s.sudo(ctx, argv, ch)
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/" + AdminUser, "USER=" + AdminUser, "LOGNAME=" + AdminUser,
		"SHELL=/bin/bash", "SSH_CONNECTION=" + sshConn}
	return s.Host.runCommand(ctx, command, env, ch, ch, ch.Stderr())
}

// exitByte is a status as the kernel passes it on: one byte.
func exitByte(status int) uint8 {
	if status < 0 || status > 255 {
		return 255
	}
	return uint8(status)
}

// words splits a command line into its words as the shell would, for literal words only.
func words(line string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) != 1 {
		return nil, errors.New("not one command")
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, errors.New("not a simple command")
	}
	return expand.Fields(&expand.Config{}, call.Args...)
}

// rootShellSignature is a line of the provider's root shell program, which the fake recognises
// it by (and then speaks its protocol in Go).
const rootShellSignature = "gpucluster root shell: bad request"

// sudo models `sudo -k (-n | -S -p PROMPT) -- /usr/bin/perl -e ROOTSHELL MARKER`.
func (s *Server) sudo(ctx context.Context, argv []string, ch ssh.Channel) int {
	stderr := ch.Stderr()
	var prompt string
	var stdinPassword, nonInteractive bool
	i := 1
	for ; i < len(argv) && argv[i] != "--"; i++ {
		switch argv[i] {
		case "-k":
		case "-n":
			nonInteractive = true
		case "-S":
			stdinPassword = true
		case "-p":
			i++
			if i < len(argv) {
				prompt = argv[i]
			}
		default:
			return s.refuse(stderr, "sudo option "+argv[i])
		}
	}
	cmd := argv[min(i+1, len(argv)):]
	if len(cmd) != 4 || cmd[0] != "/usr/bin/perl" || cmd[1] != "-e" || !strings.Contains(cmd[2], rootShellSignature) {
		return s.refuse(stderr, "sudo of anything but the root shell")
	}
	in := bufio.NewReader(ch)
	if s.SudoPassword != "" {
		if nonInteractive || !stdinPassword {
			_, _ = fmt.Fprintln(stderr, "sudo: a password is required")
			return 1
		}
		if !s.authenticate(in, stderr, prompt) {
			return 1
		}
	}
	s.RootShells.Add(1)
	_, _ = io.WriteString(stderr, cmd[3])
	return s.rootShell(ctx, in, ch)
}

// authenticate asks for the password as sudo does, three times at most; the provider cuts the
// session at the second prompt.
func (s *Server) authenticate(in *bufio.Reader, stderr io.Writer, prompt string) bool {
	for try := 0; try < 3; try++ {
		_, _ = io.WriteString(stderr, prompt)
		line, err := in.ReadString('\n')
		if err != nil {
			return false
		}
		if strings.TrimSuffix(line, "\n") == s.SudoPassword {
			return true
		}
		s.SudoFailures.Add(1)
		_, _ = fmt.Fprintln(stderr, "Sorry, try again.")
	}
	_, _ = fmt.Fprintln(stderr, "sudo: 3 incorrect password attempts")
	return false
}

func (s *Server) refuse(stderr io.Writer, what string) int {
	msg := "fakehost: " + what + " not modelled"
	s.Host.noteUnmodelled(msg)
	_, _ = fmt.Fprintln(stderr, msg)
	return 1
}

// rootShell speaks the root shell's protocol: requests "run ID SCRIPTLEN STDINLEN" with script
// and stdin, or "kill ID 0 0"; replies "@@done ID STATUS STDOUTLEN STDERRLEN" with the outputs.
// Scripts run one after the other, each to its end, so a kill finds nothing left to kill.
func (s *Server) rootShell(ctx context.Context, in *bufio.Reader, out io.Writer) int {
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return 0
		}
		f := strings.Fields(line)
		if len(f) != 4 || (f[0] != "run" && f[0] != "kill") {
			s.refuse(io.Discard, fmt.Sprintf("root shell request %q", line))
			return 255
		}
		scriptLen, err1 := strconv.Atoi(f[2])
		stdinLen, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return 255
		}
		body := make([]byte, scriptLen+stdinLen)
		if _, err := io.ReadFull(in, body); err != nil {
			return 0
		}
		if f[0] == "kill" {
			continue
		}
		status, stdout, stderr := s.Host.rootShellScript(ctx, string(body[:scriptLen]), body[scriptLen:])
		reply := fmt.Sprintf("@@done %s %d %d %d\n", f[1], status, len(stdout), len(stderr))
		if _, err := io.WriteString(out, reply+string(stdout)+string(stderr)); err != nil {
			return 0
		}
	}
}

// forward connects a direct-tcpip channel to a port on the loopback address: the fake hosts
// all listen there, and nothing else is ever reached.
func forward(nch ssh.NewChannel) {
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
	if ip := net.ParseIP(target.Host); ip == nil || !ip.IsLoopback() {
		_ = nch.Reject(ssh.Prohibited, "fakehost forwards to loopback addresses only")
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
	go ssh.DiscardRequests(reqs)
	go func() {
		_, _ = io.Copy(conn, ch)
		_ = conn.Close()
	}()
	_, _ = io.Copy(ch, conn)
	_ = ch.Close()
}
