package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodes"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// nodeError builds the house diagnostic: what happened on which node, what to do, then the
// original error.
// A refused sudo gets sudo's own summary and advice whatever step it interrupted: the fix is
// always in the provider's sudo settings or on the node, not in the step. The first step the
// refusal stopped on a node explains it; every later one gets sudoRefusedEarlier's line.
// A node that could not be reached gets connectError's diagnostic whatever step needed it, and
// work cut short (Ctrl-C, a lost connection) cutShortError's.
func nodeError(summary, node, happened, todo string, err error) diag.Diagnostic {
	if d, ok := cutShortError(node, err); ok {
		return d
	}
	if isDialError(err) {
		return connectError(node, err)
	}
	if d, ok := sudoRefusedEarlier(node, err); ok {
		return d
	}
	summary, todo = sudoAdvice(summary, todo, err)
	return diag.NewErrorDiagnostic(summary, nodeDetail(node, happened, todo, err))
}

func nodeAttributeError(p path.Path, summary, node, happened, todo string, err error) diag.Diagnostic {
	if d, ok := cutShortError(node, err); ok {
		return diag.NewAttributeErrorDiagnostic(p, d.Summary(), d.Detail())
	}
	if isDialError(err) {
		d := connectError(node, err)
		return diag.NewAttributeErrorDiagnostic(p, d.Summary(), d.Detail())
	}
	if d, ok := sudoRefusedEarlier(node, err); ok {
		return diag.NewAttributeErrorDiagnostic(p, d.Summary(), d.Detail())
	}
	summary, todo = sudoAdvice(summary, todo, err)
	return diag.NewAttributeErrorDiagnostic(p, summary, nodeDetail(node, happened, todo, err))
}

func sudoAdvice(summary, todo string, err error) (string, string) {
	var se *transport.SudoError
	if !errors.As(err, &se) {
		return summary, todo
	}
	switch se.Kind {
	case transport.SudoWrongPassword:
		return "Sudo Password Rejected", fmt.Sprintf("Check sudo_password (or %s) for user %s. %s", envName("sudo_password"), se.User, oncePerNode)
	case transport.SudoAccountLocked:
		return "Account Locked", fmt.Sprintf("pam_faillock on %[1]s has locked %[2]s after %[3]d failed authentications (deny=%[4]d), so sudo refuses every password there, the right one too. "+
			"As root on %[1]s, run faillock --user %[2]s --reset%[5]s, check sudo_password (or %[6]s), and run Terraform again. %[7]s",
			se.Host, se.User, se.Faillock.Failures, se.Faillock.Deny, unlockWait(se.Faillock.UnlockIn), envName("sudo_password"), oncePerNode)
	case transport.SudoNotAllowed:
		return "Sudo Not Allowed", fmt.Sprintf("Let %s run commands as root with %s on %s (group sudo in the guide): sudoers refuses it, whatever the password.", se.User, se.Exe, se.Host)
	case transport.SudoPasswordRequired:
		return "Sudo Needs A Password", fmt.Sprintf("Set sudo_password (or %s), or allow %s to use %s without a password.", envName("sudo_password"), se.User, se.Exe)
	default:
		return "Sudo Failed", fmt.Sprintf("Check that %s may run commands as root with %s (group sudo in the guide) and that sudo_exe names an installed sudo.", se.User, se.Exe)
	}
}

// oncePerNode is what a refused password costs: the root shell is started through sudo once
// per node per run, a refusal is kept for the run, and sudo is killed at its second prompt.
const oncePerNode = "The provider tries the password once per node per run: this run added at most one failed authentication on the node, and every later step on it fails without asking sudo again."

func unlockWait(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (or wait %d minutes, when unlock_time ends the lock)", int((d+time.Minute-1)/time.Minute))
}

// sudoRefusedEarlier is the short error of a step stopped by a sudo refusal that an earlier
// step on the node already explained. It names neither the step nor its command, so the
// steps of one resource on one node share one copy.
func sudoRefusedEarlier(node string, err error) (diag.Diagnostic, bool) {
	var se *transport.SudoError
	if !errors.As(err, &se) || se.FirstReport() {
		return nil, false
	}
	return diag.NewErrorDiagnostic("Sudo Refused Earlier", fmt.Sprintf("Nothing was done on node %s: sudo refused %s there earlier in this run, "+
		"and the provider does not ask it again until the next run. The first sudo error about %s in this run says why and what to do.", node, se.User, se.Host)), true
}

