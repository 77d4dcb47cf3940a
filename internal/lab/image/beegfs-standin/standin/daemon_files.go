package main

// Small file and system helpers of the STAND-IN daemons.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// checkFormatVersion refuses a format.conf of a version the daemon cannot
// read, as StorageTk::checkStorageFormatFile does; a missing one is new.
func checkFormatVersion(dir string, minVersion, maxVersion int) error {
	content, err := os.ReadFile(filepath.Join(dir, "format.conf"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(content), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "version" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < minVersion || n > maxVersion {
			return invalidConfig("Incompatible storage format: %s (required min: %d required max : %d)", strings.TrimSpace(v), minVersion, maxVersion)
		}
	}
	return nil
}

// generateFileID makes an ID the way StorageTk::generateFileID does:
// random, time and node in hex.
func generateFileID(nodeID uint32) string {
	return fmt.Sprintf("%X-%X-%X", rand.Uint32()&0xFFFF, time.Now().Unix(), nodeID)
}

// readOrCreate returns the first line of p, writing gen()'s value first
// when p is missing.
func readOrCreate(p string, gen func() string) (string, error) {
	if content, err := os.ReadFile(p); err == nil {
		if first, _, _ := strings.Cut(string(content), "\n"); strings.TrimSpace(first) != "" {
			return strings.TrimSpace(first), nil
		}
	}
	v := gen()
	return v, os.WriteFile(p, []byte(v+"\n"), 0o644)
}

// findmnt asks util-linux for one column of the filesystem holding p.
func findmnt(p, column string) (string, error) {
	out, err := exec.Command("findmnt", "-n", "-o", column, "--target", p).Output()
	return strings.TrimSpace(string(out)), err
}
