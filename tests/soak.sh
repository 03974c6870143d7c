#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Spoofed flood soak: the daemon on a per-source table of SOAK_KEYS buckets,
# a UDP flood from random sources of 198.18.128.0/17 (32768 of them, eight
# times the table) at the generator's maximum for SOAK_SECS (default 15;
# `make soak` runs 60), and a well-behaved stream measured through it.
#
#   - table memory stays at its bound: never more keys than its capacity,
#     the same bytes of kernel memory at every sample, and at rest at least
#     half of it in use (a full set evicts, it does not refuse);
#   - the well-behaved stream keeps its service: weir refuses none of it,
#     and the sink gets what the generator sent (less what the veth dropped
#     before weir saw it, reported);
#   - counters stay exact: every frame is non-IP, parsed or malformed and
#     passed or dropped; every parsed one is counted by exactly one rule (or
#     none); the flood's rule-wide limit admits no more than burst + rate x
#     time; weir saw every frame the generators sent but those the veth
#     dropped;
#   - the daemon's RSS stays flat from the first sample on, and it still
#     reloads in the middle of the flood.
# The figures are printed as "# " lines.
#
# Beside it, in a namespace of its own, a check that has to wait: a real
# SYN cookie goes stale (build/tests/bpf_cookie stale, through
# bpf_prog_test_run). Its ACK passes right after the SYN-ACK and again 45 s
# later, and is dropped and counted invalid once the cookie is older than
# the kernel's longest lifetime of 120 s. It takes about 125 s, whatever
# SOAK_SECS is: its own line, cookie_stale_ack_dropped.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root soak

SOAK_SECS=${SOAK_SECS:-15}
SOAK_KEYS=${SOAK_KEYS:-4096}
# The flood's rule-wide limit, and its burst.
FLOOD_RATE=20000
FLOOD_BURST=2000
# The well-behaved stream: well under its own limit.
LEGIT_RATE=200
SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
TMP=$(mktemp -d)
DAEMONS=()
stop_all() {
	local p
	for p in "${DAEMONS[@]}" ${BG:-}; do
		kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	DAEMONS=()
}
trap 'stop_all; rm -f /run/weir-sys-fs-bpf-"$TAG"-*.lock; cleanup; rm -rf "$TMP"' EXIT
fail() { echo "# $*"; [ -z "$CASE_FAILED" ] && CASE_FAILED="$*"; return 0; }

for tool in jq curl bpftool; do
	if ! command -v $tool >/dev/null; then
		skip soak "$tool is missing (make deps installs it)"
		exit 0
	fi
done
for b in "$SLGEN" "$SLSINK" "$WEIR" "$BUILD/tests/bpf_cookie"; do
	[ -x "$b" ] || { not_ok soak-setup "$b is missing (make test-build)"; exit 1; }
done

# The stale cookie first: it waits about 125 s while the flood below runs.
CKNS=$(new_netns ck) || { not_ok soak-setup "no namespace for the stale cookie"; exit 1; }
nsenter --net="/run/netns/$CKNS" "$BUILD/tests/bpf_cookie" stale >"$TMP/stale.out" 2>&1 &
STALE=$!
BG="$STALE"

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok soak-setup "no namespaces"; exit 1; }
ROOT=$(new_root soak)
if ! ip link add sk-s netns "$SND" type veth peer name sk-r netns "$RCV"; then
	not_ok soak-setup "cannot create veth"
	exit 1