func nodeDetail(node, happened, todo string, err error) string {
	detail := fmt.Sprintf("%s on node %s.", happened, node)
	if todo != "" {
		detail += "\n\n" + todo
	}
	if err != nil {
		detail += "\n\nOriginal Error: " + err.Error()
	}
	return detail
}

func isDialError(err error) bool {
	var de *transport.DialError
	return errors.As(err, &de)
}

// connectError explains a failed connection; a changed host key gets its own advice because
// it may be an attack and must never be waved through. The pool keeps a failed dial for the
// run, so a node that cannot be reached is explained once; every later resource on it gets
// a short error that points back to that one and repeats its cause, since Terraform orders
// errors by where their resources are written, not by when they happened: whichever comes
// first must say why.
func connectError(node string, err error) diag.Diagnostic {
	if d, ok := cutShortError(node, err); ok {
		return d
	}
	var de *transport.DialError
	if errors.As(err, &de) && !de.FirstReport() {
		return diag.NewErrorDiagnostic("Node Unreachable", fmt.Sprintf("Nothing was done on node %s: %s could not be reached earlier in this run "+
			"(%v), and the provider does not dial it again until the next run. The one error about %s that is not \"Node Unreachable\" says what to do.",
			node, de.Node, de.Err, de.Node))
	}
	if errors.Is(err, errNodeOffline) {
		return diag.NewErrorDiagnostic("Node Offline", nodeDetail(node, "Nothing was done: the provider's node block marks the node offline",
			"This part of the configuration reaches the node all the same. Leave the node out of it until the node is back (data sources are not "+
				"guarded: take it out of gpucluster_cluster_check's nodes meanwhile), or remove offline = true once the node is up.", err))
	}
	happened := "The provider could not open an SSH session"
	if de != nil && de.Node != node {
		happened += ": its jump host " + de.Node + " could not be reached"
	}
	var hk *transport.HostKeyError
	if errors.As(err, &hk) && len(hk.Known) == 0 && !hk.Revoked {
		return diag.NewErrorDiagnostic("Unknown Host Key", nodeDetail(node, "No known_hosts file or host_keys entry lists the node's SSH host key",
			"Check the fingerprint below against the node's own ("+hk.FingerprintCommand()+" on its console), then add this line to known_hosts_file or to host_keys:\n\n  "+
				hk.Line+"\n\nOr set accept_new_host_keys = true to record the key of a node on first contact.", err))
	}
	if errors.As(err, &hk) {
		return diag.NewErrorDiagnostic("Host Key Verification Failed", nodeDetail(node,
			"The SSH host key presented does not match the known key, or no key is known",
			"If the node was reinstalled, verify the new key out of band and update known_hosts_file or host_keys. "+
				"Otherwise someone may be impersonating the node: do not proceed.", err))
	}
	advice := "Check that the node is up, that its address resolves from the jump host, and the provider's user, key and sudo settings."
	if de != nil && de.Node == node && de.Unreachable() {
		advice = "Check that the node is up and that its address resolves from the jump host. A server that stays down (broken, powered off for " +
			"maintenance) can be left out of the runs: set offline = true in its node block of the provider configuration, and the rest of the " +
			"cluster plans and applies without it (the day-two guide, \"A GPU server that is down\")."
	}
	return diag.NewErrorDiagnostic("Cannot Connect To Node", nodeDetail(node, happened, advice, err))
}

// bootWaitError explains a node that create waited for in vain (boot_timeout), or whose first
// boot failed; any other failure, a changed host key or a refused login among them, is the
// connection's own error.
func bootWaitError(node string, timeout time.Duration, err error) diag.Diagnostic {
	var waited *transport.WaitTimeoutError
	switch {
	case errors.As(err, &waited):
		return diag.NewAttributeErrorDiagnostic(path.Root("boot_timeout"), "Node Did Not Come Up", nodeDetail(node,
			fmt.Sprintf("The provider waited %s (boot_timeout = %s) for the machine at %s, which %s in %d attempts; nothing was changed",
				waited.Waited.Round(time.Second), shortDuration(timeout), waited.Address, waited.Outcome(), waited.Attempts),
			"If the machine is still booting (a slow first boot, a long cloud-init run), raise boot_timeout and apply again. Otherwise look at the "+
				"machine's console: it may not have powered on, may have no network or no route from the jump host, or its sshd may not start.", waited.Last))
	case errors.Is(err, nodes.ErrBootFailed):
		return nodeAttributeError(path.Root("boot_timeout"), "Node Boot Failed", node, "The machine answers SSH, but its first boot ended in a failed state; nothing was changed",
			"Fix the boot on the machine (the error says where to look), then apply again.", err)
	}
	return connectError(node, err)
}

