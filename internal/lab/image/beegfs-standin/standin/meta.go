package main

// The STAND-IN beegfs-meta: the real metadata daemon's start-up checks,
// files and registration (daemon.go), with one directory
// (storeMetaDirectory) and a single storeFsUUID.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

func init() { tools["beegfs-meta"] = metaMain }

func metaMain(args []string) int {
	return runDaemon(daemonSpec{
		name:           "beegfs-meta",
		title:          "BeeGFS Metadata Node",
		nodeType:       nodeMeta,
		portKey:        "connMetaPort",
		port:           portMeta,
		preregCanceled: "Pre-registration at management node canceled",
		defaults:       daemonDefaults("beegfs-meta", "connMetaPort", portMeta),
		preinit:        metaPreinit,
		checkUUIDs:     metaCheckUUID,
		dirs:           func(d *daemon) []string { return []string{d.conf["storeMetaDirectory"]} },
		initStorage:    metaInitStorage,
		prepare:        metaPrepare,
		record:         func(*daemon, heartbeatReply) error { return nil },
		handle:         metaHandle,
	}, args)
}

// daemonDefaults are the compiled-in defaults the daemons share: the ones a
// config file that lacks a key falls back to (logType is logfile there,
// the shipped files say syslog).
func daemonDefaults(name, portKey string, port int) map[string]string {
	return map[string]string{
		"storeAllowFirstRunInit":  "true",
		"connMgmtdPort":           "8008",
		"connPortShift":           "0",
		portKey:                   itoa(port),
		"logType":                 "logfile",
		"logStdFile":              "/var/log/" + name + ".log",
		"storeUseExtendedAttribs": "true",
	}
}

func metaPreinit(d *daemon) error {
	dir := d.conf["storeMetaDirectory"]
	if dir == "" {
		return invalidConfig("No metadata storage directory specified")
	}
	dir = filepath.Clean(dir)
	d.conf["storeMetaDirectory"] = dir
	if !filepath.IsAbs(dir) {
		return invalidConfig("Path to storage directory must be absolute: %s", dir)
	}
	if !exists(filepath.Join(dir, "format.conf")) && !d.conf.bool("storeAllowFirstRunInit") {
		return invalidConfig("Storage directory not initialized and initialization has been disabled: %s", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return invalidConfig("Unable to create metadata directory: %s (%s)", dir, sysErr(err))
	}
	if !d.lockDir(dir) {
		return invalidConfig("Unable to lock working directory: %s", dir)
	}
	return nil
}

func metaCheckUUID(d *daemon) error {
	want := d.conf["storeFsUUID"]
	if want == "" {
		d.log.warningf("App", "UUID of underlying file system has not been configured and will therefore not be checked. "+
			"To prevent starting the server accidentally with the wrong data, it is strongly recommended to set the storeFsUUID config parameter to the appropriate UUID.")
		return nil
	}
	have, err := fsUUID(d.conf["storeMetaDirectory"])
	if err != nil {
		return err
	}
	if have != want {
		return invalidConfig("UUID of the metadata file system (%s) does not match the one configured (%s)", have, want)
	}
	return nil
}

// metaInitStorage is initStorage: format.conf (version 4, xattr as
// storeUseExtendedAttribs says) and the hash directories.
func metaInitStorage(d *daemon) error {
	dir := d.conf["storeMetaDirectory"]
	if err := checkFormatVersion(dir, 3, 4); err != nil {
		return err
	}
	xattr := "false"
	if d.conf.bool("storeUseExtendedAttribs") {
		xattr = "true"
	}
	if !exists(filepath.Join(dir, "format.conf")) {
		d.log.warningf("App", "This appears to be a new storage directory. Creating a new root dir.")
	}
	if err := writeFormatFile(dir, "version=4", "xattr="+xattr); err != nil {
		return invalidConfig("Unable to create format file in: %s", dir)
	}
	for _, sub := range []string{"dentries", "inodes", "buddymir"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return invalidConfig("Unable to create directory: %s", filepath.Join(dir, sub))
		}
	}
	return nil
}

// metaPrepare adds the registrationToken (8.3 and later), created on first use.
func metaPrepare(d *daemon, hb *heartbeat) error {
	p := filepath.Join(d.conf["storeMetaDirectory"], "registrationToken")
	content, err := os.ReadFile(p)
	if err == nil && strings.TrimSpace(string(content)) != "" {
		hb.Token = strings.TrimSpace(string(content))
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	hb.Token = generateFileID(d.nodeID)
	if err := os.WriteFile(p, []byte(hb.Token+"\n"), 0o644); err != nil {
		return invalidConfig("Unable to create file for registration token %s", p)
	}
	return nil
}

// metaHandle answers a mount's question for the root directory.
func metaHandle(d *daemon, req request) (any, error) {
	if req.Msg != msgStatRoot {
		return nil, errors.New("unknown message " + req.Msg)
	}
	return map[string]any{"node_id": d.nodeID}, nil
}
