package main

// STAND-IN for ThinkParQ's `beegfs` command (beegfs-tools, Go, beegfs-go
// v8.4.0), used only by the gpucluster test lab: the global flags, the
// commands the guide and the provider use (node list, target list, target
// delete, node delete, health check, version), their output, messages and
// exit codes. It talks to the stand-in management service's API
// (mgmtd_grpc.go) on the real port.

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

func init() { tools["beegfs"] = cliMain }

const (
	cliVersion         = "8.4.0"
	cliDefaultAuthFile = "/etc/beegfs/conn.auth"
	cliDefaultCertFile = "/etc/beegfs/cert.pem"
)

// cliGlobalFlags are the real global flags with their defaults; booleans
// are "true"/"false".
var cliGlobalFlags = map[string]string{
	"mgmtd-addr": "auto", "tls-disable": "false", "tls-cert-file": cliDefaultCertFile,
	"tls-disable-verification": "false", "auth-disable": "false", "auth-file": cliDefaultAuthFile,
	"output": "table", "columns": "", "page-size": "100", "debug": "false", "raw": "false",
	"disable-emojis": "false", "disable-alerts": "false", "conn-timeout": "500ms", "log-level": "0",
	"mount": "auto", "num-workers": "1", "remote-addr": "127.0.0.1:9010",
}

// cliBoolFlags take no value (--flag or --flag=false).
var cliBoolFlags = map[string]bool{
	"tls-disable": true, "tls-disable-verification": true, "auth-disable": true, "debug": true,
	"raw": true, "disable-emojis": true, "disable-alerts": true,
	// command flags
	"yes": true, "state": true, "capacity": true, "with-nics": true, "reachability-check": true,
	"reachability-error": true, "force-connections": true, "print-net": true, "print-df": true,
	"no-hints": true, "ignore-failed-checks": true,
}

// cliCommandFlags are the flags each command takes besides the global ones.
var cliCommandFlags = map[string][]string{
	"node list":     {"node-type", "with-nics", "reachability-check", "reachability-timeout", "reachability-error"},
	"node delete":   {"yes"},
	"target list":   {"node-type", "pool", "capacity", "state"},
	"target delete": {"yes"},
	"health check":  {"connection-timeout", "force-connections", "print-net", "print-df", "no-hints", "watch", "ignore-failed-checks"},
	"version":       {},
}

// cliRootOnly commands refuse other users, as the real authorization does.
var cliRootOnly = map[string]bool{"node delete": true, "target delete": true, "health check": true}

// ctlError carries an exit status other than 1.
type ctlError struct {
	err  error
	code int
}

func (e *ctlError) Error() string { return e.err.Error() }

// cli is one invocation: its settings, arguments and where it writes.
type cli struct {
	flags          map[string]string
	args           []string
	stdout, stderr io.Writer
	euid           int
	// peerCerts are the certificates the management API presented (nil
	// without TLS), for the Management TLS check.
	peerCerts []*x509.Certificate
	usedTLS   bool
	now       func() time.Time
}

func cliMain(args []string) int {
	return cliRun(args, os.Stdout, os.Stderr, os.Geteuid())
}

func cliRun(args []string, stdout, stderr io.Writer, euid int) int {
	c := &cli{stdout: stdout, stderr: stderr, euid: euid, now: time.Now}
	err := c.execute(args)
	if err == nil {
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "Error: %s\n", err)
	var ce *ctlError
	if errors.As(err, &ce) {
		return ce.code
	}
	return 1
}

func (c *cli) flag(name string) string { return c.flags[name] }

func (c *cli) boolFlag(name string) bool { return c.flags[name] == "true" }

// parse splits the command line into the command's words, its arguments
// and flags (global flags from BEEGFS_* in the environment first).
func (c *cli) parse(args []string) (string, error) {
	c.flags = map[string]string{}
	for name, def := range cliGlobalFlags {
		c.flags[name] = def
		if v, ok := os.LookupEnv("BEEGFS_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
			c.flags[name] = v
		}
	}
	c.flags["force-connections"] = "true"
	c.flags["connection-timeout"] = "5s"
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			if len(words) < 2 && !(len(words) == 1 && words[0] == "version") {
				words = append(words, a)
			} else {
				c.args = append(c.args, a)
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.ToLower(a[2:]), "=")
		if !hasValue {
			if !cliBoolFlags[name] {
				if i+1 >= len(args) {
					return "", fmt.Errorf("flag needs an argument: --%s", name)
				}
				i++
				value = args[i]
			} else {
				value = "true"
			}
		}
		c.flags[name] = value
	}
	cmd := strings.Join(words, " ")
	allowed, ok := cliCommandFlags[cmd]
	if !ok {
		if len(words) == 0 {
			return "", nil
		}
		return "", fmt.Errorf("unknown command %q for %q", words[len(words)-1], "beegfs"+prefixWords(words))
	}
	for name := range c.flags {
		if _, global := cliGlobalFlags[name]; global || name == "force-connections" || name == "connection-timeout" {
			continue
		}
		if !contains(allowed, name) {
			return "", fmt.Errorf("unknown flag: --%s", name)
		}
	}
	return cmd, nil
}

