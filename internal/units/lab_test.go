package units

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

// TestLabBatchSaysWhatEachUnitAloneSays reads, in one batch on gpu01, the shared units (whatever
// state the lab left them in) and test units in the states systemctl has words for, and compares
// each unit's words with `systemctl is-active UNIT` and `systemctl is-enabled UNIT` run alone,
// and IsActive and IsEnabled with their --quiet exit statuses.
func TestLabBatchSaysWhatEachUnitAloneSays(t *testing.T) {
	ctx, l := lab.RequireWithin(t, 2*time.Minute)
	const setup = `set -e
cd /etc/systemd/system
printf '[Service]\nExecStart=/bin/sleep infinity\n' > gpucluster-t-static.service
printf '[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\nAlias=gpucluster-t-alias.service\n' > gpucluster-t-enabled.service
printf '[Service]\nExecStart=/bin/false\n[Install]\nWantedBy=multi-user.target\n' > gpucluster-t-failed.service
printf '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' > gpucluster-t-disabled.service
systemctl daemon-reload
systemctl enable --quiet gpucluster-t-enabled.service gpucluster-t-failed.service
systemctl mask --quiet gpucluster-t-masked.service
systemctl start gpucluster-t-static.service gpucluster-t-enabled.service
systemctl start gpucluster-t-failed.service || true
printf 'not a key' > /etc/gpucluster-t-key
chown root:daemon /etc/gpucluster-t-key
chmod 640 /etc/gpucluster-t-key
`
	const cleanup = `cd /etc/systemd/system
systemctl stop gpucluster-t-static.service gpucluster-t-enabled.service gpucluster-t-failed.service
systemctl disable --quiet gpucluster-t-enabled.service gpucluster-t-failed.service
systemctl unmask --quiet gpucluster-t-masked.service
rm -f gpucluster-t-*.service /etc/gpucluster-t-key
systemctl daemon-reload
systemctl reset-failed gpucluster-t-failed.service
`
	t.Cleanup(func() {
		if out, _, err := l.Exec(context.Background(), "gpu01", cleanup); err != nil {
			t.Errorf("cleanup: %v\n%s", err, out)
		}
	})
	if out, _, err := l.Exec(ctx, "gpu01", setup); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	list := append(append([]string{}, sharedUnits...), "gpucluster-t-static.service", "gpucluster-t-enabled.service",
		"gpucluster-t-alias.service", "gpucluster-t-failed.service", "gpucluster-t-disabled.service",
		"gpucluster-t-masked.service", "gpucluster-t-missing.service")
	files := []string{"/etc/gpucluster-t-key", "/etc/gpucluster-t-missing"}
	snap, err := read(ctx, transporttest.LabHost{Lab: l, Host: "gpu01"}, list, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	states := snap.units
	// A read whose units are all unloaded gets nothing from list-units, which still succeeds:
	// so a bare host, its daemons not yet installed or started, reads as stopped.
	alone, err := read(ctx, transporttest.LabHost{Lab: l, Host: "gpu01"}, []string{"gpucluster-t-disabled.service"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := alone.units["gpucluster-t-disabled.service"], (State{"inactive", "disabled"}); got != want {
		t.Errorf("an unloaded unit read alone: %+v, want %+v", got, want)
	}
	// The alias and the masked unit were asked with is-active alone, the others by list-units, or,
	// without a unit file (shared units not installed yet on a fresh lab included), by the shell.
	res, err := transporttest.LabHost{Lab: l, Host: "gpu01"}.Sudo(ctx, batchScript(list, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, line := range sections["linked"].Lines {
		linked = append(linked, strings.Fields(line)[0])
	}
	if want := []string{"gpucluster-t-alias.service", "gpucluster-t-masked.service"}; !slices.Equal(linked, want) {
		t.Errorf("units asked alone %q, want %q", linked, want)
	}
	// The files read in the same batch: what sha256sum and stat say of each alone.
	if snap.filesErr != nil {
		t.Fatal(snap.filesErr)
	}
	out, _, err := l.Exec(ctx, "gpu01", "sha256sum < /etc/gpucluster-t-key; stat -c '%U %G %a' /etc/gpucluster-t-key")
	if err != nil {
		t.Fatal(err)
	}
	if f, got := strings.Fields(out), snap.files[files[0]]; len(f) != 5 || !got.Exists || got.SHA256 != f[0] || got.Owner != f[2] || got.Group != f[3] || fmt.Sprintf("%o", got.Mode) != f[4] {
		t.Errorf("batch says %+v of %s; alone %q", got, files[0], out)
	}
	if got := snap.files[files[1]]; got.Exists {
		t.Errorf("a missing file reads as %+v", got)
	}
	words := map[string]bool{}
	var notFound []string
	for _, u := range list {
		out, _, err := l.Exec(ctx, "gpu01", fmt.Sprintf(`u=%s
systemctl is-active "$u"; systemctl is-active --quiet "$u"; echo $?
systemctl is-enabled "$u" 2>/dev/null || :; systemctl is-enabled --quiet "$u" 2>/dev/null; echo $?`, u))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(out)
		if len(f) != 4 {
			t.Fatalf("%s alone: %q", u, out)
		}
		got := states[u]
		if got.Active != f[0] || (got.IsActive()) != (f[1] == "0") || got.Enabled != f[2] || got.IsEnabled() != (f[3] == "0") {
			t.Errorf("%s: batch %+v (is-active --quiet %v, is-enabled --quiet %v); alone %q", u, got, got.IsActive(), got.IsEnabled(), out)
		}
		words[got.Active+" "+got.Enabled] = true
		if f[2] == "not-found" {
			notFound = append(notFound, u)
		}
	}
	if got := sections["absent"].Lines; !slices.Equal(got, notFound) || !slices.Contains(got, "gpucluster-t-missing.service") {
		t.Errorf("units answered by the shell %q, want those systemctl finds no file of %q", got, notFound)
	}
	// The test units must have reached the states they stand for, or the comparison proved less.
	for _, w := range []string{"active static", "active enabled", "active alias", "failed enabled", "inactive disabled", "inactive masked", "inactive not-found"} {
		if !words[w] {
			t.Errorf("no unit was %q; seen %v", w, words)
		}
	}
}
