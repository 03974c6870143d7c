#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Fleet-wide limits with a real Redis: three "hosts" (namespaces, each with
# its own weir daemon, bpffs root and veth), one client namespace, one
# Redis namespace. Redis is Debian's redis-server, started and stopped here,
# listening only inside its namespace.
#
#   client --c1/h1c--> H1 (daemon, XDP on h1c) --h1r/r1--+
#          --c2/h2c--> H2                     --h2r/r2--+-- R (redis-server)
#          --c3/h3c--> H3                     --h3r/r3--+
#
# One source (198.18.70.1) sends to all three hosts at once at 5x a fleet
# limit. What a limit admits is read from each daemon's rule counters and
# checked against burst + rate x t plus the stated sync bound
# N x rate x (interval + round trip) (docs/fleet.md), and with
# a floor (a fleet limit that refused honest traffic would be wrong too).
# Nothing asserts how long anything took.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root fleet

SLGEN=$BUILD/wrgen
TMP=$(mktemp -d)
. tests/fleet_lib.sh
trap 'fleet_down; cleanup; rm -rf "$TMP"' EXIT

for tool in jq redis-server redis-cli; do
	if ! command -v $tool >/dev/null; then
		skip fleet "$tool is missing (make deps installs it)"
		exit 0
	fi
done
for b in "$SLGEN" "$WEIR"; do
	[ -x "$b" ] || { not_ok fleet-setup "$b is missing (make)"; exit 1; }
done


fleet_up 2>"$TMP/up.err" || { not_ok fleet-setup "$(cat "$TMP/up.err")"; exit 1; }
for i in 1 2 3; do config "$i" fleet; done
for i in 1 2 3; do
	start_host "$i" || { not_ok fleet-setup "daemon $i did not start: $(tail -3 "$TMP/h$i.log")"; exit 1; }
done

# ---- 1. three hosts, one fleet limit ----
begin_case
# Every host has joined the heartbeat before traffic starts.
wait_status 1 '.hosts' 3 100
st=$(wrh 1 -j fleet status)
[ "$(jq '.running' <<<"$st")" == true ] || fail "fleet status: not running: $st"
[ "$(jq '.hosts' <<<"$st")" == 3 ] || fail "fleet status: hosts $(jq '.hosts' <<<"$st"), want 3"
[ "$(jq -r '.nodes[0].up' <<<"$st")" == true ] || fail "fleet status: node down: $st"
[ "$(jq -r '.limits[0].share' <<<"$st")" == 1 ] || fail "share $(jq '.limits[0].share' <<<"$st")"
end_case fleet-status

# metric NAME{LABELS} on host I: its value
metric() { in_ns "${H[$1]}" curl -s --max-time 10 "http://127.0.0.1:1946$1/metrics" |
	awk -v m="$2" '$1 == m { print $2 }'; }
begin_case
[ "$(metric 1 'weir_fleet_up{node="198.18.51.1:6379"}')" == 1 ] || fail "weir_fleet_up not 1"
[ "$(metric 1 weir_fleet_hosts)" == 3 ] || fail "weir_fleet_hosts $(metric 1 weir_fleet_hosts)"
[ "$(metric 1 'weir_fleet_share{rule="api",limit="0"}')" == 1.000000 ] || fail "share not 1"
[ "$(metric 1 weir_fleet_fallback_active)" == 0 ] || fail "fallback active"
[ -n "$(metric 1 'weir_fleet_sync_duration_seconds_bucket{le="+Inf"}')" ] || fail "no sync histogram"
end_case fleet-metrics

begin_case
# 5x the limit in all: a third of it to each host. The counters are read
# once the key is hot (after the first second) and again near the end: in
# between the fleet admits rate x the time between the reads, within the
# sync bound; over the whole run, within the bound from a standing start.
PPS=$((RATE * 5 / 3))
bg_send 7 "$PPS"
spid=$!
sleep 1.5
ta=$(now_s); a=$(total_passed); ta=$(mid_s "$ta")
sleep 4
tb=$(now_s); b=$(total_passed); tb=$(mid_s "$tb")
wait $spid
steady=$((b - a))
w=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", b - a }')
smax=$(awk -v w="$w" -v r=$RATE -v iv=$INTERVAL_MS 'BEGIN { printf "%d", (r * w + 3 * r * 2 * iv / 1000) * 1.05 + 5 }')
smin=$(awk -v w="$(covered "$ta" "$tb")" -v r=$RATE 'BEGIN { printf "%d", r * w * 0.85 }')
got=$(total_passed)
t=$(gen_secs)
max=$(FIRST=1 bound "$t")
echo "# fleet of 3, ${RATE}pps burst $BURST, sync ${INTERVAL_MS}ms, 5x over: hot, admitted $steady in ${w}s" \
	"(rate x t = $(awk -v w="$w" -v r=$RATE 'BEGIN { printf "%d", r * w }'), bound $smax);" \
	"whole run $got of $(sent) in ${t}s (burst + rate x t =" \
	"$(awk -v t="$t" -v r=$RATE -v b=$BURST 'BEGIN { printf "%d", b + r * t }'), bound $max);" \
	"per host $(passed 1) $(passed 2) $(passed 3)"
[ "$steady" -le "$smax" ] || fail "hot, the fleet admitted $steady in ${w}s, over the bound $smax"
[ "$steady" -ge "$smin" ] || fail "hot, the fleet admitted $steady in ${w}s, under $smin: honest traffic refused"
[ "$got" -le "$max" ] || fail "the fleet admitted $got, over the bound $max"
# Every packet was judged: none lost to a stall.
[ "$(total_seen)" -ge $(( $(sent) * 98 / 100 )) ] || fail "judged $(total_seen) of $(sent)"
FLEET_GOT=$got
end_case fleet-three-hosts-one-limit

# The charges reached Redis under the fleet's key names.
begin_case
# While traffic runs: a bucket lives in Redis as long as it is spent.
send 2 "$PPS" &
spid=$!
sleep 1
keys=$(rcli --scan --pattern "weir:{t$TAG#*}:api:0:*" | wc -l)
over=0
for k in $(rcli --scan --pattern "weir:{t$TAG#*}:over"); do over=$((over + $(rcli zcard "$k"))); done
wait $spid
[ "$keys" -ge 1 ] || fail "no bucket of rule api in Redis"
[ "$over" -ge 1 ] || fail "the source is not in the over-limit set"
[ "$(wrh 1 -j fleet status | jq '.keys_synced')" -gt 0 ] || fail "host 1 synced no key"
end_case fleet-keys-in-redis

