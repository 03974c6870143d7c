#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `weir capture`: samples of judged packets through the real data path.
# Two namespaces joined by veth, weir attached on the receiving side, a
# UDP flood (tools/wrgen) against a rule that drops most of it and light
# traffic that another rule passes. What capture writes is read back with
# the real tcpdump (-r): counts, addresses and ports, and that the verdict
# and rule filters held. Then the rate budget (a count bound, never a
# duration), the switch after exit and after SIGKILL (the lease), TC mode,
# IPv6, and bad arguments.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root capture

SLGEN=$BUILD/wrgen
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
# Ports nobody else's tests use.
FLOOD_PORT=47311
OTHER_PORT=47312
# Every wait below is bounded: a capture that does not end by then is a failure.
CAP_TIMEOUT=30

if ! command -v tcpdump >/dev/null; then
	not_ok capture-setup "tcpdump is not installed (make test-deps installs it)"
	exit 1
fi

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok capture-setup "no namespaces"; exit 1; }
ROOT=$(new_root capture)
DEV_S="${TAG}s" DEV_R="${TAG}r"
if ! ip link add "$DEV_S" netns "$SND" type veth peer name "$DEV_R" netns "$RCV"; then
	not_ok capture-setup "cannot create veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/24 dev "$DEV_R"
