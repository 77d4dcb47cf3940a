package slurm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestSumGPUUsage(t *testing.T) {
	rows := parseParsable("alice|60|billing=1,cpu=1,gres/gpu=1,mem=1000M,node=1\n" +
		"alice|30|cpu=2,gres/gpu:a100=2,gres/gpu=2,node=1\n" +
		"bob|100|cpu=1,mem=1G,node=1\n" +
		"carol|3600|gres/gpu=4\n")
	got, err := sumGPUUsage(rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []GPUUsage{{User: "alice", Jobs: 2, GPUSeconds: 120}, {User: "carol", Jobs: 1, GPUSeconds: 14400}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := sumGPUUsage([][]string{{"alice", "x", "gres/gpu=1"}}); err == nil {
		t.Error("a bad ElapsedRaw was accepted")
	}
}

func TestQOSChanges(t *testing.T) {
	have := QOS{Name: "gpu1", Priority: 10, MaxTRESPerUser: map[string]int64{"gres/gpu": 1, "cpu": 8}, MaxJobsPerUser: 4}
	want := QOS{Name: "gpu1", Priority: 10, MaxTRESPerUser: map[string]int64{"gres/gpu": 2}}
	got := qosChanges(want, have)
	if exp := []string{"maxtrespu=cpu=-1,gres/gpu=2", "maxjobspu=-1"}; !reflect.DeepEqual(got, exp) {
		t.Errorf("got %q, want %q", got, exp)
	}
	if got := qosChanges(have, have); len(got) != 0 {
		t.Errorf("no change gave %q", got)
	}
}

// recorder answers sacctmgr reads with canned output and records every change.
type recorder struct {
	reads   map[string]string
	changes []string
}

func (r *recorder) Sudo(_ context.Context, script string, _ []byte) (transport.Result, error) {
	lines := strings.Split(strings.TrimSpace(script), "\n")
	cmd := strings.ReplaceAll(lines[len(lines)-1], "'", "")
	if strings.HasPrefix(cmd, "sacctmgr -i ") {
		r.changes = append(r.changes, cmd)
		return transport.Result{}, nil
	}
	for k, v := range r.reads {
		if strings.Contains(cmd, k) {
			return transport.Result{Stdout: []byte(v)}, nil
		}
	}
	return transport.Result{}, nil
}

func (r *recorder) Read(ctx context.Context, script string) (transport.Result, error) {
	return r.Sudo(ctx, script, nil)
}

func TestEnsureUserOrder(t *testing.T) {
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: 6819}
	have := AccountingUser{Name: "alice", Accounts: []string{"old", "research"}, DefaultAccount: "old", QOS: []string{"normal"}}
	want := AccountingUser{Name: "alice", Accounts: []string{"research", "vision"}, DefaultAccount: "vision", QOS: []string{"gpu1"}, DefaultQOS: "gpu1"}
	r := &recorder{}
	if err := EnsureUser(context.Background(), r, c, want, &have); err != nil {
		t.Fatal(err)
	}
	exp := []string{
		"sacctmgr -i add user alice cluster=cluster account=vision",
		"sacctmgr -i modify user where name=alice cluster=cluster set defaultaccount=vision",
		"sacctmgr -i delete user where name=alice cluster=cluster account=old",
		"sacctmgr -i modify user where name=alice cluster=cluster set qos=gpu1 defaultqos=gpu1",
	}
	if !reflect.DeepEqual(r.changes, exp) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(r.changes, "\n"), strings.Join(exp, "\n"))
	}
	r = &recorder{}
	same := AccountingUser{Name: "alice", Accounts: []string{"research"}, DefaultAccount: "research"}
	if err := EnsureUser(context.Background(), r, c, same, &same); err != nil || len(r.changes) != 0 {
		t.Errorf("a user as wanted changed %q, %v", r.changes, err)
	}
	if err := EnsureUser(context.Background(), r, c, AccountingUser{Name: "alice", Accounts: []string{"a"}, DefaultAccount: "b"}, nil); err == nil {
		t.Error("a default account outside the accounts was accepted")
	}
}

func TestReadUser(t *testing.T) {
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: 6819}
	r := &recorder{reads: map[string]string{
		"show user":        "alice|research\n",
		"show association": "alice|research|gpu1,normal|gpu1\nalice|vision|normal,gpu1|\n",
	}}
	u, found, err := ReadUser(context.Background(), r, c, "alice")
	want := AccountingUser{Name: "alice", Accounts: []string{"research", "vision"}, DefaultAccount: "research", QOS: []string{"gpu1", "normal"}, DefaultQOS: "gpu1"}
	if err != nil || !found || !reflect.DeepEqual(u, want) {
		t.Errorf("got %+v, %v, %v; want %+v", u, found, err, want)
	}
	r.reads["show association"] = "alice|research|gpu1|gpu1\nalice|vision|normal|\n"
	if u, _, _ := ReadUser(context.Background(), r, c, "alice"); u.QOS != nil {
		t.Errorf("associations with different QOS read as %q", u.QOS)
	}
	if _, _, err := ReadUser(context.Background(), r, c, "Alice"); err == nil {
		t.Error("an upper-case name was accepted")
	}
}

func TestAccountingClientValidates(t *testing.T) {
	_, err := AccountingClient{Cluster: "c", Host: "login01; rm -rf /", Port: 6819}.run(context.Background(), &recorder{}, "sacctmgr")
	if err == nil {
		t.Error("a host with shell in it was accepted")
	}
	if _, err := ClientFor(Fragments{}); !errors.Is(err, ErrNoController) {
		t.Errorf("no controller: %v", err)
	}
}