# ---- 2. a host that never saw the source refuses it ----
begin_case
# Only host 1 is abused; then host 3, which has no bucket for the source
# yet, gets a burst's worth at once. A fresh host would admit all of it.
sleep 1.5
send 3 $((RATE * 4)) 1 &
spid=$!
sleep 1.5
before=$(passed 3)
in_ns "$C" "$SLGEN" --dst 198.18.63.2 --dport 9000 --src 198.18.70.1 --rate 20000 --count "$BURST" \
	--duration 1 --spin-us 0 >/dev/null 2>>"$TMP/gen.err"
got3=$(( $(passed 3) - before ))
wait $spid
echo "# host 3 admitted $got3 of a $BURST-packet burst from a source over its fleet limit"
# It may take what the bucket refills between two polls, about rate x 2
# intervals, and a quarter burst for timing; a fresh host would take it all.
lim3=$((RATE * 2 * INTERVAL_MS / 1000 + BURST / 4))
[ "$got3" -le "$lim3" ] || fail "host 3 admitted $got3 of $BURST (at most $lim3): it did not learn the fleet's state"
end_case fleet-over-limit-reaches-new-host

# ---- 2b. traffic moves from all three hosts to one ----
begin_case
# Spread first, then all of it to host 1: host 1 alone then admits the
# fleet's rate (the others' spent share does not starve it for longer than
# the bucket's own horizon), and never more than the bound.
send 2 "$PPS"
bg_send 4 $((RATE * 5)) 1
spid=$!
sleep 1.5
ta=$(now_s); a=$(passed 1); ta=$(mid_s "$ta")
sleep 2
tb=$(now_s); b=$(passed 1); tb=$(mid_s "$tb")
wait $spid
got=$((b - a))
w=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", b - a }')
smax=$(awk -v w="$w" -v r=$RATE -v iv=$INTERVAL_MS 'BEGIN { printf "%d", (r * w + 3 * r * 2 * iv / 1000) * 1.05 + 5 }')
smin=$(awk -v w="$(covered "$ta" "$tb")" -v r=$RATE 'BEGIN { printf "%d", r * w * 0.85 }')
echo "# traffic moved to host 1: it admitted $got in ${w}s (rate x t =" \
	"$(awk -v w="$w" -v r=$RATE 'BEGIN { printf "%d", r * w }'), bound $smax)"
[ "$got" -le "$smax" ] || fail "host 1 admitted $got, over $smax"
[ "$got" -ge "$smin" ] || fail "host 1 admitted $got, under $smin: it did not converge to the whole rate"
end_case fleet-traffic-moves-to-one-host

# ---- 2c. a source spread thin: each host sees it under the rate ----
begin_case
# 0.6 x the rate to each host, 1.8 x in all, from a new source: no host's
# own bucket is ever half spent; the hosts track it by sampling and the
# daemons send it, so the fleet admits the rate within the sync bound plus
# the cool keys' leak (1/8 of the rate), where per-host limits would admit
# 1.8 x the rate.
ip -n "$C" addr add 198.18.70.77/32 dev lo || fail "cannot add the spread source"
FLEET_SRC=198.18.70.77 bg_send 7 $((RATE * 6 / 10))
spid=$!
sleep 1.5
ta=$(now_s); a=$(total_passed); ta=$(mid_s "$ta")
sleep 4
tb=$(now_s); b=$(total_passed); tb=$(mid_s "$tb")
wait $spid
thin=$((b - a))
w=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", b - a }')
smax=$(awk -v w="$w" -v r=$RATE -v iv=$INTERVAL_MS \
	'BEGIN { printf "%d", (r * w * 9 / 8 + 3 * r * 2 * iv / 1000) * 1.05 + 5 }')
echo "# spread thin, 0.6 x ${RATE}pps to each of 3 hosts: admitted $thin in ${w}s" \
	"(rate x t = $(awk -v w="$w" -v r=$RATE 'BEGIN { printf "%d", r * w }'), bound $smax," \
	"per-host limits: $(awk -v w="$w" -v r=$RATE 'BEGIN { printf "%d", 1.8 * r * w }'))"
[ "$thin" -le "$smax" ] || fail "spread thin, the fleet admitted $thin in ${w}s, over the bound $smax"
smin=$(awk -v w="$(covered "$ta" "$tb")" -v r=$RATE 'BEGIN { printf "%d", r * w * 0.7 }')
[ "$thin" -ge "$smin" ] || fail "spread thin, the fleet admitted $thin in ${w}s, under $smin"
end_case fleet-spread-thin

# ---- 2b. fleet windows: fixed and sliding ----
# Rules fixed and swin count WRATE a second, a fixed and a sliding window,
# fleet-wide. Their windows turn on Redis's clock on every host, so the
# reads below are made half way through one of its seconds and four
# seconds later: at 5x the limit each window is spent within its first
# few hundred ms, so four windows' worth lies between them. The hosts'
# allocations (docs/fleet.md "Fleet windows") add up to the limit in each window;
# what may pass on top is what the source sends between a window's turn
# and the hosts' syncs just after it: 2 ms and the sync's own time, with
# three daemons and Redis waking together on two busy CPUs (up to 30 a
# window, 30 ms, has been seen; 50 ms are allowed), and the noise of the
# reads: 5% and 10. A floor too: a fleet that refused honest traffic would be
# wrong.
# redis_frac: how far into Redis's current second it is (0 to 1).
redis_frac() { rcli time | awk 'NR == 2 { printf "%.6f", $1 / 1e6 }'; }
mid_second() { sleep "$(awk -v f="$(redis_frac)" 'BEGIN { d = 0.5 - f; if (d < 0.05) d += 1; printf "%.3f", d }')"; }
# win_run RULE PORT: the fleet's admitted packets over four windows, into WIN_GOT.
win_run() {
	local b
	FLEET_RULE=$1 FLEET_DPORT=$2 bg_send 7 $((WRATE * 5 / 3))
	spid=$!
	sleep 1.2
	mid_second
	b=$(FLEET_RULE=$1 total_passed)
	sleep 4
	WIN_GOT=$(( $(FLEET_RULE=$1 total_passed) - b ))
	wait $spid
}
WIN_MAX=$(awk -v r=$WRATE 'BEGIN { printf "%d", 4 * (r * 1.05 + 5 * r * 0.050) + 10 }')
WIN_MIN=$(awk -v r=$WRATE 'BEGIN { printf "%d", 4 * r * 0.85 }')
for w in fixed:9001 swin:9002; do
	begin_case
	win_run "${w%%:*}" "${w#*:}"
	echo "# fleet window ${w%%:*}, $WRATE a second, 3 hosts at 5x: admitted $WIN_GOT in four" \
		"windows (4 x the limit = $((4 * WRATE)), bound $WIN_MAX, floor $WIN_MIN)"
	[ "$WIN_GOT" -le "$WIN_MAX" ] || fail "admitted $WIN_GOT in four windows, over $WIN_MAX"
	[ "$WIN_GOT" -ge "$WIN_MIN" ] || fail "admitted $WIN_GOT in four windows, under $WIN_MIN: honest traffic refused"
	eval "WIN_${w%%:*}=$WIN_GOT"
	end_case "fleet-window-${w%%:*}-three-hosts"
