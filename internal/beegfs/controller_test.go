package beegfs

import (
	"context"
	"strings"
	"testing"
)

type missingFile struct{}

func (missingFile) ReadFile(context.Context, string) ([]byte, bool, error) { return nil, false, nil }

// A key.pem gone between the read of the controller's state and the certificate is named as
// such, not printed as a nil error.
func TestMissingTLSKeyIsNamed(t *testing.T) {
	_, err := readExistingTLSKey(context.Background(), missingFile{})
	if err == nil || strings.Contains(err.Error(), "%!") || !strings.Contains(err.Error(), "key.pem") || !strings.Contains(err.Error(), "apply again") {
		t.Errorf("err = %v, want key.pem named with what to do", err)
	}
}
