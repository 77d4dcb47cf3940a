package main

// STAND-IN: `beegfs health check`, the guide's verification, with the real
// sections, checks, marks and exit status (beegfs-go v8.4.0,
// ctl/internal/cmd/health/check.go).

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

type healthStatus int

const (
	statusUnknown healthStatus = iota
	statusHealthy
	statusDegraded
	statusCritical
)

func (c *cli) mark(s healthStatus) string {
	if c.boolFlag("disable-emojis") {
		return [...]string{"(UNKNOWN)", "(HEALTHY)", "(DEGRADED)", "(CRITICAL)"}[s]
	}
	return [...]string{"❓", "✅", "\u26A0\ufe0f ", "🛑"}[s]
}

func worse(a, b healthStatus) healthStatus { return max(a, b) }

// checkTargets is the real target checks: each status the worst of all
// targets'.
func checkTargets(ts []apiTarget) (reach, consistency, capacity, mapping healthStatus) {
	reach, consistency, capacity, mapping = statusHealthy, statusHealthy, statusHealthy, statusHealthy
	for _, t := range ts {
		reach = worse(reach, map[string]healthStatus{"poffline": statusDegraded, "offline": statusCritical}[t.Reachability])
		consistency = worse(consistency, map[string]healthStatus{"needs_resync": statusDegraded, "bad": statusCritical}[t.Consistency])
		capacity = worse(capacity, map[string]healthStatus{"low": statusDegraded, "emergency": statusCritical}[t.CapPool])
		if t.Node == nil {
			mapping = statusDegraded
		}
	}
	return reach, consistency, capacity, mapping
}

// tlsStatus is the Management TLS check of the certificate the API showed.
func (c *cli) tlsStatus() (healthStatus, string) {
	if !c.usedTLS {
		return statusDegraded, "Not in use"
	}
	return tlsCertStatus(c.peerCerts, c.now())
}

func tlsCertStatus(certs []*x509.Certificate, now time.Time) (healthStatus, string) {
	if len(certs) == 0 {
		return statusCritical, "No certificates were presented by the node"
	}
	earliest := certs[0].NotAfter
	for _, cert := range certs[1:] {
		if cert.NotAfter.Before(earliest) {
			earliest = cert.NotAfter
		}
	}
	remaining := earliest.Sub(now)
	msg := "Certificate " + expirationString(remaining)
	switch {
	case remaining < 30*24*time.Hour:
		return statusCritical, msg
	case remaining < 90*24*time.Hour:
		return statusDegraded, msg
	}
	return statusHealthy, msg
}

func expirationString(remaining time.Duration) string {
	switch {
	case remaining > 0 && remaining < time.Hour:
		return "expires in less than an hour"
	case remaining > 0:
		return "expires in " + roundHoursOrDays(remaining)
	case remaining > -time.Hour:
		return "expired less than an hour ago"
	}
	return "expired " + roundHoursOrDays(-remaining) + " ago"
}

func roundHoursOrDays(d time.Duration) string {
	count, unit := int(d.Round(time.Hour)/time.Hour), "hour"
	if d >= 24*time.Hour {
		count, unit = int(d.Round(24*time.Hour)/(24*time.Hour)), "day"
	}
	if count != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", count, unit)
}

// header is the real sPrintHeader: the text between lines of char as long
// as its longest line, shorter lines centred.
func header(text, char string) string {
	lines := strings.Split(text, "\n")
	longest, at := 0, 0
	for i, l := range lines {
		if len(l) > longest {
			longest, at = len(l), i
		}
	}
	rule := strings.Repeat(char, longest)
	var b strings.Builder
	b.WriteString(rule + "\n")
	for i, l := range lines {
		if i != at {
			b.WriteString(strings.Repeat(" ", (longest-len(l))/2))
		}
		b.WriteString(l + "\n")
	}
	b.WriteString(rule + "\n")
	return b.String()
}

// managementError adds the real hints for TLS mismatches.
func managementError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: first record does not look like a TLS handshake"):
		return fmt.Errorf("unable to proceed without a working management node: %w\n(hint: TLS does not appear to be enabled on the management, try setting tls-disable)", err)
	case strings.Contains(msg, "error reading server preface: unexpected EOF"):
		return fmt.Errorf("unable to proceed without a working management node: %w\n(hint: TLS appears to be enabled on the management but disabled in CTL, try unsetting tls-disable and configure tls-cert-file if needed)", err)
	case strings.Contains(msg, "failed to verify certificate"):
		return fmt.Errorf("unable to proceed without a working management node: %w\n(hint: TLS appears to be enabled on the management, verify CTL has the correct certificates installed at the path specified by tls-cert-file or added to the system certificate chain)", err)
	}
	return fmt.Errorf("unable to proceed without a working management node: %w", err)
}