done
begin_case
# Its bucket in Redis: the window (Redis's second), its count, the previous
# window's, the sum of the hosts' allocations, then host and allocation for
# each of the three hosts, adding up to that sum; the count is never above
# the sum (a host that used more than its allocation before its first sync
# in the window is allocated its use). Read twice, from a new source:
# - at 0.6 s, in the source's first window (or the one after): there each
#   host admits what it does before its first sync of the key (docs/fleet.md
#   "Fleet windows"): while untracked, under half its own window, L/2 (one
#   charge in 32 tracks it sooner, most often), then until its next sync,
#   an interval and the sync's time (50 ms allowed, as above) of what it is
#   sent. Those can add up to more than L (three hosts at 5x: 320 of 200
#   has been seen), so the bound is the larger of that sum and the later
#   windows' bound;
# - half way through a later window, one that turned after every host was
#   tracking the key (at least 0.75 s in: half of a window is spent within
#   0.3 s at 5x): the same per-window bound as the four windows above, and a
#   previous window that holds the first's charges.
ip -n "$C" addr add 198.18.70.78/32 dev lo || fail "cannot add the window's source"
FLEET_SRC=198.18.70.78 FLEET_DPORT=9001 send 3 $((WRATE * 5 / 3)) &
spid=$!
bucket() { rcli --raw get "$1" | head -c -1 | od -A n -t f8 -v | tr -s ' \n' ' '; }
sleep 0.6
k=$(rcli --scan --pattern "weir:{t$TAG#*}:fixed:0:*:198.18.70.78/32" | head -1)
first=$(bucket "$k")
sleep 0.6
mid_second
later=$(bucket "$k")
wait $spid
echo "# the fixed window's bucket $k, in the source's first second: $first; later: $later"
[ -n "$k" ] || fail "no bucket of rule fixed in Redis"
m=$(awk -v w="$WRATE" 'BEGIN { printf "%d", w * 1.05 + 5 * w * 0.050 + 10 }')
m1=$(awk -v w="$WRATE" -v iv=$INTERVAL_MS -v m="$m" \
	'BEGIN { x = 3 * (w / 2 + 1 + w * 5 / 3 * (iv + 50) / 1000) + 10; printf "%d", (x > m ? x : m) }')
# bucket_ok MAX MIN-PREVIOUS MIN-HOSTS: the bucket on stdin is well formed,
# of Redis's last three seconds, its count and allocations at most MAX,
# with MIN-HOSTS to 3 hosts' allocations (the first read may come before a
# host's first sync: it tracks the key within 0.3 s of a window at 5x).
bucket_ok() {
	awk -v m="$1" -v p="$2" -v h="$3" -v t="$(rcli time | head -1)" '{
		a = 0
		for (i = 6; i <= NF; i += 2) a += $i
		if (NF % 2 || NF < 4 + 2 * h || NF > 10 || $1 < t - 3 || $1 > t || $2 > $4 ||
		    $4 > m || a != $4 || $3 < p) exit 1 }'
}
bucket_ok "$m1" 0 1 <<<"$first" ||
	fail "first window: the bucket is not (window, count, previous, allocations up to $m1, one to three hosts' allocations adding up to them): $first"
bucket_ok "$m" 1 3 <<<"$later" ||
	fail "later window: the bucket is not (window, count, previous > 0, allocations up to $m, three hosts' allocations adding up to them): $later"
awk -v a="$first" -v b="$later" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(y[1] > x[1]) }' ||
	fail "the later read is not of a later window: $first / $later"
end_case fleet-window-bucket-in-redis

begin_case
# The windows' clock each host measured (weir fleet status): Redis's TIME
# less its CLOCK_MONOTONIC. The three hosts share this machine's monotonic
# clock, so their offsets agree within what a measurement can be off (half
# a round trip on loopback, a millisecond taken as unchanged): 5 ms.
offs=$(for i in 1 2 3; do wrh "$i" -j fleet status | jq -r 'if .window_clock then .window_offset_ns else "none" end'; done | tr '\n' ' ')
echo "# the hosts' fleet window clocks (Redis's TIME - CLOCK_MONOTONIC, ns): $offs"
awk '{ if (NF != 3) exit 1; for (i = 1; i <= 3; i++) { if ($i !~ /^[0-9]+$/) exit 1;
	if (!mn || $i < mn) mn = $i; if ($i > mx) mx = $i }
	exit (mx - mn > 5e6) }' <<<"$offs" ||
	fail "the hosts' window clocks are missing or disagree by over 5 ms: $offs"
end_case fleet-window-clock-agrees

# ---- 3. the same limit per host admits about 3x ----
begin_case
for i in 1 2 3; do config "$i" host; kill -HUP "${DAEMONS[i-1]}"; done
sleep 1.5
b=$(total_passed)
send 6 "$PPS"
local_got=$(( $(total_passed) - b ))
echo "# the same limit per host: admitted $local_got (fleet: $FLEET_GOT)"
[ "$local_got" -ge $((FLEET_GOT * 22 / 10)) ] ||
	fail "per-host limits admitted $local_got, not about 3x the fleet's $FLEET_GOT"
