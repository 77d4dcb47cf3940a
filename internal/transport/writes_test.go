package transport

import (
	"context"
	"testing"
)

func TestWriteTrackerNotesOnlyCommandsThatCouldBeSent(t *testing.T) {
	ctx, w := TrackWrites(context.Background())
	if w.Sent() {
		t.Fatal("a fresh tracker reports a write")
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	noteWrite(ended)
	if w.Sent() {
		t.Fatal("a command under an ended context was counted as sent")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	noteWrite(child)
	if !w.Sent() {
		t.Fatal("a command under a live child context was not counted")
	}
	noteWrite(context.Background()) // no tracker: nothing to note, and no panic
}

func TestWriteTrackerNotesWorkCutShort(t *testing.T) {
	p := NewPool()
	ctx, w := TrackWrites(context.Background())
	if err := p.cutShort(ctx, "gpu01", errShellClosed); err == nil || !w.CutShort() {
		t.Fatalf("a root shell that ended: %v, cut short %v; want a lost connection noted", err, w.CutShort())
	}
	ctx, w = TrackWrites(context.Background())
	_ = p.cutShort(ctx, "gpu01", &ExitError{Host: "gpu01", Status: 1})
	if w.CutShort() {
		t.Fatal("a command that answered with a failure was taken for work cut short")
	}
}
