#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# End to end: `tcp-state on` against real spoofed floods through veth.
# A server namespace SRV (python3's http.server on PORT, serving a file of
# BLOB_MB MiB, weir attached to its veth by the CLI) and a client namespace
# CLI (an http.server of its own on CPORT, for SRV as a client), joined by
# veth. The client side runs an XDP_PASS program, as in tests/cookie.sh.
#
# SRV routes the spoofed prefixes (198.18.128.0/17, 2001:db8:8000::/33) back
# through the client's address, so any reset its kernel sends to a spoofed
# source leaves on the veth, where tcpdump in CLI counts it: without the
# routes a reset would die waiting for ARP or ND and the count could not
# fail. The kernel's own TcpOutRsts is printed beside it.
#
# For each mode (native XDP, tc), weir attached to SRV's veth:
# - a connection to the server opened before weir attaches sends its GET
#   only after the rule is on and the floods have run, and must get the
#   whole file on it;
# - baseline, no tcp-state rule: a spoofed ACK flood to a closed port draws
#   resets, at least half as many as sent (it proves the count can fail);
# - `weir rule add ts proto tcp tcp-state on`: while curl in CLI downloads
#   the file over and over (IPv4 and IPv6; every download complete, curl
#   exits 0), wrgen floods spoofed ACKs (to the open port and to a closed
#   one), RSTs, FINs and SYN-ACKs, IPv4 and IPv6: no reset leaves SRV towards
#   the spoofed ranges (and tcpdump lost none), and out_of_state grows by
#   at least OOS_PCT% of what wrgen sent less what veth dropped on the way
#   to weir (the flood can outrun a busy machine: 177 of 3000 once), and by
#   at least half of what was sent, and never by more; the rule counts
#   each of them dropped, and each cost a socket lookup; the downloads'
#   segments, hundreds each, cost a few lookups a download (the cache of
#   verified flows), at most LK_PER_CONN;
# - SRV connects to CLI's server (its SYN-ACK passes as an answer to
#   SYN_SENT) and downloads the file;
# - with net.ipv4.tcp_syncookies = 2 (every SYN answered by a cookie, no
#   request socket), each handshake's last ACK finds only the listener and
#   passes on its cookie: downloads complete, out_of_state stays.
# Each flood prints a line for the note:
#   # tcpstate mode=M flood=KIND family=F sent=N out_of_state=N rsts=N
#     kernel_rsts=N veth_drops=N back_drops=N tcpdump_drops=N
# (one line): rsts captured, kernel_rsts SRV's TcpOutRsts, veth_drops the
# frames veth dropped on the way to weir, back_drops on the way back.
# And bad input: tcp-state on proto udp or no proto, with action cookie,
# and `tcp-state maybe`, each refused naming tcp-state, the rules unchanged.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root tcpstate

SLGEN=$BUILD/wrgen
XDP_PASS=$BUILD/bench/xdp_pass.bpf.o
PYTHON=${PYTHON:-python3}
PORT=8080	# SRV's http.server
CLOSED=8081	# nothing listens here in SRV
CPORT=8090	# CLI's http.server
BLOB_MB=4	# the file's size, MiB: a few hundred segments a download
NFLOOD=3000	# segments per flood
BASE_N=2000	# segments of the baseline flood
RATE=25000	# pps of each flood
DL_RATE=10M	# bytes/s of each download: clients, not a load test
OOS_PCT=98	# share of the flood out_of_state must count, percent
LK_PER_CONN=8	# most socket lookups a download may cost (see the case)
SPOOF4=198.18.128.0/17
SPOOF6=2001:db8:8000::/33

for b in "$SLGEN" "$XDP_PASS"; do
	if [ ! -f "$b" ]; then
		not_ok tcpstate-setup "$b is not built (make test-build)"
		exit 1
	fi
done
for c in "$PYTHON" tcpdump curl jq nstat; do
	if ! command -v "$c" >/dev/null; then
		not_ok tcpstate-setup "$c is not installed (make test-deps)"
		exit 1
	fi
done

