package main

// STAND-IN: the license the real 8.4 tools require. The real service loads
// ThinkParQ's license library (package libbeegfs-license) and verifies the
// signed certificate at license-cert-file; the stand-in reads its own plain
// text certificate, which only the lab writes (see FIDELITY.md), so that the
// guide's `beegfs health check` can pass on the lab.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// licenseMagic opens every stand-in license certificate.
const licenseMagic = "# STAND-IN BeeGFS license certificate (gpucluster lab only)"

// licenseInfo answers GetLicense: Result is "valid" or "invalid".
type licenseInfo struct {
	Result     string    `json:"result"`
	Message    string    `json:"message,omitempty"`
	Type       string    `json:"type,omitempty"`
	ValidUntil time.Time `json:"valid_until"`
}

// readLicense reads the certificate. A missing or unreadable one is not a
// start-up error: the service runs, and GetLicense reports the license
// invalid, which is what fails the CLI's health check.
func readLicense(path string) (*licenseInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return &licenseInfo{Result: "invalid", Message: fmt.Sprintf("Could not read license certificate %q: %s", path, osErrorText(err))}, nil
	}
	defer func() { _ = f.Close() }() // read only
	info := &licenseInfo{Result: "valid", Type: "standard"}
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != licenseMagic {
		return &licenseInfo{Result: "invalid", Message: "Certificate is not a valid BeeGFS license certificate"}, nil
	}
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "valid-until":
			if info.ValidUntil, err = time.Parse(time.RFC3339, strings.TrimSpace(value)); err != nil {
				return nil, fmt.Errorf("license certificate %s: valid-until: %w", path, err)
			}
		case "type":
			info.Type = strings.TrimSpace(value)
		}
	}
	if info.ValidUntil.IsZero() {
		return nil, errors.New("license certificate " + path + " has no valid-until")
	}
	if time.Now().After(info.ValidUntil) {
		info.Result, info.Message = "invalid", "Certificate has expired"
	}
	return info, nil
}