end_case fleet-vs-per-host
for w in fixed:9001 swin:9002; do
	begin_case
	win_run "${w%%:*}" "${w#*:}"
	eval "fleet_win=\$WIN_${w%%:*}"
	echo "# window ${w%%:*} per host: admitted $WIN_GOT in four windows (fleet: $fleet_win)"
	[ "$WIN_GOT" -ge $((fleet_win * 22 / 10)) ] ||
		fail "per-host windows admitted $WIN_GOT, not about 3x the fleet's $fleet_win"
	end_case "fleet-window-${w%%:*}-vs-per-host"
done
for i in 1 2 3; do config "$i" fleet; kill -HUP "${DAEMONS[i-1]}"; done
sleep 1.5

# ---- 4. Redis stopped: the data path goes on, the safe fallback holds ----
begin_case
kill -STOP "$REDIS_PID"
s0=$(total_seen)
p0=$(total_passed)
send 5 "$PPS"
seen=$(( $(total_seen) - s0 ))
got=$(( $(total_passed) - p0 ))
st=$(wrh 2 -j fleet status)
echo "# Redis stopped: judged $seen of $(sent), admitted $got;" \
	"fallback $(jq '.fallback_active' <<<"$st"), shares $(jq -c '[.limits[].share]' <<<"$st")"
[ "$seen" -ge $(( $(sent) * 98 / 100 )) ] || fail "judged $seen of $(sent): the data path stalled"
[ "$(jq '.fallback_active' <<<"$st")" == true ] || fail "fallback not in force: $st"
[ "$(jq '.limits[0].multiplier' <<<"$st")" == 3 ] || fail "multiplier $(jq '.limits[0].multiplier' <<<"$st"), want 3"
# Before stale-after the hosts run on their last state, then on 1/3 each.
max=$(bound 5.6)
[ "$got" -le "$max" ] || fail "admitted $got without Redis, over $max"
grep -q "fleet: Redis is stale: the fallback is in force" "$TMP/h2.log" || fail "no log line for the fallback"
[ "$(metric 2 weir_fleet_fallback_active)" == 1 ] || fail "weir_fleet_fallback_active not 1"
[ "$(metric 2 'weir_fleet_share{rule="api",limit="0"}')" == 0.333333 ] || fail "share not 1/3"
end_case fleet-redis-stopped-safe-fallback

begin_case
kill -CONT "$REDIS_PID"
wait_status 2 '.fallback_active' false 60
st=$(wrh 2 -j fleet status)
[ "$(jq '.fallback_active' <<<"$st")" == false ] || fail "still in fallback after Redis came back"
[ "$(jq '.limits[0].multiplier' <<<"$st")" == 1 ] || fail "multiplier $(jq '.limits[0].multiplier' <<<"$st") after recovery"
end_case fleet-redis-recovers

begin_case
# The safe fallback's N is the most live hosts seen lately, not the last
# heartbeat count: when the other hosts lose Redis first, their heartbeats
# lapse and host 1 sees itself alone; when Redis then goes for host 1 too,
# it must still take 1/3, not the whole rate (as it did when N was the
# last count: 2441 admitted against 1299 over a lossy path).
cut() { for a in 198.18.52.2 198.18.53.2; do in_ns "$R" iptables -w "$1" INPUT -s "$a" -j DROP; done; }
cut -A || fail "cannot cut hosts 2 and 3 off Redis"
wait_status 1 '.hosts' 1 100
alone=$(wrh 1 -j fleet status | jq '.hosts')
kill -STOP "$REDIS_PID"
wait_status 1 '.fallback_active' true 100
st=$(wrh 1 -j fleet status)
kill -CONT "$REDIS_PID"
cut -D
echo "# hosts 2 and 3 cut off first: host 1 saw $alone live host(s), then in fallback counts" \
	"each packet $(jq '.limits[0].multiplier' <<<"$st")x"
[ "$alone" == 1 ] || fail "host 1 still saw $alone hosts after the others lost Redis: the case tested nothing"
[ "$(jq '.fallback_active' <<<"$st")" == true ] || fail "fallback not in force: $st"
[ "$(jq '.limits[0].multiplier' <<<"$st")" == 3 ] ||
	fail "multiplier $(jq '.limits[0].multiplier' <<<"$st"), want 3 (the fleet had 3 hosts)"
for i in 1 2 3; do
	wait_status "$i" '.fallback_active' false 100
done
end_case fleet-safe-fallback-remembers-hosts

begin_case
# fallback hold: each host keeps the share of the fleet's use it had. With
# the source on host 1 alone, host 1's share is all of it: without Redis it
# keeps the whole rate (safe, above, counted each packet three times).
for i in 1 2 3; do config "$i" fleet "fallback: hold"; kill -HUP "${DAEMONS[i-1]}"; done
sleep 1
send 6 $((RATE * 5)) 1 &
spid=$!
sleep 3
kill -STOP "$REDIS_PID"
wait_status 1 '.fallback_active' true 40
st=$(wrh 1 -j fleet status)
kill -CONT "$REDIS_PID"
wait $spid
echo "# fallback hold with the source on host 1 alone: host 1 counts each packet" \
	"$(jq '.limits[0].multiplier' <<<"$st")x"
[ "$(jq -r '.fallback' <<<"$st")" == hold ] || fail "fallback $(jq -r '.fallback' <<<"$st")"
[ "$(jq '.fallback_active' <<<"$st")" == true ] || fail "fallback not in force: $st"
[ "$(jq '.limits[0].multiplier' <<<"$st")" == 1 ] || fail "multiplier $(jq '.limits[0].multiplier' <<<"$st"), want 1"
for i in 1 2 3; do config "$i" fleet; kill -HUP "${DAEMONS[i-1]}"; done
wait_status 1 '.fallback_active' false 60
end_case fleet-redis-stopped-hold-fallback

