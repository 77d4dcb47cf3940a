package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
)

// A second resource for an object the configuration already declares is refused at plan, before
// any host is asked (the provider's connection settings are not known, so none could be).
func TestSecondDeclarationRefusedAtPlan(t *testing.T) {
	twice := func(block string) string {
		return block + strings.Replace(block, `" "a" {`, `" "b" {`, 1)
	}
	user := `
resource "gpucluster_user" "a" {
  name  = "alice"
  uid   = 1001
  group = "users"
  nodes = ["login01", "gpu01"]
}
`
	group := `
resource "gpucluster_group" "a" {
  name  = "users2"
  gid   = 2001
  nodes = ["login01"]
}
`
	partition := `
resource "gpucluster_slurm_partition" "a" {
  controller   = "login01"
  name         = "gpu"
  nodes        = ["gpu01"]
  allow_groups = ["users"]
}
`
	slurmNode := `
resource "gpucluster_slurm_node" "a" {
  controller  = "login01"
  name        = "gpu01"
  cpus        = 4
  real_memory = 1000
  gres        = "gpu:4"
}
`
	firewall := `
resource "gpucluster_firewall" "a" {
  node     = "gpu01"
  ssh_rule = "allow 22/tcp from 10.0.0.10"
}
`
	account := `
resource "gpucluster_slurm_account" "a" {
  controller = "login01"
  name       = "research"
}
`
	qos := `
resource "gpucluster_slurm_qos" "a" {
  controller = "login01"
  name       = "gpu2"
}
`
	mungeA := `
resource "gpucluster_munge_key" "a" {
  controller = "login01"
  nodes      = ["login01", "gpu01", "gpu02"]
}
`
	mungeB := `
resource "gpucluster_munge_key" "b" {
  controller = "gpu02"
  nodes      = ["gpu02", "gpu03"]
}
`
	slurmUser := `
resource "gpucluster_slurm_user" "a" {
  controller      = "login01"
  name            = "alice"
  accounts        = ["research"]
  default_account = "research"
}
`
	accounting := `
resource "gpucluster_slurm_accounting" "a" {
  controller           = "login01"
  database_password_wo = "a-long-database-password"
}
`
	controller := `
resource "gpucluster_slurm_controller" "a" {
  node = "login01"
}
`
	compute := `
resource "gpucluster_slurm_compute" "a" {
  controller = "login01"
  node       = "gpu01"
}
`
	activation := `
resource "gpucluster_slurm_activation" "a" {
  controller = "login01"
}
`
	management := `
resource "gpucluster_beegfs_management" "a" {
  node = "login01"
}
`
	metadata := `
resource "gpucluster_beegfs_metadata" "a" {
  node       = "login01"
  mgmtd_host = "login01"
}
`
	target := `
resource "gpucluster_beegfs_target" "a" {
  node        = "gpu01"
  mgmtd_host  = "login01"
  node_num_id = 2
  path        = "/data/beegfs_storage"
}
`
	client := `
resource "gpucluster_beegfs_client" "a" {
  node       = "gpu01"
  mgmtd_host = "login01"
}
`
	// Terraform wraps the detail at any space.
	want := func(what string) string {
		return `(?s)Object Declared Twice.*also\s+declares\s+` + strings.Join(strings.Fields(what), `\s+`)
	}
	expectRefusedAtPlan(t, map[string]struct{ config, want string }{
		"user":              {twice(user), want("user alice")},
		"group":             {twice(group), want("group users2")},
		"partition":         {twice(partition), want("slurm partition gpu on node login01")},
		"slurm node":        {twice(slurmNode), want("slurm node gpu01 on node login01")},
		"firewall":          {twice(firewall), want("firewall ufw on node gpu01")},
		"slurm account":     {twice(account), want("slurm account research on node login01")},
		"qos":               {twice(qos), want("slurm qos gpu2 on node login01")},
		"munge key":         {mungeA + mungeB, want("munge key munge.key on node gpu02")},
		"slurm user":        {twice(slurmUser), want("slurm user alice on node login01")},
		"slurm accounting":  {twice(accounting), want("slurm accounting accounting on node login01")},
		"slurm controller":  {twice(controller), want("slurm controller slurmctld on node login01")},
		"slurm compute":     {twice(compute), want("slurm compute slurmd on node gpu01")},
		"slurm activation":  {twice(activation), want("slurm activation activation on node login01")},
		"beegfs management": {twice(management), want("beegfs management mgmtd on node login01")},
		"beegfs metadata":   {twice(metadata), want("beegfs metadata meta on node login01")},
		"beegfs target":     {twice(target), want("beegfs target /data/beegfs_storage on node gpu01")},
		"beegfs client":     {twice(client), want("beegfs client client on node gpu01")},
		"rolling reboot": {rollingReboot("a", "gpu01", "gpu02") + rollingReboot("b", "gpu03", "gpu02"),
			want("rolling reboot gpu02 on node login01")},
		"rolling reboot, controller known at apply": {strings.ReplaceAll(rollingReboot("a", "gpu01")+rollingReboot("b", "gpu01"), `"login01"`, "terraform_data.user.output"),
			want("rolling reboot gpu01")},
	})
}

func rollingReboot(address string, nodes ...string) string {
	return fmt.Sprintf("resource \"gpucluster_rolling_reboot\" %q {\n  controller = \"login01\"\n  nodes      = %s\n  trigger    = \"535\"\n}\n", address, hclList(nodes))
}

// Two rolling reboots of other servers each own theirs: the plan of both goes through.
func TestRollingRebootsOfOtherServersPlan(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             unknownConnectionProvider + rollingReboot("a", "gpu01", "gpu02") + rollingReboot("b", "gpu03", "gpu04"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// A create refused by a record this working directory wrote says how to drop the record, which a
// refresh-only run can leave behind for an object removed by hand; one from elsewhere does not.
func TestOwnedByAnotherFromHereSaysHowToDropTheRecord(t *testing.T) {
	o := ownership.Object{Kind: "user", Name: "alice"}
	for _, tc := range []struct {
		rec  ownership.Record
		want bool
	}{
		{ownership.Here("gpucluster_user", ownership.NewToken(), ownership.Created, time.Now()), true},
		{ownership.Record{Token: ownership.NewToken(), Phase: ownership.Created, Workdir: "/srv/elsewhere", Machine: "adm"}, false},
	} {
		d := ownedByAnother("login01", place{node: "login01", object: o}.owned(tc.rec), "creating it")
		got := strings.Contains(d.Detail(), "delete the record (sudo rm "+ownership.Dir+"/user/alice on login01)")
		if got != tc.want {
			t.Errorf("record from %s: advice to delete it is %v, want %v:\n%s", tc.rec.Workdir, got, tc.want, d.Detail())
		}
	}
}
