#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `weir auto` across a fleet (docs/auto.md, "Across a fleet";
# user/daemon/auto_fleet.c, user/fleet/fp.c): three hosts as tests/fleet.sh
# builds them (tests/fleet_lib.sh: namespaces, one real redis-server), each
# with a fleet: section and auto: hosts 1 and 2 in mode on, host 3 in
# advise. A flood from tools/wrattack (udp-prefix, spoofed sources in
# 198.18.128.0/17) to host 1 only, until host 1 installs an auto rule; then
# host 2 installs the fingerprint host 1 published (auto-fN, "found by
# host1") and drops the same vector sent to it, while a normal client's
# traffic to it passes; host 3 only reports it, until `weir auto on`
# switches it, and then installs it too. Corrupt and hostile members
# written into the set with redis-cli are refused (log, metric) and change
# nothing. With Redis stalled the received rules go at their expiry and
# come back after. `weir auto off` on host 1 withdraws its fingerprint: the
# received rules go from hosts 2 and 3.
# Every wait is a bounded poll; nothing asserts how long anything took.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root fleet-auto

SLGEN=$BUILD/wrgen
ATTACK=$BUILD/wrattack
TMP=$(mktemp -d)
. tests/fleet_lib.sh
trap '[ -n "${FLEET_AUTO_KEEP:-}" ] && cp "$TMP"/h?.log /tmp/; fleet_down; cleanup; rm -rf "$TMP"; rm -f /run/weir/auto-sys-fs-bpf-"$TAG"-*' EXIT

for tool in jq redis-server redis-cli curl; do
	if ! command -v $tool >/dev/null; then
		skip fleet-auto "$tool is missing (make test-deps installs it)"
		exit 0
	fi
done
for b in "$SLGEN" "$ATTACK" "$WEIR"; do
	[ -x "$b" ] || { not_ok fleet-auto-setup "$b is missing (make)"; exit 1; }
done

PORT=5300
FLOOD=4000		# pps to host 1: eight times floor-pps below
SETKEY="weir:{t$TAG#0}:auto"

# auto_config I MODE: host I's config: a fleet, auto in MODE, and rule
# client, which counts the normal client's packets (a limit it never reaches).
auto_config() {
	cat >"$TMP/h$1.yaml" <<EOF
interfaces: [ { name: h${1}c, mode: native } ]
metrics: { listen: "127.0.0.1:1946$1" }
rules:
  - name: client
    proto: udp
    dport: $PORT
    src: 198.18.70.1/32
    limits:
      - { rate: 100000pps, burst: 100000 }
fleet:
  name: t$TAG
  host: host$1
  redis: [ "198.18.5$1.1:6379" ]
  interval: 100ms
auto: { mode: $2, warmup: 5s, linger: 120s, hold: 2s, budget: 2000, floor-pps: 500 }
EOF
}

begin_case
# auto-fN names are the fleet's rules': a config rule may not take one.
printf 'rules:\n  - { name: auto-f3, proto: udp, limits: [ { rate: 10pps } ] }\n' >"$TMP/bad.yaml"
out=$("$WEIR" check "$TMP/bad.yaml" 2>&1) && fail "weir check took rule auto-f3"
grep -q 'bad.yaml:2:.*auto-N names are weir auto.s, and auto-fN' <<<"$out" || fail "weir check: $out"
printf 'rules:\n  - { name: auto-fx, proto: udp, limits: [ { rate: 10pps } ] }\n' >"$TMP/ok.yaml"
out=$("$WEIR" check "$TMP/ok.yaml" 2>&1) || fail "weir check refused rule auto-fx: $out"
end_case fleet-auto-names-reserved

fleet_up 2>"$TMP/up.err" || { not_ok fleet-auto-setup "$(cat "$TMP/up.err")"; exit 1; }
auto_config 1 on
auto_config 2 on
auto_config 3 advise
for i in 1 2 3; do
	start_host "$i" || { not_ok fleet-auto-setup "daemon $i did not start: $(tail -3 "$TMP/h$i.log")"; exit 1; }
