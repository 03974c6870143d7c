#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `iface DEV` and the per-interface counters with real traffic: a receiver
# namespace with two veths, A and B, each from a sender namespace of its
# own, weir attached to both. A rule with iface A drops a UDP flood that
# arrives on A while the same flood on B passes; `weir stats -j` shows each
# interface's passed and dropped frames and bytes, exactly (IPv6 is off on
# the veths and the neighbours permanent: no frame but the flood's). Then
# the rule set's ifindex follows a B deleted and created again.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root iface

GEN=$PWD/$BUILD/wrgen
SINK=$PWD/$BUILD/wrsink
PORT=9412
N=40			# datagrams of each flood
SIZE=64			# their UDP payload: frames of 14 + 20 + 8 + 64 bytes
FRAME=$((14 + 20 + 8 + SIZE))

# veth_pair SIDE NET [DEV]: sender namespace s<SIDE>, receiver end DEV ($TAG-<SIDE>r)
# with 198.18.NET.1/24
veth_pair() {
	local side=$1 net=$2 snd dev=${3:-$TAG-${1}r} peer=$TAG-$1 mac_r mac_s
	snd=$(new_netns "s$side") || return 1
	ip link add "$peer" netns "$snd" type veth peer name "$dev" netns "$RCV" || return 1
	in_ns "$RCV" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	in_ns "$snd" sysctl -qw "net.ipv6.conf.$peer.disable_ipv6=1"
	ip -n "$RCV" addr add "198.18.$net.1/24" dev "$dev"
	ip -n "$snd" addr add "198.18.$net.2/24" dev "$peer"
	ip -n "$RCV" link set "$dev" up
	ip -n "$snd" link set "$peer" up
	mac_r=$(ip -n "$RCV" -j link show "$dev" | jq -r '.[0].address')
	mac_s=$(ip -n "$snd" -j link show "$peer" | jq -r '.[0].address')
	ip -n "$snd" neigh replace "198.18.$net.1" lladdr "$mac_r" dev "$peer" nud permanent
	ip -n "$RCV" neigh replace "198.18.$net.2" lladdr "$mac_s" dev "$dev" nud permanent
}

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# if_stat DEV FIELD [IFINDEX]: the interface's counter in `stats -j` ("" if it is not
# listed); with IFINDEX, only the attachment of that ifindex (a gone one keeps its name)
if_stat() {
	wrj stats | jq -r --arg d "$1" --arg f "$2" --arg i "${3:-}" \
		'.interfaces[] | select(.name == $d and ($i == "" or (.ifindex | tostring) == $i)) |
		 .[$f]'
}

# flood SIDE NET: N datagrams from sender SIDE to 198.18.NET.1; prints how many arrived
flood() {
	local side=$1 net=$2 ready=$TMP/ready-$1 sink
	rm -f "$ready"
	nsenter --net="/run/netns/$RCV" "$SINK" --listen "198.18.$net.1" --port $PORT \
		--duration 20 --idle 1 --json --ready-file "$ready" >"$TMP/sink-$side.json" &
	sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	in_ns "$TAG-s$side" "$GEN" --dst "198.18.$net.1" --dport $PORT --src "198.18.$net.2" \
		--rate 200 --count $N --size $SIZE --duration 10 --json >/dev/null
	sleep 0.2
	kill -TERM "$sink" 2>/dev/null
	wait "$sink"
	jq -r '[.sources[]?.packets] | add // 0' "$TMP/sink-$side.json"
}

RCV=$(new_netns r) && ROOT=$(new_root iface) && veth_pair a 100 && veth_pair b 101
if [ $? -ne 0 ]; then
	not_ok iface-setup "cannot create the namespaces and veths"
	exit 1
fi
A=$TAG-ar B=$TAG-br

# ---- 1. attached to both: each listed in stats with its counters at 0 ----
begin_case
expect_ok "attach A" wr attach "$A" mode generic
expect_ok "attach B" wr attach "$B" mode generic
for d in "$A" "$B"; do
	[ "$(if_stat "$d" counted)" == true ] || fail "$d: not counted: $(wrj stats | jq -c .interfaces)"
	[ "$(if_stat "$d" passed_packets)" == 0 ] || fail "$d: passed $(if_stat "$d" passed_packets)"
