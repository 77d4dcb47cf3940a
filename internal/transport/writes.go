package transport

import (
	"context"
	"sync/atomic"
)

// WriteTracker tells whether a command that may change a host was sent on behalf of a context,
// and whether work under it was cut short: a step that failed before sending one changed
// nothing, and can undo what it set up for itself; one cut short cannot tell what was done.
type WriteTracker struct {
	sent atomic.Bool
	cut  atomic.Bool
}

type writeTrackerKey struct{}

// TrackWrites returns a context whose privileged commands the tracker notes.
func TrackWrites(ctx context.Context) (context.Context, *WriteTracker) {
	w := &WriteTracker{}
	return context.WithValue(ctx, writeTrackerKey{}, w), w
}

// Sent reports whether a command that may change a host was sent.
func (w *WriteTracker) Sent() bool { return w.sent.Load() }

// CutShort reports whether work under the context was interrupted or lost its connection.
func (w *WriteTracker) CutShort() bool { return w.cut.Load() }

func noteCutShort(ctx context.Context) {
	if w, ok := ctx.Value(writeTrackerKey{}).(*WriteTracker); ok {
		w.cut.Store(true)
	}
}

// noteWrite marks ctx's tracker before a command that is not a read is sent; a context already
// ended sends nothing.
func noteWrite(ctx context.Context) {
	if w, ok := ctx.Value(writeTrackerKey{}).(*WriteTracker); ok && ctx.Err() == nil {
		w.sent.Store(true)
	}
}