SRV=$(new_netns srv) && CLI=$(new_netns cli) || { not_ok tcpstate-setup "no namespaces"; exit 1; }
ROOT=$(new_root tcpstate)
if ! ip link add ts-c netns "$CLI" type veth peer name ts-s netns "$SRV"; then
	not_ok tcpstate-setup "cannot create veth"
	exit 1
fi
ip -n "$SRV" addr add 198.18.0.1/16 dev ts-s
ip -n "$SRV" addr add 2001:db8::1/64 dev ts-s nodad
ip -n "$CLI" addr add 198.18.0.2/16 dev ts-c
ip -n "$CLI" addr add 2001:db8::2/64 dev ts-c nodad
ip -n "$SRV" link set ts-s up
ip -n "$CLI" link set ts-c up
if ! ip -n "$CLI" link set dev ts-c xdp obj "$XDP_PASS" sec xdp 2>"$TMP/err"; then
	not_ok tcpstate-setup "XDP_PASS on the client side: $(tail -1 "$TMP/err")"
	exit 1
fi
mac_s=$(ip -n "$SRV" -j link show ts-s | jq -r '.[0].address')
mac_c=$(ip -n "$CLI" -j link show ts-c | jq -r '.[0].address')
ip -n "$CLI" neigh replace 198.18.0.1 lladdr "$mac_s" dev ts-c nud permanent
ip -n "$CLI" neigh replace 2001:db8::1 lladdr "$mac_s" dev ts-c nud permanent
ip -n "$SRV" neigh replace 198.18.0.2 lladdr "$mac_c" dev ts-s nud permanent
ip -n "$SRV" neigh replace 2001:db8::2 lladdr "$mac_c" dev ts-s nud permanent
# Replies to the spoofed sources leave towards the client (the /17 is more
# specific than SRV's connected /16).
ip -n "$SRV" route add $SPOOF4 via 198.18.0.2 dev ts-s
ip -n "$SRV" -6 route add $SPOOF6 via 2001:db8::2 dev ts-s

mkdir -p "$TMP/www"
head -c $((BLOB_MB << 20)) /dev/urandom >"$TMP/www/blob"
SIZE=$(stat -c %s "$TMP/www/blob")

# python3's http.server on :: (IPv4 too: it clears IPV6_V6ONLY).
serve() {
	nsenter --net="/run/netns/$1" "$PYTHON" -m http.server "$2" --bind :: \
		--directory "$TMP/www" >"$TMP/http-$1.log" 2>&1 &
	DAEMONS+=($!)
}
serve "$SRV" $PORT
serve "$CLI" $CPORT
# Up when a download succeeds (bounded: 10 s).
for _ in $(seq 100); do
	in_ns "$CLI" curl -sf -o /dev/null "http://198.18.0.1:$PORT/blob" &&
		in_ns "$SRV" curl -sf -o /dev/null "http://198.18.0.2:$CPORT/blob" && break
	sleep 0.1
done
if ! in_ns "$CLI" curl -sf -o /dev/null "http://198.18.0.1:$PORT/blob"; then
	not_ok tcpstate-setup "SRV's http.server does not answer: $(tail -2 "$TMP/http-$SRV.log")"
	exit 1
fi

