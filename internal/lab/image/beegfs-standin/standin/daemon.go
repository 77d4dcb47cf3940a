package main

// What the STAND-IN metadata and storage daemons share: the start-up order
// of the real App::runNormal (config and shared secret, the directories,
// logging, the storeFsUUID interlock, the legacy string ID files, the
// management host, the directories' files, waiting for and registering
// with the management service), their error output and exit codes, the
// heartbeats, the port they answer on, and SIGTERM.

import (
	"errors"
	"fmt"
	"log/syslog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// standInVersion is the release the stand-in packages claim to be.
const standInVersion = "8.4.0"

// Exit codes of the real daemons (App.h).
const (
	appInvalidConfig = 1
	appRuntimeError  = 3
)

// heartbeatInterval is how often a registered daemon reports to the
// management service; more often than the real ones, so a restarted lab
// management service sees the nodes again soon.
const heartbeatInterval = 5 * time.Second

// daemonSpec is what differs between the metadata and the storage daemon.
type daemonSpec struct {
	name     string // the tool and syslog identifier: beegfs-meta
	title    string // in the version banner: BeeGFS Metadata Node
	nodeType string
	portKey  string // connMetaPort
	port     int
	// preregCanceled is the refusal when the management service rejects the node.
	preregCanceled string
	defaults       map[string]string
	// preinit checks and locks the directories before logging exists.
	preinit func(d *daemon) error
	// checkUUIDs is the storeFsUUID interlock.
	checkUUIDs func(d *daemon) error
	// dirs are the directories the daemon keeps its files in.
	dirs func(d *daemon) []string
	// initStorage writes format.conf and the daemon's directories.
	initStorage func(d *daemon) error
	// register fills the heartbeat and records what the reply assigned.
	prepare func(d *daemon, hb *heartbeat) error
	record  func(d *daemon, rep heartbeatReply) error
	// handle answers the mount's questions on the daemon's port.
	handle func(d *daemon, req request) (any, error)
}

// daemon is one running metadata or storage daemon.
type daemon struct {
	spec   daemonSpec
	conf   daemonConf
	auth   string // authSecret of connAuthFile; "" with authentication disabled
	log    *daemonLog
	nodeID uint32
	locks  []*os.File
	// targets are a storage daemon's targets, in storeStorageDirectory's order.
	targets []heartbeatTarget
}

func runDaemon(spec daemonSpec, args []string) int {
	for _, a := range args {
		switch a {
		case "--version", "-v", "--help", "-h":
			fmt.Printf("%s Version: %s\n(gpucluster lab STAND-IN for ThinkParQ's %s; run as: %s cfgFile=/etc/beegfs/%s.conf)\n",
				spec.title, standInVersion, spec.name, spec.name, spec.name)
			return 0
		}
	}
	d := &daemon{spec: spec}
	err := d.start(args)
	if err == nil {
		return d.run()
	}
	var cfgErr configError
	if errors.As(err, &cfgErr) {
		fmt.Fprintf(os.Stderr, "\nError: %s\n\n[%s Version: %s\nRefer to the default config file (/etc/beegfs/%s.conf)\nor visit http://www.beegfs.com to find out about configuration options.]\n\n",
			err, spec.title, standInVersion, spec.name)
		d.log.errorf("%s", err)
		return appInvalidConfig
	}
	fmt.Fprintf(os.Stderr, "\nUnrecoverable error: %s\n\n", err)
	d.log.errorf("%s", err)
	return appRuntimeError
}

// start runs the real start-up order up to a registered node.
func (d *daemon) start(args []string) error {
	conf, err := loadDaemonConf(args, d.spec.defaults)
	if err != nil {
		return err
	}
	d.conf = conf
	file, err := conf.authFile()
	if err != nil {
		return err
	}
	if file != "" {
		if d.auth, err = authSecret(file); err != nil {
			return invalidConfig("Unable to read auth file: %s (SysErr: %s)", file, sysErr(err))
		}
	}
	if err := d.spec.preinit(d); err != nil {
		return err
	}
	d.log = openDaemonLog(d.spec.name, conf)
	if err := d.spec.checkUUIDs(d); err != nil {
		return err
	}
	if err := d.initLocalNodeID(); err != nil {
		return err
	}
	if conf["sysMgmtdHost"] == "" {
		return invalidConfig("Management host undefined")
	}
	return d.spec.initStorage(d)
}

// initLocalNodeID renames the 7.x string ID files and reads nodeNumID from
// the first directory, as initLocalNodeIDs does.
func (d *daemon) initLocalNodeID() error {
	dirs := d.spec.dirs(d)
	for _, dir := range dirs {
		deprecateStringIDFiles(dir)
	}
	content, err := os.ReadFile(filepath.Join(dirs[0], "nodeNumID"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(content)), 10, 16)
	if err != nil {
		return invalidConfig("Invalid numeric node ID in file: %s", filepath.Join(dirs[0], "nodeNumID"))
	}
	d.nodeID = uint32(id)
	return nil
}

// deprecateStringIDFiles is StorageTk::deprecateNodeStringIDFiles: BeeGFS 8
// keeps the 7.x nodeID and originalNodeID only as *.v7, with a note.
func deprecateStringIDFiles(dir string) {
	const note = "\n# String IDs have been deprecated starting with BeeGFS 8." +
		"\n# This file can be safely deleted once you are sure you do not need to downgrade back to BeeGFS 7." +
		"\n# If you do need to downgrade, remove this comment and rename the file to remove the .v7 suffix.\n"
	for _, name := range []string{"nodeID", "originalNodeID"} {
		old := filepath.Join(dir, name)
		if _, err := os.Stat(old); err != nil {
			continue
		}
		if os.Rename(old, old+".v7") != nil {
			continue
		}
		if f, err := os.OpenFile(old+".v7", os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			_, _ = f.WriteString(note) // errors are ignored, as by the real daemons
			_ = f.Close()
		}
	}
}

// lockDir creates dir and locks its lock.pid as StorageTk::lockWorkingDirectory does.
func (d *daemon) lockDir(dir string) bool {
	if os.MkdirAll(dir, 0o755) != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock.pid"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(os.Stderr, "Unable to lock working directory. Check if the directory is already in use: %s\n", dir)
		_ = f.Close()
		return false
	}
	_ = f.Truncate(0)
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	d.locks = append(d.locks, f)
	return true
}

