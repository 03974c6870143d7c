#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Deny and allow entries with a time to live: added and listed with the
# time left, re-added by the documented rule, bad ttls refused; an entry
# drops a sender's traffic over a veth until it expires and none after,
# with no daemon running, and the next writer purges it; the daemon keeps
# runtime entries across a reload, makes a prefix its config lists
# permanent, and purges expired entries on its tick.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
. tests/ban_lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root ttl

if ! ban_net ttl; then
	not_ok ttl-setup "cannot create the namespaces, the veth or attach"
	exit 1
fi

# ---- 1. add with a ttl, list the time left ----
begin_case
expect_ok "deny add ttl 1h" wr deny add 198.18.90.0/24 ttl 1h
expect_ok "deny add v6 ttl 30m" wr deny add 2001:db8:90::/48 ttl 30m
expect_ok "deny add permanent" wr deny add 198.18.91.0/24
expect_ok "allow add ttl 1d2h" wr allow add 198.18.92.0/24 ttl 1d2h
t=$(ttl_of deny 198.18.90.0/24)
in_range "$t" 3590 3600 || fail "198.18.90.0/24 ttl $t, want 3590..3600"
t=$(ttl_of deny 2001:db8:90::/48)
in_range "$t" 1790 1800 || fail "2001:db8:90::/48 ttl $t, want 1790..1800"
[ "$(ttl_of deny 198.18.91.0/24)" == null ] || fail "permanent entry: ttl $(ttl_of deny 198.18.91.0/24)"
t=$(ttl_of allow 198.18.92.0/24)
in_range "$t" 93590 93600 || fail "allow ttl $t, want 93590..93600"
# Text: the words add takes, the time left as a duration.
out=$(wr deny list)
grep -Eq '^198\.18\.90\.0/24 ttl (1h|59m[0-9]+s)$' <<<"$out" || fail "text list: $out"
grep -q '^198\.18\.91\.0/24$' <<<"$out" || fail "permanent entry in text: $out"
end_case ttl-add-and-list

# ---- 2. re-adding: a ttl entry takes the new ttl, a permanent one stays ----
begin_case
expect_ok "re-add ttl 2h" wr deny add 198.18.90.0/24 ttl 2h
t=$(ttl_of deny 198.18.90.0/24)
in_range "$t" 7190 7200 || fail "after ttl 2h: $t"
expect_ok "re-add ttl 10m" wr deny add 198.18.90.0/24 ttl 10m
t=$(ttl_of deny 198.18.90.0/24)
in_range "$t" 590 600 || fail "after ttl 10m: $t"
out=$(wr deny add 198.18.91.0/24 ttl 5m 2>&1) || fail "ttl on a permanent entry failed: $out"
[[ "$out" == *permanently* ]] || fail "not said that the entry stays permanent: $out"
[ "$(ttl_of deny 198.18.91.0/24)" == null ] || fail "a permanent entry got a ttl"
expect_ok "re-add without ttl" wr deny add 198.18.90.0/24
[ "$(ttl_of deny 198.18.90.0/24)" == null ] || fail "re-add without ttl did not make it permanent"
out=$(wr deny add 198.18.90.0/24 2>&1) && fail "a second permanent add succeeded"
[[ "$out" == *"already on the deny list"* ]] || fail "second permanent add: $out"
# del removes either kind; missing-ok makes a missing one no error.
expect_ok "del permanent" wr deny del 198.18.90.0/24
expect_ok "del ttl" wr deny del 2001:db8:90::/48
[ -z "$(ttl_of deny 2001:db8:90::/48)" ] || fail "2001:db8:90::/48 still listed"
out=$(wr deny del 2001:db8:90::/48 2>&1) && fail "del of a missing entry succeeded"
expect_ok "del missing-ok" wr deny del 2001:db8:90::/48 missing-ok
expect_ok "allow del" wr allow del 198.18.92.0/24
# ttl-only (a ban tool's unban): a permanent entry stays, a ttl entry goes.
out=$(wr deny del 198.18.91.0/24 ttl-only 2>&1) || fail "ttl-only on a permanent entry: $out"
[[ "$out" == *"left in place"* ]] || fail "ttl-only did not say it left the entry: $out"
[ "$(ttl_of deny 198.18.91.0/24)" == null ] || fail "ttl-only removed a permanent entry"
expect_ok "ttl entry" wr deny add 198.18.90.0/24 ttl 1h
expect_ok "ttl-only on a ttl entry" wr deny del 198.18.90.0/24 ttl-only
[ -z "$(ttl_of deny 198.18.90.0/24)" ] || fail "ttl-only left a ttl entry"
out=$(wr deny del 198.18.90.0/24 ttl-only 2>&1) && fail "ttl-only of a missing entry succeeded"
expect_ok "ttl-only missing-ok" wr deny del 198.18.90.0/24 ttl-only missing-ok
end_case ttl-readd-rule