begin_case
# fallback local: without Redis each host keeps the full rate, so the fleet
# admits up to N x the limit, and no more: each host's own bucket holds.
# From a source of its own: what the fleet then owes for it (the backlog
# each host sends when Redis is back) is not the later cases' business.
for i in 1 2 3; do config "$i" fleet "fallback: local"; kill -HUP "${DAEMONS[i-1]}"; done
ip -n "$C" addr add 198.18.70.2/32 dev lo
sleep 1
kill -STOP "$REDIS_PID"
p0=$(total_passed)
s0=$(total_seen)
FLEET_SRC=198.18.70.2 send 5 "$PPS"
got=$(( $(total_passed) - p0 ))
seen=$(( $(total_seen) - s0 ))
t=$(gen_secs)
st=$(wrh 2 -j fleet status)
kill -CONT "$REDIS_PID"
# Each host: its own burst and rate; the floor counts the stale-after the
# hosts spend on their last state first (at least the fleet's rate then).
max=$(awk -v t="$t" -v r=$RATE -v b=$BURST 'BEGIN { printf "%d", 3 * (b + r * t) * 1.05 + 5 }')
min=$(awk -v t="$t" -v r=$RATE -v s="${STALE_MS:-600}" 'BEGIN { printf "%d", 3 * r * (t - s / 1000) * 0.85 }')
echo "# fallback local, Redis stopped: judged $seen of $(sent), admitted $got in ${t}s" \
	"(each host burst + rate x t = $(awk -v t="$t" -v r=$RATE -v b=$BURST 'BEGIN { printf "%d", b + r * t }'), fleet at most $max)"
[ "$(jq -r '.fallback' <<<"$st")" == local ] || fail "fallback $(jq -r '.fallback' <<<"$st")"
[ "$(jq '.fallback_active' <<<"$st")" == true ] || fail "fallback not in force: $st"
[ "$(jq '.limits[0].multiplier' <<<"$st")" == 1 ] || fail "multiplier $(jq '.limits[0].multiplier' <<<"$st"), want 1"
[ "$seen" -ge $(( $(sent) * 98 / 100 )) ] || fail "judged $seen of $(sent): the data path stalled"
[ "$got" -le "$max" ] || fail "admitted $got under fallback local, over $max"
[ "$got" -ge "$min" ] || fail "admitted $got under fallback local, under $min: not the full rate on each host"
for i in 1 2 3; do config "$i" fleet; kill -HUP "${DAEMONS[i-1]}"; done
wait_status 1 '.fallback_active' false 60
end_case fleet-redis-stopped-local-fallback

# ---- 5. Redis flushed mid-flood: no fresh burst ----
begin_case
# The key is hot; the counters are read half a second before and 1.5 s
# after the flush. A Redis that handed out a fresh bucket would let each
# host admit a burst more in between. The honest floor counts only the part
# of that window the flood covered: on a loaded machine the reads can run
# past its end.
bg_send 4 "$PPS"
spid=$!
sleep 1.5
ta=$(now_s); a=$(total_passed); ta=$(mid_s "$ta")
sleep 0.5
rcli flushall >/dev/null
sleep 1.5
tb=$(now_s); b=$(total_passed); tb=$(mid_s "$tb")
wait $spid
got=$((b - a))
w=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", b - a }')
wf=$(covered "$ta" "$tb")
smax=$(awk -v w="$w" -v r=$RATE -v iv=$INTERVAL_MS 'BEGIN { printf "%d", (r * w + 3 * r * 2 * iv / 1000) * 1.05 + 5 }')
echo "# FLUSHALL during a flood: per host $(passed 1) $(passed 2) $(passed 3) in all;" \
	"multipliers $(for i in 1 2 3; do wrh $i -j fleet status | jq -c '[.limits[].multiplier, .fallback_active]'; done | tr '\n' ' ')"
echo "# FLUSHALL during a flood: admitted $got in the ${w}s around it (rate x t =" \
	"$(awk -v w="$w" -v r=$RATE 'BEGIN { printf "%d", r * w }'), bound $smax)"
[ "$got" -le "$smax" ] || fail "admitted $got around a flush, over $smax"
[ "$got" -ge "$(awk -v w="$wf" -v r=$RATE 'BEGIN { printf "%d", r * w * 0.8 }')" ] ||
	fail "admitted $got in the ${wf}s of flood around a flush: the fleet refused honest traffic"
end_case fleet-redis-flushed-no-fresh-burst

# ---- 6. Redis killed: a clear error, enforcement goes on, recovery ----
begin_case
redis_stop
sleep 1
p0=$(total_seen)
send 1 "$PPS"
[ $(( $(total_seen) - p0 )) -ge $(( $(sent) * 98 / 100 )) ] || fail "the data path stalled without Redis"
grep -q "fleet: Redis 198.18.52.1:6379: " "$TMP/h2.log" || fail "no error logged for the dead Redis"
# DEBUG from loopback inside R only: the next case makes Redis slow with it.
redis_start --enable-debug-command local || fail "redis did not restart"
wait_status 2 '.nodes[0].up' true 60
[ "$(wrh 2 -j fleet status | jq '.nodes[0].up')" == true ] || fail "host 2 did not reconnect"
end_case fleet-redis-killed-and-back

# ---- 6b. Redis slow ----
# This kernel has no netem, so the delay is Redis's own: it blocks its
# event loop for 150 ms out of every 250 (DEBUG SLEEP, as a long script or
# a KEYS would), so a sync's round trip grows by up to 150 ms. Every packet
# is still judged at once, and the fleet admits at most burst + rate x t
# plus the sync's lag on every host, the lag taken as the interval plus
# the longest wait. The floor: the fleet keeps admitting honest traffic,
# at least half the rate. (A lossy link is the next case.)
begin_case
nodes_up 1 1 && nodes_up 3 1 || fail "the hosts did not reconnect to Redis"
( for _ in $(seq 16); do
	in_ns "$R" redis-cli -h 127.0.0.1 debug sleep 0.15 >/dev/null 2>&1 || exit 1
	sleep 0.1
  done ) &