done
out=$(wr stats)
grep -q "^$A " <<<"$out" || fail "no text row for $A: $out"
end_case iface-stats-listed

# ---- 2. the rule: its name listed, an unknown interface refused with nothing written ----
begin_case
expect_ok "rule add" wr rule add flood proto udp dport $PORT iface "$A" limit 1/day burst 1 per all
[ "$(wrj rule list | jq -r '.rules[] | select(.name == "flood") | .iface')" == "$A" ] ||
	fail "rule list -j: $(wrj rule list)"
wr rule list | grep -q "iface $A " || fail "rule list: $(wr rule list)"
before=$(wrj rule list)
err=$(wr rule add other proto udp iface "$TAG-nodev" limit 10pps 2>&1) && fail "unknown iface added"
[[ "$err" == *"iface \"$TAG-nodev\": no such interface"* ]] || fail "unknown iface: $err"
[ "$before" == "$(wrj rule list)" ] || fail "the refused rule changed the set"
end_case iface-rule-add

# ---- 3. the flood on A is dropped past its one admitted frame, on B all pass ----
begin_case
got_a=$(flood a 100)
got_b=$(flood b 101)
[ "$got_a" -eq 1 ] || fail "A: $got_a of $N arrived, want 1 (the burst)"
[ "$got_b" -eq $N ] || fail "B: $got_b of $N arrived, want all"
[ "$(if_stat "$A" passed_packets)" == 1 ] || fail "A passed $(if_stat "$A" passed_packets)"
[ "$(if_stat "$A" dropped_packets)" == $((N - 1)) ] ||
	fail "A dropped $(if_stat "$A" dropped_packets), want $((N - 1))"
[ "$(if_stat "$A" passed_bytes)" == $FRAME ] || fail "A passed bytes $(if_stat "$A" passed_bytes)"
[ "$(if_stat "$A" dropped_bytes)" == $(((N - 1) * FRAME)) ] ||
	fail "A dropped bytes $(if_stat "$A" dropped_bytes), want $(((N - 1) * FRAME))"
[ "$(if_stat "$B" passed_packets)" == $N ] || fail "B passed $(if_stat "$B" passed_packets)"
[ "$(if_stat "$B" dropped_packets)" == 0 ] || fail "B dropped $(if_stat "$B" dropped_packets)"
[ "$(if_stat "$B" passed_bytes)" == $((N * FRAME)) ] ||
	fail "B passed bytes $(if_stat "$B" passed_bytes), want $((N * FRAME))"
r=$(wrj stats | jq -c '.rules[] | select(.name == "flood")')
[ "$(jq .dropped_packets <<<"$r")" == $((N - 1)) ] || fail "the rule's counters: $r"
end_case iface-flood-on-a-only

# ---- 4. B deleted and created again: a rule for B follows it at the next write ----
begin_case
ifindex_of() { ip -n "$RCV" -j link show "$1" 2>/dev/null | jq -r '.[0].ifindex'; }
old=$(ifindex_of "$B")
expect_ok "rule for B" wr rule add onb proto udp dport $PORT iface "$B" limit 1/day burst 1 per all
ip -n "$RCV" link del "$B"
veth_pair b2 101 "$B" >/dev/null 2>&1
new=$(ifindex_of "$B")
[ -n "$new" ] && [ "$new" != "$old" ] || fail "B not created again with a new ifindex ($old, $new)"
expect_ok "attach B again" wr attach "$B" mode generic
# attach does not write the rule set; the next write resolves B again
expect_ok "a write" wr rule del flood
got=$(flood b2 101)
[ "$got" -eq 1 ] || fail "B after its return: $got of $N arrived, want 1 (the rule follows B)"
[ "$(if_stat "$B" dropped_packets "$new")" == $((N - 1)) ] ||
	fail "B's new counters: dropped $(if_stat "$B" dropped_packets "$new"), want $((N - 1))"
[ "$(if_stat "$B" passed_packets "$new")" == 1 ] ||
	fail "B's new counters: passed $(if_stat "$B" passed_packets "$new"), want 1"
end_case iface-recreated
