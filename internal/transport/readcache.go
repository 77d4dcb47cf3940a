package transport

import (
	"bytes"
	"context"
	"sync"
)

// readCache holds one machine's shared reads (Host.Read), by script. generation counts the changes begun and
// finished on the machine: a read is kept only when no change began or ended while it ran, so
// a cached result never predates a change the provider made.
type readCache struct {
	mu         sync.Mutex
	generation uint64
	reads      map[string]*sharedRead
}

type sharedRead struct {
	done chan struct{}
	res  Result
	err  error
}

// changing marks a change on the machine; call it when the change begins and when it ends.
func (c *readCache) changing() {
	c.mu.Lock()
	c.generation++
	c.reads = nil
	c.mu.Unlock()
}

// read returns the shared result of script, running it through run when no caller of the
// current generation has. A failed read is not shared: the next caller tries again.
func (c *readCache) read(ctx context.Context, script string, run func() (Result, error)) (Result, error) {
	c.mu.Lock()
	for r, ok := c.reads[script]; ok; r, ok = c.reads[script] {
		c.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return Result{Status: -1}, ctx.Err()
		}
		if r.err == nil {
			return r.res.clone(), nil
		}
		// The read failed for the caller that ran it (its deadline, say): try on our own.
		c.mu.Lock()
	}
	r := &sharedRead{done: make(chan struct{})}
	if c.reads == nil {
		c.reads = map[string]*sharedRead{}
	}
	c.reads[script] = r
	generation := c.generation
	c.mu.Unlock()

	r.res, r.err = run()
	c.mu.Lock()
	if r.err != nil && c.generation == generation && c.reads[script] == r {
		delete(c.reads, script)
	}
	c.mu.Unlock()
	close(r.done)
	return r.res.clone(), r.err
}

// clone gives each caller output of its own: one that parses in place or wipes what it read
// must not change what the next caller is handed.
func (r Result) clone() Result {
	r.Stdout, r.Stderr = bytes.Clone(r.Stdout), bytes.Clone(r.Stderr)
	return r
}
