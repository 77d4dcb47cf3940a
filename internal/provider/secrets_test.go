package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// secretWatch remembers every form in which the secret files on login01 were seen while a
// test ran, so that the state and the trace log can be searched for all of them at the end.
type secretWatch struct {
	what         string   // for messages, which never quote a secret: "the MUNGE key"
	resourceType string   // the trace log must hold this resource's lines
	files        []string // the first one's fingerprint must be in the state
	forms        []keyForm
}

// keyForm is part of a secret as it could be written down; form names the encoding.
type keyForm struct{ form, text string }

// current records each file as it is now, in every encoding a leak could take.
func (w *secretWatch) current(l *lab.Lab) ([]keyForm, error) {
	var forms []keyForm
	for _, f := range w.files {
		b64, err := onHostErr(l, "login01", "base64 -w0 "+f)
		if err != nil {
			return nil, err
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, err
		}
		fileForms, err := secretForms(f, raw)
		if err != nil {
			return nil, err
		}
		forms = append(forms, fileForms...)
	}
	w.forms = append(w.forms, forms...)
	return forms, nil
}

// secretForms cuts every form to 40 characters, so that a wrapped or partly logged copy is
// found too.
func secretForms(name string, raw []byte) ([]keyForm, error) {
	if len(raw) < 40 {
		return nil, fmt.Errorf("%s is too short to search for (%d bytes)", name, len(raw))
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	hexText := hex.EncodeToString(raw)
	// A binary secret leaked through %q shows Go escapes, doubled once more in a JSON log.
	quoted := strconv.Quote(string(raw))[1:41]
	forms := []keyForm{
		{name + " as base64", b64[:40]},
		{name + " as hex", hexText[:40]},
		{name + " as upper-case hex", strings.ToUpper(hexText[:40])},
		{name + " Go-quoted", quoted},
		{name + " Go-quoted in JSON", strings.ReplaceAll(quoted, `\`, `\\`)},
	}
	// A PEM file's base64 body, past its header line, is what a leak of it would show.
	if bytes.HasPrefix(raw, []byte("-----BEGIN")) {
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		body := strings.Join(lines[1:len(lines)-1], "")
		if len(body) < 40 {
			return nil, fmt.Errorf("%s has too short a PEM body to search for", name)
		}
		forms = append(forms, keyForm{name + " PEM body", body[:40]})
	}
	return forms, nil
}

// checkLog fails when any recorded form is in the trace log.
func (w *secretWatch) checkLog(t *testing.T, logFile string) {
	t.Helper()
	content, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("no Terraform log at %s: %v", logFile, err)
	}
	// The file must hold both Terraform's and the in-process provider's trace logs, or finding
	// nothing in it would prove nothing.
	for _, want := range []string{w.resourceType, "tf_resource_type=" + w.resourceType} {
		if !strings.Contains(string(content), want) {
			t.Fatalf("the trace log (%d bytes) lacks %q: it does not capture what it should", len(content), want)
		}
	}
	if len(w.forms) == 0 {
		t.Fatalf("no form of %s was recorded to search the log for", w.what)
	}
	for _, f := range w.forms {
		if strings.Contains(string(content), f.text) {
			t.Errorf("%s appears in the Terraform log (%s)", w.what, f.form)
		}
	}
}

// stateLacks walks the whole state as JSON and fails when a secret as it is now appears in
// it; the first file's fingerprint must, so the check is known to look at the right state.
func (w *secretWatch) stateLacks(l *lab.Lab) statecheck.StateCheck {
	return stateLacksSecrets{l: l, watch: w}
}

type stateLacksSecrets struct {
	l     *lab.Lab
	watch *secretWatch
}

func (c stateLacksSecrets) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	raw, err := json.Marshal(req.State)
	if err != nil {
		resp.Error = err
		return
	}
	forms, err := c.watch.current(c.l)
	if err != nil {
		resp.Error = err
		return
	}
	for _, f := range forms {
		if strings.Contains(string(raw), f.text) {
			resp.Error = fmt.Errorf("%s appears in the Terraform state (%s)", c.watch.what, f.form)
			return
		}
	}
	fp, err := onHostErr(c.l, "login01", "sha256sum < "+c.watch.files[0]+" | cut -d' ' -f1")
	if err != nil {
		resp.Error = err
		return
	}
	if !strings.Contains(string(raw), fp) {
		resp.Error = fmt.Errorf("the state does not hold the fingerprint %s of %s: wrong state searched", fp, c.watch.files[0])
	}
}
