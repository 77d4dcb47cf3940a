package slurm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// AccountingClient runs sacctmgr and sacct against slurmdbd directly, through a slurm.conf
// of its own that names only the cluster and slurmdbd. So accounts, users and QOS can be
// set up before the activation puts the accounting lines into the controller's slurm.conf,
// and a hand edit of that file cannot point them elsewhere.
type AccountingClient struct {
	// Cluster is the ClusterName associations belong to; empty for a client that only asks
	// whether slurmdbd answers.
	Cluster string
	// Host and Port are slurmdbd's.
	Host string
	Port int
}

// ErrNoAccounting means the controller has no accounting fragment yet, so no slurmdbd is known.
var ErrNoAccounting = errors.New("no gpucluster_slurm_accounting fragment on the controller yet")

// ClientFor is the AccountingClient for the controller's fragments.
func ClientFor(f Fragments) (AccountingClient, error) {
	if f.Controller == nil {
		return AccountingClient{}, ErrNoController
	}
	if f.Accounting == nil {
		return AccountingClient{}, ErrNoAccounting
	}
	port := f.Accounting.StoragePort
	if port == 0 {
		port = DefaultDbdPort
	}
	return AccountingClient{Cluster: f.Controller.ClusterName, Host: f.Accounting.StorageHost, Port: port}, nil
}

// clusterName is the ClusterName of the client's slurm.conf: sacctmgr needs one even to ask
// whether slurmdbd answers.
func (c AccountingClient) clusterName() string {
	if c.Cluster == "" {
		return "gpucluster-probe"
	}
	return c.Cluster
}

// script runs command with SLURM_CONF pointing at the client's own slurm.conf.
func (c AccountingClient) script(command string) string {
	conf := fmt.Sprintf("ClusterName=%s\nSlurmctldHost=%s\nAccountingStorageType=%s\nAccountingStorageHost=%s\nAccountingStoragePort=%d\n",
		c.clusterName(), c.Host, slurmdbdAccounting, c.Host, c.Port)
	return transport.NewScript().Set("conf", conf).Text(clientConf).Text(command).String()
}

//go:embed client_conf.sh
var clientConf string

// validate checks what reaches the client's slurm.conf.
func (c AccountingClient) validate() error {
	if !NamePattern.MatchString(c.Host) || (c.Cluster != "" && !NamePattern.MatchString(c.Cluster)) || c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("accounting client: bad cluster %q, host %q or port %d", c.Cluster, c.Host, c.Port)
	}
	return nil
}

// run runs sacctmgr or sacct words, each quoted, and returns its parsable output's records.
func (c AccountingClient) run(ctx context.Context, ex transport.Executor, words ...string) ([][]string, error) {
	return c.exec(ctx, ex, false, words)
}

// read is run for a read that other resources of the run share (transport.Executor.Read).
func (c AccountingClient) read(ctx context.Context, ex transport.Executor, words ...string) ([][]string, error) {
	return c.exec(ctx, ex, true, words)
}

func (c AccountingClient) exec(ctx context.Context, ex transport.Executor, shared bool, words []string) ([][]string, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	script := c.script(transport.Command(words...))
	var res transport.Result
	var err error
	if shared {
		res, err = ex.Read(ctx, script)
	} else {
		res, err = ex.Sudo(ctx, script, nil)
	}
	if err != nil {
		return nil, &CommandError{Command: strings.Join(words, " "), Stdout: string(res.Stdout), Stderr: string(res.Stderr), Err: err}
	}
	return parseParsable(string(res.Stdout)), nil
}

// CommandError is a sacctmgr or sacct command that failed, with what it printed. sacctmgr
// prints most of its refusals on standard output ("No account nosuchacct on cluster cluster")
// and exits 1, where the transport's error holds standard error only.
type CommandError struct {
	Command        string
	Stdout, Stderr string
	Err            error
}