# ---- 3. bad ttls: status 1, the word named, nothing changed ----
snapshot() { { wrj deny list; wrj allow list; } 2>&1; }
for bad in 0 -1 abc 10x 1h- 99999999999999999999 99999999999999999h 3651d 0.5s 1.s ""; do
	begin_case
	before=$(snapshot)
	err=$(wr deny add 198.18.93.0/24 ttl "$bad" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 1 ] || fail "ttl \"$bad\": exit status $rc, want 1"
	[[ "$err" == *"invalid ttl \"$bad\""* ]] || fail "ttl \"$bad\": $err"
	[ "$before" == "$(snapshot)" ] || fail "ttl \"$bad\" changed the lists"
	end_case "ttl-bad-value-${bad:-empty}"
done
begin_case
err=$(wr deny add 198.18.93.0/24 ttl 2>&1) && fail "ttl without a value succeeded"
[[ "$err" == *"ttl needs a duration"* ]] || fail "ttl without a value: $err"
err=$(wr deny add 198.18.93.0/24 ttl 1m ttl 2m 2>&1) && fail "two ttls succeeded"
[[ "$err" == *'unexpected "ttl"'* ]] || fail "two ttls: $err"
err=$(wr deny del 198.18.93.0/24 ttl 1m 2>&1) && fail "del with a ttl succeeded"
[ -z "$(ttl_of deny 198.18.93.0/24)" ] || fail "198.18.93.0/24 was added"
end_case ttl-bad-words

# ---- 4. an entry drops until it expires, with no daemon; the next writer purges it ----
begin_case
src=198.18.80.3
entries() { bpftool -j map dump pinned "$ROOT/wr_deny4" | jq 'length'; }
n0=$(entries)
expect_ok "deny add ttl 3s" wr deny add $src/32 ttl 3s
d0=$(ban_counter denied)
got=$(deliver $src 20)
[ "$got" -eq 0 ] || fail "$got of 20 arrived while denied"
d1=$(ban_counter denied)
[ $((d1 - d0)) -ge 20 ] || fail "denied counted $((d1 - d0)), want at least 20"
other=$(deliver 198.18.80.2 10)
[ "$other" -ge 9 ] || fail "another source lost packets: $other of 10 (tolerance 1)"
# Poll (bounded, about 15 s) until the data path lets it through.
for i in $(seq 30); do
	[ "$(deliver $src 3)" -gt 0 ] && break
	sleep 0.5
done
got=$(deliver $src 20)
[ "$got" -ge 19 ] || fail "after expiry $got of 20 arrived (tolerance 1)"
# Nothing has written since: the expired entry is still in the trie, skipped by the data path.
n=$(entries)
[ "$n" -eq $((n0 + 1)) ] || fail "the trie holds $n entries before a writer ran, want $n0 + the expired one"
expect_ok "a writer" wr set fail open
n=$(entries)
[ "$n" -eq "$n0" ] || fail "the trie holds $n entries after a writer ran, want $n0"
end_case ttl-expiry-without-daemon

# The same for IPv6, and an allow entry with a ttl over a rule's limit.
begin_case
src=2001:db8:80::3
expect_ok "deny add v6 ttl 2s" wr deny add $src/128 ttl 2s
got=$(deliver $src 10)
[ "$got" -eq 0 ] || fail "$got of 10 arrived while denied"
for i in $(seq 30); do
	[ "$(deliver $src 3)" -gt 0 ] && break
	sleep 0.5
done
got=$(deliver $src 10)
[ "$got" -ge 9 ] || fail "after expiry $got of 10 arrived (tolerance 1)"
end_case ttl-expiry-ipv6

