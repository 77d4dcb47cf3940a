package transport

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// tally counts what a run asked of one connection (a user on a node): the commands that ran
// there, the reads answered by another caller's, the bytes that came back and the time the
// commands took. Close logs it at INFO, one line per connection, so TF_LOG=info shows where a
// plan spent its time without DEBUG's every command.
type tally struct {
	cfg    Config
	logCtx context.Context // the first caller's, which only tags the summary
	since  time.Time

	mu       sync.Mutex
	commands int
	shared   int
	received int
	busy     time.Duration
}

// tally returns cfg's tally, started by the run's first dial of that connection.
func (p *Pool) tally(ctx context.Context, cfg Config) *tally {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := cfg.key()
	t, ok := p.tallies[key]
	if !ok {
		t = &tally{cfg: cfg, logCtx: ctx, since: time.Now()}
		p.tallies[key] = t
	}
	return t
}

// ran counts one command that ran on the host and returned received bytes after took.
func (t *tally) ran(took time.Duration, received int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.commands++
	t.received += received
	t.busy += took
}

// sharedRead counts a read answered by the same read of another caller, which ran nothing.
func (t *tally) sharedRead() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shared++
}

// logSummaries logs each connection's tally, in a stable order, and forgets them.
func (p *Pool) logSummaries() {
	p.mu.Lock()
	tallies := p.tallies
	p.tallies = map[string]*tally{}
	p.mu.Unlock()
	for _, key := range slices.Sorted(maps.Keys(tallies)) {
		t := tallies[key]
		t.mu.Lock()
		fields := map[string]any{
			"node": t.cfg.Name, "address": t.cfg.hostPort(), "user": t.cfg.User,
			"commands": t.commands, "shared_reads": t.shared, "bytes_received": t.received,
			"command_ms": t.busy.Milliseconds(), "duration_ms": time.Since(t.since).Milliseconds(),
		}
		t.mu.Unlock()
		p.info(t.logCtx, "ssh run summary", fields)
	}
}
