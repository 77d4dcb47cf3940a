#!/usr/bin/env bash
# Validates every example directory on its own, as a reader who copies one would use it:
# `terraform validate` in a copy of the directory, with the provider built from this tree
# (dev_overrides, so nothing is downloaded). Directories without a required_providers block
# (the registry pages' fragments) get the block the docs' provider page shows.
# Directories listed in PLAN_DIRS are also planned, which works without any host because their
# connection settings are only known at apply.
#
# usage: tools/validate-examples.sh PROVIDER_BINARY_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin_dir=${1:?usage: $0 PROVIDER_BINARY_DIR}
[ -x "$bin_dir/terraform-provider-gpucluster" ] || { echo "no provider binary in $bin_dir: run make build" >&2; exit 2; }

PLAN_DIRS=(examples/composition)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/terraformrc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/gpucluster/gpucluster" = "$(cd "$bin_dir" && pwd)"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
# A key of no account anywhere: a plan reads the key file, but dials no host.
ssh-keygen -q -t ed25519 -N '' -C examples-check -f "$work/id_ed25519"
export TF_VAR_ssh_private_key_file="$work/id_ed25519"

failed=0

# examples/cluster/README.md's way in for real servers: the provider in Terraform's implicit
# local mirror under ~/.terraform.d/plugins, then `terraform init` with no CLI configuration.
# Run with a HOME of its own, so it proves init needs no registry and no dev_overrides.
check_readme_install() {
	local home="$work/home" copy="$work/readme-install" version=0.1.0
	local mirror="$home/.terraform.d/plugins/registry.terraform.io/gpucluster/gpucluster/$version/$(go env GOOS)_$(go env GOARCH)"
	mkdir -p "$mirror" "$copy"
	cp "$bin_dir/terraform-provider-gpucluster" "$mirror/terraform-provider-gpucluster_v$version"
	cp -r examples/cluster/. "$copy"/
	rm -rf "$copy"/.terraform "$copy"/.terraform.lock.hcl
	local out
	if out=$(env -u TF_CLI_CONFIG_FILE HOME="$home" terraform -chdir="$copy" init -backend=false -input=false -no-color 2>&1) &&
		out=$(env -u TF_CLI_CONFIG_FILE HOME="$home" terraform -chdir="$copy" validate -no-color 2>&1); then
		echo "ok    init from ~/.terraform.d/plugins, validate examples/cluster"
	else
		echo "FAIL  init from ~/.terraform.d/plugins, validate examples/cluster"
		sed 's/^/      /' <<<"$out"
		failed=1
	fi
}
check_readme_install

# examples/cluster plans with nothing set but the connection settings, which have defaults too
# (terraform test with a mock of the provider: no host is asked), accounting asks for the database
# password only when it is on, and examples/lab-cluster/lab.tfvars sets only variables
# examples/cluster declares, to values its validations accept.
check_cluster_variables() {
	local copy="$work/cluster-variables" out
	mkdir -p "$copy"
	cp examples/cluster/*.tf "$copy"/
	cat > "$copy/variables.tftest.hcl" <<'TEST'
mock_provider "gpucluster" {}

run "defaults" {
  command = plan
}

run "accounting_without_password" {
  command = plan
  variables {
    accounting = true
  }
  expect_failures = [var.slurmdbd_password]
}

run "accounting" {
  command = plan
  variables {
    accounting        = true
    slurmdbd_password = "a-password-of-12+"
  }
  assert {
    condition     = length(gpucluster_slurm_user.cluster) == length(var.cluster_users)
    error_message = "accounting = true does not put every cluster user in the account"
  }
}
TEST
	if out=$(terraform -chdir="$copy" test -no-color 2>&1); then
		echo "ok    test examples/cluster (plan with defaults, accounting on and off)"
	else
		echo "FAIL  test examples/cluster (plan with defaults, accounting on and off)"
		sed 's/^/      /' <<<"$out"
		failed=1
	fi
	if out=$(terraform -chdir="$copy" console -input=false -no-color -var-file="$PWD/examples/lab-cluster/lab.tfvars" <<<'var.slurm_plugins' 2>&1) &&
		! grep -q 'undeclared variable' <<<"$out"; then
		echo "ok    console examples/cluster with examples/lab-cluster/lab.tfvars"
	else
		echo "FAIL  console examples/cluster with examples/lab-cluster/lab.tfvars"
		sed 's/^/      /' <<<"$out"
		failed=1
	fi
}
check_cluster_variables

for dir in examples/provider examples/resources/* examples/data-sources/* examples/cluster examples/composition; do
	[ -d "$dir" ] || continue
	copy="$work/$(echo "$dir" | tr / _)"
	mkdir -p "$copy"
	cp -r "$dir"/. "$copy"/
	rm -rf "$copy"/.terraform "$copy"/terraform.tfstate*
	if ! grep -qs 'required_providers' "$copy"/*.tf; then
		cat > "$copy/versions.tf" <<'TF'
terraform {
  required_providers {
    gpucluster = {
      source  = "gpucluster/gpucluster"
      version = "~> 0.1"
    }
  }
}
TF
	fi
	# Local modules only: `terraform get` installs them without asking any registry.
	if grep -qs '^module ' "$copy"/*.tf && ! out=$(terraform -chdir="$copy" get -no-color 2>&1); then
		echo "FAIL  get $dir"; sed 's/^/      /' <<<"$out"; failed=1; continue
	fi
	steps=(validate)
	for plan_dir in "${PLAN_DIRS[@]}"; do [ "$plan_dir" != "$dir" ] || steps+=(plan); done
	for step in "${steps[@]}"; do
		args=(-no-color)
		[ "$step" != plan ] || args+=(-input=false -lock=false -refresh=false)
		if out=$(terraform -chdir="$copy" "$step" "${args[@]}" 2>&1); then
			echo "ok    $step $dir"
		else
			echo "FAIL  $step $dir"
			# From the first error on: what comes before is Terraform's dev_overrides notice.
			sed -n '/^Error: /,$p' <<<"$out" | sed 's/^/      /'
			failed=1
		fi
	done
done
exit "$failed"
