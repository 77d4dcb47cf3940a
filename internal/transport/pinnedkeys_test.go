package transport

import "testing"

func TestKeysForPinsOnlyTheNamedHosts(t *testing.T) {
	pins, err := ParsePinnedKeys([]string{
		"login01,10.0.0.10 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC4mYlGrvxA7bR1X2R3c3lQ3Q3oPpZb8cYy1yVvQm3V1",
		"[gpu09]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBcP3n3s3S9rIYQ2aL2rN1Vf5mA1zgmQ0kA8jY8bX9cZ",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := KeysFor(pins, 22, "login01"); len(got) != 1 {
		t.Errorf("login01: got %v, want its pinned key", got)
	}
	if got := KeysFor(pins, 22, "gpu01", "10.0.0.11"); len(got) != 0 {
		t.Errorf("gpu01: got %v; a key pinned for login01 must not vouch for gpu01", got)
	}
	if got := KeysFor(pins, 22, "gpu09"); len(got) != 0 {
		t.Errorf("gpu09 on port 22: got %v, want none (pinned for port 2222)", got)
	}
	if got := KeysFor(pins, 2222, "gpu09"); len(got) != 1 {
		t.Errorf("gpu09 on port 2222: got %v, want its pinned key", got)
	}
}

func TestParsePinnedKeysRefusesLinesWithoutHosts(t *testing.T) {
	for _, line := range []string{
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC4mYlGrvxA7bR1X2R3c3lQ3Q3oPpZb8cYy1yVvQm3V1",
		"login01 ssh-ed25519 not-base64",
	} {
		if _, err := ParsePinnedKeys([]string{line}); err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}
