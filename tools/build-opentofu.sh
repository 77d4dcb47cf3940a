#!/usr/bin/env bash
# Builds OpenTofu VERSION from the Go module proxy into DEST, once: `make test-opentofu` keeps
# DEST in a cache outside the repository. OpenTofu publishes its source as a Go module, so no
# download site is needed: the module proxy serves it and its dependencies.
# Usage: tools/build-opentofu.sh VERSION DEST
set -euo pipefail
version=$1 dest=$2
[ -x "$dest" ] && exit 0
module=github.com/opentofu/opentofu@v$version
echo "building OpenTofu $version from the Go module proxy into $dest (a few minutes, once)"
dir=$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "go mod download $module gave no module directory" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp "$dest.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# The module's go.sum is its own: -mod=mod lets the build resolve it without a go.work.
# version.dev=no is what OpenTofu's release builds set: without it the version says -dev.
(cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$tmp" ./cmd/tofu)
chmod 0755 "$tmp"
mv "$tmp" "$dest"
"$dest" version
