package firewall

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// LedgerWriter also installs a file, for the ownership ledger.
type LedgerWriter interface {
	transport.Executor
	transport.FileWriter
}

// LedgerPath lists, one key per line, the rules that a gpucluster_firewall_rule
// owns on this node. A second resource declaring the same rule finds it here.
const LedgerPath = transport.StateDir + "/firewall-rules"

// ManagedPath exists while a gpucluster_firewall resource manages UFW on this node. A rule
// removal that would drop the provider's SSH connection may still be safe when that resource
// turns UFW off in the same run, and it is planned after the rules it lists: the marker tells a
// rule's plan to leave the check to the firewall's.
const ManagedPath = transport.StateDir + "/firewall-managed"

// Policies as UFW's commands name them; the defaults file spells them DROP,
// ACCEPT and REJECT.
const (
	PolicyAllow  = "allow"
	PolicyDeny   = "deny"
	PolicyReject = "reject"
)

// Policies are the accepted default policies.
var Policies = []string{PolicyDeny, PolicyAllow, PolicyReject}

var policyFromFile = map[string]string{"ACCEPT": PolicyAllow, "DROP": PolicyDeny, "REJECT": PolicyReject}

// State is what a node's UFW holds, read from its files in one round trip.
type State struct {
	Enabled  bool
	Incoming string
	Outgoing string
	Rules    []Rule
	// Owned are the rule keys in the ownership ledger.
	Owned []string
	// Managed tells that a gpucluster_firewall manages UFW here (ManagedPath exists).
	Managed bool
}

// readStateScript prints UFW's files in one awk process (transport.AwkSections), not a cat
// per file; the shell's own read loop would save those processes too but reads a byte per
// system call, slower than cat for files of many rules.
// Only regular files that are not empty go to awk; a missing file reads as empty, and anything
// else goes to cat, which reads an empty file as empty and fails on the rest, as it did for
// every file. When awk fails, its "awk" section says so and the read fails.
var readStateScript = transport.NewScript().Text(transport.SectionFuncs).
	Set("v4", RulesFile).Set("v6", Rules6File).Set("conf", ConfFile).Set("defaults", DefaultsFile).
	Set("ledger", LedgerPath).Set("managed", ManagedPath).Set("sections_awk", transport.AwkSections).
	Text(readState).String()

//go:embed read_state.sh
var readState string

// ErrNotInstalled reports a node without the ufw command.
var ErrNotInstalled = errors.New("ufw is not installed")

