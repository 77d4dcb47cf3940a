#!/usr/bin/env bash
# make demo's apply. A plain `make demo` after `make demo DEMO_ARGS='-var accounting=true'`
# would remove accounting again (and restart slurmctld) without a word: the state remembers
# what an earlier demo turned on, the command line does not. So the change is planned first,
# and when it would destroy or replace anything the apply does not run: the script names
# what would go and how to keep it or let it go (DEMO_ALLOW_DESTROY=1).
#
# usage: tools/demo-apply.sh EXAMPLE_DIR PLAN_FILE [ARGS...]
#   ARGS go to both terraform plan and terraform apply (-state=..., -var-file=..., DEMO_ARGS).
#   TERRAFORM names the terraform binary (default terraform); DEMO_ARGS, only quoted in the
#   message, is what the user gave make.
set -euo pipefail
example=${1:?usage: $0 EXAMPLE_DIR PLAN_FILE [ARGS...]}
plan=${2:?usage: $0 EXAMPLE_DIR PLAN_FILE [ARGS...]}
shift 2
terraform=${TERRAFORM:-terraform}
command -v jq >/dev/null || { echo "jq not found: run make deps" >&2; exit 2; }

tf() { "$terraform" -chdir="$example" "$@"; }

# The plan file holds no secret of the example (its secrets are ephemeral), but it is not kept.
trap 'rm -f "$plan"' EXIT
echo "planning first: the demo stops before destroying anything an earlier demo made"
tf plan -input=false -compact-warnings -out="$plan" "$@" >/dev/null
going=$(tf show -json "$plan" | jq -r '
	.resource_changes[]? | select(.change.actions | index("delete"))
	| "  \(.address) (\(if (.change.actions | index("create")) then "replaced" else "destroyed" end))"')

if [ -n "$going" ] && [ "${DEMO_ALLOW_DESTROY:-}" != 1 ]; then
	cat >&2 <<MSG
make demo stopped before changing anything: this apply would remove what is on the lab now:
$going
An earlier demo turned it on with its DEMO_ARGS (for example -var accounting=true). To keep it,
run make demo with the same DEMO_ARGS again. To let it go, run:
  make demo DEMO_ARGS='${DEMO_ARGS:-}' DEMO_ALLOW_DESTROY=1
MSG
	exit 3
fi
tf apply -auto-approve -input=false "$@"