begin_case
expect_ok "rule" wr rule add tiny proto udp dport $BAN_PORT limit 1pps burst 1
expect_ok "allow add ttl 1h" wr allow add 198.18.80.4/32 ttl 1h
got=$(deliver 198.18.80.4 20)
[ "$got" -ge 19 ] || fail "allowed source: $got of 20 arrived (tolerance 1)"
expect_ok "allow add ttl 1s" wr allow add 198.18.80.4/32 ttl 1s
for i in $(seq 30); do
	[ "$(ttl_of allow 198.18.80.4/32)" == "" ] && break
	sleep 0.5
done
got=$(deliver 198.18.80.4 20)
# 1 pps, burst 1, over about 0.1 s of sending (20 at 200/s): 1 or 2
[ "$got" -le 3 ] || fail "after the allow entry expired: $got of 20 arrived, want at most 3"
expect_ok "rule del" wr rule del tiny
end_case ttl-allow-expires

# ---- 5. the daemon: reloads keep runtime entries, the tick purges ----
begin_case
CFG=$TMP/ttl.yaml
cfg() {
	cat >"$CFG" <<EOT
interfaces:
  - { name: $BAN_DEV, mode: generic }
deny: [ $1 ]
events: { interval: 1s, lines: 3 }
metrics: off
EOT
}
cfg "198.18.94.0/24, 198.18.80.4/32"
LOG=$TMP/daemon.log
if ! start_daemon "$RCV" "$ROOT" "$CFG" "$LOG"; then
	fail "the daemon did not come up: $(tr '\n' ' ' <"$LOG")"
else
	expect_ok "runtime ttl" wr deny add 198.18.95.0/24 ttl 1h
	expect_ok "runtime ttl on a config prefix" wr deny add 198.18.80.4/32 ttl 1h
	expect_ok "runtime permanent" wr deny add 198.18.96.0/24
	[ "$(ttl_of deny 198.18.80.4/32)" == null ] ||
		fail "a config prefix with a runtime ttl is not permanent: $(ttl_of deny 198.18.80.4/32)"
	[ "$(wrj deny list | jq -r '.[][] | select(.cidr == "198.18.80.4/32") | .config')" == true ] ||
		fail "198.18.80.4/32 not shown as the config's"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -eq 0 ] || fail "config-denied source: $got of 10 arrived"
	# Reload with a config that drops both its prefixes and names another,
	# which a runtime ttl entry holds already: it becomes permanent.
	expect_ok "runtime ttl, before the config lists it" wr deny add 198.18.97.0/24 ttl 1h
	cfg "198.18.97.0/24"
	kill -HUP "$DPID"
	for i in $(seq 100); do
		grep -q "reloaded" "$LOG" && break
		sleep 0.1
	done
	grep -q "reloaded" "$LOG" || fail "no reload: $(tr '\n' ' ' <"$LOG")"
	[ -z "$(ttl_of deny 198.18.94.0/24)" ] || fail "the config's old 198.18.94.0/24 stayed"
	[ "$(ttl_of deny 198.18.97.0/24)" == null ] ||
		fail "the config's new 198.18.97.0/24 is not permanent: \"$(ttl_of deny 198.18.97.0/24)\""
	t=$(ttl_of deny 198.18.95.0/24)
	in_range "$t" 3000 3600 || fail "runtime ttl entry after reload: ttl \"$t\""
	t=$(ttl_of deny 198.18.80.4/32)
	in_range "$t" 3000 3600 || fail "198.18.80.4/32 did not fall back to its runtime ttl: \"$t\""
	[ "$(ttl_of deny 198.18.96.0/24)" == null ] || fail "runtime permanent entry lost on reload"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -eq 0 ] || fail "after reload, the runtime ban let $got of 10 through"
	# The tick purges what expires, no CLI involved.
	expect_ok "short ttl" wr deny add 198.18.98.0/24 ttl 1s
	for i in $(seq 100); do
		grep -q "removed 1 expired deny/allow entry" "$LOG" && break
		sleep 0.1
	done
	grep -q "removed 1 expired deny/allow entry" "$LOG" ||
		fail "the daemon's tick did not purge: $(tr '\n' ' ' <"$LOG")"
	# Fail-static: the daemon goes, the entries stay.
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	t=$(ttl_of deny 198.18.95.0/24)
	in_range "$t" 3000 3600 || fail "runtime entry gone after the daemon stopped: \"$t\""
fi
end_case ttl-daemon-reload-keeps-runtime

exit 0