func prefixWords(words []string) string {
	if len(words) <= 1 {
		return ""
	}
	return " " + strings.Join(words[:len(words)-1], " ")
}

func (c *cli) execute(args []string) error {
	for _, a := range args {
		if a == "--help" || a == "-h" {
			_, _ = fmt.Fprintf(c.stdout, "BeeGFS Command Line Tool: %s (gpucluster lab STAND-IN)\n\nModelled commands: node list, node delete, target list, target delete, health check, version.\n", cliVersion)
			return nil
		}
	}
	cmd, err := c.parse(args)
	if err != nil {
		return err
	}
	if cmd == "" {
		_, _ = fmt.Fprintf(c.stdout, "BeeGFS Command Line Tool: %s (gpucluster lab STAND-IN)\n\nUsage:\n  beegfs [command]\n", cliVersion)
		return nil
	}
	if cliRootOnly[cmd] && c.euid != 0 {
		return errors.New("only root can use this command")
	}
	switch cmd {
	case "version":
		_, _ = fmt.Fprintf(c.stdout, "Version: %s | Commit STAND-IN | Built: gpucluster lab\n\nHint: The version displayed here is that of the command line tool, which may differ from BeeGFS itself.\n", cliVersion)
		return nil
	case "health check":
		return c.healthCheck()
	}
	var run func() error
	switch cmd {
	case "node list":
		run = c.nodeList
	case "target list":
		run = c.targetList
	case "target delete":
		run = func() error { return c.delete("target") }
	case "node delete":
		run = func() error { return c.delete("node") }
	}
	if err := run(); err != nil {
		return err
	}
	c.alerts()
	return nil
}

// exactArgs is cobra's ExactArgs with the real usage hint.
func (c *cli) exactArgs(n int, use string) error {
	if len(c.args) != n {
		return fmt.Errorf("accepts %d arg(s), received %d\nUsage: %s --help", n, len(c.args), use)
	}
	return nil
}

// managementConfig checks the client side settings in the real order: the
// certificate, the address, the shared secret.
func (c *cli) managementConfig() (addr string, cert []byte, secret string, err error) {
	if !c.boolFlag("tls-disable") && c.flag("tls-cert-file") != "" {
		if cert, err = os.ReadFile(c.flag("tls-cert-file")); err != nil {
			return "", nil, "", fmt.Errorf("reading certificate file failed: %w (hint: run 'beegfs --help' and review the options to configure TLS)", err)
		}
	}
	addr = c.flag("mgmtd-addr")
	if addr == "auto" {
		return "", nil, "", errors.New("unable to auto-configure the management address: BeeGFS does not appear to be mounted, manually specify --mgmtd-addr <hostname|ip>:<grpc-port> for the file system to manage")
	}
	if !c.boolFlag("auth-disable") {
		path := c.flag("auth-file")
		if secret, err = authSecret(path); err != nil {
			if path != cliDefaultAuthFile {
				return "", nil, "", fmt.Errorf("couldn't read auth file at %q (non-default path): %w", path, err)
			}
			if !errors.Is(err, os.ErrNotExist) {
				return "", nil, "", fmt.Errorf("couldn't read default auth file at %q: %w", path, err)
			}
			return "", nil, "", fmt.Errorf("couldn't read default auth file at %q: %w, and no auto-configured client auth file was found", path, err)
		}
	}
	if strings.Contains(addr, "://") {
		return "", nil, "", fmt.Errorf("specifying a URI scheme in the address is not supported: %q", addr)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", nil, "", fmt.Errorf("invalid target address %q; bare addresses must be in 'host:port' form (for IPv6, use the '[address]:port' notation): %w", addr, err)
	}
	return addr, cert, secret, nil
}