slow=$!
s0=$(total_seen)
p0=$(total_passed)
send 4 "$PPS"
wait $slow || fail "Redis refused DEBUG SLEEP"
seen=$(( $(total_seen) - s0 ))
got=$(( $(total_passed) - p0 ))
t=$(gen_secs)
max=$(bound "$t" 150)
min=$(awk -v t="$t" -v r=$RATE 'BEGIN { printf "%d", r * t * 0.5 }')
echo "# Redis slow (150 ms of every 250 asleep): judged $seen of $(sent), admitted $got in ${t}s" \
	"(burst + rate x t = $(awk -v t="$t" -v r=$RATE -v b=$BURST 'BEGIN { printf "%d", b + r * t }')," \
	"bound $max), sync $(wrh 1 -j fleet status | jq -c "{sync_us, syncs}")"
[ "$seen" -ge $(( $(sent) * 98 / 100 )) ] || fail "judged $seen of $(sent): the data path stalled"
[ "$got" -le "$max" ] || fail "admitted $got with a slow Redis, over $max"
[ "$got" -ge "$min" ] || fail "admitted $got with a slow Redis, under $min: honest traffic refused"
end_case fleet-redis-slow

# ---- 6c. a lossy path to Redis ----
# 20% of the packets to and from Redis dropped (iptables' statistic match:
# this kernel has no netem). A sync not answered within its interval drops
# its connection, so such a path keeps the hosts in the safe fallback most
# of the time, with a good sync now and then. What the fallback promises
# (docs/fleet.md): each host on its own bucket until the fallback is in force
# (stale-after, and an interval to notice), then rate / N each: over the
# run burst + rate x t, plus N x rate x (stale-after + 2 intervals), plus
# the other hosts' first bursts; 5% and 5 for noise. And a floor: honest
# traffic goes on, 0.7 x rate x t.
begin_case
if ! in_ns "$R" iptables -w -A INPUT -p tcp --dport 6379 -m statistic --mode random \
	--probability 0.2 -j DROP 2>"$TMP/ipt.err" ||
   ! in_ns "$R" iptables -w -A OUTPUT -p tcp --sport 6379 -m statistic --mode random \
	--probability 0.2 -j DROP 2>>"$TMP/ipt.err"; then
	fail "iptables cannot drop Redis's packets: $(cat "$TMP/ipt.err")"
else
	sleep 1
	s0=$(total_seen)
	p0=$(total_passed)
	send 6 "$PPS"
	seen=$(( $(total_seen) - s0 ))
	got=$(( $(total_passed) - p0 ))
	t=$(gen_secs)
	max=$(awk -v t="$t" -v r=$RATE -v b=$BURST -v iv=$INTERVAL_MS -v st="${STALE_MS:-600}" \
		'BEGIN { printf "%d", (b + r * t + 3 * r * (st + 2 * iv) / 1000 + 2 * b) * 1.05 + 5 }')
	min=$(awk -v t="$t" -v r=$RATE 'BEGIN { printf "%d", r * t * 0.7 }')
	echo "# Redis 20% lossy: judged $seen of $(sent), admitted $got in ${t}s (burst + rate x t =" \
		"$(awk -v t="$t" -v r=$RATE -v b=$BURST 'BEGIN { printf "%d", b + r * t }'), what the" \
		"fallback promises $max; per-host limits about $(awk -v t="$t" -v r=$RATE -v b=$BURST \
		'BEGIN { printf "%d", 3 * (b + r * t) }')), timeouts on host 1:" \
		"$(wrh 1 -j fleet status | jq '.nodes[0].errors_timeout')"
	[ "$seen" -ge $(( $(sent) * 98 / 100 )) ] || fail "judged $seen of $(sent): the data path stalled"
	[ "$got" -le "$max" ] || fail "admitted $got over a lossy path, over $max"
	[ "$got" -ge "$min" ] || fail "admitted $got over a lossy path, under $min: honest traffic refused"
fi
in_ns "$R" iptables -w -D INPUT -p tcp --dport 6379 -m statistic --mode random --probability 0.2 -j DROP 2>/dev/null
in_ns "$R" iptables -w -D OUTPUT -p tcp --sport 6379 -m statistic --mode random --probability 0.2 -j DROP 2>/dev/null
nodes_up 1 1 && nodes_up 2 1 && nodes_up 3 1 || fail "the hosts did not get back to Redis"
end_case fleet-redis-lossy


# ---- 7. sharded over three Redis servers ----
begin_case
for port in 6380 6381; do
	nsenter --net="/run/netns/$R" redis-server --bind 0.0.0.0 --port $port --protected-mode no \
		--save '' --appendonly no --dir "$TMP" --daemonize no --logfile "$TMP/redis-$port.log" &
	EXTRA_PIDS+=($!)
done
for port in 6380 6381; do
	for _ in $(seq 100); do rcli -p $port ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
done
for i in 1 2 3; do
	config "$i" fleet "mode: sharded"
	sed -i "s/redis: \[ \"198.18.5$i.1:6379\" \]/redis: [ \"198.18.5$i.1:6379\", \"198.18.5$i.1:6380\", \"198.18.5$i.1:6381\" ]/" "$TMP/h$i.yaml"
	kill -HUP "${DAEMONS[i-1]}"
done
nodes_up 3 3 || fail "host 3 does not reach the three servers: $(wrh 3 -j fleet status)"
[ "$(wrh 3 -j fleet status | jq -r '.mode')" == sharded ] || fail "not sharded: $(wrh 3 -j fleet status)"
SRCS=""
for s in $(seq 1 8); do
	ip -n "$C" addr add "198.18.71.$s/32" dev lo
	SRCS="$SRCS${SRCS:+,}198.18.71.$s"
done
p0=$(total_passed)
FLEET_SRC=$SRCS send 3 "$PPS" &
spid=$!
sleep 1.5
spread=0
for port in 6379 6380 6381; do
	n=$(rcli -p $port --scan --pattern "weir:{t$TAG#*}:api:0:*" | wc -l)
	echo "# sharded: $n buckets on :$port"
	[ "$n" -gt 0 ] && spread=$((spread + 1))
done
wait $spid
got=$(( $(total_passed) - p0 ))
max=$(( 8 * $(FIRST=1 bound "$(gen_secs)") ))
echo "# sharded, 8 sources at 5x: admitted $got (bound $max for the 8)"
[ "$spread" -ge 2 ] || fail "the keys sit on $spread of 3 servers"
[ "$got" -le "$max" ] || fail "admitted $got, over $max"
[ "$(wrh 1 -j fleet status | jq '[.nodes[].keys] | map(select(. > 0)) | length')" -ge 2 ] ||
	fail "host 1 synced through fewer than 2 servers"