wr() { in_ns "$SRV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$SRV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# Totals at once (interval 0: no rates, so no second's wait).
g() { wrj stats interval 0 | jq -r ".global.$1"; }
rule_drops() {
	wrj stats interval 0 | jq -r ".rules[] | select(.name == \"$1\") | .dropped_packets"
}
# "PACKETS LOOKUPS OUT_OF_STATE", weir's global counters from one reading.
packets_lookups_oos() {
	wrj stats interval 0 | jq -r '.global | "\(.packets) \(.tcp_state_lookups) \(.out_of_state)"'
}
syncookies_recv() {
	in_ns "$SRV" nstat -az TcpExtSyncookiesRecv | awk '/SyncookiesRecv/ {print $2}'
}
kernel_rsts() { in_ns "$SRV" nstat -az TcpOutRsts | awk '/TcpOutRsts/ {print $2}'; }
# Frames the veth dropped between wrgen and weir: the client side's
# transmit drops and the server side's receive drops.
veth_drops() {
	echo $(($(ip -n "$CLI" -s -j link show ts-c | jq '.[0].stats64.tx.dropped') +
		$(ip -n "$SRV" -s -j link show ts-s | jq '.[0].stats64.rx.dropped')))
}
# And on the way back, between SRV's kernel and tcpdump.
back_drops() {
	echo $(($(ip -n "$SRV" -s -j link show ts-s | jq '.[0].stats64.tx.dropped') +
		$(ip -n "$CLI" -s -j link show ts-c | jq '.[0].stats64.rx.dropped')))
}

# A client that connects now and sends its GET only once its signal file
# (argument 3) exists, on the same connection; it checks every byte of the
# answer against the file (argument 4).
cat >"$TMP/early.py" <<'EOF'
import os, socket, sys, time
host, port, sig, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
want = open(path, "rb").read()
s = socket.create_connection((host, port), timeout=10)
print("connected", flush=True)
# Bounded, so that a lost test does not leave it behind.
for _ in range(6000):
    if os.path.exists(sig):
        break
    time.sleep(0.05)
else:
    sys.exit("no signal")
s.settimeout(30)
s.sendall(b"GET /blob HTTP/1.0\r\nHost: weir\r\n\r\n")
buf = bytearray()
try:
    while True:
        d = s.recv(1 << 16)
        if not d:
            break
        buf += d
except OSError as e:
    sys.exit("after %d bytes: %s" % (len(buf), e))
head, _, body = bytes(buf).partition(b"\r\n\r\n")
status = head.split(b"\r\n")[0].decode(errors="replace")
if " 200 " not in status + " ":
    sys.exit("status: " + status)
if body != want:
    sys.exit("got %d bytes, want %d (%s)" % (len(body), len(want),
             "same length, other bytes" if len(body) == len(want) else "short"))
print("complete", len(body))
EOF

# early_start NAME HOST: the client above, in CLI (cleanup ends it with the
# namespace, as it does tcpdump); its output in $TMP/NAME.out, its pid in
# EARLY_NAME.
early_start() {
	nsenter --net="/run/netns/$CLI" "$PYTHON" "$TMP/early.py" "$2" $PORT "$TMP/$1.go" \
		"$TMP/www/blob" >"$TMP/$1.out" 2>&1 &
	eval "EARLY_$1=\$!"
}
# early_wait_connected NAME: bounded, 10 s.
early_wait_connected() {
	local _
	for _ in $(seq 200); do
		grep -q connected "$TMP/$1.out" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# cap_start NAME: tcpdump in CLI, everything towards the spoofed ranges
# into $TMP/NAME.pcap, each packet as it comes (without --immediate-mode
# libpcap hands them over a block at a time, up to a second late), into a
# buffer of 32 MiB (-B, KiB) that a burst of resets does not overrun,
# headers only (-s 128); returns once it listens (bounded, 10 s).
cap_start() {
	nsenter --net="/run/netns/$CLI" tcpdump -i ts-c -n -U --immediate-mode -B 32768 -s 128 \
		-w "$TMP/$1.pcap" "tcp and (dst net $SPOOF4 or dst net $SPOOF6)" \
		2>"$TMP/$1.tcpdump" &
	CAPPID=$!
	for _ in $(seq 200); do
		grep -q "listening on" "$TMP/$1.tcpdump" && return 0
		sleep 0.05
	done
	return 1
}
cap_stop() { kill -INT "$CAPPID" 2>/dev/null; wait "$CAPPID" 2>/dev/null; }
# cap_rsts NAME: the resets in NAME's capture (IPv6: TCP right after the
# fixed header, whose flags byte is 40 + 13 = 53).
cap_rsts() {
	tcpdump -n -r "$TMP/$1.pcap" \
		"(ip and tcp[13] & 4 != 0) or (ip6 and ip6[6] == 6 and ip6[53] & 4 != 0)" \
		2>/dev/null | wc -l
}

# flood NAME FAMILY KIND DPORT COUNT: COUNT spoofed segments of wrgen's
# --proto KIND to SRV's DPORT, captured (NAME ends in the family's digit).
# Sets SENT, the growth of out_of_state (OOS), of tcp_state_lookups
# (LOOKUPS) and of rule ts's dropped packets (DROPS, 0 with no rule), RSTS
# (resets captured), CDROPS (what tcpdump lost) and KRSTS (the kernel's
# TcpOutRsts growth).
flood() {
	local name=$1 fam=$2 kind=$3 dport=$4 n=$5 dst pfx oos0 lk0 drops0 krsts0 vd0 bd0
	if [ "$fam" = 4 ]; then dst=198.18.0.1 pfx=$SPOOF4; else dst=2001:db8::1 pfx=$SPOOF6; fi
	oos0=$(g out_of_state)
	lk0=$(g tcp_state_lookups)
	drops0=$(rule_drops ts)
	krsts0=$(kernel_rsts)
	vd0=$(veth_drops)
	bd0=$(back_drops)
	cap_start "$name" || fail "$name: tcpdump did not start: $(tail -1 "$TMP/$name.tcpdump")"
	in_ns "$CLI" "$SLGEN" --dst $dst --dport "$dport" --proto "$kind" --spoof-prefix $pfx \
		--rate $RATE --count "$n" --duration 10 --json \
		>"$TMP/$name.json" 2>"$TMP/$name.err" ||
		fail "$name: wrgen failed: $(tail -1 "$TMP/$name.err")"
	SENT=$(jq -r '.total_sent // 0' "$TMP/$name.json" 2>/dev/null)
	SENT=${SENT:-0}
	# Until the segments were all seen (dropped, or answered), bounded: 5 s.
	for _ in $(seq 50); do
		OOS=$(($(g out_of_state) - oos0))
		[ "$OOS" -ge "$SENT" ] && break
		[ $(($(kernel_rsts) - krsts0)) -ge "$SENT" ] && break
		sleep 0.1
	done
	# And until tcpdump has every reset the kernel counted (bounded: 5 s).
	for _ in $(seq 50); do
		[ "$(cap_rsts "$name")" -ge $(($(kernel_rsts) - krsts0)) ] && break
		sleep 0.1
	done
	# A little longer, for a reset still on its way.
	sleep 0.2
	cap_stop
	OOS=$(($(g out_of_state) - oos0))
	LOOKUPS=$(($(g tcp_state_lookups) - lk0))
	DROPS=$(($(rule_drops ts) - ${drops0:-0}))
	KRSTS=$(($(kernel_rsts) - krsts0))
	VDROPS=$(($(veth_drops) - vd0))
	BDROPS=$(($(back_drops) - bd0))
	CDROPS=$(awk '/dropped by kernel/ {print $1}' "$TMP/$name.tcpdump")
	RSTS=$(cap_rsts "$name")
	echo "# tcpstate mode=$MODE flood=${name%[46]} family=ipv$fam sent=$SENT" \
		"out_of_state=$OOS rsts=$RSTS kernel_rsts=$KRSTS veth_drops=$VDROPS" \
		"back_drops=$BDROPS tcpdump_drops=${CDROPS:-?}"
}

# dl_loop NAME URL: curl in CLI downloads URL until $TMP/NAME.stop exists
# (or $TMP or CLI is gone: the suite ended early); a line "BYTES HTTP_CODE
# rc=EXIT" per download in $TMP/NAME.dl.
dl_loop() {
	local rc
	while [ -d "$TMP" ] && [ -e "/run/netns/$CLI" ] && [ ! -e "$TMP/$1.stop" ]; do
		in_ns "$CLI" curl -sS -g -o /dev/null -w '%{size_download} %{http_code} ' \
			--limit-rate $DL_RATE --max-time 60 "$2" 2>>"$TMP/$1.err"
		rc=$?
		echo "rc=$rc"
	done >"$TMP/$1.dl"
}
# dl_check NAME: every download whole, at least 2 of them.
dl_check() {
	local n bad
	n=$(wc -l <"$TMP/$1.dl")
	bad=$(awk -v size="$SIZE" '!($1 == size && $2 == 200 && $3 == "rc=0")' "$TMP/$1.dl")
	[ -z "$bad" ] ||
		fail "$1: a download failed: $(head -1 <<<"$bad")" \
			"$(tail -1 "$TMP/$1.err" 2>/dev/null)"
	[ "$n" -ge 2 ] || fail "$1: only $n downloads"
	echo "# tcpstate mode=$MODE $1: $n downloads of $SIZE bytes"
}

for MODE in native tc; do
	rm -f "$TMP"/*.go "$TMP"/*.stop
	# ---- connections opened before weir attaches ----
	early_start early4 198.18.0.1
	early_start early6 2001:db8::1
	early_wait_connected early4 && early_wait_connected early6 || {
		not_ok tcpstate-$MODE-setup \
			"early clients: $(cat "$TMP/early4.out" "$TMP/early6.out")"
		exit 1
	}
	if ! out=$(wr attach ts-s mode $MODE 2>&1); then
		not_ok tcpstate-$MODE-setup "attach: $out"
		exit 1
	fi

	if [ $MODE = native ]; then
		# ---- bad input: refused naming tcp-state, the rules unchanged ----
		begin_case tcpstate-bad-input
		# What action cookie needs of the kernel, so that a refusal is tcp-state's.
		in_ns "$SRV" sysctl -qw net.ipv4.tcp_syncookies=2
		expect_ok "a rule to keep" wr rule add keep proto udp dport 53 limit 10pps
		before=$(wr rule list)
		# One rule's words a line: on UDP, with no proto (twice), with
		# action cookie, and a value that is none of on, auto, off.
		mapfile -t bad_words <<-EOF
			proto udp tcp-state on
			tcp-state on
			dport $PORT tcp-state on
			proto tcp dport $PORT tcp-flags syn limit 10pps action cookie tcp-state on
			proto tcp tcp-state maybe
		EOF
		for words in "${bad_words[@]}"; do
			# shellcheck disable=SC2086
			expect_fail "rule add x $words" wr rule add x $words
			# shellcheck disable=SC2086
			out=$(wr rule add x $words 2>&1)
			grep -q "tcp-state" <<<"$out" ||
				fail "\"$words\": the error does not name tcp-state: $out"
		done
		[ "$(wr rule list)" = "$before" ] || fail "the rules changed: $(wr rule list)"
		expect_ok "rule del keep" wr rule del keep
		# And good words: a rule with no limit, listed with tcp-state on; the
		# listed words add the same rule again.
		expect_ok "tcp-state with no limit" wr rule add x proto tcp tcp-state on
		line=$(wr rule list | grep '^x ')
		grep -q " tcp-state on" <<<"$line" || fail "rule list: \"$line\""
		expect_ok "rule del x" wr rule del x
		# shellcheck disable=SC2086
		expect_ok "the listed words" wr rule add $line
		[ "$(wr rule list | grep '^x ')" = "$line" ] || fail "listed again: $(wr rule list)"
		expect_ok "rule del x" wr rule del x
		in_ns "$SRV" sysctl -qw net.ipv4.tcp_syncookies=1
		end_case tcpstate-bad-input
	fi

	# ---- baseline: with no tcp-state rule, the kernel resets spoofed ACKs ----
	for fam in 4 6; do
		begin_case tcpstate-$MODE-baseline-rsts-ipv$fam
		flood baseline-ack-closed$fam $fam tcp-ack $CLOSED $BASE_N
		[ "$SENT" -ge $((BASE_N * 9 / 10)) ] || fail "wrgen sent $SENT of $BASE_N"
		# Each ACK to a closed port is answered by a reset; half is the bound
		# (the rest: veth drops when the flood outruns a busy machine).
		[ "$RSTS" -ge $((SENT / 2)) ] ||
			fail "$RSTS resets captured for $SENT spoofed ACKs to a closed port" \
				"(want >= $((SENT / 2)))"
		[ "$OOS" -eq 0 ] || fail "out_of_state grew by $OOS with no tcp-state rule"
		end_case tcpstate-$MODE-baseline-rsts-ipv$fam
	done

	# ---- tcp-state on, floods while real clients download ----
	begin_case tcpstate-$MODE-rule-add
	expect_ok "rule add ts" wr rule add ts proto tcp tcp-state on
	end_case tcpstate-$MODE-rule-add
	read -r pk0 lk0 oos0 < <(packets_lookups_oos)
	dl_loop dl4 "http://198.18.0.1:$PORT/blob" &
	DL4=$!
	dl_loop dl6 "http://[2001:db8::1]:$PORT/blob" &
	DL6=$!
	for fam in 4 6; do
		for f in "tcp-ack $PORT" "tcp-ack $CLOSED" "tcp-rst $PORT" "tcp-fin $PORT" \
			"tcp-synack $PORT"; do
			read -r kind dport <<<"$f"
			name=${kind#tcp-}$([ "$dport" = $CLOSED ] && echo -closed)
			begin_case "tcpstate-$MODE-flood-$name-ipv$fam"
			flood "$name$fam" $fam "$kind" "$dport" $NFLOOD
			[ "$SENT" -gt 0 ] || fail "wrgen sent nothing"
			[ "$RSTS" -eq 0 ] || fail "$RSTS resets left SRV towards the spoofed range"
			# The capture lost nothing, so none went unseen.
			[ "$CDROPS" = 0 ] ||
				fail "tcpdump dropped ${CDROPS:-an unknown number of} packets"
			[ "$OOS" -le "$SENT" ] ||
				fail "out_of_state grew by $OOS, more than the $SENT sent"
			# veth's drops never reached weir: they are not weir's to count.
			[ "$OOS" -ge $(((SENT - VDROPS) * OOS_PCT / 100)) ] ||
				fail "out_of_state grew by $OOS of $SENT sent, $VDROPS lost" \
					"before weir (want >= $OOS_PCT% of the rest)"
			[ "$OOS" -ge $((SENT / 2)) ] ||
				fail "out_of_state grew by $OOS of $SENT sent (want >= half)"
			[ "$DROPS" -eq "$OOS" ] || fail "rule ts dropped $DROPS, out_of_state $OOS"
			# Each is a cache miss: nothing is stored for a segment of no connection.
			[ "$LOOKUPS" -ge "$OOS" ] ||
				fail "$LOOKUPS socket lookups for $OOS out-of-state segments"
			end_case "tcpstate-$MODE-flood-$name-ipv$fam"
		done
	done
	touch "$TMP/dl4.stop" "$TMP/dl6.stop"
	wait $DL4 $DL6
	read -r pk lk oos < <(packets_lookups_oos)
	begin_case tcpstate-$MODE-downloads-complete
	dl_check dl4
	dl_check dl6
	end_case tcpstate-$MODE-downloads-complete
	# The real traffic's share of the counters: the floods' segments each
	# cost a lookup and were counted out of state.
	real_pk=$((pk - pk0 - (oos - oos0)))
	real_lk=$((lk - lk0 - (oos - oos0)))
	echo "# tcpstate mode=$MODE real traffic: packets=$real_pk lookups=$real_lk"

	# ---- the cache of verified flows spares real traffic the lookups ----
	# A download is one connection: its handshake's last ACK (a request
	# socket, not cached), then one lookup per CPU its segments come to and
	# per WEIR_TCP_SEEN_TTL_NS (2 s; a download takes well under that), and
	# its closing's tail: a few; LK_PER_CONN is the bound, with room for
	# two flows taking turns in one slot. Without the cache it would be one
	# per segment, hundreds a download.
	begin_case tcpstate-$MODE-cache-spares-lookups
	nconn=$(($(wc -l <"$TMP/dl4.dl") + $(wc -l <"$TMP/dl6.dl")))
	[ "$real_lk" -le $((nconn * LK_PER_CONN)) ] ||
		fail "$real_lk socket lookups for $nconn downloads, $real_pk packets" \
			"(want <= $LK_PER_CONN a download)"
	[ "$real_pk" -ge $((nconn * 100)) ] ||
		fail "$real_pk packets for $nconn downloads: the count did not see them"
	end_case tcpstate-$MODE-cache-spares-lookups

	# ---- the connections from before the attach still work ----
	begin_case tcpstate-$MODE-pre-attach-connections
	touch "$TMP/early4.go" "$TMP/early6.go"
	for e in early4 early6; do
		pid=EARLY_$e
		wait "${!pid}"
		rc=$?
		[ $rc -eq 0 ] && grep -q "^complete $SIZE\$" "$TMP/$e.out" ||
			fail "$e (exit $rc): $(tail -1 "$TMP/$e.out")"
	done
	end_case tcpstate-$MODE-pre-attach-connections

	# ---- SRV as a client: its SYN-ACKs pass (SYN_SENT) ----
	begin_case tcpstate-$MODE-srv-as-client
	lk0=$(g tcp_state_lookups)
	oos0=$(g out_of_state)
	for url in "http://198.18.0.2:$CPORT/blob" "http://[2001:db8::2]:$CPORT/blob"; do
		got=$(in_ns "$SRV" curl -sS -g -o /dev/null -w '%{size_download}' --max-time 60 \
			"$url" 2>&1)
		rc=$?
		[ $rc -eq 0 ] && [ "$got" = "$SIZE" ] ||
			fail "$url: curl exit $rc, $got bytes of $SIZE"
	done
	# The SYN-ACKs were checked (they always ask the kernel), and passed.
	lk=$(($(g tcp_state_lookups) - lk0))
	[ "$lk" -ge 2 ] || fail "$lk socket lookups for two connects"
	[ $(($(g out_of_state) - oos0)) -eq 0 ] ||
		fail "out_of_state grew by $(($(g out_of_state) - oos0)) while SRV was a client"
	end_case tcpstate-$MODE-srv-as-client

	# ---- the kernel's SYN cookies: a handshake's last ACK finds only the
	# listener, and passes on its valid cookie ----
	begin_case tcpstate-$MODE-cookie-acks-pass
	# 2: every SYN is answered with a cookie, no request socket is kept.
	in_ns "$SRV" sysctl -qw net.ipv4.tcp_syncookies=2
	oos0=$(g out_of_state)
	recv0=$(syncookies_recv)
	# A SYN that meets one of SRV's TIME_WAIT sockets for its four-tuple
	# is answered without a cookie, so each connection comes from a
	# source port of its own, below the ephemeral range the other cases'
	# connections take theirs from.
	lport=$([ "$MODE" = native ] && echo 20000 || echo 20010)
	for url in "http://198.18.0.1:$PORT/blob" "http://[2001:db8::1]:$PORT/blob"; do
		for _ in 1 2 3; do
			lport=$((lport + 1))
			got=$(in_ns "$CLI" curl -sS -g -o /dev/null -w '%{size_download}' \
				--local-port "$lport" --max-time 60 "$url" 2>&1)
			rc=$?
			[ $rc -eq 0 ] && [ "$got" = "$SIZE" ] ||
				fail "$url: curl exit $rc, $got bytes of $SIZE"
		done
	done
	recv=$(($(syncookies_recv) - recv0))
	in_ns "$SRV" sysctl -qw net.ipv4.tcp_syncookies=1
	# Each of the 6 connections was made by its cookie.
	[ "$recv" -ge 6 ] || fail "the kernel took $recv cookies for 6 connections"
	[ $(($(g out_of_state) - oos0)) -eq 0 ] ||
		fail "out_of_state grew by $(($(g out_of_state) - oos0)) for cookie handshakes"
	end_case tcpstate-$MODE-cookie-acks-pass

	begin_case tcpstate-$MODE-rule-del-detach
	expect_ok "rule del ts" wr rule del ts
	expect_ok "detach" wr detach ts-s
	end_case tcpstate-$MODE-rule-del-detach
done
