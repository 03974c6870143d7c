#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The fail2ban action (etc/fail2ban/action.d/weir.conf) with the real
# fail2ban-server: a private config, socket, pidfile and database in a
# temporary directory, jails on log files this suite writes. Failures from
# a source get it banned (on weir's deny list with the jail's bantime as
# its ttl, its datagrams dropped on the veth) and unbanned when the ban
# ends; bantime -1 bans for the longest ttl; an operator's permanent deny
# outlives a ban and its unban; IPv6 too; and a ban ends on time even
# when fail2ban is killed.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
. tests/ban_lib.sh
TMP=$(mktemp -d)
F2B=$TMP/f2b
F2B_PID=""
stop_f2b() {
	[ -n "$F2B_PID" ] || return 0
	timeout 20 fail2ban-client -c "$F2B" stop >/dev/null 2>&1
	kill -9 "$F2B_PID" 2>/dev/null
	wait "$F2B_PID" 2>/dev/null
	F2B_PID=""
}
trap 'stop_f2b; cleanup; rm -rf "$TMP"' EXIT
require_root fail2ban
if ! command -v fail2ban-server >/dev/null; then
	not_ok fail2ban-setup "fail2ban-server not installed (make test installs fail2ban)"
	exit 1
fi
if ! ban_net f2b; then
	not_ok fail2ban-setup "cannot create the namespaces, the veth or attach"
	exit 1
fi
# failures ADDR N LOG: N log lines the jails' filter takes.
failures() { for _ in $(seq "$2"); do echo "wr-test: authentication failure from $1"; done >>"$3"; }

mkdir -p "$F2B/action.d" "$F2B/filter.d"
cp etc/fail2ban/action.d/weir.conf "$F2B/action.d/"
cat >"$F2B/fail2ban.conf" <<EOF
[Definition]
loglevel = INFO
logtarget = $TMP/f2b.log
socket = $TMP/f2b.sock
pidfile = $TMP/f2b.pid
dbfile = $TMP/f2b.sqlite3
allowipv6 = auto
EOF
cat >"$F2B/filter.d/wr-test.conf" <<'EOF'
[Definition]
failregex = ^wr-test: authentication failure from <HOST>$
datepattern = {NONE}
EOF
cat >"$F2B/jail.conf" <<EOF
[DEFAULT]
backend = polling
usedns = no
findtime = 10m
maxretry = 3
bantime = 10
action = weir[weir="$WEIR --bpffs $ROOT"]

[wr-test]
enabled = true
filter = wr-test
logpath = $TMP/auth.log

[wr-perm]
enabled = true
filter = wr-test
logpath = $TMP/perm.log
bantime = -1
EOF
: >"$TMP/auth.log"
: >"$TMP/perm.log"

# fail2ban-server in the receiver's namespace (cleanup ends whatever is left there).
nsenter --net="/run/netns/$RCV" fail2ban-server -c "$F2B" -f -x >"$TMP/f2b.out" 2>&1 &
F2B_PID=$!
if ! wait_for 30 sh -c "fail2ban-client -c '$F2B' ping 2>/dev/null | grep -q pong"; then
	not_ok fail2ban-setup "fail2ban-server did not answer: $(tail -5 "$TMP/f2b.out" "$TMP/f2b.log" 2>&1 | tr '\n' ' ')"
	exit 1
fi

# ---- 1. maxretry failures: banned with the bantime as ttl, dropped, then unbanned ----
begin_case
failures 198.18.80.2 3 "$TMP/auth.log"
if ! wait_for 20 listed 198.18.80.2/32; then
	fail "198.18.80.2 not on the deny list: $(wrj deny list) $(grep -i ban "$TMP/f2b.log" | tail -3)"