func TestSyncClusterIDRefusesBadInput(t *testing.T) {
	for _, bad := range []string{"", "spool/slurmctld", "/var/spool/slurm ctld", "/x#y"} {
		if err := SyncClusterID(context.Background(), &recorder{}, bad, "12"); err == nil {
			t.Errorf("StateSaveLocation %q accepted", bad)
		}
	}
	if err := SyncClusterID(context.Background(), &recorder{}, "/var/spool/slurmctld", "12; rm -rf /"); err == nil {
		t.Error("a ClusterID that is not a number was accepted")
	}
	if err := SyncClusterID(context.Background(), &recorder{}, "/var/spool/slurmctld/", "2708"); err != nil {
		t.Errorf("the default StateSaveLocation: %v", err)
	}
	if _, err := DatabaseClusterID(context.Background(), &recorder{}, "slurm_acct_db", "x' OR '1'='1"); err == nil {
		t.Error("a cluster name with SQL in it was accepted")
	}
}

// sacctmgr refuses an unknown account on standard output, with status 1 and nothing on
// standard error (Slurm 24.11, captured on the lab): its words reach the error.
func TestEnsureUserKeepsSacctmgrsWords(t *testing.T) {
	out := transporttest.Testdata(t, "sacctmgr-add-user-unknown-account.out")
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: out, Err: &transport.ExitError{Host: "login01", Status: 1}}}}
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: DefaultDbdPort}
	err := EnsureUser(context.Background(), fake, c, AccountingUser{Name: "bob", Accounts: []string{"nosuchacct"}, DefaultAccount: "nosuchacct"}, nil)
	if err == nil || !strings.Contains(err.Error(), "No account nosuchacct on cluster cluster, skipping.") {
		t.Fatalf("error without sacctmgr's words: %v", err)
	}
	tool, said := ToolSaid(fmt.Errorf("wrapped: %w", err))
	if tool != "sacctmgr" || said != strings.TrimSpace(out) {
		t.Errorf("ToolSaid: %q, %q", tool, said)
	}
}

// The plan-time reads of a Slurm user: the accounts slurmdbd lists, shared within the run,
// and whether the controller's passwd database knows the user (getent's status 2: no entry).
func TestSlurmUserPlanReads(t *testing.T) {
	ctx := context.Background()
	fake := &transporttest.Fake{T: t, Replies: []transporttest.Reply{{Stdout: "root\nresearch\n"}}}
	names, err := AccountNames(ctx, fake, AccountingClient{Cluster: "cluster", Host: "login01", Port: DefaultDbdPort})
	if err != nil || !reflect.DeepEqual(names, []string{"root", "research"}) {
		t.Errorf("accounts: %q, %v", names, err)
	}
	if script := fake.Calls[0].Script; !fake.Calls[0].Read || !strings.Contains(script, "sacctmgr -nP show account 'format=Account'") {
		t.Errorf("the accounts read is not a shared read of sacctmgr show account:\n%s", script)
	}
	for name, want := range map[string]bool{"root": true, "tacc_nosuchuser": false} {
		if got, err := HasUnixAccount(ctx, transporttest.Shell{}, name); err != nil || got != want {
			t.Errorf("HasUnixAccount(%s): %v, %v", name, got, err)
		}
	}
	if _, err := HasUnixAccount(ctx, transporttest.Shell{}, "-x"); err == nil {
		t.Error("a name that is not a Slurm user name was looked up")
	}
}

// sacctmgr deletes an account only when the command names no cluster: the association on the
// client's cluster goes first, and the account with it unless another cluster still has one.
func TestDeleteAccountRemovesTheAccount(t *testing.T) {
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: 6819}
	for assocs, want := range map[string][]string{
		"":        {"sacctmgr -i delete account where name=research cluster=cluster", "sacctmgr -i delete account where name=research"},
		"other\n": {"sacctmgr -i delete account where name=research cluster=cluster"},
	} {
		r := &recorder{reads: map[string]string{"show association": assocs}}
		if err := DeleteAccount(context.Background(), r, c, "research"); err != nil || !reflect.DeepEqual(r.changes, want) {
			t.Errorf("associations left %q: changes %q, %v; want %q", assocs, r.changes, err, want)
		}
	}
}

// An account slurmdbd kept from before (an earlier version's destroy removed only its
// association) gets the declared description once added.
func TestAddAccountReplacesAKeptDescription(t *testing.T) {
	c := AccountingClient{Cluster: "cluster", Host: "login01", Port: 6819}
	want := Account{Name: "research", Parent: "root", Fairshare: 10, Description: "gpu research"}
	add := "sacctmgr -i add account research cluster=cluster parent=root fairshare=10 description=gpu research"
	for kept, changes := range map[string][]string{
		"gpu research\n": {add},
		"old team\n":     {add, "sacctmgr -i modify account where name=research set description=gpu research"},
	} {
		r := &recorder{reads: map[string]string{"show account": kept}}
		if err := EnsureAccount(context.Background(), r, c, want, nil); err != nil || !reflect.DeepEqual(r.changes, changes) {
			t.Errorf("slurmdbd holding %q: changes %q, %v; want %q", kept, r.changes, err, changes)
		}
	}
}
