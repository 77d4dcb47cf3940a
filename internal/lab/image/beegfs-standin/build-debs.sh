#!/bin/sh
# Builds the lab's STAND-IN packages for ThinkParQ's BeeGFS (used only by the
# gpucluster test lab) from this directory, once per image build.
# Usage: build-debs.sh SRC OUT VERSION
# SRC holds common.sh and one tree per package laid out as installed; tools
# get common.sh copied in where they say "#@common".
set -eu
src=$1 out=$2 version=$3

for pkg in beegfs-mgmtd beegfs-meta beegfs-storage beegfs-client; do
	stage=$(mktemp -d)
	cp -R "$src/$pkg/." "$stage/"
	find "$stage" -type d -exec chmod 0755 {} +
	find "$stage" -type f -exec chmod 0644 {} +
	for tool in "$stage"/opt/beegfs/sbin/* "$stage"/usr/sbin/* "$stage"/etc/init.d/*; do
		[ -f "$tool" ] || continue
		sed -i -e "/^#@common\$/{r $src/common.sh" -e 'd}' "$tool"
		chmod 0755 "$tool"
	done
	if [ "$pkg" = beegfs-client ]; then
		# Where the lab binds its shared directory; see mount.beegfs.
		install -d -m 0755 "$stage/var/lib/beegfs-standin/namespace"
	fi
	install -d -m 0755 "$stage/DEBIAN"
	(cd "$stage" && find etc -type f | sed 's|^|/|' | sort) > "$stage/DEBIAN/conffiles"
	cat > "$stage/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version
Architecture: all
Maintainer: gpucluster lab <lab@gpucluster.invalid>
Section: misc
Priority: optional
Depends: util-linux, mount
Description: STAND-IN for ThinkParQ's BeeGFS $pkg (gpucluster lab only)
 Mimics the files, commands, exit codes and start-up checks of BeeGFS that
 the gpucluster Terraform provider touches. It stores no data and speaks no
 BeeGFS protocol. Never install it outside the gpucluster test lab.
CONTROL
	dpkg-deb --root-owner-group -Zgzip --build "$stage" "$out/${pkg}_${version}_all.deb" >/dev/null
	rm -rf "$stage"
done
