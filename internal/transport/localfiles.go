package transport

import (
	"os"
	"path/filepath"
	"strings"
)

// ExpandHome turns a leading "~/" into the home directory of the user running Terraform, as
// ssh does for its own files; any other path, or a home that cannot be found, is left as is.
func ExpandHome(p string) string {
	if !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[2:])
}

// ReadPrivateKeyFile reads an SSH private key from the machine running Terraform; path may
// start with "~/".
func ReadPrivateKeyFile(path string) ([]byte, error) {
	return os.ReadFile(ExpandHome(path))
}
