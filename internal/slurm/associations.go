package slurm

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// Associations live in slurmdbd: Slurm accounts in a tree under root, users in accounts, and
// QOS. Every change goes through sacctmgr and reads use its parsable output (-nP). Deleting
// one removes the association or QOS only: slurmdbd keeps every job record, which sacct
// still shows, once slurmctld has sent it (waitJobRecordsSent).

// AssocNamePattern matches account, user and QOS names. Slurm stores them in lower case, so
// upper case would read back as another name.
var AssocNamePattern = regexp.MustCompile(`^[a-z0-9_][a-z0-9_.-]{0,63}$`)

// DescriptionPattern matches a description that fits sacctmgr's parsable output and reads
// back as written: Slurm stores descriptions in lower case.
var DescriptionPattern = regexp.MustCompile(`^[^A-Z|\n\r"'\\]{1,128}$`)

func checkAssocName(what, name string) error {
	if !AssocNamePattern.MatchString(name) {
		return fmt.Errorf("%s name %q: use lower-case letters, digits, '_', '.' and '-' (Slurm stores names in lower case)", what, name)
	}
	return nil
}

func checkDescription(d string) error {
	if d != "" && !DescriptionPattern.MatchString(d) {
		return fmt.Errorf("description %q: at most 128 characters in lower case (Slurm lowers them), without '|', quotes, backslashes or line breaks", d)
	}
	return nil
}

// Account is a Slurm account: a node in the association tree of the cluster.
type Account struct {
	Name        string
	Parent      string
	Fairshare   int
	Description string
}

// Validate checks every value that reaches sacctmgr.
func (a Account) Validate() error {
	if err := checkAssocName("account", a.Name); err != nil {
		return err
	}
	if err := checkAssocName("parent account", a.Parent); err != nil {
		return err
	}
	if a.Name == "root" || a.Name == a.Parent {
		return fmt.Errorf("account %q: root is Slurm's own, and an account cannot be its own parent", a.Name)
	}
	if a.Fairshare < 1 {
		return fmt.Errorf("account %s: fairshare %d: want at least 1", a.Name, a.Fairshare)
	}
	return checkDescription(a.Description)
}

// ReadAccount reads the account's description and, from its association on the client's
// cluster, its parent and fair-share. found is false when either is missing.
func ReadAccount(ctx context.Context, ex transport.Executor, c AccountingClient, name string) (a Account, found bool, err error) {
	if err := checkAssocName("account", name); err != nil {
		return Account{}, false, err
	}
	accounts, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "account", "where", "name="+name, "format=Account,Descr")
	if err != nil {
		return Account{}, false, err
	}
	assocs, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "association", "where", "account="+name, "cluster="+c.Cluster,
		"format=Account,User,ParentName,Fairshare")
	if err != nil {
		return Account{}, false, err
	}
	a.Name = name
	for _, r := range accounts {
		if len(r) == 2 && r[0] == name {
			a.Description, found = r[1], true
		}
	}
	assocFound := false
	for _, r := range assocs {
		if len(r) != 4 || r[0] != name || r[1] != "" {
			continue
		}
		assocFound = true
		a.Parent = r[2]
		if a.Fairshare, err = strconv.Atoi(r[3]); err != nil {
			return Account{}, false, fmt.Errorf("account %s: fairshare %q: %w", name, r[3], err)
		}
	}
	return a, found && assocFound, nil
}

// AccountNames lists the accounts slurmdbd holds. Every plan of a Slurm user in a run asks
// the same, so the read is shared within the run until the controller changes.
func AccountNames(ctx context.Context, ex transport.Executor, c AccountingClient) ([]string, error) {
	rows, err := c.read(ctx, ex, "sacctmgr", "-nP", "show", "account", "format=Account")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r[0])
	}
	return names, nil
}

// HasUnixAccount tells whether the node's passwd database (getent: local files, LDAP, SSSD)
// knows name: Slurm keeps a user's association without one, but the user can run no job.
func HasUnixAccount(ctx context.Context, ex transport.Executor, name string) (bool, error) {
	if err := checkAssocName("user", name); err != nil {
		return false, err
	}
	script := transport.NewScript().Set("name", name).Text(`getent passwd -- "$name" >/dev/null; st=$?
case $st in 0) echo yes ;; 2) echo no ;; *) exit $st ;; esac`).String()
	res, err := ex.Read(ctx, script)
	if err != nil {
		return false, fmt.Errorf("getent passwd %s: %w", name, err)
	}
	return strings.TrimSpace(string(res.Stdout)) == "yes", nil
}

