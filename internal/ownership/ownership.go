package ownership

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Dir holds one record per owned object, by kind: Dir/user/alice, Dir/slurm_partition/gpu.
const Dir = transport.StateDir + "/owners"

// Phase tells a finished create from one that was started and never finished.
type Phase string

const (
	// Creating is written before a create's first change, so an apply cut short leaves it behind.
	Creating Phase = "creating"
	// Created is written once the create finished, or once a partly made object is in state.
	Created Phase = "created"
)

// Object names one thing the provider writes: its kind (the resource type without the
// provider's prefix) and its name within that kind on the host that keeps its record.
type Object struct {
	Kind string
	Name string
}

var kindPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Path is where the object's record lives. Names become one path element: characters other than
// letters, digits, dot, dash and underscore are escaped as %XX, and so is a leading dot.
func (o Object) Path() (string, error) {
	if !kindPattern.MatchString(o.Kind) {
		return "", fmt.Errorf("ownership kind %q is not a lowercase word", o.Kind)
	}
	if o.Name == "" {
		return "", errors.New("ownership record of " + o.Kind + " has no name")
	}
	return Dir + "/" + o.Kind + "/" + escape(o.Name), nil
}

func (o Object) String() string { return o.Kind + " " + o.Name }

func escape(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || (c == '.' && i > 0)
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Record says which resource instance owns an object. Token is the instance's own, kept in its
// private state; the rest describes the owner to a person who meets the record.
type Record struct {
	Token    string
	Phase    Phase
	Resource string
	Workdir  string
	Machine  string
	User     string
	Since    time.Time
}

// Here is a record for a resource instance run from this process: Terraform starts the provider
// in its working directory, which with the machine and the login names the state to a person.
func Here(resource, token string, phase Phase, now time.Time) Record {
	r := Record{Token: token, Phase: phase, Resource: resource, Since: now.UTC().Truncate(time.Second)}
	r.Workdir, _ = os.Getwd()
	r.Machine, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		r.User = u.Username
	}
	return r
}

// FromHere tells a record written from this process's working directory and machine: the same
// configuration, or another workspace of it.
func (r Record) FromHere() bool {
	here := Here(r.Resource, r.Token, r.Phase, r.Since)
	return r.Workdir != "" && r.Workdir == here.Workdir && r.Machine == here.Machine
}

// Owner describes the owning state for a diagnostic.
func (r Record) Owner() string {
	where := "a Terraform working directory"
	if r.Workdir != "" {
		where = "the Terraform working directory " + r.Workdir
	}
	if r.Machine != "" {
		where += " on " + r.Machine
	}
	if r.User != "" {
		where += " (run by " + r.User + ")"
	}
	verb := "created it"
	if r.Phase == Creating {
		verb = "started creating it and did not finish"
	}
	return fmt.Sprintf("a %s in %s, which %s at %s", firstNonEmpty(r.Resource, "resource"), where, verb, r.Since.Format("2006-01-02 15:04 UTC"))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fields are the record's lines, in the order they are written.
var fields = []string{"token", "phase", "resource", "workdir", "machine", "user", "since"}

func (r Record) marshal() []byte {
	values := map[string]string{
		"token": r.Token, "phase": string(r.Phase), "resource": r.Resource, "workdir": r.Workdir,
		"machine": r.Machine, "user": r.User, "since": r.Since.UTC().Format(time.RFC3339),
	}
	var b bytes.Buffer
	b.WriteString("# Written by terraform-provider-gpucluster: the resource that owns this object.\n")
	b.WriteString("# Only that resource's destroy removes it; see the provider's ownership guide.\n")
	for _, f := range fields {
		b.WriteString(f + "=" + oneLine(values[f]) + "\n")
	}
	return b.Bytes()
}

// oneLine keeps a value from ending its line: a working directory may hold any byte.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9]{16,64}$`)

// parseRecord reads a record; a token that is missing or malformed makes it unusable, since only
// the token says who may change the object.
func parseRecord(content []byte) (Record, error) {
	var r Record
	seen := map[string]bool{}
	for _, line := range strings.Split(string(content), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return Record{}, fmt.Errorf("line %q is not key=value", line)
		}
		if seen[key] {
			return Record{}, fmt.Errorf("key %s appears twice", key)
		}
		seen[key] = true
		switch key {
		case "token":
			r.Token = value
		case "phase":
			r.Phase = Phase(value)
		case "resource":
			r.Resource = value
		case "workdir":
			r.Workdir = value
		case "machine":
			r.Machine = value
		case "user":
			r.User = value
		case "since":
			t, err := time.Parse(time.RFC3339, value)
			if err != nil {
				return Record{}, fmt.Errorf("since: %w", err)
			}
			r.Since = t
		}
	}
	if !tokenPattern.MatchString(r.Token) {
		return Record{}, errors.New("it has no valid token")
	}
	if r.Phase != Creating && r.Phase != Created {
		return Record{}, fmt.Errorf("phase %q is neither %s nor %s", r.Phase, Creating, Created)
	}
	return r, nil
}

