#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The daemon, `weir run --config FILE`, end to end: two namespaces joined
# by veth, the daemon in the receiving one on a bpffs root of this suite's
# own, paced UDP from tools/wrgen counted by tools/wrsink.
#
# Admitted counts are checked as in e2e.sh: against burst + rate x time, the
# time being what the generator measured from its first to its last send,
# within 3% of the ideal + 3 packets (the limiter is exact; the slack covers
# where in its 1/rate interval the first packet lands and the noise of a
# shared 2-CPU machine). Nothing here asserts how long anything took.
#
# The daemon's log (stderr) goes through a reader that stamps each line with
# the time it arrived, so event lines can be grouped by the flush that
# printed them.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root daemon

SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
TMP=$(mktemp -d)
# cleanup (tests/lib.sh) also kills the daemons listed in DAEMONS.
trap 'cleanup; rm -rf "$TMP"' EXIT

for tool in jq curl; do
	if ! command -v $tool >/dev/null; then
		skip daemon "$tool is missing (make deps installs it)"
		exit 0
	fi
done
for b in "$SLGEN" "$SLSINK" "$WEIR"; do
	[ -x "$b" ] || { not_ok daemon-setup "$b is missing (make)"; exit 1; }
done

# ---- namespaces: RCV (the daemon, the sinks) and SND (the generators) ----

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok daemon-setup "no namespaces"; exit 1; }
if ! ip link add dm-s netns "$SND" type veth peer name dm-r netns "$RCV" ||
   ! ip link add dm-x netns "$RCV" type veth peer name dm-y netns "$RCV"; then
	not_ok daemon-setup "cannot create veth"
	exit 1
fi
# A /15 on the receiver: the spoofed sources (198.18.128.0/17) are on-link.
ip -n "$RCV" addr add 198.18.0.1/15 dev dm-r
SRCS="198.18.0.2 198.18.0.3 198.18.0.4 198.18.0.5 198.18.0.6 198.18.0.7 198.18.0.8"
for a in $SRCS; do
	ip -n "$SND" addr add "$a/15" dev dm-s