// api calls the management API; errors read like grpc-go's.
func (c *cli) api(method string, body, out any) error {
	addr, cert, secret, err := c.managementConfig()
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", addr, 20*time.Second)
	if err != nil {
		return fmt.Errorf("rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: %v\"", err)
	}
	defer func() { _ = conn.Close() }() // one exchange, read to its end
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if !c.boolFlag("tls-disable") {
		pool, perr := x509.SystemCertPool()
		if perr != nil {
			pool = x509.NewCertPool()
		}
		if cert != nil && !pool.AppendCertsFromPEM(cert) {
			return errors.New("error creating gRPC client: appending provided certificate to pool failed")
		}
		host, _, _ := net.SplitHostPort(addr)
		tc := tls.Client(conn, &tls.Config{RootCAs: pool, ServerName: host, InsecureSkipVerify: c.boolFlag("tls-disable-verification"), MinVersion: tls.VersionTLS12}) //nolint:gosec // G402: the real flag
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("rpc error: code = Unavailable desc = connection error: desc = \"transport: authentication handshake failed: %v\"", err)
		}
		c.usedTLS, c.peerCerts = true, tc.ConnectionState().PeerCertificates
		conn = tc
	}
	req := request{Msg: method, Auth: secret}
	if body != nil {
		if req.Body, err = json.Marshal(body); err != nil {
			return err
		}
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return fmt.Errorf("rpc error: code = Unavailable desc = connection error: desc = %q", err.Error())
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return errors.New("rpc error: code = Unavailable desc = connection error: desc = \"error reading server preface: unexpected EOF\"")
	}
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return fmt.Errorf("rpc error: code = Internal desc = %v", err)
	}
	if !rep.OK {
		return errors.New("rpc error: " + rep.Error)
	}
	if out != nil {
		return json.Unmarshal(rep.Body, out)
	}
	return nil
}

func (c *cli) targets() ([]apiTarget, error) {
	var ts []apiTarget
	err := c.api(grpcGetTargets, nil, &ts)
	return ts, err
}

// alerts are the real post-command warnings on stderr (8.4).
func (c *cli) alerts() {
	ts, err := c.targets()
	if err != nil {
		return
	}
	var lic licenseInfo
	if err := c.api(grpcGetLicense, nil, &lic); err != nil {
		return
	}
	if lic.Result != "valid" {
		_, _ = fmt.Fprintf(c.stderr, "WARNING: This system does not have a valid license installed.\nTo avoid disruptions, run 'beegfs license' and follow the required steps.\nReason: %s.\n", lic.Message)
	}
	if c.boolFlag("disable-alerts") {
		return
	}
	tlsStatus, _ := c.tlsStatus()
	r, co, ca, m := checkTargets(ts)
	if tlsStatus != statusHealthy || r != statusHealthy || co != statusHealthy || ca != statusHealthy || m != statusHealthy {
		_, _ = fmt.Fprintf(c.stderr, "WARNING: One or more health checks are failing, run 'beegfs health check' for more details. Set the global disable-alerts flag to turn off this message.\n")
	}
}

func (c *cli) nodeList() error {
	if err := c.exactArgs(0, "list"); err != nil {
		return err
	}
	var nodes []apiNode
	if err := c.api(grpcGetNodes, nil, &nodes); err != nil {
		return fmt.Errorf("unable to proceed without a working management node: %w", err)
	}
	columns := []string{"id", "type", "alias"}
	if c.boolFlag("with-nics") || c.boolFlag("reachability-check") {
		columns = append(columns, "nics")
	}
	filter := c.flag("node-type")
	tbl := newTable(c, []string{"uid", "id", "type", "alias", "nics", "reachable"}, columns)
	for _, n := range nodes {
		if filter != "" && n.Type != nodeTypeFromString(filter) {
			continue
		}
		nic := "-"
		if n.Addr != "" {
			nic = fmt.Sprintf("tcp:eth0 (%s)", n.Addr)
		}
		tbl.add(fmt.Sprintf("uid:%d", n.UID), legacyID(n.Type, n.ID), n.Type, n.Alias, nic, "?")
	}
	tbl.flush()
	return nil
}

func (c *cli) targetList() error {
	if err := c.exactArgs(0, "list"); err != nil {
		return err
	}
	ts, err := c.targets()
	if err != nil {
		return err
	}
	printTargetList(c, ts, c.boolFlag("state"), c.boolFlag("capacity"), nodeTypeFromString(c.flag("node-type")))
	return nil
}

