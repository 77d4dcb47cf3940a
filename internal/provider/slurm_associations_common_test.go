package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// sacctmgr's refusal of an unknown account, as Slurm 24.11 prints it on the lab: on standard
// output, with status 1 and nothing on standard error.
const sacctmgrUnknownAccount = "No account nosuchacct on cluster cluster, skipping.\nNothing added.\n" +
	"Make sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n"

func TestSacctmgrErrorQuotesSacctmgr(t *testing.T) {
	err := &slurm.CommandError{Command: "sacctmgr -i add user bob cluster=cluster account=nosuchacct defaultaccount=nosuchacct",
		Stdout: sacctmgrUnknownAccount, Err: &transport.ExitError{Host: "login01", Status: 1}}
	d := sacctmgrError("Cannot Set Slurm User", "login01", "Adding or changing the associations of user bob with sacctmgr failed", err)
	want := "Adding or changing the associations of user bob with sacctmgr failed on node login01.\n\n" +
		"sacctmgr said:\n  No account nosuchacct on cluster cluster, skipping.\n  Nothing added.\n" +
		"  Make sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n\n" +
		"Fix what sacctmgr names"
	if !strings.HasPrefix(d.Detail(), want) {
		t.Errorf("detail:\n%s\nwant it to start with:\n%s", d.Detail(), want)
	}
	if plain := sacctmgrError("Cannot Set Slurm User", "login01", "Adding failed", errors.New("connection lost")); strings.Contains(plain.Detail(), "said") {
		t.Errorf("an error that is no command's quotes nothing:\n%s", plain.Detail())
	}
}
