package users

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The ledger enforces the guide's "never reuse a UID": shared storage records
// ownership by number, so a new user given a retired UID silently inherits
// the old user's files. Every id ever handed out stays in the ledger, with
// the name it was first given to, for good.

// LedgerEntry records that an id was given to a name.
type LedgerEntry struct {
	Kind    Kind
	Name    string
	ID      int64
	Retired bool
}

// Ledger is the content of the ledger file.
type Ledger struct {
	Entries []LedgerEntry
}

const ledgerHeader = "# gpucluster UID/GID ledger: every id ever given out, retired ones included.\n" +
	"# Never edit an id to a different name: files on shared storage are owned by number.\n"

// ParseLedger reads lines "user|group <name> <id> active|retired"; blank lines
// and # comments are ignored.
func ParseLedger(content []byte) (*Ledger, error) {
	l := &Ledger{}
	for i, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLedgerLine(line)
		if err != nil {
			return nil, fmt.Errorf("ledger line %d: %w", i+1, err)
		}
		if prev, ok := l.find(e.Kind, e.ID); ok {
			return nil, fmt.Errorf("ledger line %d: %s %d is listed twice (%s and %s)",
				i+1, idLabel(e.Kind), e.ID, prev.Name, e.Name)
		}
		l.Entries = append(l.Entries, e)
	}
	return l, nil
}

func parseLedgerLine(line string) (LedgerEntry, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return LedgerEntry{}, fmt.Errorf("%q: want \"user|group NAME ID active|retired\"", line)
	}
	kind := Kind(f[0])
	if kind != KindUser && kind != KindGroup {
		return LedgerEntry{}, fmt.Errorf("%q: unknown kind %q", line, f[0])
	}
	if err := ValidateName(kind, f[1]); err != nil {
		return LedgerEntry{}, fmt.Errorf("%q: %w", line, err)
	}
	id, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || id < 0 {
		return LedgerEntry{}, fmt.Errorf("%q: %q is not a numeric id", line, f[2])
	}
	if f[3] != "active" && f[3] != "retired" {
		return LedgerEntry{}, fmt.Errorf("%q: status must be active or retired, not %q", line, f[3])
	}
	return LedgerEntry{Kind: kind, Name: f[1], ID: id, Retired: f[3] == "retired"}, nil
}

// Render writes the ledger in a stable order (groups, then users, by id), so
// an unchanged ledger renders to the same bytes and is not rewritten.
func (l *Ledger) Render() []byte {
	entries := slices.Clone(l.Entries)
	slices.SortFunc(entries, func(a, b LedgerEntry) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID))
	})
	var b bytes.Buffer
	b.WriteString(ledgerHeader)
	for _, e := range entries {
		status := "active"
		if e.Retired {
			status = "retired"
		}
		fmt.Fprintf(&b, "%s %s %d %s\n", e.Kind, e.Name, e.ID, status)
	}
	return b.Bytes()
}

// CheckClaim refuses an id that was first given to a different name, active
// or retired.
func (l *Ledger) CheckClaim(kind Kind, name string, id int64) error {
	prev, ok := l.find(kind, id)
	if !ok || prev.Name == name {
		return nil
	}
	state := "still in use"
	if prev.Retired {
		state = "retired"
	}
	return fmt.Errorf("%s %d was first given to %s %s (%s); it cannot be given to %s: "+
		"files on shared storage are owned by number, so %s would inherit %s's files. Choose an unused %s",
		idLabel(kind), id, kind, prev.Name, state, name, name, prev.Name, idLabel(kind))
}

// CheckRetiredName refuses a name the ledger records as retired under other ids when it
// records none for the name under id: files the earlier account left on shared storage keep
// their owner by number, so the name would come back without them. Coming back under one of
// its own ids is a reactivation (Claim), and once the ledger records the name under id the
// choice was already made.
func (l *Ledger) CheckRetiredName(kind Kind, name string, id int64) error {
	var retired []string
	for _, e := range l.Entries {
		if e.Kind != kind || e.Name != name {
			continue
		}
		if e.ID == id {
			return nil
		}
		if e.Retired {
			retired = append(retired, strconv.FormatInt(e.ID, 10))
		}
	}
	if len(retired) == 0 {
		return nil
	}
	label, old := idLabel(kind), strings.Join(retired, ", ")
	kept := "files there are owned by number and keep owner " + old + ", its home included"
	if kind == KindGroup {
		kept = "files there record their group by number and keep group " + old
	}
	return fmt.Errorf("the ledger records %s %s as retired with %s %s; given %s %d, %s would not own what it left on shared storage "+
		"(%s), and %s %s stays retired for good", kind, name, label, old, label, id, name, kept, label, old)
}

// Claim records that name holds id, reactivating an entry the same name held
// before. Other ids the name held are retired: they stay reserved to it.
func (l *Ledger) Claim(kind Kind, name string, id int64) error {
	if err := l.CheckClaim(kind, name, id); err != nil {
		return err
	}
	found := false
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Kind != kind || e.Name != name {
			continue
		}
		if e.ID == id {
			e.Retired, found = false, true
		} else {
			e.Retired = true
		}
	}
	if !found {
		l.Entries = append(l.Entries, LedgerEntry{Kind: kind, Name: name, ID: id})
	}
	return nil
}

// Retire marks name's id as retired. An id the ledger never saw (an account
// made before the ledger existed) is recorded as retired, so it stays taken.
func (l *Ledger) Retire(kind Kind, name string, id int64) error {
	if err := l.CheckClaim(kind, name, id); err != nil {
		return err
	}
	for i := range l.Entries {
		if e := &l.Entries[i]; e.Kind == kind && e.ID == id {
			e.Retired = true
			return nil
		}
	}
	l.Entries = append(l.Entries, LedgerEntry{Kind: kind, Name: name, ID: id, Retired: true})
	return nil
}

// Records reports whether the ledger holds id for name as an active entry, as a claim of
// them leaves it.
func (l *Ledger) Records(kind Kind, name string, id int64) bool {
	e, ok := l.find(kind, id)
	return ok && e.Name == name && !e.Retired
}

func (l *Ledger) find(kind Kind, id int64) (LedgerEntry, bool) {
	for _, e := range l.Entries {
		if e.Kind == kind && e.ID == id {
			return e, true
		}
	}
	return LedgerEntry{}, false
}