fi
# A /15 on the receiver: the spoofed sources are on-link, replies go nowhere.
ip -n "$RCV" addr add 198.18.0.1/15 dev sk-r
ip -n "$SND" addr add 198.18.0.2/15 dev sk-s
ip -n "$RCV" link set sk-r up
ip -n "$SND" link set sk-s up
mac_r=$(ip -n "$RCV" -j link show sk-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show sk-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev sk-s nud permanent
ip -n "$RCV" neigh replace 198.18.0.2 lladdr "$mac_s" dev sk-r nud permanent
# Nothing answers the flood: no port unreachables back to 32768 sources.
ip netns exec "$RCV" sysctl -qw net.ipv4.icmp_ratelimit=1000 net.ipv4.icmp_msgs_per_sec=10

cat >"$TMP/soak.yaml" <<EOF
interfaces: [ { name: sk-r, mode: native } ]
rules:
  - name: legit
    proto: udp
    dport: 9000
    limits: [ { rate: 1000pps, burst: 1000, per: src } ]
  - name: flood
    proto: udp
    dport: 9001
    limits:
      - { rate: 10pps, burst: 10, per: src }
      - { rate: ${FLOOD_RATE}pps, burst: $FLOOD_BURST, per: all }
  # Idle here, but the daemon reconciles its connection counts every tick.
  - name: ssh-conns
    proto: tcp
    dport: 22
    limits: [ { conns: 100 } ]
tables: { keys: $SOAK_KEYS }
metrics: { listen: "127.0.0.1:9464" }
events: { interval: 1s, lines: 5 }
EOF

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
g() { jq -r ".global.$1" "$2"; }
r() { jq -r --arg n "$1" --arg f "$2" '.rules[] | select(.name == $n) | .[$f]' "$3"; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
# Kernel memory of the pinned wr_state (bytes: a fixed array of sets), and
# the keys the daemon's metrics say it holds and can hold (its ways in use,
# read by a walk over the sets while the flood churns them).
table() {
	local mem n cap
	mem=$(bpftool -j map show pinned "$ROOT/wr_state" | jq -r '.bytes_memlock')
	read -r n cap < <(in_ns "$RCV" curl -s --max-time 5 http://127.0.0.1:9464/metrics |
		awk '$1 == "weir_keys" { n = $2 } $1 == "weir_keys_capacity" { c = $2 }
		     END { print (n == "" ? "?" : n), (c == "" ? "?" : c) }')
	echo "$mem ${n:-?} ${cap:-?}"
}
veth_drops() {
	# what the veth pair dropped before the receiver's program ran
	local s d
	s=$(ip -n "$SND" -j -s link show sk-s | jq '.[0].stats64.tx.dropped')
	d=$(ip -n "$RCV" -j -s link show sk-r | jq '.[0].stats64.rx.dropped')
	echo $((s + d))
}

begin_case
: >"$TMP/d.log"
env -C / nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" run --config "$TMP/soak.yaml" \
	2>>"$TMP/d.log" &
DPID=$!
DAEMONS+=("$DPID")
for _ in $(seq 200); do
	grep -q "running on" "$TMP/d.log" && break
	sleep 0.05
done
if ! grep -q "running on" "$TMP/d.log"; then
	not_ok soak "the daemon did not start: $(tail -3 "$TMP/d.log" | tr '\n' ' ')"
	exit 1
fi
drops0=$(veth_drops)

ready=$TMP/ready
ip netns exec "$RCV" "$SLSINK" --listen 198.18.0.1 --port 9000 --duration $((SOAK_SECS + 30)) \
	--idle 3 --json --ready-file "$ready" >"$TMP/sink.json" &
SINK=$!
BG="$STALE $SINK"
for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
# The flood: as fast as the generator goes (a schedule it can never keep,
# slipping instead of stopping when it falls behind), stopped by SIGINT
# after SOAK_SECS (it still reports).
ip netns exec "$SND" timeout -s INT "$SOAK_SECS" "$SLGEN" --dst 198.18.0.1 --dport 9001 \
	--spoof-prefix 198.18.128.0/17 --rate 10000000 --slip-us 1 --spin-us 0 --size 18 \
	--duration $((SOAK_SECS * 10)) --json >"$TMP/flood.json" 2>"$TMP/flood.err" &
FLOOD=$!
ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport 9000 --src 198.18.0.2 --rate $LEGIT_RATE \
	--duration "$SOAK_SECS" --json >"$TMP/legit.json" 2>"$TMP/legit.err" &
LEGIT=$!
BG="$STALE $SINK $FLOOD $LEGIT"

# Samples every ~5 s: RSS, table memory and keys.
samples=()
t=0
step=$((SOAK_SECS < 20 ? 3 : 5))
half=0
while kill -0 "$FLOOD" 2>/dev/null; do
	sleep $step
	t=$((t + step))
	kill -0 "$FLOOD" 2>/dev/null || break
	read -r mem n cap < <(table)
	rss=$(rss_kb "$DPID")
	samples+=("$t $rss $mem $n $cap")
	echo "# t=${t}s daemon RSS ${rss} kB; wr_state ${mem:-?} bytes, weir_keys ${n:-?} of ${cap:-?}"
	if [ $half -eq 0 ] && [ $t -ge $((SOAK_SECS / 2)) ]; then
		# a reload in the middle of the flood
		kill -HUP "$DPID"
		half=1
	fi
done
wait "$FLOOD" "$LEGIT"
wait "$SINK"
BG="$STALE"
sleep 0.5
wrj stats interval 0 >"$TMP/stats.json"
drops=$(( $(veth_drops) - drops0 ))

fsent=$(jq -r '.total_sent' "$TMP/flood.json")
fsecs=$(jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9' "$TMP/flood.json")
lsent=$(jq -r '.total_sent' "$TMP/legit.json")
lgot=$(jq -r '[.sources[] | select(.src == "198.18.0.2") | .packets] | add // 0' "$TMP/sink.json")
pk=$(g packets "$TMP/stats.json") non=$(g non_ip "$TMP/stats.json") par=$(g parsed "$TMP/stats.json")
mal=$(g malformed "$TMP/stats.json") pas=$(g passed "$TMP/stats.json") dro=$(g dropped "$TMP/stats.json")
nor=$(g no_rule "$TMP/stats.json") flt=$(g faults "$TMP/stats.json")
fp=$(r flood passed_packets "$TMP/stats.json") fd=$(r flood dropped_packets "$TMP/stats.json")
lp=$(r legit passed_packets "$TMP/stats.json") ld=$(r legit dropped_packets "$TMP/stats.json")
echo "# flood: $fsent sent in ${fsecs}s ($(awk -v n="$fsent" -v t="$fsecs" 'BEGIN { printf "%.0f", n / t }') pps); weir passed $fp, dropped $fd"
echo "# legit: $lsent sent at $LEGIT_RATE pps; weir passed $lp, dropped $ld; the sink got $lgot"
echo "# frames: weir saw $pk (non-IP $non, parsed $par, malformed $mal; passed $pas, dropped $dro, no rule $nor, faults $flt); veth drops $drops"

# the daemon first: everything below reads what it left
if ! kill -0 "$DPID" 2>/dev/null; then
	fail "the daemon died during the flood: $(grep -v '^weir: ' "$TMP/d.log" | head -1 |
		cut -c1-200)"
fi
# table memory at its bound: the CLI counts the ways in use, at rest
n=$(jq -r '.keys.used // "?"' "$TMP/stats.json")
cap=$(jq -r '.keys.capacity // "?"' "$TMP/stats.json")
if [[ "$n" != [0-9]* || "$cap" != [0-9]* ]]; then
	fail "weir stats reports no key counts (keys: $n of $cap)"
	n=0 cap=0
fi
mem0=""
for s in "${samples[@]}"; do
	read -r t _ mem sn _ <<<"$s"
	[ -z "$mem0" ] && mem0=$mem
	[ "$mem" == "$mem0" ] || fail "wr_state memory moved: $mem0 -> $mem bytes"
	[[ "$sn" != [0-9]* ]] || [ "$sn" -le "$cap" ] ||
		fail "wr_state held $sn keys at t=${t}s, its capacity is $cap"
done
echo "# wr_state at rest: $n keys of $cap ($SOAK_KEYS asked for), $mem0 bytes throughout"
[ "$cap" -ge "$SOAK_KEYS" ] || fail "wr_state holds $cap keys, $SOAK_KEYS were asked for"
[ "$n" -le "$cap" ] || fail "wr_state holds $n keys, its capacity is $cap"
[ "$n" -ge $((cap / 2)) ] || fail "wr_state holds only $n of $cap keys after the flood"
[ ${#samples[@]} -ge 2 ] || fail "only ${#samples[@]} samples"
# the daemon's RSS: flat after the first sample (at most 1 MiB or 5% up)
first=$(echo "${samples[0]:-}" | cut -d' ' -f2)
max=${first:-0}
for s in "${samples[@]}"; do
	rss=$(echo "$s" | cut -d' ' -f2)
	[ -n "$rss" ] && [ "$rss" -gt "$max" ] && max=$rss
done
end_rss=$(rss_kb "$DPID" 2>/dev/null)
echo "# daemon RSS: ${first:-?} kB at the first sample, at most $max kB, ${end_rss:-?} kB at the end"
if [ -n "$first" ]; then
	[ $((max - first)) -le $(( first / 20 > 1024 ? first / 20 : 1024 )) ] ||
		fail "daemon RSS grew from $first kB to $max kB"
fi
# the well-behaved stream
[ "$ld" == 0 ] || fail "weir refused $ld packets of the well-behaved stream"
[ "$lp" -ge $((lsent - drops)) ] || fail "weir passed $lp of the $lsent legit packets (veth drops $drops)"
[ "$lgot" -ge $((lsent * 99 / 100)) ] || fail "the sink got $lgot of $lsent legit packets"
# exact counters
[ "$pk" == $((non + par + mal)) ] || fail "packets $pk != non-IP $non + parsed $par + malformed $mal"
[ "$pk" == $((non + pas + dro)) ] || fail "packets $pk != non-IP $non + passed $pas + dropped $dro"
[ "$par" == $((fp + fd + lp + ld + nor)) ] ||
	fail "parsed $par != rules' passed and dropped $((fp + fd + lp + ld)) + no rule $nor"
[ "$flt" == 0 ] || fail "$flt internal faults"
[ "$mal" == 0 ] || fail "$mal malformed frames in the flood"
bound=$(awk -v b=$FLOOD_BURST -v r=$FLOOD_RATE -v t="$fsecs" 'BEGIN { printf "%d", b + r * (t + 1) }')
[ "$fp" -le "$bound" ] || fail "the flood's rule-wide limit admitted $fp > burst + rate x (time + 1 s) = $bound"
[ "$fp" -ge $((FLOOD_RATE * ${fsecs%.*} * 9 / 10)) ] || fail "the flood rule admitted only $fp in ${fsecs}s"
# weir saw everything the generators sent but what the veth dropped first
seen_udp=$((fp + fd + lp + ld))
sent=$((fsent + lsent))
[ "$seen_udp" -le "$sent" ] && [ "$seen_udp" -ge $((sent - drops)) ] ||
	fail "weir counted $seen_udp UDP frames; the generators sent $sent, the veth dropped $drops"
# it reloaded in the middle, and is still there
grep -q '^weir: reloaded ' "$TMP/d.log" || fail "no reload during the flood"
kill -0 "$DPID" 2>/dev/null || fail "the daemon died"
ev=$(grep -c 'limited by rule flood\|more sources limited' "$TMP/d.log")
echo "# daemon event lines for the flood: $ev in ${SOAK_SECS}s (at most 6 a second)"
[ "$ev" -le $(( (SOAK_SECS + 2) * 6 )) ] || fail "$ev event lines"
kill -TERM "$DPID"
wait "$DPID" || fail "the daemon exited $? on SIGTERM"
DAEMONS=()
end_case "soak-spoofed-flood-${SOAK_SECS}s"
wr detach all >/dev/null 2>&1

# The stale cookie's own line (it ends by itself, at most ~130 s after it began).
wait "$STALE"
rc=$?
BG=""
cat "$TMP/stale.out"
if ! grep -qE '^(ok|not ok|skip) - cookie_stale_ack_dropped' "$TMP/stale.out"; then
	not_ok cookie_stale_ack_dropped \
		"bpf_cookie stale exited $rc without a result: $(tail -1 "$TMP/stale.out")"
fi