for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
for i in 1 2 3; do config "$i" fleet; kill -HUP "${DAEMONS[i-1]}"; done
end_case fleet-sharded-three-servers

# ---- 8. a Redis Cluster: three primaries with a replica each, and a failover ----
begin_case
# Its nodes announce one address every host routes to R.
ip -n "$R" addr add 198.18.50.1/32 dev lo
for i in 1 2 3; do ip -n "${H[i]}" route add 198.18.50.1/32 via "198.18.5$i.1"; done
CL_PIDS=()
for port in 7001 7002 7003 7004 7005 7006; do
	mkdir -p "$TMP/cl-$port"
	nsenter --net="/run/netns/$R" redis-server --bind 0.0.0.0 --port $port --protected-mode no \
		--save '' --appendonly no --dir "$TMP/cl-$port" --daemonize no \
		--logfile "$TMP/cl-$port.log" --cluster-enabled yes --cluster-config-file nodes.conf \
		--cluster-node-timeout 1000 --cluster-announce-ip 198.18.50.1 &
	CL_PIDS+=($!)
	EXTRA_PIDS+=($!)
done
for port in 7001 7002 7003 7004 7005 7006; do
	for _ in $(seq 100); do rcli -h 198.18.50.1 -p $port ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
done
in_ns "$R" redis-cli --cluster create 198.18.50.1:7001 198.18.50.1:7002 198.18.50.1:7003 \
	198.18.50.1:7004 198.18.50.1:7005 198.18.50.1:7006 --cluster-replicas 1 --cluster-yes \
	>"$TMP/cluster-create.log" 2>&1 || fail "cluster create: $(tail -3 "$TMP/cluster-create.log")"
cluster_ok() {
	local port=$1
	rcli -h 198.18.50.1 -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok'
}
for _ in $(seq 100); do cluster_ok 7001 && break; sleep 0.1; done
cluster_ok 7001 || fail "the cluster is not ok"
for i in 1 2 3; do
	config "$i" fleet "mode: cluster"
	sed -i "s/redis: \[ \"198.18.5$i.1:6379\" \]/redis: [ \"198.18.50.1:700$i\" ]/" "$TMP/h$i.yaml"
	kill -HUP "${DAEMONS[i-1]}"
done
nodes_up 2 3
st=$(wrh 2 -j fleet status)
[ "$(jq -r '.mode' <<<"$st")" == cluster ] || fail "not cluster mode: $st"
[ "$(jq '[.nodes[] | select(.up)] | length' <<<"$st")" == 3 ] ||
	fail "host 2 speaks to $(jq '[.nodes[] | select(.up)] | length' <<<"$st") primaries, want 3: $st"
p0=$(total_passed)
FLEET_SRC=$SRCS send 3 "$PPS" &
spid=$!
sleep 1.5
spread=0
for port in 7001 7002 7003 7004 7005 7006; do
	n=$(rcli -h 198.18.50.1 -p $port --scan --pattern "weir:{t$TAG#*}:api:0:*" 2>/dev/null | wc -l)
	[ "$(rcli -h 198.18.50.1 -p $port role 2>/dev/null | head -1)" == master ] || continue
	echo "# cluster: $n buckets on primary :$port"
	[ "$n" -gt 0 ] && spread=$((spread + 1))
done
wait $spid
got=$(( $(total_passed) - p0 ))
max=$(( 8 * $(FIRST=1 bound "$(gen_secs)") ))
echo "# cluster, 8 sources at 5x: admitted $got (bound $max for the 8)"
[ "$spread" -ge 2 ] || fail "the keys sit on $spread of 3 primaries"
[ "$got" -le "$max" ] || fail "admitted $got, over $max"
end_case fleet-cluster-three-primaries

begin_case
# Kill the primary of the most groups' slots while traffic runs: its
# replica takes over, the hosts follow MOVED and the slot map, and the sync
# resumes. What the fleet admits meanwhile stays within what the fallback
# promises: the stale spell at each host's full rate at most.
victim=""
for port in 7001 7002 7003; do
	[ "$(rcli -h 198.18.50.1 -p $port role 2>/dev/null | head -1)" == master ] && victim=$port && break
done
vpid=${CL_PIDS[$((victim - 7001))]}
synced0=$(wrh 1 -j fleet status | jq '.keys_synced')
p0=$(total_passed)
FLEET_SRC=$SRCS send 6 "$PPS" &
spid=$!
sleep 1
kill -9 "$vpid"
wait $spid
got=$(( $(total_passed) - p0 ))
# Bounded, not timed: the replica's election takes a few node timeouts (1 s)
# on a quiet machine and more where other suites starve Redis of CPU.
for _ in $(seq 600); do
	cluster_ok $((victim == 7001 ? 7002 : 7001)) && break
	sleep 0.1
done
cluster_ok $((victim == 7001 ? 7002 : 7001)) || fail "the cluster did not recover from losing :$victim"
wait_status 1 '.fallback_active' false 600
st=$(wrh 1 -j fleet status)
synced1=$(jq '.keys_synced' <<<"$st")
max=$(( 8 * ( $(FIRST=1 bound "$(gen_secs)") + 3 * RATE * 3 ) ))
echo "# cluster primary :$victim killed mid-flood: admitted $got (bound $max for the 8);" \
	"nodes now $(jq -c '[.nodes[] | [.addr, .up]]' <<<"$st")"
[ "$(jq '.fallback_active' <<<"$st")" == false ] || fail "still in fallback after the failover: $st"
[ "$synced1" -gt "$synced0" ] || fail "no key synced after the failover"
[ "$got" -le "$max" ] || fail "admitted $got across the failover, over $max"
grep -q "fleet: Redis 198.18.50.1:$victim" "$TMP/h1.log" || fail "no log line for the lost primary"
for p in "${CL_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
for i in 1 2 3; do config "$i" fleet; kill -HUP "${DAEMONS[i-1]}"; done
sleep 1
end_case fleet-cluster-failover

