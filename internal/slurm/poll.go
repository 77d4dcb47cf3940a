package slurm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Backoff bounds for polling a daemon: quick first retries, since a healthy
// slurmctld answers within a second, then no faster than every two seconds.
const (
	firstPoll = 200 * time.Millisecond
	maxPoll   = 2 * time.Second
)

// errNotYet is what a check returns while the awaited state is not there.
var errNotYet = errors.New("not yet")

// poll runs check until it succeeds, with exponential backoff, for at most
// timeout or until ctx ends. The error says what the last check saw.
func poll(ctx context.Context, timeout time.Duration, what string, check func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := firstPoll
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%s: gave up after %s: %w", what, timeout, err)
		case <-timer.C:
		}
		wait = min(2*wait, maxPoll)
	}
}