// NewToken is a resource instance's token.
func NewToken() string { return rand.Text() }

// ValidToken tells a token this package could have made; one read back from private state is
// checked before it reaches a host.
func ValidToken(token string) bool { return tokenPattern.MatchString(token) }

// OwnedError is the refusal of an object whose record names another resource instance.
type OwnedError struct {
	Object Object
	Path   string
	Record Record
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("%s is owned by %s (record %s)", e.Object, e.Record.Owner(), e.Path)
}

// Read returns the object's record; found is false where there is none.
func Read(ctx context.Context, ex transport.Executor, o Object) (rec Record, found bool, err error) {
	p, err := o.Path()
	if err != nil {
		return Record{}, false, err
	}
	script := transport.NewScript().Set("f", p).Text(`if [ -e "$f" ]; then echo present; cat -- "$f"; else echo absent; fi`).String()
	res, err := ex.Read(ctx, script)
	if err != nil {
		return Record{}, false, fmt.Errorf("read %s: %w", p, err)
	}
	head, body, _ := bytes.Cut(res.Stdout, []byte("\n"))
	switch string(head) {
	case "absent":
		return Record{}, false, nil
	case "present":
		rec, err := parseRecord(body)
		if err != nil {
			return Record{}, true, fmt.Errorf("%s cannot be read as an ownership record: %w", p, err)
		}
		return rec, true, nil
	}
	return Record{}, false, fmt.Errorf("read %s: unexpected answer %q", p, head)
}

//go:embed claim.sh
var claimScript string

//go:embed release.sh
var releaseScript string

// Claim writes rec for o unless a record with another token exists, which it returns as an
// *OwnedError. A record with rec's own token is rewritten, which is how a phase advances.
func Claim(ctx context.Context, ex transport.Executor, o Object, rec Record) error {
	p, err := o.Path()
	if err != nil {
		return err
	}
	if !ValidToken(rec.Token) {
		return fmt.Errorf("ownership token %q is malformed", rec.Token)
	}
	dir := p[:strings.LastIndexByte(p, '/')]
	script := transport.NewScript().Set("f", p).Set("dir", dir).Set("owners", Dir).Set("token", rec.Token).Text(transport.StateDirText).Text(claimScript).String()
	res, err := ex.Sudo(ctx, script, rec.marshal())
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return answer(o, p, res.Stdout, "claimed", "replaced")
}

// answer reads what claimScript or releaseScript said: one of done, or "taken" followed by the
// record that names another instance.
func answer(o Object, p string, stdout []byte, done ...string) error {
	head, body, _ := bytes.Cut(stdout, []byte("\n"))
	switch {
	case slices.Contains(done, string(head)):
		return nil
	case string(head) == "taken":
		other, err := parseRecord(body)
		if err != nil {
			return fmt.Errorf("%s cannot be read as an ownership record: %w", p, err)
		}
		return &OwnedError{Object: o, Path: p, Record: other}
	}
	return fmt.Errorf("%s: unexpected answer %q", p, head)
}

// Release removes o's record if it holds token. A record with another token is left alone and
// returned as an *OwnedError; no record at all is not an error.
func Release(ctx context.Context, ex transport.Executor, o Object, token string) error {
	p, err := o.Path()
	if err != nil {
		return err
	}
	if !ValidToken(token) {
		return fmt.Errorf("ownership token %q is malformed", token)
	}
	script := transport.NewScript().Set("f", p).Set("token", token).Text(releaseScript).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return answer(o, p, res.Stdout, "absent", "released")
}
