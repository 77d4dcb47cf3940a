# What pam_faillock decides a lock by, read as the login user: the tally file belongs to that
# user, and reading it costs no authentication. Every line names its kind first.
# $1 is the user whose tally is read; faillock is in sbin, which a user's PATH lacks.
# shellcheck shell=sh
date -u +'now %s'
grep -hE '^[[:space:]]*-?auth[[:space:]].*pam_faillock\.so' /etc/pam.d/sudo /etc/pam.d/common-auth /etc/pam.d/system-auth 2>/dev/null | sed 's/^/pam /'
grep -E '^[[:space:]]*(deny|fail_interval|unlock_time)[[:space:]]*=' /etc/security/faillock.conf 2>/dev/null | sed 's/^/conf /'
PATH=/usr/sbin:/sbin:$PATH TZ=UTC0 faillock --user "$1" 2>/dev/null | sed 's/^/tally /'
exit 0
