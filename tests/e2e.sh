#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# End to end: two namespaces joined by veth, weir attached by its CLI on
# the receiving side, paced UDP from several sources (tools/wrgen, one
# generator per source so each has its own rate) counted by a real receiver
# (tools/wrsink). Admitted counts are checked against burst + rate x time,
# the time being what the generator measured from its first to last send.
#
# Tolerance: |admitted - ideal| <= 3% of ideal + 3 packets. The limiter is
# exact; the slack covers where in its 1/rate interval the first packet
# lands and the scheduling noise of a shared 2-CPU machine. E2E_TOL_PCT
# sets another percentage for a guest under software emulation (TCG),
# whose clock and vCPUs drift against the generator's measured time when
# the host is busy (3.6% seen with a loaded host: docs/KERNELS.md).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
trap cleanup EXIT
require_root e2e

SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
PORT=9000
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok e2e-setup "no namespaces"; exit 1; }
ROOT=$(new_root e2e)
if ! ip link add e2e-s netns "$SND" type veth peer name e2e-r netns "$RCV"; then
	not_ok e2e-setup "cannot create veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/16 dev e2e-r
ip -n "$RCV" addr add 2001:db8::1/48 dev e2e-r nodad
for a in 198.18.0.2 198.18.0.3 198.18.0.4 198.18.1.2; do
	ip -n "$SND" addr add $a/16 dev e2e-s
done
for a in 2001:db8::2 2001:db8::3 2001:db8:0:1::2; do
	ip -n "$SND" addr add $a/48 dev e2e-s nodad
