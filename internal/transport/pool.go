package transport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// maxSessionsPerConn stays well below OpenSSH's default MaxSessions (10): sshd frees a slot
// only some time after the client closed the session, so running near the limit gets opens
// refused. Privileged commands share one session (the root shell), so few are ever needed.
const maxSessionsPerConn = 4

// Opens that sshd refuses ("no more sessions") ran nothing, so they are retried, waiting a
// little longer each time, for about five seconds in all.
const (
	openAttempts     = 9
	openFirstBackoff = 20 * time.Millisecond
)

// Logger receives the pool's events with the context of the request that caused them, so
// every line carries that request's tags. Scripts are logged; secrets travel on stdin, which
// never is.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
	Info(ctx context.Context, msg string, fields map[string]any)
}

// Pool shares one SSH connection per user, address and jump chain among
// every caller in a run.
type Pool struct {
	// Logger, when set, receives connection events, every command and every change.
	Logger Logger

	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	conns  map[string]*conn
	shells map[string]*shellSlot
	locks  map[string]chan struct{}
	reads  map[string]*readCache

	tallies map[string]*tally
	reports reports
}

// NewPool returns an empty pool. Connections are dialed on first use.
func NewPool() *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{
		ctx:    ctx,
		cancel: cancel,
		conns:  map[string]*conn{},
		shells: map[string]*shellSlot{},
		locks:  map[string]chan struct{}{},
		reads:  map[string]*readCache{},

		tallies: map[string]*tally{},
	}
}

// Host returns the node described by cfg, connected. Callers asking for the
// same connection at the same time wait for one dial.
func (p *Pool) Host(ctx context.Context, cfg Config) (*Host, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, err := p.get(ctx, cfg); err != nil {
		return nil, p.cutShort(ctx, cfg.Name, err)
	}
	return &Host{pool: p, cfg: cfg}, nil
}

// Close ends every root shell and connection and stops dials in progress, and logs what the run
// asked of each connection (see tally).
func (p *Pool) Close() {
	defer p.logSummaries()
	p.cancel()
	p.mu.Lock()
	conns, shells := p.conns, p.shells
	p.conns, p.shells = map[string]*conn{}, map[string]*shellSlot{}
	p.mu.Unlock()
	for _, s := range shells {
		<-s.ready
		if s.shell != nil {
			s.shell.close(errors.New("pool closed"))
		}
	}
	for _, c := range conns {
		<-c.ready
		c.markBroken(errors.New("pool closed"))
	}
}

// Forget closes the connection to the node cfg describes and drops it, a failed dial of it
// too, so the next caller dials afresh. It is for a caller that took the node away itself (a
// reboot) and waits for it to come back, where a failed dial is expected and passes; every
// other failed dial stays for the run.
func (p *Pool) Forget(cfg Config) {
	key := cfg.withDefaults().key()
	p.mu.Lock()
	c := p.conns[key]
	delete(p.conns, key)
	p.mu.Unlock()
	if c != nil {
		go func() {
			<-c.ready
			c.markBroken(errForgotten)
		}()
	}
}

// errForgotten is the reason of a connection Forget closed.
var errForgotten = errors.New("connection dropped to wait for the node to come back")

func (p *Pool) debug(ctx context.Context, msg string, fields map[string]any) {
	if p.Logger != nil {
		p.Logger.Debug(ctx, msg, fields)
	}
}

// info logs a run's progress on a node: its connection and its root shell, each once per
// run, so that TF_LOG=info shows where a plan spends its time without every command.
func (p *Pool) info(ctx context.Context, msg string, fields map[string]any) {
	if p.Logger != nil {
		p.Logger.Info(ctx, msg, fields)
	}
}