ip -n "$RCV" addr add 2001:db8:c::1/64 dev "$DEV_R" nodad
ip -n "$SND" addr add 198.18.0.2/24 dev "$DEV_S"
ip -n "$SND" addr add 198.18.0.3/24 dev "$DEV_S"
ip -n "$SND" addr add 2001:db8:c::2/64 dev "$DEV_S" nodad
ip -n "$RCV" link set "$DEV_R" up
ip -n "$SND" link set "$DEV_S" up
mac_r=$(ip -n "$RCV" -j link show "$DEV_R" | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show "$DEV_S" | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev "$DEV_S" nud permanent
ip -n "$SND" neigh replace 2001:db8:c::1 lladdr "$mac_r" dev "$DEV_S" nud permanent
for a in 198.18.0.2 198.18.0.3 2001:db8:c::2; do
	ip -n "$RCV" neigh replace $a lladdr "$mac_s" dev "$DEV_R" nud permanent
done

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
switch_on() { wrj status | jq -r '.capture.switch'; }

# flood SECS [RATE]: 198.18.0.2 floods the flood rule's port, 198.18.0.3
# sends 100 pps to the port the other rule passes, in the background
# (FLOOD_PIDS). Bounded by their duration.
FLOOD_PIDS=()
flood() {
	local secs=$1 rate=${2:-3000}
	in_ns "$SND" "$SLGEN" --dst 198.18.0.1 --dport $FLOOD_PORT --src 198.18.0.2 \
		--rate "$rate" --duration "$secs" >/dev/null 2>&1 &
	FLOOD_PIDS+=($!)
	in_ns "$SND" "$SLGEN" --dst 198.18.0.1 --dport $OTHER_PORT --src 198.18.0.3 \
		--rate 100 --duration "$secs" >/dev/null 2>&1 &
	FLOOD_PIDS+=($!)
}
flood_wait() { wait "${FLOOD_PIDS[@]}" 2>/dev/null; FLOOD_PIDS=(); }

# cap_bg OUT ARGS...: `weir capture ARGS` in the background, stdout into
# OUT, stderr into OUT.err; its pid in CPID (nsenter execs weir). Waits
# (bounded) until the switch is on.
cap_bg() {
	local out=$1 i; shift
	nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" "$@" >"$out" 2>"$out.err" &
	CPID=$!
	for i in $(seq 200); do
		[ "$(switch_on)" = true ] && return 0
		kill -0 "$CPID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# cap_wait: the background capture's exit status, killing it (a failure)
# if it runs past CAP_TIMEOUT.
cap_wait() {
	local i
	for i in $(seq $((CAP_TIMEOUT * 20))); do
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$CPID" 2>/dev/null; then
		kill -9 "$CPID"
		wait "$CPID" 2>/dev/null
		return 124
	fi
	wait "$CPID"
}
# tcpdump's reading of a pcap file, one line per packet.
readpcap() { tcpdump -nn -r "$1" "${@:2}" 2>/dev/null; }

if ! wr attach "$DEV_R" >/dev/null 2>"$TMP/err" ||
	! wr rule add flood proto udp dport $FLOOD_PORT limit 10pps burst 10 >/dev/null 2>>"$TMP/err" ||
	! wr rule add other proto udp dport $OTHER_PORT limit 10kpps >/dev/null 2>>"$TMP/err"; then
	not_ok capture-setup "$(cat "$TMP/err")"
	exit 1
fi

# ---- bad arguments: exit 1, nothing changed ----
begin_case
for args in "count 0" "count x" "count" "count 1000000001" "rate 0" "rate 0/s" \
	"rate 100001/s" "rate 10/min" "rate 5pps" "snaplen 0" "snaplen 2049" "snaplen 64k" \
	"bogus" "rule" "rule nosuch" "rule bad/name" "dropped passed" "all all" \
	"count 5 count 6" "-w" "-w /nonexistent-dir-$TAG/x.pcap"; do
	# shellcheck disable=SC2086
	expect_fail "capture $args" wr capture $args
done
[ "$(switch_on)" = false ] || fail "the switch is on after refused captures"
out=$(wr capture rule nosuch 2>&1)
grep -q 'no rule named "nosuch"' <<<"$out" || fail "unknown rule not named: $out"
out=$(wr capture rate 100001/s 2>&1)
grep -q 'invalid rate "100001/s"' <<<"$out" || fail "bad rate not named: $out"
out=$(wrj capture bogus 2>/dev/null)
jq -e '.error' <<<"$out" >/dev/null 2>&1 || fail "-j error not JSON: $out"
expect_fail "capture without weir loaded" \
	in_ns "$RCV" "$WEIR" --bpffs "/sys/fs/bpf/$TAG-none" capture count 1
rm -rf "/sys/fs/bpf/$TAG-none"
wr capture help | grep -q 'Usage: weir capture' || fail "capture help"
# A kernel without bpf_xdp_load_bytes (before 5.18) cannot copy at XDP: refused by name.
out=$(WEIR_FEATURES_OFF=xdp_frags wr capture count 1 2>&1)
[ $? -eq 1 ] && grep -q 'bpf_xdp_load_bytes.*5.18.*mode tc' <<<"$out" ||
	fail "XDP capture without bpf_xdp_load_bytes: $out"
end_case capture-bad-args

# ---- dropped packets to pcap, read back by tcpdump ----
begin_case
if cap_bg "$TMP/c1.out" capture dropped count 50 -w "$TMP/drop.pcap"; then
	flood 3
	cap_wait
	rc=$?
	flood_wait
	[ "$rc" -eq 0 ] || fail "capture exited $rc: $(cat "$TMP/c1.out.err")"
	n=$(readpcap "$TMP/drop.pcap" | wc -l)
	[ "$n" -eq 50 ] || fail "tcpdump read $n packets, want 50"
	m=$(readpcap "$TMP/drop.pcap" "src host 198.18.0.2 and dst host 198.18.0.1 and udp dst port $FLOOD_PORT" | wc -l)
	[ "$m" -eq 50 ] || fail "$m of 50 are the flood (198.18.0.2 > 198.18.0.1.$FLOOD_PORT)"
	o=$(readpcap "$TMP/drop.pcap" "udp port $OTHER_PORT" | wc -l)
	[ "$o" -eq 0 ] || fail "$o passed packets in a dropped capture"
	readpcap "$TMP/drop.pcap" | head -1 | grep -q "198.18.0.2.[0-9]* > 198.18.0.1.$FLOOD_PORT: UDP" ||
		fail "tcpdump's line: $(readpcap "$TMP/drop.pcap" | head -1)"
	grep -q '^50 packets captured' "$TMP/c1.out.err" || fail "summary: $(cat "$TMP/c1.out.err")"
else
	fail "capture did not start: $(cat "$TMP/c1.out.err")"
fi
[ "$(switch_on)" = false ] || fail "the switch is on after the capture ended"
end_case capture-dropped-pcap

# ---- passed packets of one rule: nothing of the flood's drops ----
begin_case
if cap_bg "$TMP/c2.out" capture passed rule other count 30 -w "$TMP/pass.pcap"; then
	flood 3
	cap_wait
	rc=$?
	flood_wait
	[ "$rc" -eq 0 ] || fail "capture exited $rc: $(cat "$TMP/c2.out.err")"
	n=$(readpcap "$TMP/pass.pcap" | wc -l)
	m=$(readpcap "$TMP/pass.pcap" "src host 198.18.0.3 and udp dst port $OTHER_PORT" | wc -l)
	[ "$n" -eq 30 ] && [ "$m" -eq 30 ] || fail "$m of $n (want 30 of 30) are the other rule's"
else
	fail "capture did not start: $(cat "$TMP/c2.out.err")"
fi
[ "$(switch_on)" = false ] || fail "the switch is on after the capture ended"
end_case capture-passed-rule-filter

# ---- text and JSON lines ----
begin_case
if cap_bg "$TMP/c3.out" capture rule flood count 5; then
	flood 2
	cap_wait || fail "text capture failed: $(cat "$TMP/c3.out.err")"
	flood_wait
	n=$(grep -c "dropped by flood: 198.18.0.2.[0-9]* > 198.18.0.1.$FLOOD_PORT udp, length" "$TMP/c3.out")
	[ "$n" -eq 5 ] || fail "$n of 5 text lines as expected: $(head -2 "$TMP/c3.out")"
else
	fail "capture did not start: $(cat "$TMP/c3.out.err")"
fi
if cap_bg "$TMP/c4.out" -j capture all count 20; then
	flood 2
	cap_wait || fail "JSON capture failed: $(cat "$TMP/c4.out.err")"
	flood_wait
	n=$(jq -s '[.[] | select(.verdict)] | length' "$TMP/c4.out")
	[ "$n" = 20 ] || fail "$n JSON records, want 20"
	# Dropped: the flood over its rule. Passed: the other rule's, or the
	# flood rule's burst.
	bad=$(jq -s '[.[] | select(.verdict) | select((.reason == "rule" and .src == "198.18.0.2" and
		.rule == "flood" and .dport == '$FLOOD_PORT' and .proto == "udp") or
		(.verdict == "passed" and .rule == "other" and .src == "198.18.0.3" and
		.dport == '$OTHER_PORT') | not)] | length' "$TMP/c4.out")
	d=$(jq -s '[.[] | select(.verdict == "dropped")] | length' "$TMP/c4.out")
	[ "$d" -gt 0 ] || fail "no dropped packet in an 'all' capture"
	jq -se '.[0].time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z$")' \
		"$TMP/c4.out" >/dev/null || fail "JSON time: $(head -1 "$TMP/c4.out")"
	[ "$bad" = 0 ] || fail "$bad JSON records not as expected: $(head -1 "$TMP/c4.out")"
	jq -se '.[-1].summary.captured == 20' "$TMP/c4.out" >/dev/null ||
		fail "JSON summary: $(tail -1 "$TMP/c4.out")"
