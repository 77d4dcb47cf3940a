package main

// STAND-IN for ThinkParQ's beegfs-mgmtd (BeeGFS 8 management service, Rust,
// beegfs-rust), used only by the gpucluster test lab: the same settings,
// start-up checks in the same order, messages, exit codes and ports, with
// the stand-in's own protocol (wire.go) on them and a JSON database.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func init() { tools["beegfs-mgmtd"] = mgmtdMain }

// mgmtdVersion is what --version prints: clap's "<crate name> <VERSION>",
// the version with git describe's leading v.
const mgmtdVersion = "mgmtd v8.4.0 (gpucluster lab STAND-IN)"

const mgmtdHelp = `The BeeGFS management service (gpucluster lab STAND-IN)

To set up a new system, use ` + "`--init`" + `.

To specify a config file to load configuration from, use ` + "`--config-file`" + `. Command line
parameters overwrite config file parameters. If there is a config file in the default
location, it is loaded automatically. Note that there are some parameters that can only
be set by using a config file (mainly quota and capacity poool related).

Usage: mgmtd [OPTIONS]

Options:
`

// mgmtdMain runs beegfs-mgmtd. The real main prints an error's chain on
// stderr, then Rust's "Error: 1" for the Err(1) it returns, and exits 1.
func mgmtdMain(args []string) int {
	return mgmtdRun(args, os.Stdout, os.Stderr)
}

func mgmtdRun(args []string, stdout, stderr io.Writer) int {
	flags, action, err := parseMgmtdFlags(args)
	var usage *usageError
	if errors.As(err, &usage) {
		_, _ = fmt.Fprintln(stderr, usage.msg)
		return 2
	}
	switch action {
	case "help":
		_, _ = fmt.Fprint(stdout, mgmtdHelpText())
		return 0
	case "version":
		_, _ = fmt.Fprintln(stdout, mgmtdVersion)
		return 0
	}
	log := &mgmtdLog{level: "warn", stderr: stderr}
	if err := mgmtdStart(flags, stdout, log); err != nil {
		log.Errorf("%v", err)
		_, _ = fmt.Fprintln(stderr, err)
		_, _ = fmt.Fprintln(stderr, "Error: 1")
		return 1
	}
	return 0
}

func mgmtdHelpText() string {
	var b strings.Builder
	b.WriteString(mgmtdHelp)
	for _, s := range mgmtdSettings {
		if s.Name == "fs-uuid" || s.Name == "upgrade" || s.Name == "port-shift" || strings.HasPrefix(s.Name, "daemonize") {
			continue
		}
		if s.Kind == kindBool {
			fmt.Fprintf(&b, "      --%s [<%s>]\n", s.Name, valueName(&s))
		} else {
			fmt.Fprintf(&b, "      --%s <%s>\n", s.Name, valueName(&s))
		}
	}
	b.WriteString("  -h, --help\n  -V, --version\n")
	return b.String()
}

// mgmtdStart is the real start-up, in its order: config, logger, --init or
// --upgrade (v8.3.1 handles them after the logger), database, auth file,
// then the ports, TLS last, then READY.
func mgmtdStart(flags map[string]any, stdout io.Writer, log *mgmtdLog) error {
	cfg, err := loadMgmtdConfig(flags)
	if err != nil {
		return err
	}
	log.target, log.level = cfg.LogTarget, cfg.LogLevel
	if cfg.Upgrade {
		_, _ = fmt.Fprintln(stdout, "--upgrade is deprecated. Upgrading the database now happens automatically on running the management. Exiting.")
		return nil
	}
	if cfg.Init {
		if err := initMgmtdDB(cfg.DBFile, cfg.FsUUID); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "Created new database version %d at %q.\n", mgmtdDBVersion, cfg.DBFile)
		return nil
	}
	if cfg.ImportFromV7 != "" {
		return errors.New("Importing a BeeGFS v7 installation is not modelled by the gpucluster lab STAND-IN")
	}
	if _, err := os.Stat(cfg.DBFile); err != nil {
		return fmt.Errorf("No accessible database file found at %q: %s\nIf you want to initialize a new system, refer to --help or doc.beegfs.io.", cfg.DBFile, osErrorText(err))
	}
	secret := ""
	if !cfg.AuthDisable {
		if secret, err = authSecret(cfg.AuthFile); err != nil {
			return fmt.Errorf("Could not open authentication file %q: %s", cfg.AuthFile, osErrorText(err))
		}
	}
	db, err := openMgmtdDB(cfg.DBFile)
	if err != nil {
		return fmt.Errorf("Opening database file %q failed: %s", cfg.DBFile, osErrorText(err))
	}
	if err := db.touchManagement(int(cfg.BeeMsgPort)); err != nil {
		return fmt.Errorf("Updating management node failed: %s", osErrorText(err))
	}
	srv := &mgmtd{cfg: cfg, db: db, secret: secret, log: log}
	if err := srv.listen(); err != nil {
		return err
	}
	if !cfg.LicenseDisable {
		license, err := readLicense(cfg.LicenseCertFile)
		if err != nil {
			log.Warnf("Initializing licensing library failed. Licensed features will be unavailable: %v", err)
		}
		srv.license = license
	}
	if err := sdNotify("READY=1"); err != nil {
		log.Warnf("Notifying systemd failed: %v", err)
	}
	return srv.run()
}