// rootShell returns the host's root shell, starting it on first use. Callers asking at the
// same time wait for one start. A sudo refusal is kept for the rest of the run, so sudo is
// asked once per host and password, and every caller gets the same *SudoError, so its cause
// is reported once (FirstReport); a shell lost with its connection is started anew.
func (p *Pool) rootShell(ctx context.Context, cfg Config) (*rootShell, error) {
	key := cfg.key() + " sudo " + cfg.SudoExe + "#" + digest(cfg.SudoPassword)
	p.mu.Lock()
	if err := p.ctx.Err(); err != nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("sudo on %s: pool is closed", cfg.describe())
	}
	slot := p.shells[key]
	if slot == nil || slot.stale() {
		slot = &shellSlot{ready: make(chan struct{})}
		p.shells[key] = slot
		go slot.open(ctx, p, cfg)
	}
	p.mu.Unlock()

	select {
	case <-slot.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("start sudo on %s: %w", cfg.describe(), ctx.Err())
	}
	return slot.shell, slot.err
}

// shellSlot is one root shell being started or started. ready closes when the start
// finished; then exactly one of shell and err is set.
type shellSlot struct {
	ready chan struct{}
	shell *rootShell
	err   error
}

// open starts the shell under the pool's context, bounded by the connect timeout, so a caller
// that gives up does not fail the others waiting. logCtx only tags the log lines.
func (s *shellSlot) open(logCtx context.Context, p *Pool, cfg Config) {
	defer close(s.ready)
	ctx, cancel := context.WithTimeout(p.ctx, cfg.ConnectTimeout)
	defer cancel()
	start := time.Now()
	s.shell, s.err = p.startShell(ctx, cfg)
	fields := map[string]any{"node": cfg.Name, "user": cfg.User, "sudo_exe": cfg.SudoExe, "duration_ms": time.Since(start).Milliseconds()}
	if s.err != nil {
		fields["error"] = s.err.Error()
		p.info(logCtx, "sudo refused or failed: no root shell", fields)
		return
	}
	p.info(logCtx, "sudo authenticated: root shell started", fields)
}

func (p *Pool) startShell(ctx context.Context, cfg Config) (*rootShell, error) {
	c, err := p.get(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sess, release, err := c.newSession(ctx)
	if err != nil {
		return nil, err
	}
	shell, err := startRootShell(ctx, cfg, sess, release)
	if err != nil {
		_ = sess.Close()
		release()
		return nil, explainLockout(ctx, c, err)
	}
	return shell, nil
}

// stale tells rootShell to start a new shell: the last one ended, or its start failed for a
// reason other than sudo's refusal (a broken connection). A refusal stays for the run.
func (s *shellSlot) stale() bool {
	select {
	case <-s.ready:
	default:
		return false
	}
	var sudoErr *SudoError
	switch {
	case errors.As(s.err, &sudoErr):
		return false
	case s.err != nil:
		return true
	default:
		return s.shell.closed()
	}
}

func digest(secret []byte) string {
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:8])
}

// get returns the pooled connection for cfg, dialing when there is none or
// the previous one broke. A failed dial stays for the run (*DialError).
func (p *Pool) get(ctx context.Context, cfg Config) (*conn, error) {
	key := cfg.key()
	p.mu.Lock()
	if err := p.ctx.Err(); err != nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("connect to %s: pool is closed", cfg.describe())
	}
	c := p.conns[key]
	if c == nil || c.needsRedial() {
		if c != nil {
			p.debug(ctx, "ssh reconnect", map[string]any{"node": cfg.Name, "address": cfg.hostPort(), "reason": c.brokenReason()})
		}
		c = newConn(cfg)
		p.conns[key] = c
		go c.dial(ctx, p)
	}
	p.mu.Unlock()

	select {
	case <-c.ready:
		return c, c.err
	case <-ctx.Done():
		return nil, fmt.Errorf("connect to %s: %w", cfg.describe(), ctx.Err())
	}
}

