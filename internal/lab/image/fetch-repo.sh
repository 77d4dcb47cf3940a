#!/bin/sh
# Runs inside the freshly debootstrapped rootfs (chroot) while it still reaches
# the Debian mirror, once per image build. Usage: fetch-repo.sh REPO PACKAGE...
# Puts the .debs of PACKAGE... and of every dependency the image lacks into
# REPO without installing them: lab hosts start bare of these packages and
# install them from REPO, having no network.
set -eu
repo=$1
shift

# Only what this download fetches may end up in the repository.
apt-get clean
apt-get update
# Recommends too, so that a plain `apt-get install` works as well as
# --no-install-recommends.
DEBIAN_FRONTEND=noninteractive apt-get install -y --download-only "$@"
install -d -m 0755 "$repo"
mv /var/cache/apt/archives/*.deb "$repo"/
chmod 0644 "$repo"/*.deb