// ReadState reads rules, policies and the enabled flag from UFW's files,
// which say the same whether UFW is active or not. A node without ufw is
// ErrNotInstalled, told apart from a read that failed for another reason.
func ReadState(ctx context.Context, h transport.Executor) (State, error) {
	res, err := h.Read(ctx, readStateScript)
	var exitErr *transport.ExitError
	if errors.As(err, &exitErr) && exitErr.Status == 3 {
		return State{}, fmt.Errorf("read UFW state: %w: %w", ErrNotInstalled, err)
	}
	if err != nil {
		return State{}, fmt.Errorf("read UFW state: %w", err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return State{}, fmt.Errorf("read UFW state: %w", err)
	}
	if s, ok := sections["awk"]; ok {
		return State{}, fmt.Errorf("read UFW state: awk failed reading UFW's files (status %d): %s", s.Status, strings.TrimSpace(string(res.Stderr)))
	}
	for _, key := range []string{"v4", "v6", "conf", "defaults", "ledger"} {
		s, ok := sections[key]
		if !ok || s.Status != 0 {
			return State{}, fmt.Errorf("read UFW state: reading %s failed (status %d)", key, s.Status)
		}
	}
	return parseState(sections)
}

func parseState(sections map[string]transport.Section) (State, error) {
	v4, err := ParseTuples(strings.Join(sections["v4"].Lines, "\n"))
	if err != nil {
		return State{}, fmt.Errorf("parse %s: %w", RulesFile, err)
	}
	v6, err := ParseTuples(strings.Join(sections["v6"].Lines, "\n"))
	if err != nil {
		return State{}, fmt.Errorf("parse %s: %w", Rules6File, err)
	}
	conf := shellVars(sections["conf"].Lines)
	defaults := shellVars(sections["defaults"].Lines)
	st := State{
		Enabled:  conf["ENABLED"] == "yes",
		Incoming: policyFromFile[defaults["DEFAULT_INPUT_POLICY"]],
		Outgoing: policyFromFile[defaults["DEFAULT_OUTPUT_POLICY"]],
		Rules:    Rules(v4, v6),
	}
	if st.Incoming == "" || st.Outgoing == "" {
		return State{}, fmt.Errorf("%s: unknown DEFAULT_INPUT_POLICY %q or DEFAULT_OUTPUT_POLICY %q",
			DefaultsFile, defaults["DEFAULT_INPUT_POLICY"], defaults["DEFAULT_OUTPUT_POLICY"])
	}
	managed, ok := sections["managed"]
	st.Managed = ok && managed.Status == 0
	for _, line := range sections["ledger"].Lines {
		if key := strings.TrimSpace(line); key != "" && !strings.HasPrefix(key, "#") {
			st.Owned = append(st.Owned, key)
		}
	}
	return st, nil
}

// shellVars reads NAME=value lines of a sourced configuration file.
func shellVars(lines []string) map[string]string {
	vars := map[string]string{}
	for _, line := range lines {
		line = strings.TrimSpace(line)
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		vars[name] = strings.Trim(value, `"'`)
	}
	return vars
}

// Owns reports whether the ledger lists key.
func (s State) Owns(key string) bool { return slices.Contains(s.Owned, key) }

// AddCommand is the ufw command line that adds r, or only changes its
// comment when r already exists: UFW then rewrites the comment in place, so
// the rule never disappears, not even for a moment. r must be normalized.
func AddCommand(r Rule) string {
	cmd := ruleCommand([]string{"ufw", r.Action}, r)
	if r.Comment != "" {
		cmd += " comment " + transport.Quote(r.Comment)
	}
	return cmd
}

// DeleteCommand deletes r by its specification, never by number.
func DeleteCommand(r Rule) string {
	return ruleCommand([]string{"ufw", "delete", r.Action}, r)
}

func ruleCommand(words []string, r Rule) string {
	if r.Proto != ProtoAny {
		words = append(words, "proto", r.Proto)
	}
	words = append(words, "from", r.From, "to", "any", "port", r.Port)
	return transport.Command(words...)
}

// Add adds r, or updates its comment; an identical rule is left alone.
func Add(ctx context.Context, h transport.Executor, r Rule) error {
	return runUFW(ctx, h, r, AddCommand(r))
}

// Delete removes r; a rule that is already gone is not an error.
func Delete(ctx context.Context, h transport.Executor, r Rule) error {
	return runUFW(ctx, h, r, DeleteCommand(r))
}

func runUFW(ctx context.Context, h transport.Executor, r Rule, cmd string) error {
	if _, err := r.Normalize(); err != nil {
		return fmt.Errorf("refusing to run ufw with an invalid rule: %w", err)
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+cmd, nil); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	transport.Changed(ctx, h, "ran "+cmd)
	return nil
}

// SetPolicies sets the default incoming and outgoing policy. UFW writes them
// to its defaults file and applies them at once when active.
func SetPolicies(ctx context.Context, h transport.Executor, incoming, outgoing string) error {
	for _, p := range []string{incoming, outgoing} {
		if !slices.Contains(Policies, p) {
			return fmt.Errorf("policy %q is not one of %s", p, strings.Join(Policies, ", "))
		}
	}
	script := transport.NewScript().Command("ufw", "default", incoming, "incoming").Command("ufw", "default", outgoing, "outgoing").String()
	if _, err := h.Sudo(ctx, script, nil); err != nil {
		return fmt.Errorf("set default policies: %w", err)
	}
	transport.Changed(ctx, h, "set UFW's default policies: incoming "+incoming+", outgoing "+outgoing)
	return nil
}

// SetEnabled enables UFW (also at boot) or disables it.
func SetEnabled(ctx context.Context, h transport.Executor, enabled bool) error {
	cmd := "ufw disable"
	if enabled {
		cmd = "ufw --force enable"
	}
	if _, err := h.Sudo(ctx, transport.ScriptEnv+cmd, nil); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	transport.Changed(ctx, h, "ran "+cmd)
	return nil
}

// WriteLedger replaces the ownership ledger with keys. With no key left it removes the file, so
// destroying a node's last rule resource leaves nothing of the provider's on the node. The
// caller holds the host's lock from reading the state to writing.
func WriteLedger(ctx context.Context, h LedgerWriter, keys []string) error {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) == 0 {
		return removeLedger(ctx, h)
	}
	content := "# Firewall rules owned by gpucluster_firewall_rule resources. Managed by Terraform.\n"
	for _, k := range keys {
		content += k + "\n"
	}
	if err := transport.EnsureStateDir(ctx, h); err != nil {
		return fmt.Errorf("create the directory of %s: %w", LedgerPath, err)
	}
	if _, err := h.WriteFile(ctx, transport.File{Path: LedgerPath, Content: []byte(content), Owner: "root", Group: "root", Mode: 0o644}); err != nil {
		return fmt.Errorf("write %s: %w", LedgerPath, err)
	}
	return nil
}

// MarkManaged creates ManagedPath; the caller holds the host's lock and found it missing.
func MarkManaged(ctx context.Context, h LedgerWriter) error {
	if err := transport.EnsureStateDir(ctx, h); err != nil {
		return fmt.Errorf("create the directory of %s: %w", ManagedPath, err)
	}
	content := "# UFW on this node is managed by a gpucluster_firewall resource. Managed by Terraform.\n"
	if _, err := h.WriteFile(ctx, transport.File{Path: ManagedPath, Content: []byte(content), Owner: "root", Group: "root", Mode: 0o644}); err != nil {
		return fmt.Errorf("write %s: %w", ManagedPath, err)
	}
	return nil
}

// Unmark removes ManagedPath, as the firewall resource's destroy leaves UFW to others.
func Unmark(ctx context.Context, h transport.Executor) error {
	return removeIfPresent(ctx, h, ManagedPath, "")
}

func removeLedger(ctx context.Context, h transport.Executor) error {
	return removeIfPresent(ctx, h, LedgerPath, ", which listed no rule any more")
}

// removeIfPresent removes file, logging the change (with why) only when it was there.
func removeIfPresent(ctx context.Context, h transport.Executor, file, why string) error {
	script := transport.NewScript().Set("file", file).Text(`if [ -e "$file" ]; then rm -f -- "$file" && echo removed; fi`).String()
	res, err := h.Sudo(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("remove %s: %w", file, err)
	}
	if strings.TrimSpace(string(res.Stdout)) == "removed" {
		transport.Changed(ctx, h, "removed "+file+why)
	}
	return nil
}

// Undeclared returns the rules on the node that no gpucluster_firewall_rule owns: neither in
// the ownership ledger nor declared, by key, in the run that asks (declared may be nil).
func (s State) Undeclared(declared func(key string) bool) []Rule {
	var out []Rule
	for _, r := range s.Rules {
		if !s.Owns(r.Key()) && (declared == nil || !declared(r.Key())) {
			out = append(out, r)
		}
	}
	return out
}
