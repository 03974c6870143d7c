#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Connection limits end to end: weir attached by its CLI in front of a
# real TCP server (tools/wrserve) in one namespace, clients (tools/wrconn,
# one process per held connection, each from a chosen source address and
# port) in another. weir's own connection counter, the sock_ops program
# the load attached to the cgroup v2 root, counts the server's established
# connections; XDP drops a SYN from a source at its cap.
#
# Cases: a source's first N connections succeed and the next one fails
# (its SYNs dropped and counted); closing one (FIN) frees its slot; a client
# that vanishes without FIN or RST is dropped by the server's keepalive
# (1 s idle, 2 probes 1 s apart), which uncounts it, so its source can
# connect again; a second source is unaffected throughout; IPv6 alike; and
# a dual-stack listener on "::" enforces the cap on IPv4 clients too.
#
# Waits are bounded polls of weir's pinned wr_conns; assertions are on
# counts and outcomes, never on how long something took.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'stop_all; cleanup; rm -rf "$TMP"' EXIT
require_root conns

PORT=8080	# the server under a cap of 3 per source
DPORT=8081	# a dual-stack server under a cap of 2 per source
CAP=3
A=198.18.0.2 B=198.18.0.3 A6=2001:db8::2 B6=2001:db8::3
# Source ports of the clients whose packets the tests black-hole.
VICTIM_PORT=40101

PIDS=()		# every wrserve and wrconn started, stopped on exit
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok conns-setup "no namespaces"; exit 1; }
ROOT=$(new_root conns)
if ! ip link add cn-s netns "$SND" type veth peer name cn-r netns "$RCV"; then
	not_ok conns-setup "cannot create veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/16 dev cn-r
