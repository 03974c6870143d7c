#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The reflection preset end to end (docs/reflection.md): a server namespace
# runs a real DNS server (dnsmasq) and a real NTP server (chronyd, serving
# on the veth addresses and never touching the clock: -x; unpacked from
# Debian's chrony into $BUILD/deps/bin, not installed); the protected
# namespace has weir attached (native XDP, then tc) with
# `rule add refl preset reflection` and a real client querying both (dig,
# chronyd -Q), while tools/wrgen floods it from the server namespace with
# spoofed UDP from random sources of 198.19.0.0/16 and 2001:db8:ff::/48,
# source ports 53 and 123 (a reflection flood as the victim sees it),
# bounded in count, to a real receiver (tools/wrsink).
#
# Asserted, in each mode: every query answered (the replies are UDP from
# ports 53 and 123, which the preset lets through because the egress
# program saw the host ask); none of the flood delivered (the receiver got
# 0, and the rule's dropped count is every packet the generators sent); a
# reply forged from the DNS server's own address to a port the host never
# used is dropped. Before the rule, the same kind of flood reaches the
# receiver whole: the counting works.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root reflect

SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
FPORT=7000		# where the flood is aimed (the sink's port)
FRATE=4000		# flood packets per second, per generator
FSECS=3			# seconds each generator floods: 12000 packets each
NDIG=20			# DNS queries per address family and mode
NNTP=4			# NTP exchanges (chronyd -Q) per address family and mode

# chronyd is unpacked into $BUILD/deps/bin by make test-deps, not installed (Makefile).
PATH=$PWD/$BUILD/deps/bin:$PATH:/usr/sbin
for b in dnsmasq chronyd dig; do
	if ! command -v $b >/dev/null; then
		skip reflect "needs $b (make test-deps: dnsmasq-base, bind9-dnsutils; chronyd unpacked)"
		exit 0
	fi
done

SRV=$(new_netns rsrv) && HOST=$(new_netns rhost) || { not_ok reflect-setup "no namespaces"; exit 1; }
ROOT=$(new_root reflect)
if ! ip link add rf-s netns "$SRV" type veth peer name rf-h netns "$HOST"; then
	not_ok reflect-setup "cannot create veth"
	exit 1
fi
ip -n "$HOST" addr add 198.18.0.1/16 dev rf-h
ip -n "$HOST" addr add 2001:db8::1/48 dev rf-h nodad
ip -n "$SRV" addr add 198.18.0.2/16 dev rf-s
ip -n "$SRV" addr add 2001:db8::2/48 dev rf-s nodad
ip -n "$HOST" link set rf-h up
ip -n "$SRV" link set rf-s up
mac_h=$(ip -n "$HOST" -j link show rf-h | jq -r '.[0].address')
mac_s=$(ip -n "$SRV" -j link show rf-s | jq -r '.[0].address')
ip -n "$SRV" neigh replace 198.18.0.1 lladdr "$mac_h" dev rf-s nud permanent
ip -n "$SRV" neigh replace 2001:db8::1 lladdr "$mac_h" dev rf-s nud permanent
ip -n "$HOST" neigh replace 198.18.0.2 lladdr "$mac_s" dev rf-h nud permanent
ip -n "$HOST" neigh replace 2001:db8::2 lladdr "$mac_s" dev rf-h nud permanent
# The spoofed sources are routable from the host, so that nothing but weir
# stops the flood (no reverse-path filter, no missing route).
ip -n "$HOST" route add 198.19.0.0/16 dev rf-h
ip -n "$HOST" route add 2001:db8:ff::/48 dev rf-h
in_ns "$HOST" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.rf-h.rp_filter=0

