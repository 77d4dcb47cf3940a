package main

// STAND-IN for the mount(2) of ThinkParQ's BeeGFS client kernel module,
// used only by the gpucluster test lab. /sbin/mount.beegfs runs it where the
// real helper runs `mount --internal -t beegfs`: it refuses as the kernel does
// when no module is loaded, makes the module's configuration and
// authentication checks and its mount sanity check against the management,
// root metadata and storage services, and then bind-mounts the lab's shared
// namespace. The module's kernel log lines go to stderr (the unit's journal
// when the service mounts) and to kernelLog.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func init() { tools["beegfs-kmount"] = kmountMain }

const (
	// standInNamespace is the lab-wide directory every mount shows.
	standInNamespace = "/var/lib/beegfs-standin/namespace"
	// kernelLog stands in for the kernel ring buffer (dmesg).
	kernelLog = "/var/log/beegfs-standin-kernel.log"
	// mountExitFailure is util-linux mount's "mount failure" status.
	mountExitFailure = 32
	// sanityCheckDefault is sysMountSanityCheckMS's shipped value.
	sanityCheckDefault = 11000
	// connectTimeout bounds one connection attempt, as the module's own does.
	connectTimeout = 3 * time.Second
)

const (
	lineSanityFailed = "Mount sanity check failed. Canceling mount. (Log file may provide additional information. Check can be disabled with sysMountSanityCheckMS=0 in the config file.)"
	lineMgmtTimeout  = "Waiting for management server initialization timed out. Are the server settings correct? Is the management daemon running?"
	lineRootFailed   = "Retrieval of root directory entry failed. Are all metadata servers running and registered at the management daemon? (Error: %s)"
	lineStatfsFailed = "Retrieval of storage server free space info failed. Are the storage servers running and registered at the management daemon? Did you remove a storage target directory on a server? (Error: %s)"
	lineConfigError  = "Configuration error: Initialization of common objects failed. (Log file may provide additional information.)"
	lineNoAuthFile   = "No connAuthFile configured. Using BeeGFS without connection authentication is considered insecure and is not recommended. If you really want or need to run BeeGFS without connection authentication, please set connDisableAuthentication to true."
	errCommunication = "Communication error"
	errUnknownNode   = "Unknown node"
	errUnknownTarget = "Unknown storage target"
)

// kmountMain is called as `beegfs-kmount SPEC DIR OPTIONS`, OPTIONS being
// the -o string mount.beegfs completed with sysMgmtdHost=IP.
func kmountMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "beegfs-kmount (gpucluster lab STAND-IN for the BeeGFS kernel mount): usage: beegfs-kmount SPEC DIR OPTIONS")
		return 1
	}
	dir := args[1]
	if !moduleLoaded() {
		fmt.Fprintf(os.Stderr, "mount: %s: unknown filesystem type 'beegfs'.\n", dir)
		return mountExitFailure
	}
	k := &kernel{log: newKernelLogger(os.Stderr)}
	if !k.mount(parseMountOptions(args[2])) {
		fmt.Fprintf(os.Stderr, "mount: %s: mount(2) system call failed: Operation canceled.\n", dir)
		return mountExitFailure
	}
	// mount(8) runs its helpers without a PATH.
	cmd := exec.Command("/usr/bin/mount", "--bind", standInNamespace, dir) //nolint:gosec // G204: the mountpoint mount(8) handed over
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "mount: %s: %v\n", dir, err)
		return mountExitFailure
	}
	return 0
}

// parseMountOptions reads "a=b,c,,d=e" into a map; flags map to "".
func parseMountOptions(s string) map[string]string {
	opts := map[string]string{}
	for _, o := range strings.Split(s, ",") {
		if o == "" {
			continue
		}
		k, v, _ := strings.Cut(o, "=")
		opts[k] = v
	}
	return opts
}

// opsErr is a FhgfsOpsErr as the module words it ("Communication error").
type opsErr string

func (e opsErr) Error() string { return string(e) }

// kernelLogger writes lines as printk_fhgfs does: "beegfs: mount(PID): ...".
type kernelLogger struct {
	out    io.Writer
	prefix string
}

func newKernelLogger(stderr io.Writer) *kernelLogger {
	out := stderr
	if f, err := os.OpenFile(kernelLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		out = io.MultiWriter(stderr, f)
	}
	return &kernelLogger{out: out, prefix: fmt.Sprintf("beegfs: mount(%d): ", os.Getpid())}
}

func (l *kernelLogger) printf(context, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if context != "" {
		msg = context + ": " + msg
	}
	_, _ = fmt.Fprintln(l.out, l.prefix+msg) // a kernel log line has nowhere else to go
}

// kernel is one mount's client instance.
type kernel struct {
	log  *kernelLogger
	conf map[string]string
	auth string
}

// mount makes the module's checks; false cancels the mount.
func (k *kernel) mount(opts map[string]string) bool {
	if !k.configure(opts) {
		k.log.printf("", "%s", lineConfigError)
		return false
	}
	if k.sanityCheckMS() == 0 {
		return true
	}
	if !k.sanityCheck(opts["sysMgmtdHost"]) {
		k.log.printf("", "%s", lineSanityFailed)
		return false
	}
	return true
}

