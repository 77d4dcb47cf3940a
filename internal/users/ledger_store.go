package users

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// LedgerPath is where the ledger lives on the controller node. It is not
// secret (the same names and ids are in /etc/passwd) but only root writes it.
const LedgerPath = transport.StateDir + "/uid-ledger"

// LedgerHost is what a read-modify-write of the ledger needs from the
// controller node.
type LedgerHost interface {
	transport.Executor
	transport.FileReader
	transport.FileWriter
	Lock(ctx context.Context) (unlock func(), err error)
}

// ReadListedLedger reads the ledger at LedgerPath for plan-time checks and refreshes, from
// the host's shared account listing: every user and group of a run reads it from there, and
// the node's own accounts come with it, so no resource pays a round trip of its own. A missing
// file is an empty ledger.
func ReadListedLedger(ctx context.Context, ex transport.Executor) (*Ledger, error) {
	res, err := ex.Read(ctx, listingScript)
	if err != nil {
		return nil, fmt.Errorf("read UID ledger: %w", err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return nil, &AnswerError{Err: fmt.Errorf("read UID ledger: %w", err)}
	}
	s, ok := sections["ledger"]
	if !ok || s.Status != 0 {
		return nil, &AnswerError{Err: fmt.Errorf("read UID ledger: cat %s failed (status %d)", LedgerPath, s.Status)}
	}
	l, err := ParseLedger([]byte(strings.Join(s.Lines, "\n")))
	if err != nil {
		return nil, &AnswerError{Err: fmt.Errorf("UID ledger %s: %w", LedgerPath, err)}
	}
	return l, nil
}

// ledgerAttempts bounds the retries when another process changes the ledger between our read
// and our write; each retry re-reads, so no claim is ever lost.
const ledgerAttempts = 5

// UpdateLedger applies change to the ledger under the host's lock and writes
// it back atomically, only when an entry changed. The write is conditional on
// the content read, so a provider in another process updating the same ledger
// makes this one read again instead of overwriting its claim. An error from
// change leaves the file untouched.
func UpdateLedger(ctx context.Context, h LedgerHost, file string, change func(*Ledger) error) error {
	unlock, err := h.Lock(ctx)
	if err != nil {
		return fmt.Errorf("update UID ledger: %w", err)
	}
	defer unlock()
	for range ledgerAttempts {
		err = updateLedgerOnce(ctx, h, file, change)
		if !errors.Is(err, transport.ErrWriteConflict) {
			return err
		}
	}
	return fmt.Errorf("update UID ledger: gave up after %d attempts: %w", ledgerAttempts, err)
}

func updateLedgerOnce(ctx context.Context, h LedgerHost, file string, change func(*Ledger) error) error {
	content, exists, err := h.ReadFile(ctx, file)
	if err != nil {
		return fmt.Errorf("read UID ledger: %w", err)
	}
	l, err := ParseLedger(content)
	if err != nil {
		return fmt.Errorf("UID ledger %s: %w", file, err)
	}
	before := l.Render()
	if err := change(l); err != nil {
		return err
	}
	after := l.Render()
	if exists && bytes.Equal(before, after) {
		return nil
	}
	if !exists {
		if err := transport.EnsureStateDir(ctx, h); err != nil {
			return fmt.Errorf("create the UID ledger's directory: %w", err)
		}
	}
	expect := transport.Absent
	if exists {
		sum := sha256.Sum256(content)
		expect = hex.EncodeToString(sum[:])
	}
	f := transport.File{Path: file, Content: after, Owner: "root", Group: "root", Mode: 0o644, ExpectSHA256: expect}
	if _, err := h.WriteFile(ctx, f); err != nil {
		return fmt.Errorf("write UID ledger: %w", err)
	}
	return nil
}

// ClaimID records on the host's ledger that name holds id.
func ClaimID(ctx context.Context, h LedgerHost, file string, kind Kind, name string, id int64) error {
	return UpdateLedger(ctx, h, file, func(l *Ledger) error { return l.Claim(kind, name, id) })
}

// RetireID records on the host's ledger that name no longer uses id.
func RetireID(ctx context.Context, h LedgerHost, file string, kind Kind, name string, id int64) error {
	return UpdateLedger(ctx, h, file, func(l *Ledger) error { return l.Retire(kind, name, id) })
}