wr() { in_ns "$HOST" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$HOST" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# The servers: dnsmasq answers test.weir with 198.18.9.9; chronyd serves
# time from its own clock (local stratum 8) and controls none (-x).
cat >"$TMP/chrony.conf" <<EOF
allow 198.18.0.0/15
allow 2001:db8::/32
local stratum 8
bindaddress 198.18.0.2
bindaddress 2001:db8::2
port 123
cmdport 0
pidfile $TMP/chronyd.pid
driftfile $TMP/chrony.drift
EOF
nsenter --net="/run/netns/$SRV" chronyd -x -d -u root -f "$TMP/chrony.conf" \
	>"$TMP/chronyd.log" 2>&1 &
DAEMONS+=($!)
nsenter --net="/run/netns/$SRV" dnsmasq --keep-in-foreground --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.0.2 --listen-address=2001:db8::2 \
	--except-interface=lo --address=/test.weir/198.18.9.9 --pid-file="$TMP/dnsmasq.pid" \
	--user=root --log-facility="$TMP/dnsmasq.log" &
DAEMONS+=($!)

# dig_ok SERVER: one query, answered with the right address.
dig_ok() {
	[ "$(in_ns "$HOST" dig @"$1" +tries=1 +time=3 +short test.weir A 2>/dev/null)" = 198.18.9.9 ]
}
# ntp_ok SERVER: one NTP client run (chronyd -Q: measure, set nothing), answered.
ntp_ok() {
	in_ns "$HOST" chronyd -Q -t 6 -u root "server $1 iburst maxsamples 1" \
		"pidfile $TMP/client.pid" 2>&1 | grep -q 'System clock wrong by'
}
# The servers answer before anything else (bounded wait while they start).
up=""
for _ in $(seq 50); do
	dig_ok 198.18.0.2 && ntp_ok 198.18.0.2 && { up=1; break; }
	sleep 0.2
done
if [ -z "$up" ]; then
	not_ok reflect-servers "dnsmasq or chronyd does not answer: $(tail -2 "$TMP"/*.log)"
	exit 1
fi
ok reflect-servers-answer

# sink_start / sink_stop: the flood's receiver in the host; its total in $TMP/sink.json.
sink_start() {
	rm -f "$TMP/ready" "$TMP/sink.json"
	nsenter --net="/run/netns/$HOST" "$SLSINK" --listen :: --port $FPORT --duration 60 \
		--idle 60 --json --ready-file "$TMP/ready" >"$TMP/sink.json" &
	SINK=$!
	for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
}
sink_stop() {
	kill -TERM "$SINK" 2>/dev/null
	wait "$SINK" 2>/dev/null
}
sink_got() { jq '[.sources[]?.packets] | add // 0' "$TMP/sink.json"; }
# flood NAME SPOOF SPORT RATE SECS: one spoofed generator in the server namespace.
flood() {
	local dst=198.18.0.1
	[[ $2 == *:* ]] && dst=2001:db8::1
	nsenter --net="/run/netns/$SRV" "$SLGEN" --dst $dst --dport $FPORT --spoof-prefix "$2" \
		--sport "$3" --rate "$4" --duration "$5" --spin-us 0 --json >"$TMP/gen-$1.json"
}
gen_sent() { jq '.total_sent' "$TMP/gen-$1.json"; }
# Packets the kernel dropped between the generator and weir: the veth's queue
# to its peer full (the sender's tx_dropped, native XDP) or the backlog
# before TC (the receiver's rx_dropped). 0 on a machine that keeps up; a
# slow guest (make test-kernels, TCG) loses some.
lost_before_weir() {
	local tx rx
	tx=$(ip -n "$SRV" -s -j link show rf-s | jq '.[0].stats64.tx.dropped')
	rx=$(ip -n "$HOST" -s -j link show rf-h | jq '.[0].stats64.rx.dropped')
	echo $((tx + rx))
}
# The most packets weir may pass during the flood: the replies to the
# clients' queries (chronyd -Q's iburst: up to 4 exchanges a run) and a
# few of the host's own ICMPv6.
LEGIT_MAX=$((2 * NDIG + 2 * NNTP * 4 + 20))

# The control: without a rule, a spoofed flood from port 123 reaches the receiver whole.
begin_case
if ! out=$(wr attach rf-h mode native 2>&1); then
	not_ok reflect-attach "$out"
	exit 1
fi
sink_start
flood control 198.19.0.0/16 123 1000 0.5
sleep 0.5
sink_stop
sent=$(gen_sent control) got=$(sink_got)
echo "# control: sent $sent spoofed packets from port 123, the receiver got $got"
[ "$sent" -gt 0 ] && [ "$got" -eq "$sent" ] || fail "without a rule the receiver got $got of $sent"
end_case reflect-control-flood-delivered-without-rule
wr detach rf-h >/dev/null

# native XDP, tc through tcx (or clsact where the kernel has no tcx), and tc
# through clsact: the egress program goes on the egress hook alike.
for mode in native tc tc-clsact; do
	begin_case
	wr detach all >/dev/null 2>&1
	if [ $mode = tc-clsact ]; then
		expect_ok "attach $mode" wr attach rf-h mode tc tc-hook clsact
	else
		expect_ok "attach $mode" wr attach rf-h mode $mode
	fi
	egress=$(wrj status | jq -r '.interfaces[0].egress')
	[ "$egress" = tcx ] || [ "$egress" = clsact ] || fail "status: egress $egress"
	[ $mode != tc-clsact ] || [ "$egress" = clsact ] || fail "tc-hook clsact, egress $egress"
	[ "$egress" != clsact ] ||
		in_ns "$HOST" tc filter show dev rf-h egress | grep -q weir_egress ||
		fail "no weir_egress filter on the egress hook"
	expect_ok "rule add" wr rule add refl preset reflection
	list=$(wrj rule list)
	[ "$(jq '[.rules[0].amplifier_ports[].port] | index(53) != null and index(123) != null' \
		<<<"$list")" = true ] || fail "rule list does not expand the preset: $list"
	end_case reflect-$mode-rule

	begin_case
	g0=$(wrj stats | jq -c .global)
	lost0=$(lost_before_weir)
	sink_start
	flood dns4 198.19.0.0/16 53 $FRATE $FSECS &
	f1=$!
	flood ntp4 198.19.0.0/16 123 $FRATE $FSECS &
	f2=$!
	flood dns6 2001:db8:ff::/48 53 $FRATE $FSECS &
	f3=$!
	# The host's own queries while the flood runs (each dig from a new port).
	dns4=0 dns6=0 ntp4=0 ntp6=0
	for i in $(seq $NDIG); do
		dig_ok 198.18.0.2 && dns4=$((dns4 + 1))
		dig_ok 2001:db8::2 && dns6=$((dns6 + 1))
	done
	for i in $(seq $NNTP); do
		ntp_ok 198.18.0.2 && ntp4=$((ntp4 + 1))
		ntp_ok 2001:db8::2 && ntp6=$((ntp6 + 1))
	done
	wait $f1 $f2 $f3
	sleep 0.5
	sink_stop
	echo "# $mode: DNS answered $dns4/$NDIG (IPv4), $dns6/$NDIG (IPv6); NTP $ntp4/$NNTP, $ntp6/$NNTP"
	[ $dns4 -eq $NDIG ] && [ $dns6 -eq $NDIG ] ||
		fail "DNS answered $dns4 and $dns6 of $NDIG under the flood"
	[ $ntp4 -eq $NNTP ] && [ $ntp6 -eq $NNTP ] ||
		fail "NTP answered $ntp4 and $ntp6 of $NNTP under the flood"
	end_case reflect-$mode-every-query-answered

	begin_case
	sent=$(( $(gen_sent dns4) + $(gen_sent ntp4) + $(gen_sent dns6) ))
	got=$(sink_got)
	stats=$(wrj stats)
	lost=$(( $(lost_before_weir) - lost0 ))
	dropped=$(jq '.rules[] | select(.name == "refl") | .dropped_packets' <<<"$stats")
	passed=$(jq '.rules[] | select(.name == "refl") | .passed_packets' <<<"$stats")
	# What weir saw meanwhile: every packet it dropped, and what it passed.
	gdrop=$(jq --argjson a "$g0" '.global.dropped - $a.dropped' <<<"$stats")
	gpass=$(jq --argjson a "$g0" '.global.passed - $a.passed' <<<"$stats")
	gseen=$(jq --argjson a "$g0" '(.global.packets - $a.packets) - (.global.non_ip - $a.non_ip)' \
		<<<"$stats")
	echo "# $mode: flood sent $sent, receiver got $got, weir dropped $dropped (rule passed" \
		"$passed); weir saw $gseen IP packets, passed $gpass (the replies); the kernel" \
		"lost $lost before weir (veth queue full: a slow guest)"
	[ "$sent" -gt 0 ] || fail "the flood sent nothing"
	[ "$got" -eq 0 ] || fail "the receiver got $got of the flood"
	[ "$passed" -eq 0 ] || fail "the rule passed $passed"
	# Every drop was the rule's, and all weir passed were the clients' replies.
	[ "$gdrop" -eq "$dropped" ] || fail "weir dropped $gdrop, the rule $dropped"
	[ "$gpass" -le "$LEGIT_MAX" ] || fail "weir passed $gpass packets, more than $LEGIT_MAX replies"
	[ $((gseen - gpass)) -eq "$dropped" ] || fail "weir saw $gseen, passed $gpass, dropped $dropped"
	# Every packet sent reached weir and was dropped, but what the kernel lost before it.
	[ $((dropped + lost)) -eq "$sent" ] || fail "weir dropped $dropped + lost $lost of $sent"
	end_case reflect-$mode-flood-all-dropped

	# The server's own address and port (raw: dnsmasq holds the port), to a port the
	# host never asked from: dropped.
	begin_case
	before=$dropped
	nsenter --net="/run/netns/$SRV" "$SLGEN" --dst 198.18.0.1 --dport $FPORT \
		--spoof-prefix 198.18.0.2/32 --sport 53 --rate 200 --count 50 --duration 5 --json \
		>"$TMP/gen-forged.json"
	after=$(wrj stats | jq '.rules[] | select(.name == "refl") | .dropped_packets')
	[ $((after - before)) -eq "$(gen_sent forged)" ] ||
		fail "forged replies from the server: dropped $((after - before)) of $(gen_sent forged)"
	flows=$(wrj status | jq '.reflection.flows')
	[ "$flows" -gt 0 ] || fail "status shows no recorded flows"
	end_case reflect-$mode-forged-reply-dropped
	wr rule del refl >/dev/null
	# Detach takes the egress side with it: no pin, no filter, no qdisc of weir's.
	begin_case
	expect_ok "detach" wr detach rf-h
	ls "$ROOT" | grep -qE '^(egr|tce)_' && fail "egress pins left: $(ls "$ROOT")"
	[ -z "$(in_ns "$HOST" tc filter show dev rf-h egress)" ] ||
		fail "a filter left on egress: $(in_ns "$HOST" tc filter show dev rf-h egress)"
	in_ns "$HOST" tc qdisc show dev rf-h | grep -q clsact &&
		fail "weir's clsact qdisc left: $(in_ns "$HOST" tc qdisc show dev rf-h)"
	end_case reflect-$mode-detach-removes-egress
done