// EnsureAccount adds the account on the client's cluster, or changes what differs from have.
func EnsureAccount(ctx context.Context, ex transport.Executor, c AccountingClient, want Account, have *Account) error {
	if err := want.Validate(); err != nil {
		return err
	}
	if have == nil {
		words := []string{"add", "account", want.Name, "cluster=" + c.Cluster, "parent=" + want.Parent, "fairshare=" + strconv.Itoa(want.Fairshare)}
		if want.Description != "" {
			words = append(words, "description="+want.Description)
		}
		if err := c.change(ctx, ex, words...); err != nil {
			return err
		}
		return replaceKeptDescription(ctx, ex, c, want)
	}
	var set []string
	if have.Parent != want.Parent {
		set = append(set, "parent="+want.Parent)
	}
	if have.Fairshare != want.Fairshare {
		set = append(set, "fairshare="+strconv.Itoa(want.Fairshare))
	}
	if want.Description != "" && have.Description != want.Description {
		set = append(set, "description="+want.Description)
	}
	return c.setWhere(ctx, ex, "account", c.onCluster(want.Name), set)
}

// DeleteAccount removes the account's association on the client's cluster, and the account
// with it when no other cluster uses it: sacctmgr deletes the account itself only when the
// command names no cluster, and a kept account keeps its description, which the next add of
// the name leaves as it was. Job records stay.
func DeleteAccount(ctx context.Context, ex transport.Executor, c AccountingClient, name string) error {
	if err := checkAssocName("account", name); err != nil {
		return err
	}
	if err := c.deleteAfterJobRecords(ctx, ex, "account", c.onCluster(name)); err != nil {
		return err
	}
	clusters, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "association", "where", "account="+name, "format=Cluster")
	if err != nil || len(clusters) > 0 {
		return err
	}
	return c.change(ctx, ex, "delete", "account", "where", "name="+name)
}

// replaceKeptDescription sets the description of an account just added when slurmdbd still
// held the account from before (a destroy by an earlier provider version removed only its
// association): sacctmgr then adds the association and leaves the old description.
func replaceKeptDescription(ctx context.Context, ex transport.Executor, c AccountingClient, want Account) error {
	if want.Description == "" {
		return nil
	}
	rows, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "account", "where", "name="+want.Name, "format=Descr")
	if err != nil || (len(rows) == 1 && rows[0][0] == want.Description) {
		return err
	}
	return c.setWhere(ctx, ex, "account", []string{"name=" + want.Name}, []string{"description=" + want.Description})
}

// AccountingUser is a user's associations on the cluster: the accounts it may charge, its
// default one, and optionally the QOS every one of its associations allows.
type AccountingUser struct {
	Name           string
	Accounts       []string
	DefaultAccount string
	// QOS and DefaultQOS are left as they are when nil and empty.
	QOS        []string
	DefaultQOS string
}

// Validate checks every value that reaches sacctmgr, and that the defaults are in the lists.
func (u AccountingUser) Validate() error {
	if err := checkAssocName("user", u.Name); err != nil {
		return err
	}
	for _, list := range [][]string{u.Accounts, u.QOS} {
		for _, n := range list {
			if err := checkAssocName("account or QOS", n); err != nil {
				return err
			}
		}
	}
	if !slices.Contains(u.Accounts, u.DefaultAccount) {
		return fmt.Errorf("user %s: default account %q is not among its accounts", u.Name, u.DefaultAccount)
	}
	if u.DefaultQOS != "" && !slices.Contains(u.QOS, u.DefaultQOS) {
		return fmt.Errorf("user %s: default QOS %q is not among its QOS", u.Name, u.DefaultQOS)
	}
	return nil
}

