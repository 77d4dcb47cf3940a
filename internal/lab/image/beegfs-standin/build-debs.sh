#!/bin/sh
# Builds the lab's STAND-IN packages for ThinkParQ's BeeGFS (used only by the
# gpucluster test lab) from this directory, once per image build.
# Usage: build-debs.sh SRC OUT VERSION BINARY
# SRC holds common.sh and one tree per package laid out as installed; tools
# get common.sh copied in where they say "#@common". BINARY is the stand-in's
# Go program (standin/): a package that lists paths in SRC/PACKAGE.tools gets
# its own copy of it, with each listed path a link to that copy, since the
# program acts as the tool it is called as.
set -eu
src=$1 out=$2 version=$3 binary=$4

for tree in "$src"/beegfs-*/; do
	pkg=$(basename "$tree")
	stage=$(mktemp -d)
	cp -R "$src/$pkg/." "$stage/"
	find "$stage" -type d -exec chmod 0755 {} +
	find "$stage" -type f -exec chmod 0644 {} +
	for tool in "$stage"/opt/beegfs/sbin/* "$stage"/sbin/* "$stage"/usr/sbin/* "$stage"/etc/init.d/*; do
		[ -f "$tool" ] || continue
		sed -i -e "/^#@common\$/{r $src/common.sh" -e 'd}' "$tool"
		chmod 0755 "$tool"
	done
	if [ -f "$src/$pkg.tools" ]; then
		install -D -m 0755 "$binary" "$stage/usr/lib/beegfs-standin/$pkg"
		grep -v -e '^#' -e '^$' "$src/$pkg.tools" | while read -r tool; do
			mkdir -p "$stage$(dirname "$tool")"
			ln -sf "/usr/lib/beegfs-standin/$pkg" "$stage$tool"
		done
	fi
	for script in preinst postinst prerm postrm; do
		[ ! -f "$stage/DEBIAN/$script" ] || chmod 0755 "$stage/DEBIAN/$script"
	done
	# Links (TARGET LINK per line): the lab embeds its sources, which keep none.
	if [ -f "$src/$pkg.links" ]; then
		grep -v -e '^#' -e '^$' "$src/$pkg.links" | while read -r target link; do
			mkdir -p "$stage$(dirname "$link")"
			ln -sf "$target" "$stage$link"
		done
	fi
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