else
	fail "capture did not start: $(cat "$TMP/c4.out.err")"
fi
end_case capture-lines

# ---- the budget: captured <= rate x (whole seconds touched) ----
# A flood of 3000 pps dropped for 4 s against a budget of 40/s. The data
# path counts per second of its clock, so a run of E seconds touches at
# most ceil(E) + 1 of them. At least one full second's budget must arrive,
# and the flood must have been refused by the budget (lost_budget > 0).
begin_case
BUDGET=40
if cap_bg "$TMP/c5.out" -j capture dropped rate $BUDGET/s; then
	t0=$(date +%s.%N)
	flood 4
	flood_wait
	kill -INT "$CPID"
	cap_wait || fail "capture ended badly: $(cat "$TMP/c5.out.err")"
	t1=$(date +%s.%N)
	n=$(jq -s '[.[] | select(.verdict)] | length' "$TMP/c5.out")
	max=$(awk -v a="$t0" -v b="$t1" -v r=$BUDGET \
		'BEGIN { e = b - a; c = int(e); if (c < e) c++; print r * (c + 1) }')
	[ "$n" -le "$max" ] || fail "captured $n, more than $max (budget $BUDGET/s)"
	[ "$n" -ge $BUDGET ] || fail "captured $n, less than one second's budget"
	lost=$(jq -s '.[-1].summary.lost_budget' "$TMP/c5.out")
	[ "${lost:-0}" -gt 0 ] 2>/dev/null || fail "nothing lost to the budget: $(tail -1 "$TMP/c5.out")"
	echo "# budget $BUDGET/s: captured $n (bound $max), lost to the budget $lost"