// osErrorText is how Rust prints an io::Error: the C library's text and the
// errno, e.g. "No such file or directory (os error 2)".
func osErrorText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		text := errno.Error()
		return strings.ToUpper(text[:1]) + text[1:] + " (os error " + strconv.Itoa(int(errno)) + ")"
	}
	return err.Error()
}

// mgmtd is the running service.
type mgmtd struct {
	cfg     *mgmtdConfig
	db      *mgmtdDB
	secret  string
	log     *mgmtdLog
	license *licenseInfo
	beemsg  net.Listener
	udp     net.PacketConn
	grpc    net.Listener
}

// listen binds BeeMsg (TCP and UDP) and then the management API, whose TLS
// files are read only then, as the real service does.
func (m *mgmtd) listen() error {
	addr := ":" + strconv.FormatUint(m.cfg.BeeMsgPort, 10)
	var err error
	if m.beemsg, err = net.Listen("tcp", addr); err != nil {
		return fmt.Errorf("Binding BeeMsg TCP port %d failed: %s", m.cfg.BeeMsgPort, osErrorText(err))
	}
	if m.udp, err = net.ListenPacket("udp", addr); err != nil {
		return fmt.Errorf("Binding BeeMsg UDP port %d failed: %s", m.cfg.BeeMsgPort, osErrorText(err))
	}
	return m.listenGRPC()
}

// run serves until SIGTERM or SIGINT.
func (m *mgmtd) run() error {
	go func() { _ = serve(m.beemsg, m.handleBeeMsg) }()
	go m.serveGRPC()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	_ = sdNotify("STOPPING=1")
	return nil
}

// handleBeeMsg answers the daemons' and clients' messages. A peer without
// the shared secret is refused: the real service drops the stream.
func (m *mgmtd) handleBeeMsg(req request) (any, error) {
	if m.secret != "" && req.Auth != m.secret {
		m.log.Errorf("Stream is not authenticated and received message %s", req.Msg)
		return nil, fmt.Errorf("Stream is not authenticated and received message %s", req.Msg)
	}
	switch req.Msg {
	case msgHeartbeat:
		var hb heartbeat
		if err := decodeBody(req, &hb); err != nil {
			return nil, err
		}
		reg, err := m.db.register(hb, req.Addr, m.cfg.RegistrationDisable)
		if err != nil {
			m.log.Errorf("Heartbeat from %s failed: %v", req.Addr, err)
			return nil, err
		}
		for _, line := range reg.logs {
			m.log.Infof("%s", line)
		}
		return reg.reply, nil
	case msgNodes:
		return m.db.nodes(), nil
	}
	return nil, fmt.Errorf("unknown message %q", req.Msg)
}

// mgmtdLog writes the service's log to journald (the unit's
// --log-target=journald) or stderr, at the configured level.
type mgmtdLog struct {
	target, level string
	stderr        io.Writer
}

var logLevels = map[string]int{"off": 0, "error": 1, "warn": 2, "info": 3, "debug": 4, "trace": 5}

func (l *mgmtdLog) write(level string, priority int, format string, a ...any) {
	if logLevels[level] > logLevels[l.level] {
		return
	}
	msg := fmt.Sprintf(format, a...)
	if l.target == "journald" && journalSend(msg, priority) == nil {
		return
	}
	if l.target == "stderr" {
		_, _ = fmt.Fprintf(l.stderr, "%s [%s] %s\n", time.Now().UTC().Format(time.RFC3339), strings.ToUpper(level), msg)
	}
}

func (l *mgmtdLog) Errorf(format string, a ...any) { l.write("error", 3, format, a...) }
func (l *mgmtdLog) Warnf(format string, a ...any)  { l.write("warn", 4, format, a...) }
func (l *mgmtdLog) Infof(format string, a ...any)  { l.write("info", 6, format, a...) }

// journalSend writes one entry over journald's native protocol.
func journalSend(msg string, priority int) error {
	conn, err := net.Dial("unixgram", "/run/systemd/journal/socket")
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // a datagram socket: nothing to flush
	entry := fmt.Sprintf("PRIORITY=%d\nSYSLOG_IDENTIFIER=beegfs-mgmtd\nMESSAGE=%s\n", priority, strings.ReplaceAll(msg, "\n", " "))
	_, err = conn.Write([]byte(entry))
	return err
}

// sdNotify tells systemd the service's state (Type=notify) over the
// datagram socket in $NOTIFY_SOCKET; outside systemd it does nothing.
func sdNotify(state string) error {
	socket := os.Getenv("NOTIFY_SOCKET")
	if socket == "" {
		return nil
	}
	if strings.HasPrefix(socket, "@") {
		socket = "\x00" + socket[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // a datagram socket: nothing to flush
	_, err = conn.Write([]byte(state))
	return err
}