// ReadUser reads the user's associations on the client's cluster. When they do not all allow
// the same QOS, QOS is nil, so a configured list reads as a change that repairs them all.
func ReadUser(ctx context.Context, ex transport.Executor, c AccountingClient, name string) (u AccountingUser, found bool, err error) {
	if err := checkAssocName("user", name); err != nil {
		return AccountingUser{}, false, err
	}
	users, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "user", "where", "name="+name, "format=User,DefaultAccount")
	if err != nil {
		return AccountingUser{}, false, err
	}
	assocs, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "association", "where", "user="+name, "cluster="+c.Cluster, "format=User,Account,QOS,DefaultQOS")
	if err != nil {
		return AccountingUser{}, false, err
	}
	u.Name = name
	for _, r := range users {
		if len(r) == 2 && r[0] == name {
			u.DefaultAccount, found = r[1], true
		}
	}
	var qosSets []string
	for _, r := range assocs {
		if len(r) != 4 || r[0] != name {
			continue
		}
		u.Accounts = append(u.Accounts, r[1])
		qosSets = append(qosSets, sortedList(r[2]))
		if r[1] == u.DefaultAccount {
			u.DefaultQOS = r[3]
		}
	}
	sort.Strings(u.Accounts)
	if len(qosSets) > 0 && allEqual(qosSets) && qosSets[0] != "" {
		u.QOS = strings.Split(qosSets[0], ",")
	}
	return u, found && len(u.Accounts) > 0, nil
}

func sortedList(s string) string {
	if s == "" {
		return ""
	}
	parts := strings.Split(s, ",")
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func allEqual(s []string) bool {
	for _, v := range s[1:] {
		if v != s[0] {
			return false
		}
	}
	return true
}

// EnsureUser brings the user's associations on the client's cluster to want, given have (nil:
// none yet): missing accounts are added first and the default set before any account is
// removed, since Slurm refuses to remove the default one.
func EnsureUser(ctx context.Context, ex transport.Executor, c AccountingClient, want AccountingUser, have *AccountingUser) error {
	if err := want.Validate(); err != nil {
		return err
	}
	var current AccountingUser
	if have != nil {
		current = *have
	}
	var missing, extra []string
	for _, a := range want.Accounts {
		if !slices.Contains(current.Accounts, a) {
			missing = append(missing, a)
		}
	}
	for _, a := range current.Accounts {
		if !slices.Contains(want.Accounts, a) {
			extra = append(extra, a)
		}
	}
	if len(missing) > 0 {
		words := []string{"add", "user", want.Name, "cluster=" + c.Cluster, "account=" + strings.Join(missing, ",")}
		if have == nil {
			words = append(words, "defaultaccount="+want.DefaultAccount)
		}
		if err := c.change(ctx, ex, words...); err != nil {
			return err
		}
	}
	if have != nil && current.DefaultAccount != want.DefaultAccount {
		if err := c.setWhere(ctx, ex, "user", c.onCluster(want.Name), []string{"defaultaccount=" + want.DefaultAccount}); err != nil {
			return err
		}
	}
	if len(extra) > 0 {
		if err := c.deleteAfterJobRecords(ctx, ex, "user", append(c.onCluster(want.Name), "account="+strings.Join(extra, ","))); err != nil {
			return err
		}
	}
	return ensureUserQOS(ctx, ex, c, want, current, len(missing) > 0)
}

// ensureUserQOS sets the QOS on every association of the user when they differ, or when
// accounts were just added (a new association starts with its parent's QOS).
func ensureUserQOS(ctx context.Context, ex transport.Executor, c AccountingClient, want, have AccountingUser, added bool) error {
	var set []string
	if want.QOS != nil && (added || sortedList(strings.Join(want.QOS, ",")) != sortedList(strings.Join(have.QOS, ","))) {
		set = append(set, "qos="+strings.Join(want.QOS, ","))
	}
	if want.DefaultQOS != "" && (added || want.DefaultQOS != have.DefaultQOS) {
		set = append(set, "defaultqos="+want.DefaultQOS)
	}
	return c.setWhere(ctx, ex, "user", c.onCluster(want.Name), set)
}

// DeleteUser removes the user's associations on the client's cluster. Job records stay.
func DeleteUser(ctx context.Context, ex transport.Executor, c AccountingClient, name string) error {
	if err := checkAssocName("user", name); err != nil {
		return err
	}
	return c.deleteAfterJobRecords(ctx, ex, "user", c.onCluster(name))
}

// QOS is a quality of service: a priority and limits a job's association may allow it.
type QOS struct {
	Name        string
	Description string
	Priority    int
	// MaxTRESPerUser is MaxTRESPerUser, by TRES name: {"gres/gpu": 1}.
	MaxTRESPerUser map[string]int64
	// MaxJobsPerUser is MaxJobsPerUser; zero means no limit.
	MaxJobsPerUser int
}

// Validate checks every value that reaches sacctmgr.
func (q QOS) Validate() error {
	if err := checkAssocName("QOS", q.Name); err != nil {
		return err
	}
	for name, n := range q.MaxTRESPerUser {
		if !TRESNamePattern.MatchString(name) || n < 0 {
			return fmt.Errorf("QOS %s: max_tres_per_user %s=%d: want a TRES name such as gres/gpu and a count of at least 0", q.Name, name, n)
		}
	}
	if q.Priority < 0 || q.MaxJobsPerUser < 0 {
		return fmt.Errorf("QOS %s: priority and max_jobs_per_user cannot be negative", q.Name)
	}
	return checkDescription(q.Description)
}

// tresList writes a TRES map the way sacctmgr takes and shows it: name=count, sorted.
func tresList(m map[string]int64) string {
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatInt(m[n], 10)
	}
	return strings.Join(parts, ",")
}