done
ip -n "$RCV" link set e2e-r up
ip -n "$SND" link set e2e-s up
# Permanent neighbours: no measured packet waits in (or is dropped from) an
# ARP/ND queue.
mac_r=$(ip -n "$RCV" -j link show e2e-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show e2e-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev e2e-s nud permanent
ip -n "$SND" neigh replace 2001:db8::1 lladdr "$mac_r" dev e2e-s nud permanent
for a in 198.18.0.2 198.18.0.3 198.18.0.4 198.18.1.2 2001:db8::2 2001:db8::3 2001:db8:0:1::2; do
	ip -n "$RCV" neigh replace $a lladdr "$mac_s" dev e2e-r nud permanent
done

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# traffic DURATION SRC:RATE...: a sink in RCV, one generator per source in
# SND, all at once. Results: $TMP/gen-SRC.json and $TMP/sink.json.
traffic() {
	local dur=$1 ready=$TMP/ready pids=() spec src rate dst
	shift
	rm -f "$ready" "$TMP"/gen-*.json
	ip netns exec "$RCV" "$SLSINK" --listen :: --port $PORT --duration 30 \
		--idle 1.5 --json --ready-file "$ready" >"$TMP/sink.json" &
	local sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	for spec in "$@"; do
		src=${spec%=*}
		rate=${spec##*=}
		dst=$([[ $src == *:* ]] && echo 2001:db8::1 || echo 198.18.0.1)
		ip netns exec "$SND" "$SLGEN" --dst "$dst" --dport $PORT --src "$src" \
			--rate "$rate" --duration "$dur" --json >"$TMP/gen-$src.json" &
		pids+=($!)
	done
	wait "${pids[@]}"
	wait $sink
}
sent() { jq -r '.total_sent' "$TMP/gen-$1.json"; }
secs() { jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9' "$TMP/gen-$1.json"; }
got() {
	jq -r --arg s "$1" '[.sources[] | select(.src == $s or .src == ("::ffff:" + $s)) |
		.packets] | add // 0' "$TMP/sink.json"
}
# Sum over sources of what arrived, and the longest sending time among them.
got_sum() { local t=0 s; for s in "$@"; do t=$((t + $(got "$s"))); done; echo $t; }
secs_max() {
	local m=0 s; for s in "$@"; do m=$(awk -v a="$m" -v b="$(secs "$s")" \
		'BEGIN { print (b > a ? b : a) }'); done; echo "$m"
}
ideal() { awk -v b="$1" -v r="$2" -v t="$3" 'BEGIN { printf "%.1f", b + r * t }'; }
# near WHAT GOT IDEAL: within 3% (TOL) + 3 packets.
TOL=${E2E_TOL_PCT:-3}
near() {
	echo "# $1: admitted $2, ideal $3"
	awk -v g="$2" -v i="$3" -v t="$TOL" \
		'BEGIN { d = g - i; if (d < 0) d = -d; exit !(d <= t / 100 * i + 3) }' ||
		fail "$1: admitted $2, ideal $3 (tolerance $TOL% + 3)"
}

if ! out=$(wr attach e2e-r mode native 2>&1); then
	not_ok e2e-attach-native "$out"
	exit 1
fi

# Per source: an abusive, a busy and a well-behaved source at once.
begin_case
wr rule add persrc proto udp dport $PORT limit 200pps burst 60 per src >/dev/null ||
	fail "rule add"
traffic 3 198.18.0.2=1000 198.18.0.3=400 198.18.0.4=100
# top first: it shows sources refused in its last 10 s, and in a slow
# guest (make test-kernels) the checks below can take longer than that.
top=$(wrj top)
toptext=$(wr top)
for s in 198.18.0.2 198.18.0.3; do
	near "$s" "$(got $s)" "$(ideal 60 200 "$(secs $s)")"
done
# Under its limit: every packet arrives.
[ "$(got 198.18.0.4)" -eq "$(sent 198.18.0.4)" ] ||
	fail "198.18.0.4 under its limit lost packets: $(got 198.18.0.4) of $(sent 198.18.0.4)"
# weir's own counters agree with the receiver.
passed=$(wrj stats | jq '.rules[] | select(.name == "persrc") | .passed_packets')
dropped=$(wrj stats | jq '.rules[] | select(.name == "persrc") | .dropped_packets')
total_sent=$(( $(sent 198.18.0.2) + $(sent 198.18.0.3) + $(sent 198.18.0.4) ))
total_got=$(got_sum 198.18.0.2 198.18.0.3 198.18.0.4)
[ "$passed" -eq "$total_got" ] || fail "stats passed $passed, receiver got $total_got"
[ $((passed + dropped)) -eq "$total_sent" ] ||
	fail "stats passed+dropped $((passed + dropped)), sent $total_sent"
echo "$top" | jq -e '.sources[] | select(.source == "198.18.0.2/32" and .drops > 0)' \
	>/dev/null || fail "top does not show 198.18.0.2: $top"
echo "$top" | jq -e '.sources[] | select(.source == "198.18.0.4/32")' >/dev/null &&
	fail "top shows the well-behaved 198.18.0.4"
# Each row names its limit by what it says, in JSON and in text.
lim=$(echo "$top" | jq -r '.sources[] | select(.source == "198.18.0.2/32") | .limit')
[ "$lim" == "src/32 200pps" ] || fail "top names the limit \"$lim\", want \"src/32 200pps\""
grep -E '^198\.18\.0\.2/32 +persrc +src/32 200pps ' <<<"$toptext" >/dev/null ||
	fail "text top: $(sed -n 2,3p <<<"$toptext" | tr '\n' ' ')"
wr rule del persrc >/dev/null
end_case e2e-per-source

# Per /24: two sources in one /24 share a bucket; a third /24 has its own.
begin_case
wr rule add per24 proto udp dport $PORT limit 300pps burst 90 per src/24 >/dev/null ||
	fail "rule add"
traffic 3 198.18.0.2=400 198.18.0.3=400 198.18.1.2=400
near "198.18.0.0/24" "$(got_sum 198.18.0.2 198.18.0.3)" \
	"$(ideal 90 300 "$(secs_max 198.18.0.2 198.18.0.3)")"
near "198.18.1.0/24" "$(got 198.18.1.2)" "$(ideal 90 300 "$(secs 198.18.1.2)")"
wr rule del per24 >/dev/null
end_case e2e-per-prefix

# Rule-wide: one bucket for everything the rule matches.
begin_case
wr rule add whole proto udp dport $PORT limit 500pps burst 150 per all >/dev/null ||
	fail "rule add"
traffic 3 198.18.0.2=400 198.18.0.3=400 198.18.1.2=400
near "rule-wide" "$(got_sum 198.18.0.2 198.18.0.3 198.18.1.2)" \
	"$(ideal 150 500 "$(secs_max 198.18.0.2 198.18.0.3 198.18.1.2)")"
wr rule del whole >/dev/null
end_case e2e-per-rule

# IPv6 keyed per /64: two sources in one /64 share, another /64 does not.
begin_case
wr rule add v6 family ipv6 proto udp dport $PORT limit 200pps burst 60 per src6/64 >/dev/null ||
	fail "rule add"
traffic 3 2001:db8::2=300 2001:db8::3=300 2001:db8:0:1::2=300
near "2001:db8::/64" "$(got_sum 2001:db8::2 2001:db8::3)" \
	"$(ideal 60 200 "$(secs_max 2001:db8::2 2001:db8::3)")"
near "2001:db8:0:1::/64" "$(got 2001:db8:0:1::2)" "$(ideal 60 200 "$(secs 2001:db8:0:1::2)")"
wr rule del v6 >/dev/null
end_case e2e-ipv6-per-64

# Detach restores full pass-through (the rule is still there).
begin_case
wr rule add tight proto udp dport $PORT limit 10pps burst 5 >/dev/null
wr detach e2e-r >/dev/null || fail "detach"
traffic 1 198.18.0.2=500
[ "$(got 198.18.0.2)" -eq "$(sent 198.18.0.2)" ] ||
	fail "after detach: $(got 198.18.0.2) of $(sent 198.18.0.2) arrived"
end_case e2e-detach-passes

# Each attach mode limits the same way: 200 packets at 1000 pps against
# burst 20 at 10 pps admit 20 + 10 x 0.2 s.
for mode in native generic tc; do
	begin_case
	if ! out=$(wr attach e2e-r mode $mode 2>&1); then
		fail "attach: $out"
	else
		[ "$(wrj status | jq -r '.interfaces[0].mode')" == "$mode" ] ||
			fail "status mode $(wrj status | jq -r '.interfaces[0].mode')"
		wr rule del tight >/dev/null
		wr rule add tight proto udp dport $PORT limit 10pps burst 20 >/dev/null
		traffic 0.2 198.18.0.3=1000
		near "$mode" "$(got 198.18.0.3)" "$(ideal 20 10 "$(secs 198.18.0.3)")"
		wr detach e2e-r >/dev/null || fail "detach"
	fi
	end_case "e2e-mode-$mode"
done
