package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

// secondBuild is a later build of packages in the lab's local repository: build a repacked
// with version b, their exact dependencies on each other rewritten, so an upgrade between
// them really runs apt and restarts.
type secondBuild struct {
	a, b     string
	packages []string
}

// addSecondBuild repacks the local repository's packages on host at version b and adds them
// to the repository's index. The test removes them again and brings the host's packages back
// to build a, so the lab's other tests find the repository as the image built it.
func addSecondBuild(t *testing.T, l *lab.Lab, host string, sb secondBuild) {
	t.Helper()
	script := fmt.Sprintf(`set -e
cd %[1]s
A=%[2]s B=%[3]s
[ -e Packages.build-a ] || cp Packages Packages.build-a
cp Packages.build-a Packages
for p in %[4]s; do
	src=$(ls "${p}_${A}_"*.deb)
	d=$(mktemp -d)
	dpkg-deb -R "$src" "$d"
	sed -i -e "s/^Version: .*/Version: $B/" -e "s/(= $A)/(= $B)/g" "$d/DEBIAN/control"
	f=$(echo "$src" | sed "s/_${A}_/_${B}_/")
	dpkg-deb -Zgzip -b "$d" "$f" >/dev/null
	rm -rf "$d"
	{ dpkg-deb -f "$f"; echo "Filename: ./$f"; echo "Size: $(stat -c %%s "$f")"; echo "SHA256: $(sha256sum "$f" | cut -d' ' -f1)"; echo; } >> Packages
done
apt-get update -qq
apt-cache madison %[5]s | grep -cF "$B"
`, lab.RepoDir, sb.a, sb.b, strings.Join(sb.packages, " "), sb.packages[0])
	if out := onHost(t, l, host, script); out != "1" {
		t.Fatalf("%s: apt does not offer %s %s: %q", host, sb.packages[0], sb.b, out)
	}
	t.Cleanup(func() { removeSecondBuild(t, l, host, sb) })
}

func removeSecondBuild(t *testing.T, l *lab.Lab, host string, sb secondBuild) {
	script := fmt.Sprintf(`set -e
cd %[1]s
export DEBIAN_FRONTEND=noninteractive
back=$(dpkg-query -W -f '${Package}=%[2]s ${db:Status-Abbrev}\n' %[4]s 2>/dev/null | awk '$2 == "ii" {print $1}')
[ -z "$back" ] || apt-get install -y -q --allow-downgrades $back >/dev/null
mv Packages.build-a Packages
rm -f -- *_%[3]s_*.deb
apt-get update -qq
`, lab.RepoDir, sb.a, sb.b, strings.Join(sb.packages, " "))
	if _, err := onHostErr(l, host, script); err != nil {
		t.Errorf("restore build %s on %s: %v", sb.a, host, err)
	}
}

// repoVersion is the version of pkg in the lab's local repository as the image built it.
func repoVersion(t *testing.T, l *lab.Lab, pkg string) string {
	t.Helper()
	return onHost(t, l, "login01", fmt.Sprintf("dpkg-deb -f %s/%s_*.deb Version", lab.RepoDir, pkg))
}