// configure reads cfgFile, overridden by the mount options, and the shared secret.
func (k *kernel) configure(opts map[string]string) bool {
	conf, err := readClientConf(opts["cfgFile"])
	if err != nil {
		k.log.printf("", "Unable to read config file: %s", opts["cfgFile"])
		return false
	}
	for key, v := range opts {
		if _, known := conf[key]; known || key == "sysMgmtdHost" {
			conf[key] = v
		}
	}
	k.conf = conf
	if conf["sysMgmtdHost"] == "" {
		k.log.printf("", "Management host undefined")
		return false
	}
	if net.ParseIP(conf["sysMgmtdHost"]) == nil {
		k.log.printf("", "Management address '%s' is not an IP address", conf["sysMgmtdHost"])
		return false
	}
	return k.readAuth()
}

func (k *kernel) readAuth() bool {
	if conf := k.conf; conf["connDisableAuthentication"] == "true" {
		return true
	}
	path := k.conf["connAuthFile"]
	if path == "" {
		k.log.printf("", "%s", lineNoAuthFile)
		return false
	}
	secret, err := authSecret(path)
	if err != nil {
		k.log.printf("", "Failed to open auth file: '%s'", path)
		return false
	}
	k.auth = secret
	return true
}

// readClientConf reads "key = value" lines; later lines win, as in the module.
func readClientConf(path string) (map[string]string, error) {
	f, err := os.Open(path) //nolint:gosec // the admin's own cfgFile
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	conf := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok {
			conf[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return conf, sc.Err()
}

func (k *kernel) confInt(key string, def int) int {
	n, err := strconv.Atoi(k.conf[key])
	if err != nil {
		return def
	}
	return n
}

func (k *kernel) sanityCheckMS() int { return k.confInt("sysMountSanityCheckMS", sanityCheckDefault) }

func (k *kernel) port(key string, def int) int {
	return k.confInt(key, def) + k.confInt("connPortShift", 0)
}

// sanityCheck is __App_mountServerCheck: the management service within the
// deadline, then the root metadata node, then every storage node, each
// tried once.
func (k *kernel) sanityCheck(mgmtd string) bool {
	const context = "Mount sanity check"
	deadline := time.Now().Add(time.Duration(k.sanityCheckMS()) * time.Millisecond)
	nodes, ok := k.waitForMgmtd(mgmtd, deadline)
	if !ok {
		k.log.printf(context, "%s", lineMgmtTimeout)
		return false
	}
	if err := k.statRoot(nodes); err != nil {
		k.log.printf(context, lineRootFailed, err)
		return false
	}
	if err := k.statStorage(nodes); err != nil {
		k.log.printf(context, lineStatfsFailed, err)
		return false
	}
	return true
}

// waitForMgmtd asks the management service for the node lists until it
// answers or the deadline passes, logging a failed connection once.
func (k *kernel) waitForMgmtd(host string, deadline time.Time) (nodesReply, bool) {
	addr := net.JoinHostPort(host, strconv.Itoa(k.port("connMgmtdPort", portMgmtdBeeMsg)))
	logged := false
	for {
		var nodes nodesReply
		err := call(addr, min(connectTimeout, max(time.Until(deadline), time.Millisecond)), msgNodes, k.auth, nil, &nodes)
		if err == nil {
			return nodes, true
		}
		if !logged {
			k.connectFailed("beegfs-mgmtd", addr, "")
			logged = true
		}
		if time.Until(deadline) <= 0 {
			return nodesReply{}, false
		}
		time.Sleep(min(500*time.Millisecond, max(time.Until(deadline), 0)))
	}
}

func (k *kernel) statRoot(nodes nodesReply) error {
	for _, n := range nodes.Nodes {
		if n.Type == nodeMeta && n.ID == nodes.RootMeta && nodes.RootMeta != 0 {
			return k.ask(n, "beegfs-meta", portMeta, msgStatRoot)
		}
	}
	return opsErr(errUnknownNode)
}

func (k *kernel) statStorage(nodes nodesReply) error {
	found := false
	for _, n := range nodes.Nodes {
		if n.Type != nodeStorage {
			continue
		}
		found = true
		if err := k.ask(n, "beegfs-storage", portStorage, msgStatfs); err != nil {
			return err
		}
	}
	if !found {
		k.log.printf("Stat storage path", "No storage targets known.")
		return opsErr(errUnknownTarget)
	}
	return nil
}

// ask sends one message to a node, without retries as during the real check.
func (k *kernel) ask(n registeredNode, typeName string, defPort int, msg string) error {
	port := n.Port
	if port == 0 {
		port = defPort + k.confInt("connPortShift", 0)
	}
	addr := net.JoinHostPort(n.Addr, strconv.Itoa(port))
	if err := call(addr, connectTimeout, msg, k.auth, nil, nil); err != nil {
		k.connectFailed(typeName, addr, fmt.Sprintf("%s [%s:%d]", n.Alias, typeName, n.ID))
		return opsErr(errCommunication)
	}
	return nil
}

// connectFailed logs what NodeConnPool logs when no route to a node works.
func (k *kernel) connectFailed(typeName, addr, node string) {
	const context = "NodeConn (acquire stream)"
	k.log.printf(context, "Connect failed: %s@%s (protocol: TCP)", typeName, addr)
	if node != "" {
		k.log.printf(context, "Connect failed on all available routes: %s", node)
	}
}