// cutShortError explains work that did not fail but was cut short, with the cause first and
// none of the step's own advice, which assumes the step ran to its end: the caller's context
// ended (Ctrl-C, a timeouts block) or the connection to the node was lost. The first error of
// a cause on a node in a run says what was done and what to run next; later ones, from every
// other resource the cause cut short, are one line that points back to it.
func cutShortError(node string, err error) (diag.Diagnostic, bool) {
	var (
		in   *transport.InterruptedError
		lost *transport.ConnectionLostError
	)
	switch {
	case errors.As(err, &in) && errors.Is(in.Reason, context.DeadlineExceeded):
		return timeoutError(node, in, err), true
	case errors.As(err, &in):
		return interruptedError(node, in, err), true
	case errors.As(err, &lost):
		return lostError(node, lost, err), true
	}
	return nil, false
}

func interruptedError(node string, in *transport.InterruptedError, err error) diag.Diagnostic {
	summary := interruptedSummary(in.During.Verb)
	if !in.FirstReport() {
		return diag.NewErrorDiagnostic(summary, fmt.Sprintf("Not finished on node %s: the run was interrupted. The first %s error about %s in this run says what was done and what to run next.", node, summary, in.Node))
	}
	return diag.NewErrorDiagnostic(summary, nodeDetail(node, "Terraform stopped the provider (Ctrl-C) "+during(in.During)+"before this step finished",
		leftBehind(in.Node, in.During.Verb, "the command in flight was killed there and no later step ran on it")+" "+runAgain(in.During.Verb)+": the provider reads each node and continues from what it finds.", err))
}

func timeoutError(node string, in *transport.InterruptedError, err error) diag.Diagnostic {
	summary := "Timeout Reached" + while(in.During)
	if !in.FirstReport() {
		return diag.NewErrorDiagnostic(summary, fmt.Sprintf("Not finished on node %s: the deadline passed. The first %s error about %s in this run says what was done and what to run next.", node, summary, in.Node))
	}
	return diag.NewErrorDiagnostic(summary, nodeDetail(node, "The deadline "+during(in.During)+"passed before this step finished",
		leftBehind(in.Node, in.During.Verb, "the command in flight was killed there and no later step ran on it")+" Find what made the node slow, or raise the limit in the resource's timeouts block, then run the same apply again: the provider reads each node and continues from what it finds.", err))
}

func lostError(node string, lost *transport.ConnectionLostError, err error) diag.Diagnostic {
	summary := "Connection To " + lost.Node + " Lost" + while(lost.During)
	if !lost.FirstReport() {
		return diag.NewErrorDiagnostic(summary, fmt.Sprintf("Not finished on node %s: the connection to %s was lost. The first %s error in this run says what was done and what to run next.", node, lost.Node, "Connection To "+lost.Node+" Lost"))
	}
	return diag.NewErrorDiagnostic(summary, nodeDetail(node, "The SSH connection to "+lost.Node+" or the provider's root shell on it ended "+during(lost.During)+"before this step finished",
		leftBehind(lost.Node, lost.During.Verb, "whether the command in flight ran is not known, and no later step ran on it")+" Check that "+lost.Node+" is up and that ssh to it as the provider's user works, then "+strings.ToLower(runAgain(lost.During.Verb))+": the provider reads each node and continues from what it finds.", err))
}

// interruptedSummary names the Terraform command that was interrupted, as far as the verb of
// the request tells it.
func interruptedSummary(verb string) string {
	switch verb {
	case "Creating", "Updating", "Deleting", "Applying":
		return "Apply Interrupted"
	case "Planning":
		return "Plan Interrupted"
	case "Reading", "Importing":
		return "Read Interrupted"
	}
	return "Run Interrupted"
}

func while(a transport.Activity) string {
	if a.Verb == "" {
		return ""
	}
	return " While " + strings.TrimSpace(a.Verb+" "+a.Object)
}

func during(a transport.Activity) string {
	if a.Verb == "" {
		return ""
	}
	return strings.TrimSpace("while "+strings.ToLower(a.Verb)+" "+a.Object) + ", "
}

// runAgain is what to run after work cut short: the Terraform command it belonged to.
func runAgain(verb string) string {
	switch verb {
	case "Planning", "Reading", "Importing":
		return "Run the same command again"
	}
	return "Run the same apply again"
}