else
	t=$(ttl_of deny 198.18.80.2/32)
	[[ "$t" =~ ^[0-9]+$ ]] && [ "$t" -ge 1 ] && [ "$t" -le 10 ] ||
		fail "ttl \"$t\", want 1..10 (the jail's bantime)"
	got=$(deliver 198.18.80.2 10)
	[ "$got" -eq 0 ] || fail "banned source: $got of 10 arrived"
	got=$(deliver 198.18.80.3 10)
	[ "$got" -ge 9 ] || fail "another source: $got of 10 arrived (tolerance 1)"
	wait_for 20 unlisted 198.18.80.2/32 || fail "198.18.80.2 still listed after its bantime"
	wait_for 20 grep -q "Unban 198.18.80.2" "$TMP/f2b.log" || fail "fail2ban did not unban"
	got=$(deliver 198.18.80.2 10)
	[ "$got" -ge 9 ] || fail "unbanned source: $got of 10 arrived (tolerance 1)"
fi
end_case fail2ban-ban-and-unban

# ---- 2. bantime -1: the longest ttl until fail2ban unbans; an operator's deny stays ----
begin_case
failures 198.18.80.4 3 "$TMP/perm.log"
if ! wait_for 20 listed 198.18.80.4/32; then
	fail "198.18.80.4 not on the deny list: $(wrj deny list)"
else
	t=$(ttl_of deny 198.18.80.4/32)
	[[ "$t" =~ ^[0-9]+$ ]] && [ "$t" -ge $((3650 * 86400 - 100)) ] ||
		fail "ttl \"$t\", want 3650 days"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -eq 0 ] || fail "banned source: $got of 10 arrived"
	out=$(fail2ban-client -c "$F2B" set wr-perm unbanip 198.18.80.4 2>&1) ||
		fail "unbanip: $out"
	wait_for 10 unlisted 198.18.80.4/32 || fail "still listed after unbanip"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -ge 9 ] || fail "unbanned source: $got of 10 arrived (tolerance 1)"
fi
# An address the operator denies permanently: a ban leaves it so, the unban too.
expect_ok "operator's deny" wr deny add 198.18.80.3
out=$(fail2ban-client -c "$F2B" set wr-test banip 198.18.80.3 2>&1) || fail "banip: $out"
wait_for 10 grep -q "Ban 198.18.80.3" "$TMP/f2b.log" || fail "fail2ban did not ban 198.18.80.3"
out=$(fail2ban-client -c "$F2B" set wr-test unbanip 198.18.80.3 2>&1) || fail "unbanip: $out"
wait_for 10 grep -q "Unban 198.18.80.3" "$TMP/f2b.log" || fail "fail2ban did not unban 198.18.80.3"
[ "$(ttl_of deny 198.18.80.3/32)" == null ] || fail "the operator's deny became \"$(ttl_of deny 198.18.80.3/32)\""
got=$(deliver 198.18.80.3 10)
[ "$got" -eq 0 ] || fail "the operator's denied source: $got of 10 arrived"
expect_ok "deny del" wr deny del 198.18.80.3
end_case fail2ban-permanent-and-operator-deny

# ---- 3. IPv6; and a ban ends on time with fail2ban killed ----
begin_case
failures 2001:db8:80::2 3 "$TMP/auth.log"
if ! wait_for 20 listed 2001:db8:80::2/128; then
	fail "2001:db8:80::2 not on the deny list: $(wrj deny list)"
else
	got=$(deliver 2001:db8:80::2 10)
	[ "$got" -eq 0 ] || fail "banned IPv6 source: $got of 10 arrived"
	kill -9 "$F2B_PID"
	wait "$F2B_PID" 2>/dev/null
	F2B_PID=""
	wait_for 20 unlisted 2001:db8:80::2/128 || fail "the ban outlived its ttl"
	got=$(deliver 2001:db8:80::2 10)
	[ "$got" -ge 9 ] || fail "after the ttl: $got of 10 arrived (tolerance 1)"
fi
end_case fail2ban-ipv6-and-killed

# No action failed along the way (an unban racing the ttl is no error).
begin_case
grep -E "ERROR|failed" "$TMP/f2b.log" | grep -iE "action|weir" >"$TMP/errors"
[ ! -s "$TMP/errors" ] || fail "fail2ban logged: $(head -3 "$TMP/errors" | tr '\n' ' ')"
grep -q "Ban 198.18.80.2" "$TMP/f2b.log" || fail "fail2ban's log has no ban"
end_case fail2ban-no-action-errors

exit 0
