#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `tcp-state auto` under `weir run`: the daemon's watch (user/daemon/
# tcpstate.c) switches the check on when a spoofed ACK flood's out-of-state
# rate reaches tcp-state.on, says so in its log, `status` and the metrics,
# drops the flood from then on, and switches off again once the rate has
# stayed under tcp-state.off for tcp-state.hold.
#
# A server namespace (weir's daemon, native XDP) and a client namespace
# joined by veth; the spoofed range is routed back through the client, so
# the server's RSTs to the flood really leave (and count as OutRsts).
# tools/wrgen floods spoofed ACKs to a closed port at FLOOD pps. Counts,
# never times: waits are bounded polls.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root tcpauto

SLGEN=$BUILD/wrgen
FLOOD=3000	# pps: three times tcp-state.on below
for b in "$SLGEN" "$WEIR"; do
	[ -x "$b" ] || { not_ok tcpauto-setup "$b is missing (make)"; exit 1; }
done

SRV=$(new_netns srv) && CLI=$(new_netns cli) || { not_ok tcpauto-setup "no namespaces"; exit 1; }
ROOT=$(new_root tcpauto)
if ! ip link add ta-c netns "$CLI" type veth peer name ta-s netns "$SRV"; then
	not_ok tcpauto-setup "cannot create veth"
	exit 1
fi
ip -n "$SRV" addr add 198.18.0.1/24 dev ta-s
ip -n "$CLI" addr add 198.18.0.2/24 dev ta-c
ip -n "$SRV" link set ta-s up
ip -n "$CLI" link set ta-c up
ip -n "$SRV" link set lo up
mac_s=$(ip -n "$SRV" -j link show ta-s | jq -r '.[0].address')
mac_c=$(ip -n "$CLI" -j link show ta-c | jq -r '.[0].address')
ip -n "$CLI" neigh replace 198.18.0.1 lladdr "$mac_s" dev ta-c nud permanent
ip -n "$SRV" neigh replace 198.18.0.2 lladdr "$mac_c" dev ta-s nud permanent
ip -n "$SRV" route add 198.18.128.0/17 via 198.18.0.2

wrj() { in_ns "$SRV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
g() { wrj stats | jq -r ".global.$1"; }
state() { wrj status | jq -r '.tcp_state_auto'; }
# wait_for WHAT N CMD...: poll CMD every 0.2 s, at most N times (a bound, not a timing check).
wait_for() {
	local n=$2 i
	shift 2
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
flood() {
	in_ns "$CLI" "$SLGEN" --dst 198.18.0.1 --dport 9 --proto tcp-ack \
		--spoof-prefix 198.18.128.0/17 --rate "$FLOOD" --duration "$1" >"$TMP/gen.out" 2>&1
}

cat >"$TMP/weir.yaml" <<'EOF'
interfaces:
  - { name: ta-s, mode: native }
rules:
  - { name: tcp, proto: tcp, tcp-state: auto }
metrics: { listen: "127.0.0.1:9464" }
tcp-state: { on: 1000, off: 100, hold: 2s }
EOF

begin_case tcpauto-config-checked
printf 'rules: []\ntcp-state: { on: 100, off: 100 }\n' >"$TMP/bad.yaml"
out=$(in_ns "$SRV" "$WEIR" --bpffs "$ROOT" check "$TMP/bad.yaml" 2>&1) &&
	fail "off = on accepted"
grep -q "tcp-state needs off < on" <<<"$out" || fail "no clear error: $out"
printf 'rules: []\ntcp-state: { on: 0 }\n' >"$TMP/bad.yaml"
in_ns "$SRV" "$WEIR" --bpffs "$ROOT" check "$TMP/bad.yaml" >/dev/null 2>&1 && fail "on: 0 accepted"
end_case tcpauto-config-checked

if ! start_daemon "$SRV" "$ROOT" "$TMP/weir.yaml" "$TMP/daemon.log"; then
	not_ok tcpauto-setup "the daemon did not start: $(tail -3 "$TMP/daemon.log")"
	exit 1
fi

begin_case tcpauto-off-while-quiet
[ "$(state)" = off ] || fail "status says $(state) before any flood"
in_ns "$SRV" curl -s http://127.0.0.1:9464/metrics >"$TMP/m0"
grep -q '^weir_tcp_state_on 0$' "$TMP/m0" || fail "metrics: $(grep tcp_state_on "$TMP/m0")"
# The rule's words as listed.
line=$(in_ns "$SRV" "$WEIR" --bpffs "$ROOT" rule list | grep '^tcp ')
[ "$line" = "tcp proto tcp action drop tcp-state auto" ] || fail "rule list: \"$line\""
end_case tcpauto-off-while-quiet

begin_case tcpauto-switches-on-under-flood
oos0=$(g out_of_state)
flood 6 &
gen=$!
wait_for on 60 bash -c "grep -q 'tcp-state auto: on' '$TMP/daemon.log'" ||
	fail "no 'on' line while flooding: $(tail -3 "$TMP/daemon.log")"
[ "$(state)" = "on (checking segments)" ] || fail "status says $(state) under the flood"
in_ns "$SRV" curl -s http://127.0.0.1:9464/metrics >"$TMP/m1"
grep -q '^weir_tcp_state_on 1$' "$TMP/m1" || fail "metrics: $(grep tcp_state_on "$TMP/m1")"
wait "$gen"
oos=$(( $(g out_of_state) - oos0 ))
# Switched on within a few seconds of a 6 s flood: most of it is dropped.
[ "$oos" -ge $((FLOOD * 2)) ] || fail "out_of_state grew by $oos only"
echo "# tcpauto flood_pps=$FLOOD seconds=6 dropped_out_of_state=$oos"
end_case tcpauto-switches-on-under-flood

begin_case tcpauto-switches-off-when-quiet
wait_for off 150 bash -c "grep -q 'tcp-state auto: off' '$TMP/daemon.log'" ||
	fail "no 'off' line after the flood: $(tail -3 "$TMP/daemon.log")"
[ "$(state)" = off ] || fail "status says $(state) after the flood"
# Off again: an ACK of no connection reaches the kernel, which answers it.
oos0=$(g out_of_state)
in_ns "$CLI" "$SLGEN" --dst 198.18.0.1 --dport 9 --proto tcp-ack \
	--spoof-prefix 198.18.128.0/17 --rate 100 --count 50 --duration 2 >/dev/null 2>&1
[ "$(g out_of_state)" = "$oos0" ] || fail "segments dropped while off"
end_case tcpauto-switches-off-when-quiet

begin_case tcpauto-off-without-auto-rule
# The check on by hand, then the rule made `tcp-state on`: no auto rule is left.
flood 4 &
gen=$!
wait_for on 60 bash -c "[ \"\$(grep -c 'tcp-state auto: on' '$TMP/daemon.log')\" -ge 2 ]" ||
	fail "no second 'on' line"
wait "$gen"
{ in_ns "$SRV" "$WEIR" --bpffs "$ROOT" rule del tcp &&
  in_ns "$SRV" "$WEIR" --bpffs "$ROOT" rule add tcp proto tcp tcp-state on; } >"$TMP/upd" 2>&1 ||
	fail "rule del/add: $(cat "$TMP/upd")"
wait_for gone 50 bash -c "grep -q 'no tcp-state auto rule is left' '$TMP/daemon.log'" ||
	fail "not switched off when the auto rule went"
[ "$(state)" = off ] || fail "status says $(state)"
end_case tcpauto-off-without-auto-rule