done

# wait_for N CMD...: poll CMD every 0.2 s, at most N times (a bound, not a timing check).
wait_for() {
	local n=$1 i
	shift
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
status() { wrh "$1" -j auto status; }
rules_of() { wrh "$1" -j rule list | jq -r '.rules[].name'; }
auto_rule() { rules_of "$1" | grep -E '^auto-[0-9]+$' | head -1; }
fleet_rule() { rules_of "$1" | grep -E '^auto-f[0-9]+$' | head -1; }
has_auto_rule() { [ -n "$(auto_rule "$1")" ]; }
has_fleet_rule() { [ -n "$(fleet_rule "$1")" ]; }
no_fleet_rule() { [ -z "$(fleet_rule "$1")" ]; }
advised_from() { [ "$(status "$1" | jq --arg h "$2" '[.fleet[]? | select(.host == $h)] | length')" -ge 1 ]; }
rule_count() {
	wrh "$1" -j stats interval 0 |
		jq -r --arg r "$2" --arg k "$3" '.rules[] | select(.name == $r) | .[$k]'
}
metric() { in_ns "${H[$1]}" curl -s --max-time 10 "http://127.0.0.1:1946$1/metrics" |
	awk -v m="$2" '$1 == m { print $2 }'; }
watching() {
	[ "$(status "$1" | jq -r '.classes[]? | select(.class == "udp/'$PORT'") | .state')" = watching ]
}
# attack I PPS SECS: the udp-prefix vector to host I, bounded by its count too.
attack() {
	in_ns "$C" "$ATTACK" --vector udp-prefix --dst "198.18.6$1.2" --dport "$PORT" \
		--src-prefix 198.18.128.0/17 --seed 7 --rate "$2" --duration "$3" \
		--count $(($2 * $3)) --json >"$TMP/attack-$1.json" 2>&1
}
# The normal client: 50 queries a second from 198.18.70.1 to hosts 1 and 2, all along
# (bounded), 1000 bytes: longer than any of the udp-prefix vector's (64-256), so a
# fingerprint on length alone leaves it out too, whatever host 1 sampled of it before.
for i in 1 2; do
	in_ns "$C" "$SLGEN" --dst "198.18.6$i.2" --dport "$PORT" --src 198.18.70.1 --size 1000 \
		--rate 50 --duration 240 --json >"$TMP/client-$i.json" 2>&1 &
done

begin_case
wait_status 1 '.hosts' 3 100 || fail "fleet status: $(wrh 1 -j fleet status | jq -c '{hosts, nodes}')"
wait_for 100 watching 1 || fail "host 1 does not watch udp/$PORT: $(status 1 | jq -c .classes)"
# Some of the client's traffic sampled on host 1 (its before-sample): 300 samples, about 6 s.
sampled() { [ "$(status 1 | jq '.samples')" -ge 300 ]; }
wait_for 100 sampled || fail "host 1 sampled $(status 1 | jq '.samples') packets"
for i in 1 2 3; do
	j=$(status "$i")
	[ "$(jq -r '.running' <<<"$j")" = true ] || fail "host $i: auto not running: $j"
	[ "$(jq '.fleet | length' <<<"$j")" = 0 ] || fail "host $i: fleet rules before any flood: $j"
	[ -z "$(fleet_rule "$i")" ] || fail "host $i: an auto-f rule before any flood"
done
[ "$(in_ns "$R" redis-cli -h 198.18.51.1 zcard "$SETKEY")" = 0 ] ||
	fail "the fingerprint set is not empty: $(rcli zrange "$SETKEY" 0 -1)"
end_case fleet-auto-quiet-before

begin_case
attack 1 "$FLOOD" 10 &
gen=$!
wait_for 60 has_auto_rule 1 || fail "host 1 installed no auto rule: $(grep 'auto:' "$TMP/h1.log" | tail -3)"
rule1=$(auto_rule 1)
words1=$(status 1 | jq -r --arg r "$rule1" '.mitigations[] | select(.rule == $r) | .words')
# Published: host 1's member in the set, its words without the dst term.
published() { rcli zrange "$SETKEY" 0 -1 | grep -q "^host1	"; }
wait_for 50 published || fail "no member of host1 in $SETKEY: $(rcli zrange "$SETKEY" 0 -1)"
member=$(rcli zrange "$SETKEY" 0 -1 | grep -m1 "^host1	")
pwords=${member#host1	}
[ "$pwords" = "$(sed -E 's/ ?dst [^ ]+//' <<<"$words1")" ] ||
	fail "published \"$pwords\" for $rule1's \"$words1\""
grep -q "dst " <<<"$pwords" && fail "the published words keep the dst term: $pwords"
score=$(rcli zscore "$SETKEY" "$member")
read -r rs rus < <(rcli time | tr '\n' ' ')
now_ms=$((rs * 1000 + rus / 1000))
# Its expiry: in the future, and no further than three intervals and a second (1.3 s).
awk -v s="$score" -v n="$now_ms" 'BEGIN { exit !(s > n && s <= n + 1300) }' ||
	fail "member's expiry $score against Redis's now $now_ms"
[ "$(status 1 | jq '.published')" -ge 1 ] || fail "host 1's status: published $(status 1 | jq .published)"
[ "$(status 1 | jq '.fleet | length')" = 0 ] || fail "host 1 lists its own fingerprint as received"
[ -z "$(fleet_rule 1)" ] || fail "host 1 applied its own fingerprint"
echo "# fleet-auto rule=$rule1 words=\"$words1\" published=\"$pwords\""
end_case fleet-auto-published

begin_case
wait_for 50 has_fleet_rule 2 || fail "host 2 installed nothing: $(grep 'auto:' "$TMP/h2.log" | tail -3)"
frule2=$(fleet_rule 2)
m=$(status 2 | jq -c --arg r "$frule2" '.fleet[] | select(.rule == $r)')
[ "$(jq -r '.host' <<<"$m")" = host1 ] || fail "host 2's $frule2: $m"
[ "$(jq -r '.installed' <<<"$m")" = true ] || fail "host 2's $frule2 not installed: $m"
[ "$(jq -r '.words' <<<"$m")" = "$pwords" ] || fail "host 2's $frule2 words: $m"
[ "$(wrh 2 -j rule list | jq -r --arg r "$frule2" '.rules[] | select(.name == $r) | .spare')" = verified ] ||
	fail "host 2's $frule2 does not spare verified sources"
wrh 2 auto status | grep -qE "^  $frule2 installed, found by host1, received .*, expires in" ||
	fail "auto status (text): $(wrh 2 auto status | tail -4)"
grep -q "auto: fleet: $frule2 installed: found by host1" "$TMP/h2.log" || fail "no log line on host 2"
end_case fleet-auto-received

begin_case
# Host 3 is in advise mode: it reports the fingerprint and installs nothing.
wait_for 50 advised_from 3 host1 || fail "host 3 reports nothing: $(status 3 | jq -c .fleet)"
m=$(status 3 | jq -c '.fleet[0]')
[ "$(jq -r '.installed' <<<"$m")" = false ] || fail "host 3 (advise) installed: $m"
[ -z "$(fleet_rule 3)" ] || fail "host 3 (advise) has rule $(fleet_rule 3)"
grep -q "auto: fleet: advice from host1: weir rule add auto-f" "$TMP/h3.log" ||
	fail "no advice line on host 3"
[ "$(metric 3 'weir_auto_fleet_fingerprints_total{result="advised"}')" -ge 1 ] ||
	fail "host 3's advised metric: $(metric 3 'weir_auto_fleet_fingerprints_total{result="advised"}')"
end_case fleet-auto-advise-installs-nothing
wait "$gen"

begin_case
# The same vector to host 2, below host 2's own onset floor: its drops are the received rule's.
d0=$(rule_count 2 "$frule2" dropped_packets)
c0=$(rule_count 2 client passed_packets)
cd0=$(rule_count 2 client dropped_packets)
[ -n "$d0" ] && [ -n "$c0" ] || fail "no counters on host 2: $(wrh 2 -j stats interval 0 | jq -c '.rules')"
attack 2 400 5
sent=$(jq -r '.sent' "$TMP/attack-2.json")
sleep 0.5
d1=$(rule_count 2 "$frule2" dropped_packets)
c1=$(rule_count 2 client passed_packets)
cd1=$(rule_count 2 client dropped_packets)
[ "${sent:-0}" -ge 1000 ] || fail "wrattack sent ${sent:-nothing} to host 2: $(cat "$TMP/attack-2.json")"
[ $(((d1 - d0) * 100)) -ge $((sent * 90)) ] ||
	fail "host 2's $frule2 dropped $((d1 - d0)) of $sent packets of the vector"
# The normal client (50/s) went on passing on host 2 meanwhile.
[ $((c1 - c0)) -ge 100 ] || fail "host 2 passed $((c1 - c0)) of the client's packets in 5 s"
[ "$cd1" = "$cd0" ] || fail "host 2 dropped the client's packets: $cd0 -> $cd1"
[ -z "$(auto_rule 2)" ] || fail "host 2 made a rule of its own: $(auto_rule 2)"
echo "# fleet-auto host2 sent=$sent dropped_by_$frule2=$((d1 - d0)) client_passed=$((c1 - c0))"
end_case fleet-auto-drops-on-other-host

begin_case
[ "$(metric 1 'weir_auto_fleet_fingerprints_total{result="published"}')" -ge 1 ] ||
	fail "host 1 published metric: $(metric 1 'weir_auto_fleet_fingerprints_total{result="published"}')"
[ "$(metric 2 weir_auto_fleet_rules)" = 1 ] || fail "host 2 weir_auto_fleet_rules $(metric 2 weir_auto_fleet_rules)"
[ "$(metric 2 'weir_auto_fleet_fingerprints_total{result="installed"}')" = 1 ] ||
	fail "host 2 installed metric: $(metric 2 'weir_auto_fleet_fingerprints_total{result="installed"}')"
[ "$(metric 1 weir_auto_fleet_rules)" = 0 ] || fail "host 1 weir_auto_fleet_rules $(metric 1 weir_auto_fleet_rules)"
end_case fleet-auto-metrics

begin_case
# Corrupt and hostile members: refused with a log line and a metric each; nothing else changes.
before2=$(rules_of 2 | sort | tr '\n' ' ')
refused0=$(metric 2 'weir_auto_fleet_fingerprints_total{result="refused"}')
far=$(( $(rcli time | head -1) * 1000 + 600000 ))
bad=("no tab at all"
     "evil	proto udp limit 1/day burst 1 per all"
     "evil	bogus words here"
     "evil	proto udp dport $PORT limit 1/day burst 1 per all action dryrun"
     "evil	$(head -c 700 /dev/zero | tr '\0' x)"
     $'ev\nil\tproto udp dport 5300 len 92 limit 1/day burst 1 per all')
for b in "${bad[@]}"; do rcli zadd "$SETKEY" "$far" "$b" >/dev/null; done
refused() { [ "$(metric 2 'weir_auto_fleet_fingerprints_total{result="refused"}')" -ge $((refused0 + 6)) ]; }
wait_for 50 refused || fail "host 2 refused $(metric 2 'weir_auto_fleet_fingerprints_total{result="refused"}') (was $refused0), want 6 more"
sleep 0.5	# a few more reads: each member is refused once, not at every sync
[ "$(metric 2 'weir_auto_fleet_fingerprints_total{result="refused"}')" = $((refused0 + 6)) ] ||
	fail "refused counted $(metric 2 'weir_auto_fleet_fingerprints_total{result="refused"}') times, want $((refused0 + 6))"
[ "$(rules_of 2 | sort | tr '\n' ' ')" = "$before2" ] || fail "host 2's rules changed: $before2 -> $(rules_of 2 | sort | tr '\n' ' ')"
[ "$(grep -c 'auto: fleet: refused a fingerprint' "$TMP/h2.log")" -ge 6 ] || fail "refusals logged: $(grep 'refused a' "$TMP/h2.log")"
grep -q "refused a fingerprint from evil: it matches all of a protocol's traffic" "$TMP/h2.log" ||
	fail "no refusal of the match-all member: $(grep 'refused a' "$TMP/h2.log")"
kill -0 "${DAEMONS[1]}" 2>/dev/null || fail "host 2's daemon died"
[ "$(status 2 | jq '[.fleet[] | select(.host == "evil")] | length')" = 0 ] || fail "host 2 lists evil's"
for b in "${bad[@]}"; do rcli zrem "$SETKEY" "$b" >/dev/null; done
end_case fleet-auto-corrupt-refused

begin_case
# Host 3 switched to on: it installs the fingerprint still in the set.
wrh 3 auto on >/dev/null || fail "weir auto on on host 3"
wait_for 50 has_fleet_rule 3 || fail "host 3 (on) installed nothing: $(grep 'auto:' "$TMP/h3.log" | tail -3)"
frule3=$(fleet_rule 3)
[ "$(status 3 | jq -r --arg r "$frule3" '.fleet[] | select(.rule == $r) | .host')" = host1 ] ||
	fail "host 3's $frule3: $(status 3 | jq -c .fleet)"
end_case fleet-auto-applied-when-switched-on

begin_case
# Redis stalls (SIGSTOP): no host can refresh or read the set; the received
# rules go at their expiry (three intervals and a second), and come back
# once Redis answers again (host 1 still publishes).
kill -STOP "$REDIS_PID"
wait_for 50 no_fleet_rule 2 || fail "host 2 kept $(fleet_rule 2) with Redis stalled"
wait_for 50 no_fleet_rule 3 || fail "host 3 kept $(fleet_rule 3) with Redis stalled"
grep -q "auto: fleet: $frule2 (from host1) removed: expired (Redis out of reach)" "$TMP/h2.log" ||
	fail "no expiry line on host 2: $(grep 'auto: fleet' "$TMP/h2.log" | tail -2)"
has_auto_rule 1 || fail "host 1 lost its own rule with Redis stalled"
kill -CONT "$REDIS_PID"
wait_for 100 has_fleet_rule 2 || fail "host 2 did not install it again after Redis came back"
wait_for 100 has_fleet_rule 3 || fail "host 3 did not install it again after Redis came back"
frule2=$(fleet_rule 2)
end_case fleet-auto-expires-without-redis

begin_case
# Host 1 stops auto: its rule goes, its member is withdrawn, the others' copies go.
wrh 1 auto off >/dev/null || fail "weir auto off on host 1"
gone() { ! rcli zrange "$SETKEY" 0 -1 | grep -q "^host1	"; }
wait_for 50 gone || fail "host 1's member is still in the set: $(rcli zrange "$SETKEY" 0 -1)"
wait_for 50 no_fleet_rule 2 || fail "host 2 still has $(fleet_rule 2)"
wait_for 50 no_fleet_rule 3 || fail "host 3 still has $(fleet_rule 3)"
grep -q "auto: fleet: $frule2 (from host1) removed" "$TMP/h2.log" || fail "no removal line on host 2"
[ "$(metric 2 weir_auto_fleet_rules)" = 0 ] || fail "host 2 weir_auto_fleet_rules $(metric 2 weir_auto_fleet_rules)"
[ "$(status 2 | jq '.fleet | length')" = 0 ] || fail "host 2 still lists: $(status 2 | jq -c .fleet)"
end_case fleet-auto-withdrawn
