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