func parseTRESList(s string) (map[string]int64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int64{}
	for _, entry := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(entry, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("TRES entry %q: want name=count", entry)
		}
		out[k] = n
	}
	return out, nil
}

// ReadQOS reads a QOS; found is false when it does not exist.
func ReadQOS(ctx context.Context, ex transport.Executor, c AccountingClient, name string) (q QOS, found bool, err error) {
	if err := checkAssocName("QOS", name); err != nil {
		return QOS{}, false, err
	}
	rows, err := c.run(ctx, ex, "sacctmgr", "-nP", "show", "qos", "where", "name="+name, "format=Name,Description,Priority,MaxTRESPU,MaxJobsPU")
	if err != nil {
		return QOS{}, false, err
	}
	for _, r := range rows {
		if len(r) != 5 || r[0] != name {
			continue
		}
		q = QOS{Name: name, Description: r[1]}
		if q.Priority, err = atoiOrZero(r[2]); err != nil {
			return QOS{}, false, fmt.Errorf("QOS %s: priority: %w", name, err)
		}
		if q.MaxTRESPerUser, err = parseTRESList(r[3]); err != nil {
			return QOS{}, false, fmt.Errorf("QOS %s: %w", name, err)
		}
		if q.MaxJobsPerUser, err = atoiOrZero(r[4]); err != nil {
			return QOS{}, false, fmt.Errorf("QOS %s: max jobs per user: %w", name, err)
		}
		return q, true, nil
	}
	return QOS{}, false, nil
}

func atoiOrZero(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.Atoi(s)
}

// EnsureQOS adds the QOS, or changes what differs from have. A limit no longer wanted is
// cleared with -1, sacctmgr's way.
func EnsureQOS(ctx context.Context, ex transport.Executor, c AccountingClient, want QOS, have *QOS) error {
	if err := want.Validate(); err != nil {
		return err
	}
	if have == nil {
		words := []string{"add", "qos", want.Name, "priority=" + strconv.Itoa(want.Priority)}
		if want.Description != "" {
			words = append(words, "description="+want.Description)
		}
		if len(want.MaxTRESPerUser) > 0 {
			words = append(words, "maxtrespu="+tresList(want.MaxTRESPerUser))
		}
		if want.MaxJobsPerUser > 0 {
			words = append(words, "maxjobspu="+strconv.Itoa(want.MaxJobsPerUser))
		}
		return c.change(ctx, ex, words...)
	}
	return c.setWhere(ctx, ex, "qos", []string{"name=" + want.Name}, qosChanges(want, *have))
}

func qosChanges(want, have QOS) []string {
	var set []string
	if want.Priority != have.Priority {
		set = append(set, "priority="+strconv.Itoa(want.Priority))
	}
	if want.Description != "" && want.Description != have.Description {
		set = append(set, "description="+want.Description)
	}
	tres := map[string]int64{}
	for n, v := range want.MaxTRESPerUser {
		if have.MaxTRESPerUser[n] != v {
			tres[n] = v
		}
	}
	for n := range have.MaxTRESPerUser {
		if _, ok := want.MaxTRESPerUser[n]; !ok {
			tres[n] = -1
		}
	}
	if len(tres) > 0 {
		set = append(set, "maxtrespu="+tresList(tres))
	}
	if want.MaxJobsPerUser != have.MaxJobsPerUser {
		n := want.MaxJobsPerUser
		if n == 0 {
			n = -1
		}
		set = append(set, "maxjobspu="+strconv.Itoa(n))
	}
	return set
}

// DeleteQOS removes the QOS; associations that allowed it no longer do. Job records stay.
func DeleteQOS(ctx context.Context, ex transport.Executor, c AccountingClient, name string) error {
	if err := checkAssocName("QOS", name); err != nil {
		return err
	}
	return c.deleteAfterJobRecords(ctx, ex, "qos", []string{"name=" + name})
}
