package transport

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"strconv"
	"strings"
	"time"
)

//go:embed faillock.sh
var faillockScript string

// FaillockTally is pam_faillock's record of a user on a node, as its preauth check reads it.
type FaillockTally struct {
	// Failures counts the recorded failures within fail_interval of the latest one.
	Failures int
	// Deny is the number of failures that locks the account.
	Deny int
	// UnlockIn is how long the lock still holds; zero when it holds until reset.
	UnlockIn time.Duration
}

// faillockSettings are pam_faillock's options that decide a lock, with the module's defaults.
type faillockSettings struct {
	deny, failInterval, unlockTime int64
}

func defaultFaillockSettings() faillockSettings {
	return faillockSettings{deny: 3, failInterval: 900, unlockTime: 600}
}

// set applies one option in faillock.conf's or the module line's form (deny=3, deny = 3).
func (s *faillockSettings) set(option string) {
	key, value, ok := strings.Cut(option, "=")
	if !ok {
		return
	}
	value = strings.TrimSpace(value)
	n, err := strconv.ParseInt(value, 10, 64)
	if value == "never" {
		n, err = 0, nil
	}
	if err != nil || n < 0 {
		return
	}
	switch strings.TrimSpace(key) {
	case "deny":
		s.deny = n
	case "fail_interval":
		s.failInterval = n
	case "unlock_time":
		s.unlockTime = n
	}
}

// parseFaillock decides from faillock.sh's output whether pam_faillock's preauth check would
// refuse the user now, as check_tally does: the failures within fail_interval of the latest
// reach deny, and unlock_time has not passed since the latest. The module's options override
// faillock.conf's. A node whose sudo stack has no pam_faillock is never locked by it.
func parseFaillock(out string) (FaillockTally, bool) {
	settings := defaultFaillockSettings()
	var now int64
	var moduleOptions []string
	var failures []int64
	for _, line := range strings.Split(out, "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "now":
			now, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		case "conf":
			settings.set(rest)
		case "pam":
			moduleOptions = append(moduleOptions, strings.Fields(rest)...)
		case "tally":
			if t, ok := tallyRecord(rest); ok {
				failures = append(failures, t)
			}
		}
	}
	if len(moduleOptions) == 0 || now == 0 {
		return FaillockTally{}, false
	}
	for _, option := range moduleOptions {
		settings.set(option)
	}
	var latest int64
	for _, t := range failures {
		latest = max(latest, t)
	}
	counted := 0
	for _, t := range failures {
		if latest-t < settings.failInterval {
			counted++
		}
	}
	if settings.deny == 0 || int64(counted) < settings.deny {
		return FaillockTally{}, false
	}
	tally := FaillockTally{Failures: counted, Deny: int(settings.deny)}
	if settings.unlockTime > 0 {
		left := latest + settings.unlockTime - now
		if left < 0 {
			return FaillockTally{}, false
		}
		tally.UnlockIn = time.Duration(left) * time.Second
	}
	return tally, true
}

// tallyRecord reads one valid record of `faillock --user` in UTC
// ("2026-12-03 09:20:39 SVC   sudo    V"); records marked I no longer count.
func tallyRecord(line string) (int64, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || f[len(f)-1] != "V" {
		return 0, false
	}
	t, err := time.Parse(time.DateTime, f[0]+" "+f[1])
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// explainLockout turns a rejected password into SudoAccountLocked when pam_faillock has locked
// the account: then sudo refuses every password, the right one too, and says no more than for
// a wrong one: neither sudo relays pam_faillock's lock message.
// The tally is read over the same connection as the login user. A read that fails leaves the
// refusal as it was: the password was refused either way.
func explainLockout(ctx context.Context, c *conn, err error) error {
	var sudoErr *SudoError
	if !errors.As(err, &sudoErr) || sudoErr.Kind != SudoWrongPassword {
		return err
	}
	sess, release, sessErr := c.newSession(ctx)
	if sessErr != nil {
		return err
	}
	defer release()
	defer func() { _ = sess.Close() }()
	var out bytes.Buffer
	sess.Stdout = &out
	if runSession(ctx, sess, Command("/bin/sh", "-c", faillockScript, "faillock-probe", sudoErr.User)) != nil {
		return err
	}
	if tally, locked := parseFaillock(out.String()); locked {
		sudoErr.Kind = SudoAccountLocked
		sudoErr.Faillock = &tally
	}
	return err
}