begin_case
# Cluster mode against a Redis that is not a cluster: a clear error.
config 3 fleet "mode: cluster"
kill -HUP "${DAEMONS[2]}"
for _ in $(seq 50); do grep -q "CLUSTER SLOTS" "$TMP/h3.log" && break; sleep 0.1; done
grep -q "fleet: Redis 198.18.53.1:6379: CLUSTER: ERR This instance has cluster support disabled" "$TMP/h3.log" ||
	fail "no error for a Redis that is not a cluster: $(tail -3 "$TMP/h3.log")"
config 3 fleet
kill -HUP "${DAEMONS[2]}"
end_case fleet-cluster-not-a-cluster

# ---- 9. bad Redis: wrong password, not Redis at all ----
begin_case
redis_stop
REDIS_PASS=s3cret redis_start --requirepass s3cret || fail "redis with a password did not start"
printf 'wrong\n' >"$TMP/auth"
chmod 600 "$TMP/auth"
config 1 fleet "auth-file: $TMP/auth"
kill -HUP "${DAEMONS[0]}"
for _ in $(seq 50); do grep -q "fleet: Redis 198.18.51.1:6379: AUTH" "$TMP/h1.log" && break; sleep 0.1; done
grep -q "fleet: Redis 198.18.51.1:6379: AUTH" "$TMP/h1.log" || fail "no AUTH error logged: $(tail -3 "$TMP/h1.log")"
[ "$(wrh 1 -j fleet status | jq '.nodes[0].errors_connect')" -gt 0 ] || fail "no connect error counted"
p0=$(passed 1)
send 1 100 1
[ $(( $(passed 1) - p0 )) -gt 0 ] || fail "enforcement stopped with a wrong password"
printf 's3cret\n' >"$TMP/auth"
kill -HUP "${DAEMONS[0]}"
for _ in $(seq 60); do [ "$(wrh 1 -j fleet status | jq '.nodes[0].up')" == true ] && break; sleep 0.1; done
[ "$(wrh 1 -j fleet status | jq '.nodes[0].up')" == true ] || fail "the right password did not connect"
end_case fleet-redis-password

begin_case
# A server that is not Redis: host 2's own metrics endpoint (HTTP) answers
# the first command with an HTTP error, which is garbage to a Redis client.
config 2 fleet
sed -i -e 's/198.18.52.1:6379/127.0.0.1:19462/' "$TMP/h2.yaml"
kill -HUP "${DAEMONS[1]}"
for _ in $(seq 50); do grep -q "fleet: Redis 127.0.0.1:19462" "$TMP/h2.log" && break; sleep 0.1; done
grep -q "fleet: Redis 127.0.0.1:19462" "$TMP/h2.log" || fail "no error for a server that is not Redis: $(tail -3 "$TMP/h2.log")"
kill -0 "${DAEMONS[1]}" || fail "the daemon died"
p0=$(passed 2)
send 1 100 2
[ $(( $(passed 2) - p0 )) -gt 0 ] || fail "enforcement stopped"
end_case fleet-not-redis

# ---- 10. configs refused ----
check_bad() {
	local name=$1 want=$2
	begin_case
	if out=$("$WEIR" check "$TMP/bad.yaml" 2>&1); then
		fail "accepted"
	elif ! grep -q -- "$want" <<<"$out"; then
		fail "error does not say \"$want\": $out"
	fi
	end_case "$name"
}
base='rules: [ { name: a, limits: [ { rate: 10pps, scope: fleet } ] } ]'
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:1", "127.0.0.1:2" ] }\n' "$base" >"$TMP/bad.yaml"
check_bad fleet-check-single-two-servers "mode single speaks to one Redis server"
printf '%s\nfleet: { name: f, redis: [ "localhost" ] }\n' "$base" >"$TMP/bad.yaml"
check_bad fleet-check-bad-server 'invalid Redis server "localhost"'
printf '%s\nfleet: { redis: [ "127.0.0.1:6379" ] }\n' "$base" >"$TMP/bad.yaml"
check_bad fleet-check-no-name "a fleet needs a name"
chmod 644 "$TMP/auth"
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:6379" ], auth-file: %s }\n' "$base" "$TMP/auth" >"$TMP/bad.yaml"
check_bad fleet-check-auth-readable "only root can read"
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:6379" ], interval: 500ms, stale-after: 400ms }\n' "$base" >"$TMP/bad.yaml"
check_bad fleet-check-stale-short "must be longer than interval"
printf 'rules: [ { name: a, limits: [ { conns: 10, scope: fleet } ] } ]\n' >"$TMP/bad.yaml"
check_bad fleet-check-conns "scope fleet applies to token-bucket and window limits"
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:6379" ], interval: 600ms }\n' \
	'rules: [ { name: a, limits: [ { rate: 10/s, algo: sliding-window, scope: fleet } ] } ]' >"$TMP/bad.yaml"
check_bad fleet-check-window-short "a fleet window (1000 ms) must span at least two sync intervals"
printf '%s\n' "$base" >"$TMP/bad.yaml"
check_bad fleet-check-no-section "has no fleet: section"


begin_case
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:6379" ], interval: 100ms }\n' "$base" >"$TMP/ok.yaml"
out=$("$WEIR" -j check "$TMP/ok.yaml") || fail "a valid fleet config refused: $out"
[ "$(jq '.fleet_bounds[0].lag_per_host' <<<"$out")" == 1.01 ] ||
	fail "lag_per_host $(jq '.fleet_bounds[0].lag_per_host' <<<"$out"), want 10pps x 101 ms"
[ "$(jq -r '.fleet.mode' <<<"$out")" == single ] || fail "fleet section not printed: $out"
end_case fleet-check-prints-bound

begin_case
printf '%s\nfleet: { name: f, redis: [ "127.0.0.1:6379" ], interval: 100ms }\n' \
	'rules: [ { name: a, limits: [ { rate: 600/min, algo: fixed-window, scope: fleet } ] } ]' >"$TMP/ok.yaml"
out=$("$WEIR" -j check "$TMP/ok.yaml") || fail "a fleet window refused: $out"
[ "$(jq -c '.fleet_bounds[0] | [.window_ms, .per_window, .turn_lag_ms]' <<<"$out")" == '[60000,600,3]' ] ||
	fail "fleet window bound: $(jq -c '.fleet_bounds[0]' <<<"$out")"
end_case fleet-check-window-bound