func (p *Pool) dial(ctx context.Context, cfg Config) (*ssh.Client, error) {
	checker, err := newHostKeyChecker(cfg)
	if err != nil {
		return nil, err
	}
	signers, closeAgent, err := authSigners(cfg)
	if err != nil {
		return nil, err
	}
	defer closeAgent()
	clientCfg := &ssh.ClientConfig{
		User:              cfg.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(signers...)},
		HostKeyCallback:   checker.check,
		HostKeyAlgorithms: checker.algorithms(),
		Timeout:           cfg.ConnectTimeout,
	}
	if cfg.InsecureIgnoreHostKey {
		clientCfg.HostKeyCallback = ssh.InsecureIgnoreHostKey() //nolint:gosec // explicit opt-in; the caller warns
		clientCfg.HostKeyAlgorithms = nil
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	netConn, err := p.dialNet(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// x/crypto has no handshake timeout and a tunneled conn no deadlines:
	// closing the conn is what interrupts a stuck handshake.
	stop := context.AfterFunc(ctx, func() { _ = netConn.Close() })
	sshConn, chans, reqs, err := ssh.NewClientConn(netConn, cfg.hostPort(), clientCfg)
	interrupted := !stop()
	var hostKeyErr *HostKeyError
	switch {
	case errors.As(err, &hostKeyErr):
		_ = netConn.Close()
		return nil, hostKeyErr
	case interrupted:
		if err == nil {
			_ = sshConn.Close()
		}
		return nil, fmt.Errorf("ssh handshake with %s: %w", cfg.describe(), ctx.Err())
	case err != nil:
		_ = netConn.Close()
		return nil, fmt.Errorf("ssh handshake with %s as %s: %w", cfg.describe(), cfg.User, err)
	}
	return ssh.NewClient(sshConn, chans, reqs), nil
}

func (p *Pool) dialNet(ctx context.Context, cfg Config) (net.Conn, error) {
	if cfg.Jump == nil {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", cfg.hostPort())
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", cfg.describe(), err)
		}
		return conn, nil
	}
	return p.dialThroughJump(ctx, cfg)
}

// dialThroughJump opens a TCP channel from the jump host to the target,
// reconnecting the jump host once if its connection turns out broken.
func (p *Pool) dialThroughJump(ctx context.Context, cfg Config) (net.Conn, error) {
	for attempt := 0; ; attempt++ {
		jump, err := p.get(ctx, *cfg.Jump)
		if err != nil {
			return nil, fmt.Errorf("jump host %s for %s: %w", cfg.Jump.Name, cfg.Name, err)
		}
		conn, err := jump.client.DialContext(ctx, "tcp", cfg.hostPort())
		if err == nil {
			return conn, nil
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) || attempt > 0 || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to %s through jump host %s: %w", cfg.describe(), cfg.Jump.Name, err)
		}
		jump.markBroken(err)
	}
}

// readCache returns the shared reads of one machine.
func (p *Pool) readCache(machine string) *readCache {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.reads[machine]
	if !ok {
		c = &readCache{}
		p.reads[machine] = c
	}
	return c
}

// lock returns the lock channel of one key: a machine, or a machine and a name (LockNamed).
func (p *Pool) lock(key string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.locks[key]
	if !ok {
		l = make(chan struct{}, 1)
		p.locks[key] = l
	}
	return l
}

// conn is one pooled SSH connection. ready closes when the dial finished;
// then exactly one of client and err is set.
type conn struct {
	cfg      Config
	ready    chan struct{}
	client   *ssh.Client
	err      error
	sessions chan struct{}

	brokenOnce sync.Once
	broken     chan struct{}
	reason     error
}

func newConn(cfg Config) *conn {
	return &conn{
		cfg:      cfg,
		ready:    make(chan struct{}),
		sessions: make(chan struct{}, maxSessionsPerConn),
		broken:   make(chan struct{}),
	}
}

