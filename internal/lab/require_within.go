package lab

import (
	"context"
	"time"
)

// CleanupTB is a TB that runs functions when the test ends, as testing.T does.
type CleanupTB interface {
	TB
	Cleanup(f func())
}

// RequireWithin is Require for a test that must be done with the lab within timeout: the
// context it returns ends then, or when the test ends.
func RequireWithin(t CleanupTB, timeout time.Duration) (context.Context, *Lab) {
	t.Helper()
	l := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx, l
}
