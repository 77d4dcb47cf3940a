package main

// The configuration of the STAND-IN metadata and storage daemons, read as
// the real daemons read theirs: defaults, then the file named by cfgFile=,
// then key=value arguments, each later one overriding (AbstractConfig's
// initConfig). Lines are trimmed and split at their first '=', '#' starts a
// comment line, and the last definition of a key wins (MapTk).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// configError is the real daemons' InvalidConfigException: printed as
// "Error: ..." with the version banner, exit status 1.
type configError struct{ msg string }

func (e configError) Error() string { return e.msg }

func invalidConfig(format string, a ...any) error { return configError{fmt.Sprintf(format, a...)} }

// daemonConf is the merged configuration of one daemon.
type daemonConf map[string]string

// loadDaemonConf merges defaults, the cfgFile named in args and args.
func loadDaemonConf(args []string, defaults map[string]string) (daemonConf, error) {
	fromArgs := daemonConf{}
	for _, a := range args {
		addConfLine(fromArgs, a)
	}
	c := daemonConf{}
	for k, v := range defaults {
		c[k] = v
	}
	if file := fromArgs["cfgFile"]; file != "" {
		content, err := os.ReadFile(file)
		if err != nil {
			return nil, invalidConfig("Failed to load map file: %s", file)
		}
		for _, line := range strings.Split(string(content), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				addConfLine(c, line)
			}
		}
	}
	for k, v := range fromArgs {
		c[k] = v
	}
	return c, nil
}

func addConfLine(c daemonConf, line string) {
	key, value, _ := strings.Cut(line, "=")
	c[strings.TrimSpace(key)] = strings.TrimSpace(value)
}

// bool reads a switch as StringTk::strToBool does: 1, y, yes, true (any case).
func (c daemonConf) bool(key string) bool {
	switch strings.ToLower(c[key]) {
	case "1", "y", "yes", "true":
		return true
	}
	return false
}

func (c daemonConf) int(key string) (int, error) {
	v := c[key]
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, invalidConfig("The config argument '%s' is invalid", key)
	}
	return n, nil
}

// list reads a comma-separated setting as the storage daemon's Config does:
// each element trimmed, empty elements dropped, so ",/data/a" is "/data/a".
func (c daemonConf) list(key string) []string {
	var out []string
	for _, e := range strings.Split(c[key], ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// authFile checks the shared secret as initConnAuthHash does and returns
// its path, "" when authentication is disabled.
func (c daemonConf) authFile() (string, error) {
	if c.bool("connDisableAuthentication") {
		return "", nil
	}
	file := c["connAuthFile"]
	if file == "" {
		return "", fmt.Errorf("No connAuthFile configured. Using BeeGFS without connection authentication is considered insecure and is not recommended. If you really want or need to run BeeGFS without connection authentication, please set connDisableAuthentication to true.")
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("Unable to open auth file: %s (SysErr: %s)", file, sysErr(err))
	}
	defer func() { _ = f.Close() }() // read only
	buf := make([]byte, 1024)
	n, err := f.Read(buf)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", invalidConfig("Unable to read auth file: %s (SysErr: %s)", file, sysErr(err))
	}
	if n < 4 {
		return "", invalidConfig("Auth file is empty: %s", file)
	}
	return file, nil
}

// sysErr is the strerror text of err, as System::getErrString prints it.
func sysErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	msg := err.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}
