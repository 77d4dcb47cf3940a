package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// The FieldError fields of the job scripts, apart from slurm.conf's keys, which they set too.
const (
	PrologField = "PrologScript"
	EpilogField = "EpilogScript"
)

// MaxJobScriptSize bounds a job script: it travels in the controller's fragment and in every
// configless node's fetch of the configuration.
const MaxJobScriptSize = 64 << 10

// CheckJobScript refuses a job script slurmd could not run as a program: it is executed
// directly, so it needs an interpreter line; a NUL would end it early.
func CheckJobScript(content string) error {
	switch {
	case content == "":
		return nil
	case len(content) > MaxJobScriptSize:
		return fmt.Errorf("the script has %d bytes, more than %d", len(content), MaxJobScriptSize)
	case strings.IndexByte(content, 0) >= 0:
		return errors.New("the script contains a NUL byte")
	case !strings.HasPrefix(content, "#!/"):
		return errors.New("the script must start with an interpreter line such as #!/bin/sh")
	}
	return nil
}

// scriptBytes is a job script's file content, nil for none (the file is removed).
func scriptBytes(content string) []byte {
	if content == "" {
		return nil
	}
	return []byte(content)
}

// sameScripts compares the job scripts of two sets of files.
func sameScripts(a, b Files) bool {
	return bytes.Equal(a.Prolog, b.Prolog) && bytes.Equal(a.Epilog, b.Epilog)
}
