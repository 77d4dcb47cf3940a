package transport

import (
	"path/filepath"
	"testing"
)

// runsOf is a script that counts its runs in a file and prints the count, so a caller can tell
// a run from an answer shared from an earlier one.
func runsOf(t *testing.T) string {
	t.Helper()
	counter := filepath.Join(t.TempDir(), "runs")
	return NewScript().Set("f", counter).Text(`n=$(cat -- "$f" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$f"; echo "$n"`).String()
}

func TestReadIsSharedUntilAChange(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	ctx := testContext(t)
	script := runsOf(t)
	read := func() string {
		t.Helper()
		res, err := h.Read(ctx, script)
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Stdout)
	}
	if first, second := read(), read(); first != "1\n" || second != "1\n" {
		t.Fatalf("two reads saw %q and %q, want the second answered by the first", first, second)
	}
	if _, err := h.Sudo(ctx, "true", nil); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "2\n" {
		t.Errorf("a read after a change saw %q, want a run of its own", got)
	}
}

func TestSudoIsNeverShared(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	ctx := testContext(t)
	script := runsOf(t)
	if _, err := h.Read(ctx, script); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2\n", "3\n"} {
		res, err := h.Sudo(ctx, script, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Stdout); got != want {
			t.Errorf("Sudo of a script read before saw %q, want %q from a run of its own", got, want)
		}
	}
}

func TestFailedReadIsNotShared(t *testing.T) {
	h := sudoHost(t, fakeSudo, "right pw")
	ctx := testContext(t)
	script := runsOf(t) + `[ "$n" -gt 1 ]` + "\n"
	if _, err := h.Read(ctx, script); err == nil {
		t.Fatal("the first read succeeded, want it to fail")
	}
	res, err := h.Read(ctx, script)
	if err != nil || string(res.Stdout) != "2\n" {
		t.Errorf("the read after a failed one got %q, %v; want a run of its own that succeeds", res.Stdout, err)
	}
}