// delete is target delete and node delete: a dry run without --yes; every
// message on stderr.
func (c *cli) delete(kind string) error {
	if err := c.exactArgs(1, "delete <"+kind+">"); err != nil {
		return err
	}
	accepted := []string{nodeStorage}
	if kind == "node" {
		accepted = []string{nodeClient, nodeMeta, nodeStorage}
	}
	id, err := parseEntityID(c.args[0], accepted)
	if err != nil {
		return err
	}
	execute := c.boolFlag("yes")
	method := grpcDeleteTarget
	if kind == "node" {
		method = grpcDeleteNode
	}
	var e entity
	if err := c.api(method, deleteRequest{Entity: id, Execute: execute}, &e); err != nil {
		return err
	}
	shown := fmt.Sprintf("%s[%s, uid:%d]", e.Alias, legacyID(e.Type, e.ID), e.UID)
	title := strings.ToUpper(kind[:1]) + kind[1:]
	switch {
	case execute:
		_, _ = fmt.Fprintf(c.stderr, "%s deleted: %s\n", title, shown)
	case kind == "target":
		_, _ = fmt.Fprintf(c.stderr, "Target can be deleted: %s\nDeleting a target might cause adverse effects to your file system and should only be done if no files using it are left. If you really want to delete the target, please add the --yes flag to the command.\n", shown)
	case e.Type == nodeMeta:
		_, _ = fmt.Fprintf(c.stderr, "Node can be deleted: %s\nDeleting a meta node might cause adverse effects to your file system and should only be done if no files using it or its internal target are left. If you really want to delete the node, please add the --yes flag to the command. ", shown)
	default:
		_, _ = fmt.Fprintf(c.stderr, "Node can be deleted: %s\nDeleting a node should be safe if no targets are left assigned to it. If you really want to delete the node, please add the --yes flag to the command. ", shown)
	}
	return nil
}

// nodeTypeFromString is the real prefix match: any prefix of metadata,
// storage or client, or two letters or more of management or mgmtd.
func nodeTypeFromString(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return ""
	case len(s) >= 2 && (strings.HasPrefix("management", s) || strings.HasPrefix("mgmtd", s)):
		return nodeManagement
	case strings.HasPrefix("client", s):
		return nodeClient
	case strings.HasPrefix("storage", s):
		return nodeStorage
	case strings.HasPrefix("metadata", s):
		return nodeMeta
	}
	return "<invalid>"
}

// legacyID is the real short form: m:1, s:101, c:3, mg:1.
func legacyID(typ string, id uint32) string {
	short := typ[:1]
	if typ == nodeManagement {
		short = "mg"
	}
	return fmt.Sprintf("%s:%d", short, id)
}

// parseEntityID reads a target or node the way the real parser does:
// type:id, uid:N, an alias, or a bare number when one type is accepted.
func parseEntityID(input string, accepted []string) (entityID, error) {
	input = strings.TrimSpace(input)
	if lhs, rhs, ok := strings.Cut(input, ":"); ok {
		lhs, rhs = strings.ToLower(strings.TrimSpace(lhs)), strings.TrimSpace(rhs)
		if lhs == "uid" {
			uid, err := strconv.ParseInt(rhs, 10, 64)
			if err != nil || uid <= 0 {
				return entityID{}, fmt.Errorf("invalid entity uid '%s' - accepted is a range from 1 to 2^63-1", rhs)
			}
			return entityID{UID: uint64(uid)}, nil
		}
		typ := nodeTypeFromString(lhs)
		if !contains(accepted, typ) {
			var b strings.Builder
			for _, a := range accepted {
				fmt.Fprintf(&b, "'%s', ", a)
			}
			return entityID{}, fmt.Errorf("invalid id type specifier '%s' - accepted are %s'uid'", lhs, b.String())
		}
		id, err := numID(rhs)
		if err != nil {
			return entityID{}, err
		}
		return entityID{Type: typ, ID: id}, nil
	}
	if validEntityAlias(input) {
		return entityID{Alias: input}, nil
	}
	if len(accepted) == 1 {
		if id, err := numID(input); err == nil {
			return entityID{Type: accepted[0], ID: id}, nil
		}
	}
	return entityID{}, fmt.Errorf("invalid alias '%s': must start with a letter and may only contain letters, digits, '-', '_' and '.'", input)
}

func validEntityAlias(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter || !letter && !(r >= '0' && r <= '9') && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return s != ""
}

// numID is the real IdFromString for 16-bit IDs.
func numID(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("invalid id '%s' - accepted is a range from 1 to 2^16 - 1", s)
	}
	return uint32(n), nil
}