// writeFormatFile writes format.conf unless it exists, as the daemons do on
// a first start.
func writeFormatFile(dir string, lines ...string) error {
	p := filepath.Join(dir, "format.conf")
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	content := "# This file was auto-generated. Do not modify it!\n" + strings.Join(lines, "\n") + "\n"
	return os.WriteFile(p, []byte(content), 0o644)
}

// fsUUID is the UUID of the filesystem holding dir, as libblkid finds it for
// the real daemons; an error names what failed as UUID::getFsUUID does.
func fsUUID(dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", invalidConfig("Could not stat mountpoint directory: %s", dir)
	}
	uuid, err := findmnt(dir, "UUID")
	if err != nil || uuid == "" {
		return "", invalidConfig("Failed to lookup file system UUID")
	}
	return uuid, nil
}

// mgmtdAddr is sysMgmtdHost with connMgmtdPort shifted by connPortShift.
func (d *daemon) mgmtdAddr() (host string, addr string) {
	port, _ := d.conf.int("connMgmtdPort")
	shift, _ := d.conf.int("connPortShift")
	host = d.conf["sysMgmtdHost"]
	return host, net.JoinHostPort(host, strconv.Itoa(port+shift))
}

// ownPort is the daemon's connMetaPort or connStoragePort, shifted.
func (d *daemon) ownPort() int {
	port, err := d.conf.int(d.spec.portKey)
	if err != nil {
		port = d.spec.port
	}
	shift, _ := d.conf.int("connPortShift")
	return port + shift
}