else
	fail "capture did not start: $(cat "$TMP/c5.out.err")"
fi
[ "$(switch_on)" = false ] || fail "the switch is on after SIGINT"
end_case capture-budget

# ---- one capture at a time; SIGKILL: the lease ends it ----
begin_case
if cap_bg "$TMP/c6.out" capture dropped; then
	expect_fail "a second capture" wr capture count 1
	grep -q "already running (pid $CPID)" <<<"$(wr capture count 1 2>&1)" ||
		fail "the second capture does not name the first"
	[ "$(wrj status | jq -r '.capture.running')" = true ] || fail "status: not running"
	kill -9 "$CPID"
	wait "$CPID" 2>/dev/null
	[ "$(switch_on)" = true ] || fail "the switch went off without the lease running out"
	# Past the lease (3 s): a packet the data path judges clears the switch.
	sleep 4
	in_ns "$SND" "$SLGEN" --dst 198.18.0.1 --dport $FLOOD_PORT --src 198.18.0.2 \
		--rate 100 --duration 0.2 >/dev/null 2>&1
	[ "$(switch_on)" = false ] || fail "the switch is still on past the lease"
	[ "$(wrj status | jq -r '.capture.running')" = false ] || fail "status: still running"
	# And the next capture runs as usual.
	if cap_bg "$TMP/c7.out" capture count 5 -w "$TMP/after.pcap"; then
		flood 2
		cap_wait || fail "capture after SIGKILL failed: $(cat "$TMP/c7.out.err")"
		flood_wait
		n=$(readpcap "$TMP/after.pcap" | wc -l)
		[ "$n" -eq 5 ] || fail "after SIGKILL: $n packets, want 5"
	else
		fail "capture after SIGKILL did not start: $(cat "$TMP/c7.out.err")"
	fi
else
	fail "capture did not start: $(cat "$TMP/c6.out.err")"
fi
[ "$(switch_on)" = false ] || fail "the switch is on at the end"
end_case capture-one-at-a-time-and-lease

# ---- TC mode, IPv6, -w - into tcpdump ----
begin_case
wr detach "$DEV_R" >/dev/null
if wr attach "$DEV_R" mode tc >/dev/null 2>"$TMP/err"; then
	# The IPv6 flood's own rule, the only one its packets match.
	wr rule del flood >/dev/null
	wr rule add flood6 family ipv6 proto udp dport $FLOOD_PORT limit 10pps burst 10 \
		>/dev/null 2>"$TMP/err" || fail "rule add: $(cat "$TMP/err")"
	timeout -s INT $CAP_TIMEOUT nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" \
		capture rule flood6 count 10 snaplen 96 -w - 2>"$TMP/c8.err" |
		tcpdump -nn -r - 2>/dev/null >"$TMP/c8.txt" &
	PIPE_PID=$!
	for _ in $(seq 200); do [ "$(switch_on)" = true ] && break; sleep 0.05; done
	in_ns "$SND" "$SLGEN" --dst 2001:db8:c::1 --dport $FLOOD_PORT --src 2001:db8:c::2 \
		--rate 2000 --duration 2 >/dev/null 2>&1
	for _ in $(seq $((CAP_TIMEOUT * 20))); do kill -0 $PIPE_PID 2>/dev/null || break; sleep 0.05; done
	kill -0 $PIPE_PID 2>/dev/null && { kill $PIPE_PID; fail "capture in tc mode did not end"; }
	wait $PIPE_PID 2>/dev/null
	n=$(grep -c "IP6 2001:db8:c::2.[0-9]* > 2001:db8:c::1.$FLOOD_PORT: UDP" "$TMP/c8.txt")
	[ "$n" -eq 10 ] || fail "tc mode, IPv6: $n of 10 lines: $(head -2 "$TMP/c8.txt") $(cat "$TMP/c8.err")"
else
	fail "attach mode tc: $(cat "$TMP/err")"
fi
[ "$(switch_on)" = false ] || fail "the switch is on at the end"
end_case capture-tc-ipv6-pipe