done
for l in "$RCV dm-r" "$SND dm-s" "$RCV dm-x" "$RCV dm-y"; do
	ip -n ${l% *} link set ${l#* } up
done
# Permanent neighbours: no measured packet waits in (or is dropped from) an ARP queue.
mac_r=$(ip -n "$RCV" -j link show dm-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show dm-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev dm-s nud permanent
for a in $SRCS; do
	ip -n "$RCV" neigh replace "$a" lladdr "$mac_s" dev dm-r nud permanent
done

# ---- helpers ----

# Stamp each line with the time it was read (the daemon's lines have none).
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

# start_daemon (tests/lib.sh) in RCV, every log line stamped with its time,
# logs kept across restarts.
DAEMON_APPEND=1
DAEMON_FILTER=stamp
run_daemon() { start_daemon "$RCV" "$@"; }
# lines LOG: the log without the stamps.
lines() { cut -d' ' -f2- "$1"; }
# count LOG ERE: how many lines match.
count() { lines "$1" | grep -cE "$2"; }
# wait_count LOG ERE N: until at least N lines match (at most 10 s).
wait_count() {
	local i
	for i in $(seq 200); do
		[ "$(count "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# sink PORT: a receiver in RCV counting per source into $TMP/sink-PORT.json,
# stopping 1.5 s after the last datagram; its pid in SINK_PID.
sink() {
	local ready=$TMP/ready-$1 i
	rm -f "$ready"
	ip netns exec "$RCV" "$SLSINK" --listen 198.18.0.1 --port "$1" --duration 60 \
		--idle 1.5 --json --ready-file "$ready" >"$TMP/sink-$1.json" &
	SINK_PID=$!
	for i in $(seq 100); do [ -e "$ready" ] && return 0; sleep 0.05; done
	return 1
}
# gen SRC PORT RATE DURATION [ARGS...]: wrgen from SRC in SND to RCV,
# results in $TMP/gen-SRC.json; run it in the background with &.
gen() {
	local src=$1 port=$2 rate=$3 dur=$4
	shift 4
	ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport "$port" --src "$src" \
		--rate "$rate" --duration "$dur" --json "$@" >"$TMP/gen-$src.json"
}
sent() { jq -r '.total_sent' "$TMP/gen-$1.json"; }
secs() { jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9' "$TMP/gen-$1.json"; }
# got SRC PORT: what the sink on PORT received from SRC.
got() {
	jq -r --arg s "$1" '[.sources[] | select(.src == $s) | .packets] | add // 0' \
		"$TMP/sink-$2.json"
}
ideal() { awk -v b="$1" -v r="$2" -v t="$3" 'BEGIN { printf "%.1f", b + r * t }'; }
# near WHAT GOT IDEAL: within 3% + 3 packets.
near() {
	echo "# $1: admitted $2, ideal $3"
	awk -v g="$2" -v i="$3" 'BEGIN { d = g - i; if (d < 0) d = -d; exit !(d <= 0.03 * i + 3) }' ||
		fail "$1: admitted $2, ideal $3 (tolerance 3% + 3)"
}
# rule_stat RULE FIELD: from `weir -j stats` (totals at once, no rates).
rule_stat() {
	wrj stats interval 0 | jq -r --arg r "$1" --arg f "$2" '.rules[] | select(.name == $r) | .[$f]'
}
# top_row SRC: "TOKENS DROPS" from SRC's row in `weir -j top rule abuse`
# ("none none" if it has none).
top_row() {
	wrj top rule abuse | jq -r --arg s "$1/32" \
		'[.sources[] | select(.source == $s) | "\(.tokens) \(.drops)"] | .[0] // "none none"'
}
# attached DEV: what `weir -j status` says DEV is attached in ("none" if not).
attached() {
	wrj status | jq -r --arg d "$1" \
		'[.interfaces[]? | select(.interface == $d) | .mode] | .[0] // "none"'
}

# ---- configs ----

CFG_DIR=$TMP/cfg
mkdir -p "$CFG_DIR"
CFG=$CFG_DIR/weir.yaml

# The rules every config here shares, unchanged: "legit" (generous), "abuse"
# (tight, per source), "exact" (1 pps, burst 100: a burst of 300 within 0.3 s
# admits exactly 100) and "spoof" (burst 1 per source: a spoofed source that
# sends twice within a second is limited).
common_rules() {
	cat <<'EOF'
  - name: legit
    proto: udp
    dport: 9000
    limits:
      - { rate: 2000pps, burst: 2000, per: src }
  - name: abuse
    proto: udp
    dport: 9001
    limits:
      - { rate: 50pps, burst: 20, per: src }
  - name: exact
    proto: udp
    dport: 9004
    limits: [ { rate: 1pps, burst: 100 } ]
  - name: spoof
    proto: udp
    dport: 9005
    limits: [ { rate: 1pps, burst: 1, per: src } ]
EOF
}
common_rest() {
	cat <<'EOF'
tables: { keys: 65536 }
metrics: { listen: "127.0.0.1:9464" }
events: { interval: 1s, lines: 3 }
EOF
}
# A: the common rules and "other". B: "extra" first (so every rule moves),
# "other" with other limits, the common rules in another order, a deny entry.
{
	echo "interfaces:"
	echo "  - { name: dm-r, mode: native }"
	echo "rules:"
	common_rules
	cat <<'EOF'
  - name: other
    proto: udp
    dport: 9002
    limits: [ { rate: 100pps, burst: 10 } ]
EOF
	common_rest
} >"$CFG_DIR/A.yaml"
{
	echo "interfaces:"
	echo "  - { name: dm-r, mode: native }"
	echo "rules:"
	cat <<'EOF'
  - name: extra
    proto: udp
    dport: 9003
    limits: [ { rate: 10pps } ]
  - name: other
    proto: udp
    dport: 9002
    limits: [ { rate: 200pps, burst: 50 } ]
EOF
	common_rules | awk '/^  - name: /{ b++ } { blk[b] = blk[b] $0 "\n" }
		END { printf "%s%s%s%s", blk[4], blk[2], blk[3], blk[1] }'
	echo "deny: [ 198.18.200.0/24 ]"
	common_rest
} >"$CFG_DIR/B.yaml"
# Invalid: B, but "abuse" at 500 pps (so a partial apply would show in the
# traffic) and a bad rate in "other".
sed -e 's/rate: 50pps, burst: 20/rate: 500pps, burst: 20/' \
	-e 's/rate: 200pps, burst: 50/rate: 200xpps, burst: 50/' "$CFG_DIR/B.yaml" >"$CFG_DIR/bad.yaml"
BAD_LINE=$(grep -n '200xpps' "$CFG_DIR/bad.yaml" | cut -d: -f1)
BAD_COL=$(awk -v n="$BAD_LINE" 'NR == n { print index($0, "200xpps") }' "$CFG_DIR/bad.yaml")
for f in A B; do
	if ! out=$("$WEIR" check "$CFG_DIR/$f.yaml" 2>&1); then
		not_ok daemon-setup "config $f invalid: $out"
		exit 1
	fi
done

# ---- 1. an invalid config applies nothing ----

begin_case
ROOT=$(new_root invalid)
cp "$CFG_DIR/bad.yaml" "$TMP/invalid.yaml"
out=$(timeout 20 nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" run \
	--config "$TMP/invalid.yaml" 2>&1)
rc=$?
[ "$rc" -ne 0 ] || fail "run exited 0"
[ "$rc" -ne 124 ] || fail "run did not exit"
[[ "$out" == *"$TMP/invalid.yaml:$BAD_LINE:$BAD_COL: "* ]] ||
	fail "no $TMP/invalid.yaml:$BAD_LINE:$BAD_COL in: $out"
[ "$(wrj status | jq -r .loaded)" == false ] || fail "loaded: $(wrj status)"
[ "$(ip -n "$RCV" -j -d link show dm-r | jq -r '.[0].xdp // "none"')" == none ] ||
	fail "an XDP program is on dm-r"
if command -v bpftool >/dev/null; then
	[ "$(in_ns "$RCV" bpftool net show dev dm-r | grep -c '^dm-r(')" -eq 0 ] ||
		fail "something attached: $(in_ns "$RCV" bpftool net show dev dm-r | tr '\n' ' ')"
fi
end_case daemon-invalid-config-applies-nothing

# ---- 2. the shipped example config ----

begin_case
ROOT=$(new_root example)
mkdir -p "$TMP/example"
sed -e 's/name: eth0/name: dm-x/' -e 's/name: eth1/name: dm-y/' \
	-e 's/127\.0\.0\.1:9464/127.0.0.1:19464/' etc/weir.yaml >"$TMP/example/weir.yaml"
cp etc/deny.txt "$TMP/example/deny.txt"
LOG=$TMP/example.log
if ! run_daemon "$ROOT" "$TMP/example/weir.yaml" "$LOG"; then
	fail "the daemon did not come up: $(lines "$LOG" | tr '\n' ' ')"
else
	names=$(wrj rule list | jq -r '[.rules[].name] | join(" ")')
	[ "$names" == "ssh dns web ping" ] || fail "rule list: $(wrj rule list)"
	# Rule for rule, what `weir check` reads in the file (identities aside).
	want=$("$WEIR" -j check "$TMP/example/weir.yaml" | jq -cS '[.rules[] | del(.uid)]')
	have=$(wrj rule list | jq -cS '[.rules[] | del(.uid)]')
	[ "$have" == "$want" ] || fail "rule list $have, the file says $want"
	# deny.txt was found next to the config (the daemon ran from /).
	deny=$(wrj deny list | jq -c '.')
	for c in 192.0.2.0/24 198.51.100.66/32 2001:db8:bad::/48 203.0.113.0/24; do
		[[ "$deny" == *"\"$c\""* ]] || fail "deny list lacks $c: $deny"
	done
	[ "$(attached dm-x)" == native ] || fail "dm-x: $(attached dm-x)"
	[ "$(attached dm-y)" == tc ] || fail "dm-y: $(attached dm-y)"
	code=$(in_ns "$RCV" curl -s --max-time 10 -o /dev/null -w '%{http_code}' \
		http://127.0.0.1:19464/metrics)
	[ "$code" == 200 ] || fail "metrics on 19464: $code"
	kill -TERM "$DPID"
	wait "$DPID" || fail "exit status $? after SIGTERM"
fi
wr detach all >/dev/null 2>&1
end_case daemon-example-config

# ---- 3. reloads under traffic ----

ROOT=$(new_root run)
LOG=$TMP/d1.log
cp "$CFG_DIR/A.yaml" "$CFG"
if ! run_daemon "$ROOT" "$CFG" "$LOG"; then
	not_ok daemon-setup "the daemon did not come up: $(lines "$LOG" | tr '\n' ' ')"
	exit 1
fi
D1=$DPID

begin_case
sink 9000 && S1=$SINK_PID && sink 9001 && S2=$SINK_PID || fail "sinks did not start"
gen 198.18.0.2 9000 200 10 & G1=$!
gen 198.18.0.3 9001 1000 10 & G2=$!
sleep 0.5
# 20 reloads alternating A and B, and SIGHUP and the file watch, so that each
# path loads each config: i % 4 in {0, 1} by SIGHUP, after putting the file
# in place without a close-after-write or rename of its name (a symlink,
# removed and made again: delete and create, which the watch ignores); the
# others by a rename over the file's name, which the watch sees.
for i in $(seq 20); do
	c=$([ $((i % 2)) -eq 1 ] && echo B || echo A)
	if [ "$i" -eq 10 ]; then
		read -r tok_before drops_before < <(top_row 198.18.0.3)
	fi
	if [ $((i % 4)) -le 1 ]; then
		rm -f "$CFG" && ln -s "$c.yaml" "$CFG"
		kill -HUP "$D1"
	else
		cp "$CFG_DIR/$c.yaml" "$CFG_DIR/.tmp" && mv -f "$CFG_DIR/.tmp" "$CFG"
	fi
	wait_count "$LOG" '^weir: reloaded ' "$i" || { fail "reload $i not seen"; break; }
	if [ "$i" -eq 10 ]; then
		read -r tok_after drops_after < <(top_row 198.18.0.3)
	fi
	sleep 0.25
done
wait $G1 $G2
wait $S1 $S2
echo "# reloads: $(count "$LOG" '^weir: reloaded .* \(SIGHUP\)$') by SIGHUP," \
	"$(count "$LOG" '^weir: reloaded .* \(file changed\)$') by the file watch"
[ "$(count "$LOG" '^weir: reloaded .* \(SIGHUP\)$')" -eq 10 ] &&
	[ "$(count "$LOG" '^weir: reloaded .* \(file changed\)$')" -eq 10 ] ||
	fail "reloads logged: $(lines "$LOG" | grep -E 'reload' | tr '\n' ' ')"
[ "$(count "$LOG" 'rejected|failed|partly')" -eq 0 ] ||
	fail "failed reloads: $(lines "$LOG" | grep -E 'rejected|failed|partly' | tr '\n' ' ')"
# Each reload put the config it was given in force: A has 5 rules, B 6.
[ "$(count "$LOG" 'in force: 6 rules$')" -eq 10 ] && [ "$(count "$LOG" 'in force: 5 rules$')" -eq 11 ] ||
	fail "rule sets in force: $(lines "$LOG" | grep 'in force' | tr '\n' ' ')"
[ "$(wrj rule list | jq -r '[.rules[].name] | sort | join(" ")')" == \
	"abuse exact legit other spoof" ] || fail "rule list after the last reload (A): $(wrj rule list)"
# Not one legitimate packet lost across 20 rule set switches.
[ "$(got 198.18.0.2 9000)" -eq "$(sent 198.18.0.2)" ] ||
	fail "legit: received $(got 198.18.0.2 9000) of $(sent 198.18.0.2)"
echo "# legit: received $(got 198.18.0.2 9000) of $(sent 198.18.0.2)"
# "abuse" kept its bucket through every reload: if a reload refilled it, each
# would admit up to another burst (20), about 400 more over 20 reloads.
near "abuse over 20 reloads" "$(got 198.18.0.3 9001)" "$(ideal 20 50 "$(secs 198.18.0.3)")"
# Its counters went on too: every packet sent is counted once.
passed=$(rule_stat abuse passed_packets)
dropped=$(rule_stat abuse dropped_packets)
[ "$passed" -eq "$(got 198.18.0.3 9001)" ] ||
	fail "abuse: stats passed $passed, received $(got 198.18.0.3 9001)"
[ $((passed + dropped)) -eq "$(sent 198.18.0.3)" ] ||
	fail "abuse: stats passed+dropped $((passed + dropped)), sent $(sent 198.18.0.3)"
# Around reload 10 (SIGHUP, to A): the abusive source's bucket is empty
# before and still empty after (at most 1 token: one comes every 20 ms and
# lasts about 1 ms under this flood). Under a 1000 pps flood even a refilled bucket
# is empty again within 20 ms, so its drop count says it is the same bucket
# (a new one would count from 0).
echo "# top around reload 10: tokens $tok_before -> $tok_after, drops $drops_before -> $drops_after"
[[ "$tok_before" =~ ^[0-9]+$ ]] && [ "$tok_before" -le 1 ] || fail "tokens before reload 10: $tok_before"
[[ "$tok_after" =~ ^[0-9]+$ ]] && [ "$tok_after" -le 1 ] || fail "tokens after reload 10: $tok_after"
[[ "$drops_before" =~ ^[0-9]+$ ]] && [[ "$drops_after" =~ ^[0-9]+$ ]] &&
	[ "$drops_after" -ge "$drops_before" ] || fail "drops before/after reload 10: $drops_before/$drops_after"
end_case daemon-reload-under-traffic

# ---- 4. an invalid reload keeps the running set ----

begin_case
before=$(wrj rule list)
cp "$CFG_DIR/bad.yaml" "$CFG_DIR/.tmp" && mv -f "$CFG_DIR/.tmp" "$CFG"
wait_count "$LOG" 'reload \(file changed\) rejected' 1 || fail "no rejection logged (file watch)"
kill -HUP "$D1"
wait_count "$LOG" 'reload \(SIGHUP\) rejected' 1 || fail "no rejection logged (SIGHUP)"
# (The errors are printed as `weir check` prints them, without "weir: ".)
[ "$(count "$LOG" "^$CFG:$BAD_LINE:$BAD_COL: ")" -eq 2 ] ||
	fail "no $CFG:$BAD_LINE:$BAD_COL in the log twice: $(lines "$LOG" | tail -5 | tr '\n' ' ')"
# The daemon says what `weir check` says.
chk=$("$WEIR" check "$CFG" 2>&1 | grep "^$CFG:")
lines "$LOG" | grep -qxF "$chk" ||
	fail "the log does not say what check says ($chk)"
kill -0 "$D1" 2>/dev/null || fail "the daemon exited"
[ "$(wrj rule list)" == "$before" ] || fail "rule list changed: $(wrj rule list)"
# Still limited at 50 pps (the invalid file says 500): a fresh source.
sink 9001 && S=$SINK_PID || fail "sink"
gen 198.18.0.4 9001 1000 1
wait $S
near "abuse after the rejected reloads" "$(got 198.18.0.4 9001)" "$(ideal 20 50 "$(secs 198.18.0.4)")"
# Back to A for what follows (a valid reload, by the watch).
n_ok=$(count "$LOG" '^weir: reloaded ')
cp "$CFG_DIR/A.yaml" "$CFG_DIR/.tmp" && mv -f "$CFG_DIR/.tmp" "$CFG"
wait_count "$LOG" '^weir: reloaded ' $((n_ok + 1)) || fail "the valid config was not reloaded"
end_case daemon-invalid-reload-keeps-running-set

# ---- 5. fail-static: kill -9, enforcement goes on; the next daemon adopts ----

begin_case
sink 9001 && S=$SINK_PID || fail "sink"
gen 198.18.0.5 9001 1000 8 & G=$!
sleep 2
dropped_before=$(rule_stat abuse dropped_packets)
kill -9 "$D1"
wait "$D1" 2>/dev/null
kill -0 "$D1" 2>/dev/null && fail "the daemon survived kill -9"
[ "$(attached dm-r)" == native ] || fail "not attached after kill -9: $(wrj status)"
sleep 2
dropped_dead=$(rule_stat abuse dropped_packets)
LOG=$TMP/d2.log
if ! run_daemon "$ROOT" "$CFG" "$LOG"; then
	fail "the new daemon did not come up: $(lines "$LOG" | tr '\n' ' ')"
fi
D2=$DPID
read -r tok_adopted _ < <(top_row 198.18.0.5)
dropped_after=$(rule_stat abuse dropped_packets)
wait $G
wait $S
echo "# abuse dropped: $dropped_before before kill -9, $dropped_dead while no daemon ran," \
	"$dropped_after after the restart; tokens right after adoption $tok_adopted"
[ "$dropped_dead" -gt "$dropped_before" ] || fail "no drops while no daemon ran"
[ "$dropped_after" -ge "$dropped_dead" ] || fail "counters went back: $dropped_dead -> $dropped_after"
[[ "$tok_adopted" =~ ^[0-9]+$ ]] && [ "$tok_adopted" -le 1 ] ||
	fail "tokens after adoption: $tok_adopted"
# No gap in enforcement and no refill at the restart (a refill would admit
# up to another 20, the burst).
near "abuse across kill -9 and restart" "$(got 198.18.0.5 9001)" "$(ideal 20 50 "$(secs 198.18.0.5)")"
lines "$LOG" | grep -q 'attached to\|re-attaching' &&
	fail "the new daemon attached again: $(lines "$LOG" | grep 'attach' | tr '\n' ' ')"
end_case daemon-fail-static

# ---- 6. one daemon per bpffs root ----

begin_case
out=$(timeout 20 nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" run --config "$CFG" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "second run exit status $rc"
[[ "$out" == *"already running"* && "$out" == *"pid $D2"* ]] ||
	fail "message does not name pid $D2: $out"
echo "# $out"
kill -0 "$D2" 2>/dev/null || fail "the first daemon exited"
sleep 0.2
kill -0 "$D2" 2>/dev/null || fail "the first daemon exited"
[ "$(attached dm-r)" == native ] || fail "dm-r: $(attached dm-r)"
end_case daemon-second-refused

# ---- 7. capabilities: exactly what it says it kept ----

# caps_of TEXT: the capability names in a cap_to_text() string, sorted.
caps_of() { echo "$1" | sed 's/[=+-][eip]*//g; s/[, ]/\n/g' | grep . | sort -u | paste -sd,; }
# mask NAME,...: the hex mask of capability names (bit numbers from capsh,
# else the two this daemon is meant to keep).
mask() {
	local m=0 c b
	for c in ${1//,/ }; do
		case $c in
		cap_net_admin) b=12 ;;
		cap_bpf) b=39 ;;
		*) b=$(capsh --explain="$c" 2>/dev/null | sed -n 's/.*\[\([0-9]*\)\].*/\1/p' | head -1)
		   [ -n "$b" ] || { echo unknown; return; } ;;
		esac
		m=$((m | (1 << b)))
	done
	printf '%016x\n' $m
}
begin_case
kept=$(lines "$LOG" | sed -n 's/^weir: dropped privileges; capabilities kept: //p' | tail -1)
[ -n "$kept" ] || fail "no \"capabilities kept\" line"
names=$(caps_of "$kept")
want=$(mask "$names")
echo "# kept: $kept -> $names -> $want"
for f in CapEff CapPrm CapBnd; do
	have=$(awk -v f="$f:" '$1 == f { print $2 }' "/proc/$D2/status")
	[ "$have" == "$want" ] || fail "$f $have, kept $want ($names)"
	if command -v capsh >/dev/null; then
		dec=$(capsh --decode="$have" | sed 's/^0x[0-9a-f]*=//' | tr ',' '\n' | sort | paste -sd,)
		[ "$dec" == "$names" ] || fail "$f decodes to $dec, kept $names"
	fi
done
for f in CapInh CapAmb; do
	have=$(awk -v f="$f:" '$1 == f { print $2 }' "/proc/$D2/status")
	[ "$have" == 0000000000000000 ] || fail "$f $have"
done
[ "$names" == "cap_bpf,cap_net_admin" ] || fail "kept $names, not cap_bpf and cap_net_admin"
end_case daemon-capabilities

# ---- 8. metrics ----

URL=http://127.0.0.1:9464/metrics
scrape() { in_ns "$RCV" curl -s --max-time 10 -o "$TMP/scrape" -w '%{http_code}' "$URL"; }
val() { K=$1 awk '$1 == ENVIRON["K"] { print $2; found = 1 } END { if (!found) print "missing" }' \
	"$TMP/scrape"; }
begin_case
code=$(scrape)
[ "$code" == 200 ] || fail "GET /metrics: $code"
if command -v promtool >/dev/null; then
	if ! out=$(promtool check metrics <"$TMP/scrape" 2>&1) || [ -n "$out" ]; then
		fail "promtool: $(echo "$out" | tr '\n' ' ')"
	fi
else
	skip daemon-metrics-promtool "promtool missing"
fi
# Every metric docs/metrics.md documents, the daemon's own included, and no other.
emitted=$(sed -n 's/^# TYPE \(weir_[a-z_]*\) .*/\1/p' "$TMP/scrape" | sort -u)
documented=$(grep '^| `weir_' docs/metrics.md | cut -d'|' -f2 |
	grep -o 'weir_[a-z_]*' | sort -u)
[ -n "$emitted" ] && [ "$emitted" == "$documented" ] ||
	fail "the daemon's families and docs/metrics.md's differ: $(diff <(echo "$emitted") <(echo "$documented") | grep '^[<>]' | tr '\n' ' ')"
P='weir_rule_packets_total{rule="exact",verdict="passed"}'
D='weir_rule_packets_total{rule="exact",verdict="dropped"}'
R='weir_config_reloads_total{result="ok"}'
p0=$(val "$P") d0=$(val "$D") r0=$(val "$R")
[ "$(val 'weir_config_reloads_total{result="error"}')" != missing ] && [ "$r0" != missing ] ||
	fail "no weir_config_reloads_total"
[ "$r0" == 0 ] || fail "$R is $r0 in a daemon that has not reloaded"
# 300 packets at 1000 pps from a fresh source against 1 pps, burst 100: all
# within 0.3 s, before a second token could come, so exactly 100 pass.
gen 198.18.0.6 9004 1000 5 --count 300
kill -HUP "$D2"
wait_count "$LOG" '^weir: reloaded ' 1 || fail "no reload"
code=$(scrape)
[ "$code" == 200 ] || fail "GET /metrics: $code"
p1=$(val "$P") d1=$(val "$D") r1=$(val "$R")
echo "# exact: passed $p0 -> $p1, dropped $d0 -> $d1, reloads ok $r0 -> $r1"
[ "$(sent 198.18.0.6)" == 300 ] || fail "wrgen sent $(sent 198.18.0.6)"
[ "$p0" != missing ] && [ "$d0" != missing ] || fail "no series for rule exact"
[ "$p1" == $((p0 + 100)) ] || fail "passed $p0 -> $p1, expected +100"
[ "$d1" == $((d0 + 200)) ] || fail "dropped $d0 -> $d1, expected +200"
[ "$r1" == $((r0 + 1)) ] || fail "$R $r0 -> $r1 after one reload"
command -v promtool >/dev/null && { out=$(promtool check metrics <"$TMP/scrape" 2>&1) &&
	[ -z "$out" ] || fail "promtool after traffic: $(echo "$out" | tr '\n' ' ')"; }
end_case daemon-metrics

# ---- 9. events: one line per limited source per interval, bounded ----

begin_case
from=$(wc -l <"$LOG")
sink 9001 && S=$SINK_PID || fail "sink"
gen 198.18.0.3 9001 1000 3 & G1=$!
gen 198.18.0.4 9001 1000 3 & G2=$!
wait $G1 $G2
wait $S
sleep 2.2	# two more intervals: the flush that finds them quiet
tail -n +$((from + 1)) "$LOG" >"$TMP/ev1.log"
for s in 198.18.0.3 198.18.0.4; do
	n=$(count "$TMP/ev1.log" "^weir: ${s//./\\.} limited by rule abuse: [0-9]+ dropped in 1s$")
	[ "$n" -ge 1 ] || fail "no event line for $s: $(lines "$TMP/ev1.log" | tr '\n' ' ')"
	# Every drop is reported once: the lines' counts add up to what the
	# limiter refused this source.
	sum=$(lines "$TMP/ev1.log" | sed -n "s/^weir: ${s//./\\.} limited by rule abuse: \([0-9]*\) dropped.*/\1/p" |
		awk '{ t += $1 } END { print t + 0 }')
	refused=$(( $(sent $s) - $(got $s 9001) ))
	echo "# $s: $n lines, $sum dropped in them; refused $refused"
	[ "$sum" -eq "$refused" ] || fail "$s: the event lines count $sum drops, refused $refused"
done
# A spoofed flood: a few hundred new sources limited every second.
from=$(wc -l <"$LOG")
ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport 9005 --spoof-prefix 198.18.128.0/17 \
	--rate 5000 --duration 3 --json >"$TMP/gen-spoof.json" || fail "wrgen spoofed: $(cat "$TMP/gen-spoof.json")"
sleep 2.2
tail -n +$((from + 1)) "$LOG" >"$TMP/ev2.log"
# Lines of one flush come out together; flushes are an interval (1 s) apart,
# and a summary line ends its flush.
grep -E '^[0-9.]+ weir: (198\.18\.[0-9.]+ limited by rule|\.\.\. and [0-9]+ more sources)' \
	"$TMP/ev2.log" | awk '
	{ if (NR == 1 || ended || $1 - last > 0.4) { g++ }; last = $1; ended = 0
	  if ($3 == "...") { more[g]++; ended = 1 } else src[g]++ }
	END { for (i = 1; i <= g; i++) printf "%d %d\n", src[i], more[i] }' >"$TMP/groups"
echo "# spoofed: $(jq .total_sent "$TMP/gen-spoof.json") sent; per flush (lines, summaries):" \
	"$(tr '\n' ';' <"$TMP/groups")"
[ -s "$TMP/groups" ] || fail "no event lines for the spoofed flood"
awk '$1 > 3 || $2 > 1 { bad = 1 } END { exit bad }' "$TMP/groups" ||
	fail "a flush printed more than 3 source lines or more than one summary: $(tr '\n' ';' <"$TMP/groups")"
awk '$2 == 1 && $1 == 3 { ok = 1 } END { exit !ok }' "$TMP/groups" ||
	fail "no flush printed 3 lines and an \"... and N more\" summary"
bad=$(lines "$TMP/ev2.log" | grep ' limited by rule ' | grep -vE '^weir: 198\.18\.(1(2[89]|[3-9][0-9])|2[0-5][0-9])\.[0-9]+ limited by rule spoof: [0-9]+ dropped in 1s$')
[ -z "$bad" ] || fail "unexpected event lines: $(echo "$bad" | head -3 | tr '\n' ' ')"
end_case daemon-events

# A reload that changes events.interval: the lines say how long they cover,
# and they come that often. (Counted, not timed: during a flood of T s,
# lines that each cover I s number at most T / I + 2.)
begin_case
sed 's/interval: 1s, lines: 3/interval: 5s, lines: 3/' "$CFG_DIR/A.yaml" >"$CFG_DIR/.tmp"
n_ok=$(count "$LOG" '^weir: reloaded ')
mv -f "$CFG_DIR/.tmp" "$CFG"
wait_count "$LOG" '^weir: reloaded ' $((n_ok + 1)) || fail "no reload"
from=$(wc -l <"$LOG")
gen 198.18.0.8 9001 1000 6
sleep 1.2
tail -n +$((from + 1)) "$LOG" | cut -d' ' -f2- |
	sed -n 's/^weir: 198\.18\.0\.8 limited by rule abuse: [0-9]* dropped in \([0-9]*\)s$/\1/p' >"$TMP/ev3"
n=$(wc -l <"$TMP/ev3")
claimed=$(sort -u "$TMP/ev3" | paste -sd,)
t=$(awk -v s="$(secs 198.18.0.8)" 'BEGIN { print s + 1.2 }')
echo "# after a reload to interval 5s: $n lines for a ${t}s flood (and wait), each saying \"in ${claimed}s\""
[ "$n" -ge 1 ] || fail "no event line"
[[ "$claimed" =~ ^[0-9]+$ ]] || fail "lines claim intervals $claimed"
[[ "$claimed" =~ ^[0-9]+$ ]] && awk -v n="$n" -v t="$t" -v i="$claimed" 'BEGIN { exit !(n <= t / i + 2) }' ||
	fail "$n lines in ${t}s, each saying it covers ${claimed}s: the interval changed in the text but not in the timer"
cp "$CFG_DIR/A.yaml" "$CFG_DIR/.tmp" && mv -f "$CFG_DIR/.tmp" "$CFG"
wait_count "$LOG" '^weir: reloaded ' $((n_ok + 2)) || fail "no reload back to A"
end_case daemon-events-interval-on-reload

# ---- 10. SIGTERM leaves protection in place ----

begin_case
kill -TERM "$D2"
wait "$D2"
rc=$?
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM"
lines "$LOG" | grep -q "^weir: stopping; protection stays in place" ||
	fail "log: $(lines "$LOG" | tail -2 | tr '\n' ' ')"
[ "$(attached dm-r)" == native ] || fail "not attached: $(wrj status)"
sink 9004 && S=$SINK_PID || fail "sink"
gen 198.18.0.7 9004 1000 5 --count 300
wait $S
echo "# after the daemon exited: $(got 198.18.0.7 9004) of $(sent 198.18.0.7) admitted"
[ "$(got 198.18.0.7 9004)" -eq 100 ] || fail "admitted $(got 198.18.0.7 9004) of 300, expected 100"
end_case daemon-sigterm-leaves-protection

# `events: { lines: 0 }` means no event lines (etc/weir.yaml: "0 lines:
# none"), from the start as after a reload.
begin_case
sed 's/interval: 1s, lines: 3/interval: 1s, lines: 0/' "$CFG_DIR/A.yaml" >"$CFG"
LOG=$TMP/d3.log
if ! run_daemon "$ROOT" "$CFG" "$LOG"; then
	fail "the daemon did not come up: $(lines "$LOG" | tr '\n' ' ')"
else
	gen 198.18.0.8 9001 1000 2.5
	sleep 1.2
	n_start=$(count "$LOG" ' limited by rule ')
	kill -HUP "$DPID"
	wait_count "$LOG" '^weir: reloaded ' 1 || fail "no reload"
	from=$(wc -l <"$LOG")
	gen 198.18.0.8 9001 1000 2.5
	sleep 1.2
	n_reload=$(tail -n +$((from + 1)) "$LOG" | grep -c ' limited by rule ')
	echo "# lines: 0: $n_start source lines after start, $n_reload after a reload"
	[ "$n_start" -eq 0 ] || fail "$n_start source lines with lines: 0 as started" \
		"(after a reload: $n_reload): $(lines "$LOG" | grep -m1 ' limited by rule ')"
	[ "$n_reload" -eq 0 ] || fail "$n_reload source lines with lines: 0 after a reload"
	kill -TERM "$DPID"
	wait "$DPID" || fail "exit status $? after SIGTERM"
fi
end_case daemon-events-lines-zero