ip -n "$RCV" addr add 2001:db8::1/64 dev cn-r nodad
for a in $A $B; do ip -n "$SND" addr add $a/16 dev cn-s; done
for a in $A6 $B6; do ip -n "$SND" addr add $a/64 dev cn-s nodad; done
ip -n "$RCV" link set cn-r up
ip -n "$SND" link set cn-s up
mac_r=$(ip -n "$RCV" -j link show cn-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show cn-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev cn-s nud permanent
ip -n "$SND" neigh replace 2001:db8::1 lladdr "$mac_r" dev cn-s nud permanent
for a in $A $B $A6 $B6; do
	ip -n "$RCV" neigh replace $a lladdr "$mac_s" dev cn-r nud permanent
done

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# until_true SECS CMD...: CMD every 0.1 s until it succeeds, for at most SECS.
until_true() {
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# The four 32-bit words of weir_key.addr for ADDR, as bpftool prints them:
# the address's network-order bytes read as little-endian words.
addr_words() {
	local a=$1 g=() w=() i head tail
	if [[ $a != *:* ]]; then
		IFS=. read -r i0 i1 i2 i3 <<<"$a"
		echo "[$((i0 + i1 * 256 + i2 * 65536 + i3 * 16777216)),0,0,0]"
		return
	fi
	head=${a%%::*} tail=
	[[ $a == *::* ]] && tail=${a#*::}
	IFS=: read -r -a hg <<<"$head"
	IFS=: read -r -a tg <<<"$tail"
	g=("${hg[@]}")
	for ((i = ${#hg[@]} + ${#tg[@]}; i < 8; i++)); do g+=(0); done
	g+=("${tg[@]}")
	for i in 0 2 4 6; do
		local x=$((16#${g[i]})) y=$((16#${g[i + 1]}))
		w+=($(((x >> 8) + (x & 255) * 256 + (y >> 8) * 65536 + (y & 255) * 16777216)))
	done
	echo "[${w[0]},${w[1]},${w[2]},${w[3]}]"
}

uid_of() { wrj rule list | jq -r --arg n "$1" '.rules[] | select(.name == $n) | .uid'; }
# conns_of RULE ADDR: the established connections weir counts for ADDR under RULE.
conns_of() {
	bpftool -j map dump pinned "$ROOT/wr_conns" 2>/dev/null |
		jq --argjson u "$(uid_of "$1")" --argjson w "$(addr_words "$2")" \
			'[.[] | .formatted | select(.key.uid == $u and .key.addr == $w) |
			  .value.count] | add // 0'
}
conns_are() { [ "$(conns_of "$1" "$2")" = "$3" ]; }
# Every wr_conns entry, for messages.
conns_dump() {
	bpftool -j map dump pinned "$ROOT/wr_conns" 2>/dev/null |
		jq -c '[.[] | .formatted | {f: .key.family, p: .key.plen, a: .key.addr,
			n: .value.count}]'
}
dropped() { wrj stats | jq --arg n "$1" '.rules[] | select(.name == $n) | .dropped_packets'; }

# serve NAME ADDR PORT: wrserve in RCV until the suite ends (bounded: 300 s);
# SERVER[NAME] is its pid, $TMP/serve-NAME.out what it says when stopped.
declare -A SERVER
serve() {
	local ready=$TMP/ready-$1
	ip netns exec "$RCV" "$BUILD/wrserve" --listen "$2" --port "$3" --duration 300 \
		--ready-file "$ready" >"$TMP/serve-$1.out" 2>&1 &
	SERVER[$1]=$!
	PIDS+=($!)
	until_true 5 test -e "$ready"
}

# conn NAME SRC [PORT [SPORT]]: one held connection from SRC (wrconn in SND,
# for at most 300 s). Sets RESULT to wrconn's first line ("connected ..."
# or "failed: ..."), waiting for it at most 6 s, and CPID[NAME] to its pid.
declare -A CPID
RESULT=
conn() {
	local name=$1 src=$2 port=${3:-$PORT} sport=${4:-} dst out=$TMP/conn-$1.out
	dst=$([[ $src == *:* ]] && echo 2001:db8::1 || echo 198.18.0.1)
	nsenter --net="/run/netns/$SND" "$BUILD/wrconn" --src "$src" ${sport:+--sport "$sport"} \
		--dst "$dst" --port "$port" --timeout 2 --hold 300 >"$out" 2>&1 &
	CPID[$name]=$!
	PIDS+=($!)
	until_true 6 test -s "$out"
	RESULT=$(head -n1 "$out")
}
# expect_conn NAME SRC [PORT [SPORT]]: it must connect; refused_conn: it must not.
expect_conn() {
	conn "$@"
	[[ $RESULT == connected* ]] || fail "$1 from $2: ${RESULT:-no answer}"
}
refused_conn() {
	conn "$@"
	[[ $RESULT == "failed: timed out" ]] || fail "$1 from $2 over the cap: ${RESULT:-no answer}"
}
# end_conn NAME [SIG]: stop a client (TERM: it closes, sending FIN) and reap it.
end_conn() {
	kill -"${2:-TERM}" "${CPID[$1]}" 2>/dev/null
	wait "${CPID[$1]}" 2>/dev/null
}
alive() { kill -0 "${CPID[$1]}" 2>/dev/null; }

if ! out=$(wr attach cn-r mode native 2>&1); then
	not_ok conns-attach "$out"
	exit 1
fi
wr rule add web proto tcp dport $PORT conns $CAP per src src6/128 >/dev/null ||
	{ not_ok conns-rule "rule add web failed"; exit 1; }
[ -e "$ROOT/cgroup_sockops" ] || { not_ok conns-attach "no pinned cgroup_sockops link"; exit 1; }
serve v4 198.18.0.1 $PORT && serve v6 2001:db8::1 $PORT ||
	{ not_ok conns-setup "wrserve did not start"; exit 1; }

# N connections from A succeed, the N+1th times out with its SYNs dropped.
begin_case
for i in $(seq $CAP); do expect_conn a$i $A; done
until_true 5 conns_are web $A $CAP || fail "A counted $(conns_of web $A), want $CAP: $(conns_dump)"
before=$(dropped web)
refused_conn a-over $A
after=$(dropped web)
[ "$after" -gt "$before" ] || fail "no SYN dropped for the refused connection ($before -> $after)"
echo "# SYNs dropped for one refused connect (2 s): $((after - before))"
[ "$(conns_of web $A)" = $CAP ] || fail "A counted $(conns_of web $A) after a refusal"
# B is a source of its own.
expect_conn b1 $B
until_true 5 conns_are web $B 1 || fail "B counted $(conns_of web $B), want 1"
# top lists A at its cap, and not B.
top=$(wrj top)
echo "$top" | jq -e --arg s "$A/32" --argjson n $CAP '.connections[] |
	select(.source == $s and .rule == "web" and .connections == $n and .cap == $n)' \
	>/dev/null || fail "top does not show A at its cap: $top"
echo "$top" | jq -e --arg s "$B/32" '.connections[] | select(.source == $s)' >/dev/null &&
	fail "top shows B, below its cap: $top"
end_case conns-cap-per-source

# Closing one (FIN) frees its slot.
begin_case
end_conn a1
until_true 5 conns_are web $A $((CAP - 1)) ||
	fail "A counted $(conns_of web $A) after a close, want $((CAP - 1))"
expect_conn a4 $A
until_true 5 conns_are web $A $CAP || fail "A counted $(conns_of web $A), want $CAP"
refused_conn a-over2 $A
end_case conns-close-frees-slot

# A client that vanishes without FIN or RST: its packets are black-holed in
# its own namespace (by source port, so A's other connections carry on),
# then it is killed. The server hears nothing; its keepalive gives up on the
# connection, the kernel closes the socket, sock_ops uncounts it.
begin_case
end_conn a2
until_true 5 conns_are web $A $((CAP - 1)) || fail "A counted $(conns_of web $A) after a close"
expect_conn victim $A $PORT $VICTIM_PORT
until_true 5 conns_are web $A $CAP || fail "A counted $(conns_of web $A) with the victim"
ip -n "$SND" route add blackhole default table 4242
ip -n "$SND" rule add from $A sport $VICTIM_PORT lookup 4242 priority 100
end_conn victim 9
sleep 0.3
# No FIN reached the server: still counted.
[ "$(conns_of web $A)" = $CAP ] || fail "the killed client was uncounted at once: not silent"
refused_conn a-while-dead $A
if until_true 20 conns_are web $A $((CAP - 1)); then
	expect_conn a5 $A
	until_true 5 conns_are web $A $CAP || fail "A counted $(conns_of web $A) after expiry"
else
	fail "the vanished client is still counted: $(conns_dump)"
fi
# Only the victim's connection went: the others are still held.
for n in a3 a4; do alive $n || fail "client $n lost its connection: $(cat "$TMP/conn-$n.out")"; done
ip -n "$SND" rule del from $A sport $VICTIM_PORT lookup 4242 priority 100
end_case conns-vanished-client-expires

# B, all along: its connection held, its own cap.
begin_case
alive b1 || fail "B's first connection was lost: $(cat "$TMP/conn-b1.out")"
for i in $(seq 2 $CAP); do expect_conn b$i $B; done
refused_conn b-over $B
[ "$(conns_of web $B)" = $CAP ] || fail "B counted $(conns_of web $B)"
end_case conns-second-source-unaffected

# IPv6: the same cap per /128.
begin_case
for i in $(seq $CAP); do expect_conn a6-$i $A6; done
until_true 5 conns_are web $A6 $CAP || fail "A6 counted $(conns_of web $A6): $(conns_dump)"
refused_conn a6-over $A6
expect_conn b6 $B6
end_case conns-ipv6

# A dual-stack listener: IPv4 clients reach it as ::ffff:a.b.c.d sockets.
begin_case
wr rule add dual proto tcp dport $DPORT conns 2 per src >/dev/null || fail "rule add dual"
if serve dual :: $DPORT; then
	expect_conn d1 $B $DPORT
	expect_conn d2 $B $DPORT
	refused_conn d-over $B $DPORT
	[ -n "$CASE_FAILED" ] && echo "# wr_conns: $(conns_dump)"
else
	fail "wrserve on :: did not start"
fi
end_case conns-dual-stack-listener

# The server's side of the vanished client: keepalive timed it out (an
# error, not a close by the peer), and every other connection was closed by
# its client or is still open.
begin_case
kill -TERM "${SERVER[v4]}" && wait "${SERVER[v4]}"
out=$(cat "$TMP/serve-v4.out")
echo "# wrserve: $out"
[[ $out == *"by error 1 (first error: Connection timed out)"* ]] ||
	fail "the server did not time the vanished client out: $out"
end_case conns-server-timed-out-vanished-client
