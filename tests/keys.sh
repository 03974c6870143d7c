#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Limit keys over real traffic: two namespaces joined by veth, weir attached
# on the receiving side, paced UDP (tools/wrgen) to several destination
# addresses of 198.18.7.0/24, each counted by its own receiver (tools/wrsink
# bound to that address). A carpet bomb limited `per dst`: each destination
# gets its own budget whoever sends to it, and the attacked address does not
# eat the budget of the others. Then `per flow`: one source's two ports are
# two budgets.
#
# Tolerance as in e2e.sh: |admitted - ideal| <= 3% of ideal + 3 packets
# (E2E_TOL_PCT sets another percentage).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root keys

SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
PORT=9000
DSTS="198.18.7.1 198.18.7.2 198.18.7.3"
SRCS="198.18.100.2 198.18.100.3 198.18.100.4"

RCV=$(new_netns krcv) && SND=$(new_netns ksnd) || { not_ok keys-setup "no namespaces"; exit 1; }
ROOT=$(new_root keys)
if ! ip link add keys-s netns "$SND" type veth peer name keys-r netns "$RCV"; then
	not_ok keys-setup "cannot create veth"
	exit 1
fi
for a in $DSTS; do ip -n "$RCV" addr add $a/16 dev keys-r; done
for a in $SRCS; do ip -n "$SND" addr add $a/16 dev keys-s; done
ip -n "$RCV" link set keys-r up
ip -n "$SND" link set keys-s up
# Permanent neighbours: no measured packet waits in an ARP queue.
mac_r=$(ip -n "$RCV" -j link show keys-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show keys-s | jq -r '.[0].address')
for a in $DSTS; do ip -n "$SND" neigh replace $a lladdr "$mac_r" dev keys-s nud permanent; done
for a in $SRCS; do ip -n "$RCV" neigh replace $a lladdr "$mac_s" dev keys-r nud permanent; done

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# traffic DURATION SRC>DST[:SPORT]=RATE...: a sink on each of $DSTS, one
# generator per spec, all at once. Results: $TMP/gen-N.json, $TMP/sink-DST.json.
traffic() {
	local dur=$1 pids=() sinks=() spec flow rate src dst sport n=0 d
	shift
	rm -f "$TMP"/ready-* "$TMP"/gen-*.json "$TMP"/sink-*.json
	for d in $DSTS; do
		ip netns exec "$RCV" "$SLSINK" --listen "$d" --port $PORT --duration 30 \
			--idle 1.5 --json --ready-file "$TMP/ready-$d" >"$TMP/sink-$d.json" &
		sinks+=($!)
	done
	for d in $DSTS; do
		for _ in $(seq 100); do [ -e "$TMP/ready-$d" ] && break; sleep 0.05; done
	done
	for spec in "$@"; do
		flow=${spec%=*}
		rate=${spec##*=}
		src=${flow%%>*}
		dst=${flow#*>}
		sport=
		[[ $dst == *:* ]] && { sport=${dst#*:}; dst=${dst%:*}; }
		ip netns exec "$SND" "$SLGEN" --dst "$dst" --dport $PORT --src "$src" \
			${sport:+--sport "$sport"} --rate "$rate" --duration "$dur" \
			--json >"$TMP/gen-$n.json" &
		pids+=($!)
		n=$((n + 1))
	done
	wait "${pids[@]}"
	# What top says as the flood ends (a sink that got nothing waits out
	# its 30 s, longer than top's 10 s window).
	wrj top >"$TMP/top.json"
	wr top >"$TMP/top.txt"
	wait "${sinks[@]}"
}
# Packets that reached destination D (from any source), and generator N's figures.
got_dst() { jq -r '[.sources[].packets] | add // 0' "$TMP/sink-$1.json"; }
got_from() {
	jq -r --arg s "$2" '[.sources[] | select(.src == $s) | .packets] | add // 0' \
		"$TMP/sink-$1.json"
}
sent() { jq -r '.total_sent' "$TMP/gen-$1.json"; }
secs() { jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9' "$TMP/gen-$1.json"; }
secs_max() {
	local m=0 n; for n in "$@"; do m=$(awk -v a="$m" -v b="$(secs "$n")" \
		'BEGIN { print (b > a ? b : a) }'); done; echo "$m"
}
ideal() { awk -v b="$1" -v r="$2" -v t="$3" 'BEGIN { printf "%.1f", b + r * t }'; }
TOL=${E2E_TOL_PCT:-3}
near() {
	echo "# $1: admitted $2, ideal $3"
	awk -v g="$2" -v i="$3" -v t="$TOL" \
		'BEGIN { d = g - i; if (d < 0) d = -d; exit !(d <= t / 100 * i + 3) }' ||
		fail "$1: admitted $2, ideal $3 (tolerance $TOL% + 3)"
}

if ! out=$(wr attach keys-r mode native 2>&1); then
	not_ok keys-attach "$out"
	exit 1
fi

# per dst: .1 is flooded from two sources (1000 pps in all), .3 from one
# (400 pps), .2 gets 60 pps from the same attacker as .1 and stays under
# its own budget: every one of its packets arrives.
begin_case
wr rule add carpet proto udp dport $PORT dst 198.18.7.0/24 limit 200pps burst 60 per dst \
	>/dev/null || fail "rule add"
traffic 3 "198.18.100.2>198.18.7.1=500" "198.18.100.3>198.18.7.1=500" \
	"198.18.100.4>198.18.7.3=400" "198.18.100.2>198.18.7.2=60"
top=$(cat "$TMP/top.json")
toptext=$(cat "$TMP/top.txt")
near "198.18.7.1 (two attackers, one budget)" "$(got_dst 198.18.7.1)" \
	"$(ideal 60 200 "$(secs_max 0 1)")"
near "198.18.7.3" "$(got_dst 198.18.7.3)" "$(ideal 60 200 "$(secs 2)")"
[ "$(got_dst 198.18.7.2)" -eq "$(sent 3)" ] ||
	fail "198.18.7.2 under its budget lost packets: $(got_dst 198.18.7.2) of $(sent 3)"
# The attacker's packets to .2 passed while its flood of .1 was refused.
[ "$(got_from 198.18.7.2 198.18.100.2)" -eq "$(sent 3)" ] ||
	fail "198.18.100.2's packets to .2 were charged to .1's budget"
# top shows destination buckets as destinations, never as sources.
echo "$top" | jq -e '.sources[] | select(.destination == "198.18.7.1/32" and .key == "dst"
	and .drops > 0)' >/dev/null || fail "top does not show destination 198.18.7.1: $top"
echo "$top" | jq -e '.sources[] | select(.source != null and .key == "dst")' >/dev/null &&
	fail "top shows a dst bucket as a source: $top"
echo "$top" | jq -e '.sources[] | select(.destination == "198.18.7.2/32")' >/dev/null &&
	fail "top shows the unharmed 198.18.7.2"
grep -E '^dst 198\.18\.7\.1/32 +carpet +dst/32 200pps ' <<<"$toptext" >/dev/null ||
	fail "text top: $(sed -n 2,4p <<<"$toptext" | tr '\n' ' ')"
[ "$(wrj rule list | jq -r '.rules[] | select(.name == "carpet") | .limits[0].per')" == dst ] ||
	fail "rule list -j: $(wrj rule list)"
wr rule del carpet >/dev/null
end_case keys-per-dst

# per dst/24: the whole /24 is one target.
begin_case
wr rule add carpet24 proto udp dport $PORT limit 300pps burst 90 per dst/24 >/dev/null ||
	fail "rule add"
traffic 3 "198.18.100.2>198.18.7.1=300" "198.18.100.3>198.18.7.2=300" \
	"198.18.100.4>198.18.7.3=300"
near "198.18.7.0/24" "$(( $(got_dst 198.18.7.1) + $(got_dst 198.18.7.2) + \
	$(got_dst 198.18.7.3) ))" "$(ideal 90 300 "$(secs_max 0 1 2)")"
wr rule del carpet24 >/dev/null
end_case keys-per-dst-prefix

# per flow: one source, two source ports, two budgets.
begin_case
wr rule add flows proto udp dport $PORT limit 100pps burst 30 per flow >/dev/null ||
	fail "rule add"
traffic 3 "198.18.100.2>198.18.7.1:40001=400" "198.18.100.2>198.18.7.2:40002=400"
near "198.18.100.2 port 40001" "$(got_dst 198.18.7.1)" "$(ideal 30 100 "$(secs 0)")"
near "198.18.100.2 port 40002" "$(got_dst 198.18.7.2)" "$(ideal 30 100 "$(secs 1)")"
# top shows each flow as a flow, with its port: two buckets of one source.
for p in 40001 40002; do
	jq -e --arg s "198.18.100.2/32 port $p" '.sources[] | select(.source == $s and
		.key == "flow" and .drops > 0)' "$TMP/top.json" >/dev/null ||
		fail "top does not show flow 198.18.100.2 port $p: $(cat "$TMP/top.json")"
done
[ "$(wrj rule list | jq -r '.rules[] | select(.name == "flows") | .limits[0].per')" == flow ] ||
	fail "rule list -j: $(wrj rule list)"
wr rule del flows >/dev/null
end_case keys-per-flow