// run waits for the management service, registers, serves and sends
// heartbeats until SIGTERM or SIGINT.
func (d *daemon) run() int {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	d.log.infof("Main", "Version: %s", standInVersion)
	if !d.waitForMgmtd(signals) {
		d.log.errorf("Waiting for beegfs-mgmtd canceled")
		return appRuntimeError
	}
	if err := d.register(); err != nil {
		fmt.Fprintf(os.Stderr, "\nError: %s\n\n[%s Version: %s\nRefer to the default config file (/etc/beegfs/%s.conf)\nor visit http://www.beegfs.com to find out about configuration options.]\n\n",
			err, d.spec.title, standInVersion, d.spec.name)
		d.log.errorf("%s", err)
		return appInvalidConfig
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(d.ownPort()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "\nUnrecoverable error: Unable to bind port %d: %v\n\n", d.ownPort(), err)
		return appRuntimeError
	}
	go func() {
		_ = serve(ln, func(req request) (any, error) { return d.answer(req) })
	}()
	d.log.infof("Main", "LocalNode: %s [ID: %d]", hostname(), d.nodeID)
	ticker := time.NewTicker(heartbeatInterval)
	defer ticker.Stop()
	failed := false
	for {
		select {
		case sig := <-signals:
			d.log.criticalf("Main", "Received a %s. Shutting down...", signalName(sig))
			_ = ln.Close()
			d.log.criticalf("Main", "All components stopped. Exiting now!")
			return 0
		case <-ticker.C:
			_, err := d.heartbeat()
			switch {
			case err != nil && !failed:
				d.log.criticalf("Heartbeat", "Node registration not successful. Management node offline? Will keep on trying...")
				failed = true
			case err == nil && failed:
				d.log.warningf("Heartbeat", "Node registration successful.")
				failed = false
			}
		}
	}
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// waitForMgmtd waits, forever as the real daemons do, until the management
// service answers; it gives up only when the host name does not resolve
// three times, or on a signal.
func (d *daemon) waitForMgmtd(signals <-chan os.Signal) bool {
	host, addr := d.mgmtdAddr()
	d.log.criticalf("Main", "Waiting for beegfs-mgmtd@%s...", strings.TrimPrefix(addr, "["))
	resolveFailures := 0
	for {
		if _, err := net.LookupHost(host); err != nil {
			d.log.errorf("Failed to resolve hostname. %s: %v", host, err)
			if resolveFailures++; resolveFailures >= 3 {
				return false
			}
		} else if call(addr, 2*time.Second, msgNodes, d.auth, nil, nil) == nil {
			return true
		}
		select {
		case sig := <-signals:
			d.log.criticalf("Main", "Received a %s. Shutting down...", signalName(sig))
			return false
		case <-time.After(750 * time.Millisecond):
		}
	}
}

// register is pre-registration and the first heartbeat: the node (and a
// storage node's targets) get their numeric IDs, written to the ID files.
func (d *daemon) register() error {
	reported := false
	for {
		rep, err := d.heartbeat()
		if err == nil {
			if d.nodeID == 0 {
				d.log.warningf("Preregister node", "Node ID reservation successful.")
			}
			d.nodeID = rep.NodeID
			if err := d.writeNodeNumID(); err != nil {
				return err
			}
			if err := d.spec.record(d, rep); err != nil {
				return err
			}
			d.log.warningf("Register node", "Node registration successful.")
			return nil
		}
		var refused refusal
		if errors.As(err, &refused) {
			_, addr := d.mgmtdAddr()
			d.log.errorf("ID reservation request was rejected by this management node: beegfs-mgmtd@%s: %s", addr, refused.msg)
			return invalidConfig("%s", d.spec.preregCanceled)
		}
		if !reported {
			d.log.criticalf("Preregister node", "Node ID reservation failed. Management node offline? Will keep on trying...")
			reported = true
		}
		time.Sleep(time.Second)
	}
}

// refusal is the management service's answer refusing a registration, as
// opposed to no answer at all.
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

// heartbeat sends one msgHeartbeat. A reply refusing it is a refusal.
func (d *daemon) heartbeat() (heartbeatReply, error) {
	hb := heartbeat{Type: d.spec.nodeType, NodeID: d.nodeID, Alias: hostname(), Port: d.ownPort()}
	if err := d.spec.prepare(d, &hb); err != nil {
		return heartbeatReply{}, err
	}
	_, addr := d.mgmtdAddr()
	var rep heartbeatReply
	err := call(addr, 5*time.Second, msgHeartbeat, d.auth, hb, &rep)
	if err != nil && !isTransportError(err) {
		return rep, refusal{err.Error()}
	}
	return rep, err
}

// isTransportError tells "no answer" from an answer refusing the request:
// call returns a refusal's text as a plain error.
func isTransportError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || strings.HasPrefix(err.Error(), "no reply from ") ||
		strings.HasPrefix(err.Error(), "bad reply from ")
}

// writeNodeNumID records the node's ID in every directory, as the storage
// daemon does for each target and the metadata daemon for its one.
func (d *daemon) writeNodeNumID() error {
	for _, dir := range d.spec.dirs(d) {
		p := filepath.Join(dir, "nodeNumID")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, []byte(strconv.FormatUint(uint64(d.nodeID), 10)+"\n"), 0o644); err != nil {
			return invalidConfig("Unable to create file for numeric node ID: %s", p)
		}
	}
	return nil
}

// answer refuses a peer that does not hold the shared secret, as the real
// daemons drop its messages, and hands the rest to the daemon.
func (d *daemon) answer(req request) (any, error) {
	if req.Auth != d.auth {
		return nil, errors.New("connection not authenticated")
	}
	return d.spec.handle(d, req)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

// daemonLog writes where logType says: syslog (the shipped configs; the
// journal on a systemd host) or logStdFile.
type daemonLog struct {
	sys  *syslog.Writer
	file *os.File
}

func openDaemonLog(name string, c daemonConf) *daemonLog {
	l := &daemonLog{}
	if c["logType"] == "syslog" {
		if w, err := syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, name); err == nil {
			l.sys = w
			return l
		}
	}
	if f, err := os.OpenFile(c["logStdFile"], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		l.file = f
		return l
	}
	l.file = os.Stderr
	return l
}

func (l *daemonLog) write(level int, context, format string, a ...any) {
	if l == nil {
		return
	}
	msg := fmt.Sprintf(format, a...)
	if l.sys != nil {
		line := context + " >> " + msg
		switch level {
		case 0:
			_ = l.sys.Crit(line)
		case 1:
			_ = l.sys.Err(line)
		case 2:
			_ = l.sys.Warning(line)
		default:
			_ = l.sys.Info(line)
		}
		return
	}
	_, _ = fmt.Fprintf(l.file, "(%d) %s Main [%s] >> %s\n", level, time.Now().Format("Jan02 15:04:05"), context, msg)
}

func (l *daemonLog) criticalf(context, format string, a ...any) { l.write(0, context, format, a...) }
func (l *daemonLog) errorf(format string, a ...any)             { l.write(1, "App", format, a...) }
func (l *daemonLog) warningf(context, format string, a ...any)  { l.write(2, context, format, a...) }
func (l *daemonLog) infof(context, format string, a ...any)     { l.write(3, context, format, a...) }