func (e *CommandError) Error() string {
	msg := e.Command + ": " + e.Err.Error()
	if out := strings.TrimSpace(e.Stdout); out != "" {
		msg += "; standard output: " + out
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// Said is the command's own words, standard output then standard error, one line each.
func (e *CommandError) Said() string {
	var lines []string
	for _, line := range strings.Split(e.Stdout+"\n"+e.Stderr, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// ToolSaid is what the sacctmgr or sacct command that err comes from printed; empty when err
// is not a command's failure, or it printed nothing.
func ToolSaid(err error) (tool, said string) {
	var ce *CommandError
	if !errors.As(err, &ce) {
		return "", ""
	}
	tool, _, _ = strings.Cut(ce.Command, " ")
	return tool, ce.Said()
}

// change runs a sacctmgr command that changes the database and records it as a change.
func (c AccountingClient) change(ctx context.Context, ex transport.Executor, words ...string) error {
	if _, err := c.run(ctx, ex, append([]string{"sacctmgr", "-i"}, words...)...); err != nil {
		return err
	}
	transport.Changed(ctx, ex, "sacctmgr "+strings.Join(words, " "))
	return nil
}

// onCluster is the where clause of an account's or a user's associations on the client's cluster.
func (c AccountingClient) onCluster(name string) []string {
	return []string{"name=" + name, "cluster=" + c.Cluster}
}

// setWhere modifies the entity (account, user, qos) that where matches to the key=value
// settings set; with none it runs nothing.
func (c AccountingClient) setWhere(ctx context.Context, ex transport.Executor, entity string, where, set []string) error {
	if len(set) == 0 {
		return nil
	}
	words := append(append([]string{"modify", entity, "where"}, where...), "set")
	return c.change(ctx, ex, append(words, set...)...)
}

// deleteAfterJobRecords deletes the entity (account, user, qos) that where matches once
// slurmctld has sent slurmdbd its queued job records, which stay.
func (c AccountingClient) deleteAfterJobRecords(ctx context.Context, ex transport.Executor, entity string, where []string) error {
	if err := waitJobRecordsSent(ctx, ex); err != nil {
		return err
	}
	return c.change(ctx, ex, append([]string{"delete", entity, "where"}, where...)...)
}

// parseParsable splits -nP output: one record per line, fields separated by '|'.
func parseParsable(out string) [][]string {
	var records [][]string
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		records = append(records, strings.Split(line, "|"))
	}
	return records
}

// EnsureCluster registers the client's cluster in slurmdbd unless it is there, so
// associations can be added before slurmctld first runs with accounting. slurmdbd gives the
// cluster an ID of its own, which SyncClusterID then hands to slurmctld.
func EnsureCluster(ctx context.Context, ex transport.Executor, c AccountingClient) error {
	rows, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "cluster", "format=Cluster")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r[0] == c.Cluster {
			return nil
		}
	}
	return c.change(ctx, ex, "add", "cluster", c.Cluster)
}

// clusterIDFile is where slurmctld keeps its ClusterName and ClusterID, in StateSaveLocation.
const clusterIDFile = "clustername"

// DatabaseClusterID reads the ID slurmdbd gave cluster, from the database on the accounting
// node (mysql as root over the unix socket).
func DatabaseClusterID(ctx context.Context, ex transport.Executor, database, cluster string) (string, error) {
	if !SQLNamePattern.MatchString(database) || !NamePattern.MatchString(cluster) {
		return "", fmt.Errorf("database %q or cluster %q is not a name", database, cluster)
	}
	query := "SELECT id FROM `" + database + "`.cluster_table WHERE name = '" + cluster + "' AND deleted = 0"
	res, err := ex.Sudo(ctx, transport.ScriptEnv+transport.Command("mysql", "-N", "-e", query), nil)
	if err != nil {
		return "", fmt.Errorf("read the ID of cluster %s from %s: %w", cluster, database, err)
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}

//go:embed sync_cluster_id.sh
var syncClusterID string

// SyncClusterID removes the ClusterID slurmctld saved in its StateSaveLocation when it is not
// id, the one slurmdbd has for the cluster, so that slurmctld's next start takes slurmdbd's.
// Otherwise a slurmctld that ran before accounting was set up (it makes up an ID of its own),
// or with another database, stops at its next start with "CLUSTER ID MISMATCH"; Slurm's own
// message says to remove the file. Jobs and the rest of the state are kept.
func SyncClusterID(ctx context.Context, ex transport.Executor, stateSaveLocation, id string) error {
	if err := checkValue("StateSaveLocation", stateSaveLocation); err != nil || !strings.HasPrefix(stateSaveLocation, "/") {
		return fmt.Errorf("StateSaveLocation %q: want an absolute path", stateSaveLocation)
	}
	if _, err := strconv.ParseUint(id, 10, 32); err != nil {
		return fmt.Errorf("ClusterID %q from slurmdbd: not a number", id)
	}
	path := strings.TrimRight(stateSaveLocation, "/") + "/" + clusterIDFile
	script := transport.NewScript().Set("p", path).Set("id", id).Text(syncClusterID).String()
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if strings.TrimSpace(string(res.Stdout)) == "removed" {
		transport.Changed(ctx, ex, "removed the ClusterID slurmctld saved ("+path+"), which is not slurmdbd's "+id)
	}
	return nil
}

// UsageTimePattern matches sacct's -S and -E forms: 2026-12-01, 2026-12-01T08:00:00,
// now, now-7days, midnight.
var UsageTimePattern = regexp.MustCompile(`^[A-Za-z0-9:+-]{1,32}$`)

// GPUUsage is one user's GPU time in a window.
type GPUUsage struct {
	User string
	// Jobs counts the user's jobs that had GPUs.
	Jobs int
	// GPUSeconds is the sum, over those jobs, of GPUs times seconds run within the window.
	GPUSeconds int64
}

// ReadGPUUsage sums every user's GPU time between start and end from sacct: each job's
// allocated gres/gpu count times its run time, truncated to the window (sacct -T), so a job
// that started before start counts only from start on. Users are sorted by name.
func ReadGPUUsage(ctx context.Context, ex transport.Executor, c AccountingClient, start, end string) ([]GPUUsage, error) {
	for _, t := range []string{start, end} {
		if !UsageTimePattern.MatchString(t) {
			return nil, fmt.Errorf("time %q: use a form sacct accepts, such as 2026-12-01, 2026-12-01T08:00:00, now or now-7days", t)
		}
	}
	rows, err := c.run(ctx, ex, "sacct", "-a", "-X", "-T", "-nP", "--clusters="+c.Cluster, "-S", start, "-E", end, "--format=User,ElapsedRaw,AllocTRES")
	if err != nil {
		return nil, err
	}
	return sumGPUUsage(rows)
}

func sumGPUUsage(rows [][]string) ([]GPUUsage, error) {
	byUser := map[string]*GPUUsage{}
	for _, r := range rows {
		if len(r) != 3 {
			return nil, fmt.Errorf("sacct: record %q: want 3 fields", strings.Join(r, "|"))
		}
		gpus := tresCount(r[2], "gres/gpu")
		if gpus == 0 || r[0] == "" {
			continue
		}
		secs, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("sacct: ElapsedRaw %q: %w", r[1], err)
		}
		u := byUser[r[0]]
		if u == nil {
			u = &GPUUsage{User: r[0]}
			byUser[r[0]] = u
		}
		u.Jobs++
		u.GPUSeconds += gpus * secs
	}
	out := make([]GPUUsage, 0, len(byUser))
	for _, u := range byUser {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].User < out[j].User })
	return out, nil
}

// tresCount is the count of name in a TRES list ("cpu=2,gres/gpu=1,mem=1G"); typed entries
// (gres/gpu:a100=1) repeat the untyped one, so only the untyped one counts.
func tresCount(list, name string) int64 {
	for _, entry := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(entry, "=")
		if !ok || k != name {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n
		}
	}
	return 0
}
