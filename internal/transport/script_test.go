package transport

import (
	"os/exec"
	"testing"
)

func TestScript(t *testing.T) {
	got := NewScript().Set("home", "/home/it's").Command("mkdir", "-p", "--", "a b").Text(`echo "$home"`).String()
	want := ScriptEnv + `home='/home/it'\''s'` + "\nmkdir -p -- 'a b'\necho \"$home\"\n"
	if got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
}

// The prelude makes an unset variable fail the script instead of standing for nothing.
func TestScriptUnsetVariableFails(t *testing.T) {
	script := NewScript().Text(`rm -rf -- "$dir/"`).String()
	if err := exec.Command("/bin/sh", "-c", script).Run(); err == nil {
		t.Fatal("a script that used an unset variable succeeded")
	}
}

func TestScriptSetRefusesBadName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Set with the name \"a b\" did not panic")
		}
	}()
	NewScript().Set("a b", "x")
}
