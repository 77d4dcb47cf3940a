// Package transport reaches cluster nodes the way an administrator does: over SSH as the
// administration account, with each host key checked against known_hosts lines or pinned keys
// (fail closed), through the login node as jump host, and with root through sudo.
//
// A Pool keeps one SSH connection per host for a whole Terraform run. The first command that
// needs root on a host starts one sudo, which starts a small root shell (a Perl program, since
// perl-base is Essential on Debian and Ubuntu); every later privileged command of the run on that
// host goes through it as a framed request, side by side with the others, each with its own exit
// status, output and deadline. So sudo, and PAM behind it, authenticates once per host and run,
// and a refused password is remembered instead of retried.
//
// Scripts are built by Script from quoted words (Quote, Command) and named variables, and share
// one prelude (ScriptEnv). The fixed text of every shell, Perl and awk program sent to hosts is
// a file of its own beside the Go that sends it, embedded with go:embed and checked by make
// lint (tools/lint-scripts.sh); values reach it only through those variables and arguments. The kinds of names that reach them (accounts, packages, units, hosts)
// are checked by the patterns in names.go, the same in every package. Scripts
// run through Host.Read are answered once per host until a command changes that host. Work that the
// caller's context ended is an *InterruptedError, work that a dropped connection or root shell
// cut short a *ConnectionLostError, whatever step it was, so a caller reports the cause and not
// the step's failure. HostWhenUp waits, up to a BootWait's deadline, for a machine that is still
// booting, retrying only the failures a booting machine gives (StillBooting). The package has
// no Terraform types; transporttest holds stand-ins for the packages that run scripts through it.
package transport