func (c *cli) healthCheck() error {
	if _, _, _, err := c.managementConfig(); err != nil {
		return fmt.Errorf("unable to proceed without a working management node: %w", err)
	}
	var fs fsUUIDReply
	if err := c.api(grpcGetFsUUID, nil, &fs); err != nil {
		return managementError(fmt.Errorf("unable to get file system UUID from the management node: %w", err))
	}
	hint := func(s string) string {
		if c.boolFlag("no-hints") {
			return ""
		}
		return s
	}
	out := &strings.Builder{}
	defer func() { _, _ = fmt.Fprint(c.stdout, out.String()) }()
	failed := false
	out.WriteString(header(fmt.Sprintf("Running Health Check for beegfs://%s\n(Filesystem UUID: %s)", c.flag("mgmtd-addr"), fs.FsUUID), "#"))
	out.WriteString(header(">>>>> General Checks <<<<<", "#"))
	ts, err := c.targets()
	if err != nil {
		return err
	}
	tlsStatus, tlsMsg := c.tlsStatus()
	failed = failed || tlsStatus != statusHealthy
	fmt.Fprintf(out, "\n%s Management TLS %s", c.mark(tlsStatus), hint("-> "+tlsMsg+"."))
	licStatus, licMsg := c.licenseStatus()
	failed = failed || licStatus != statusHealthy
	fmt.Fprintf(out, "\n%s License Status %s", c.mark(licStatus), hint(licMsg))
	out.WriteString("\n\n")
	out.WriteString(header(">>>>> Checking for Busy Nodes <<<<<", "#"))
	fmt.Fprintf(out, "\n%s Busy Metadata Nodes %s", c.mark(statusHealthy), hint("-> Number of queued requests does not exceed the degraded (16) or critical (512) thresholds."))
	fmt.Fprintf(out, "\n%s Busy Storage Nodes %s", c.mark(statusHealthy), hint("-> Number of queued requests does not exceed the degraded (16) or critical (512) thresholds."))
	out.WriteString("\n\n")
	out.WriteString(header(">>>>> Checking Targets <<<<<", "#"))
	reach, consistency, capacity, mapping := checkTargets(ts)
	for _, l := range []struct {
		prefix, name string
		status       healthStatus
		good, bad    string
		suffix       string
	}{
		{"\n", "Reachability", reach, "All targets are responding.", "Not all targets are responding.", "\n"},
		{"", "Consistency", consistency, "All mirrors are synchronized.", "Not all mirrors are synchronized.", "\n"},
		{"", "Available Capacity", capacity, "All targets have sufficient free space based on the thresholds defined by the management service's configuration.", "Not all targets have sufficient free space based on the thresholds defined by the management service's configuration.", "\n"},
		{"", "Mapping Status", mapping, "All targets are mapped to a storage node.", "Not all targets are mapped to a storage node.", "\n\n"},
	} {
		text := l.good
		if l.status != statusHealthy {
			text = l.bad
		}
		fmt.Fprintf(out, "%s%s %s %s%s", l.prefix, c.mark(l.status), l.name, hint("-> "+text), l.suffix)
	}
	unhealthy := reach != statusHealthy || consistency != statusHealthy || capacity != statusHealthy || mapping != statusHealthy
	if unhealthy || c.boolFlag("print-df") {
		failed = failed || unhealthy
		c.printDF(out, ts)
	}
	out.WriteString(hint("HINT: This mode does not check file system consistency. To check for file system inconsistencies,\n      you can run 'beegfs-fsck --checkfs --readOnly' and consult with ThinkParQ support.\n"))
	out.WriteString("\n")
	out.WriteString(header(">>>>> Checking Connections to Server Nodes <<<<<", "#"))
	if c.flag("force-connections") == "true" {
		if err := exec.Command("df", "-t", "beegfs").Run(); err != nil {
			fmt.Fprintf(out, "Error establishing new connections, further connection checks may be incomplete or skipped: error forcing establishment of BeeGFS client/server connections: %v (ignoring)\n", err)
			out.WriteString(hint("HINT: Try increasing the '--connection-timeout' flag or setting '--force-connections=false` to skip establishing new connections.\n\n"))
		}
	}
	out.WriteString("No client mounts found, skipping connection checks\n\n")
	if failed && !c.boolFlag("ignore-failed-checks") {
		out.WriteString("\n\a")
		return errors.New("one or more checks failed")
	}
	return nil
}

// licenseStatus is the License Status check and its text.
func (c *cli) licenseStatus() (healthStatus, string) {
	var lic licenseInfo
	if err := c.api(grpcGetLicense, nil, &lic); err != nil {
		// The real check prints the wrong error variable here, always nil.
		return statusCritical, "-> Error checking status (%!s(<nil>))."
	}
	if lic.Result != "valid" {
		return statusCritical, "-> No valid license found. Run 'beegfs license' for more details."
	}
	remaining := time.Until(lic.ValidUntil.Add(-12 * time.Hour))
	if remaining <= 90*24*time.Hour {
		return statusDegraded, "-> Nearing expiration (" + expirationString(remaining) + "). Run 'beegfs license' for more details."
	}
	return statusHealthy, "-> No issues detected. Run 'beegfs license' for more details."
}

// printDF prints the meta and storage targets as two tables by ID, with
// their state and capacity.
func (c *cli) printDF(out *strings.Builder, ts []apiTarget) {
	var meta, storage []apiTarget
	for _, t := range ts {
		if t.Type == nodeMeta {
			meta = append(meta, t)
		} else {
			storage = append(storage, t)
		}
	}
	sortTargets(meta)
	sortTargets(storage)
	sub := *c
	sub.stdout = out
	out.WriteString(header("Metadata Targets", "-"))
	printTargetList(&sub, meta, true, true, "")
	out.WriteString(header("Storage Targets", "-"))
	printTargetList(&sub, storage, true, true, "")
}