// leftBehind says what state work cut short left the node in: a plan or a read changes
// nothing, any other work may have changed part of what it meant to.
func leftBehind(node, verb, inFlight string) string {
	switch verb {
	case "Planning", "Reading", "Importing":
		return "Nothing was changed on " + node + ": this request only reads."
	}
	return "The change may be partly applied on " + node + ": " + inFlight + "."
}

// nodeWarning is nodeError's warning form: what was found on which node, what to do, and the
// original error when there is one.
// Work cut short is reported as such here too, as a warning: the step's warning assumes the step
// ran to its end.
func nodeWarning(summary, node, happened, todo string, err error) diag.Diagnostic {
	if d, ok := cutShortError(node, err); ok {
		return diag.NewWarningDiagnostic(d.Summary(), d.Detail())
	}
	return diag.NewWarningDiagnostic(summary, nodeDetail(node, happened, todo, err))
}

func nodeAttributeWarning(p path.Path, summary, node, happened, todo string, err error) diag.Diagnostic {
	if d, ok := cutShortError(node, err); ok {
		return diag.NewAttributeWarningDiagnostic(p, d.Summary(), d.Detail())
	}
	return diag.NewAttributeWarningDiagnostic(p, summary, nodeDetail(node, happened, todo, err))
}

// isCutShort tells work cut short (see cutShortError) from a step's own failure, for a caller
// that would otherwise show the error as something the node said.
func isCutShort(err error) bool {
	var (
		in   *transport.InterruptedError
		lost *transport.ConnectionLostError
	)
	return errors.As(err, &in) || errors.As(err, &lost)
}

// settingError is the house diagnostic for a value refused before any node is asked: what was
// refused, what to do, then the original error.
func settingError(p path.Path, summary, happened, todo string, err error) diag.Diagnostic {
	detail := happened + "."
	if todo != "" {
		detail += "\n\n" + todo
	}
	if err != nil {
		detail += "\n\nOriginal Error: " + err.Error()
	}
	return diag.NewAttributeErrorDiagnostic(p, summary, detail)
}

// What to do after the common failures of a step on a node. Each says what state the node is
// left in, so the admin knows whether anything needs undoing.
const (
	adviceRead  = "Nothing was changed on the node. Check that it is reachable and that the packages this resource needs are installed; the original error names the command that failed."
	adviceWrite = "Files are replaced atomically, so the node keeps its previous file. Fix the cause named below (disk space, a read-only /etc, a missing package) and apply again."
	adviceStop  = "The data is untouched. Stop and disable the service by hand (systemctl disable --now SERVICE) if it still runs, then run the destroy again."
	adviceSetup = "Read the tool's message below and fix its cause, then apply again. The setup tool runs only on a missing or empty directory, so a retry never initialises anything twice."
	adviceLock  = "Another apply on this machine may be holding the node's lock; wait for it to finish and apply again."
	adviceWipe  = "Part of the directory may already be gone: force_destroy_data is unrecoverable. Remove what is left by hand, or run the destroy again."

	adviceForeignDir = "Choose another path, or clear the directory by hand if it really is unused: the provider never overwrites a directory that holds another BeeGFS node's data."
)

// invalidImportID is every resource's refusal of an import ID, in one wording: the ID given, the
// form expected with an example, why this ID does not fit when there is more to say, and where
// the one grammar every resource shares is written down.
func invalidImportID(id, form, example, why string) diag.Diagnostic {
	detail := fmt.Sprintf("The import ID %q does not have the form %s (for example %q).", id, form, example)
	if why != "" {
		detail += "\n\n" + why
	}
	detail += "\n\n" + importIDGrammar
	return diag.NewErrorDiagnostic("Invalid Import ID", detail)
}

// notInstalledError is the house diagnostic for a missing or unsupported BeeGFS package.
func notInstalledError(p path.Path, node string, err error) diag.Diagnostic {
	if beegfs.IsNotInstalled(err) {
		return nodeAttributeError(p, "BeeGFS Not Installed", node, "A BeeGFS package this resource needs is not installed",
			"Install it from ThinkParQ's repository (the BeeGFS quick start), then plan again.", err)
	}
	return nodeAttributeError(p, "Unsupported BeeGFS Version", node, "The installed BeeGFS is not a release the provider knows",
		"Install BeeGFS 8.x (the guide's 8.4) or 7.x.", err)
}