// dial connects under the pool's context; logCtx, the first asker's, tags the log lines.
func (c *conn) dial(logCtx context.Context, p *Pool) {
	defer close(c.ready)
	start := time.Now()
	p.tally(logCtx, c.cfg)
	c.client, c.err = p.dial(p.ctx, c.cfg)
	c.err = asDialError(c.cfg.Name, c.err)
	fields := map[string]any{"node": c.cfg.Name, "address": c.cfg.hostPort(), "user": c.cfg.User, "duration_ms": time.Since(start).Milliseconds()}
	if c.err != nil {
		fields["error"] = c.err.Error()
		p.info(logCtx, "ssh connect failed", fields)
		return
	}
	p.info(logCtx, "ssh connected", fields)
	go c.watch()
	go c.keepalive(logCtx, p)
}

// needsRedial tells get to replace this connection: it broke. A dial in
// progress is waited for, and a failed dial is kept for the run: a node that
// cannot be reached costs one connect timeout and one error, not one per
// resource, and a host key failure is never retried.
func (c *conn) needsRedial() bool {
	select {
	case <-c.ready:
	default:
		return false
	}
	return c.err == nil && c.isBroken()
}

func (c *conn) isBroken() bool {
	select {
	case <-c.broken:
		return true
	default:
		return false
	}
}

func (c *conn) markBroken(reason error) {
	c.brokenOnce.Do(func() {
		c.reason = reason
		close(c.broken)
		if c.client != nil {
			_ = c.client.Close()
		}
	})
}

func (c *conn) brokenReason() string {
	if c.isBroken() && c.reason != nil {
		return c.reason.Error()
	}
	if c.err != nil {
		return c.err.Error()
	}
	return ""
}

// watch notices a connection closed by the server or the network.
func (c *conn) watch() {
	err := c.client.Wait()
	if err == nil {
		err = errors.New("connection closed")
	}
	c.markBroken(err)
}

// keepalive probes the server so a dead peer is noticed between commands,
// not in the middle of the next one.
func (c *conn) keepalive(logCtx context.Context, p *Pool) {
	ticker := time.NewTicker(c.cfg.KeepaliveInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.broken:
			return
		case <-ticker.C:
		}
		replied := make(chan error, 1)
		go func() {
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			replied <- err
		}()
		var err error
		select {
		case err = <-replied:
		case <-time.After(c.cfg.KeepaliveInterval):
			err = fmt.Errorf("no keepalive reply within %s", c.cfg.KeepaliveInterval)
		case <-c.broken:
			return
		}
		if err != nil {
			p.debug(logCtx, "ssh keepalive failed", map[string]any{"node": c.cfg.Name, "address": c.cfg.hostPort(), "error": err.Error()})
			c.markBroken(fmt.Errorf("keepalive: %w", err))
			return
		}
	}
}

// newSession opens a session within the per-connection limit, retrying an open that sshd
// refused (nothing ran). release must be called once the session is done.
func (c *conn) newSession(ctx context.Context) (*ssh.Session, func(), error) {
	select {
	case c.sessions <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("wait for a free session on %s: %w", c.cfg.describe(), ctx.Err())
	}
	release := func() { <-c.sessions }
	backoff := openFirstBackoff
	for attempt := 1; ; attempt++ {
		sess, err := c.client.NewSession()
		if err == nil {
			return sess, release, nil
		}
		var refused *ssh.OpenChannelError
		if !errors.As(err, &refused) {
			release()
			c.markBroken(err)
			return nil, nil, fmt.Errorf("open session on %s: %w: %w", c.cfg.describe(), errSessionLost, err)
		}
		if attempt == openAttempts {
			release()
			return nil, nil, fmt.Errorf("open session on %s: refused %d times: %w", c.cfg.describe(), attempt, err)
		}
		select {
		case <-time.After(backoff):
			backoff *= 2
		case <-ctx.Done():
			release()
			return nil, nil, fmt.Errorf("open session on %s: %w (refused before: %w)", c.cfg.describe(), ctx.Err(), err)
		}
	}
}
