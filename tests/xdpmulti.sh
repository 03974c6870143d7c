#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sharing an interface with other XDP programs through libxdp's dispatcher,
# against the real xdp-filter and xdp-loader of xdp-tools: two namespaces
# joined by veth, paced UDP from tools/wrgen counted by tools/wrsink.
#
#   xf-first     xdp-filter loaded, then weir joins its dispatcher: the
#                port xdp-filter drops stays dropped, weir's limit holds
#                on other traffic, tcp-state drops spoofed ACKs, `detach`
#                leaves xdp-filter working
#   weir-first weir makes the dispatcher (dispatcher libxdp, a priority
#                of its own), xdp-filter joins it, leaves again: weir stays
#   generic      the same in generic (skb) mode; a native attach is refused
#   foreign      an XDP program that is not libxdp's dispatcher (a netlink
#                one from ip, and weir's own link from another root) is
#                refused with exit status 1 and left as it was
#   fail-static  the daemon joins xdp-filter's dispatcher and is killed:
#                weir stays in the dispatcher and still limits
#
# A kernel that refuses extension (freplace) programs, which the dispatcher
# is made of (this machine's host kernel is locked down against them), gets
# xdp-filter as a lone program: there weir must refuse it and leave it
# alone, and `dispatcher libxdp` must be refused and change nothing; the
# cases that need a dispatcher say skip with that reason. tests/kernels.sh
# runs this suite again in Debian 12's kernel, where they all run.
#
# libxdp keeps the dispatcher's state under $LIBXDP_BPFFS/xdp, and xdp-filter
# its maps under /sys/fs/bpf/xdp-filter whatever LIBXDP_BPFFS says: both are
# pointed at a directory of this suite's own (xdp-filter in a mount
# namespace of its own, where that directory is bind-mounted on
# /sys/fs/bpf), so nothing here touches the host's /sys/fs/bpf.
#
# Counts: a limit of 1pps, burst 20, per source admits 20 + what refills
# while the generator sends (its own first-to-last time, rounded up) + 2 for
# where in its second the first packet lands: nothing here asserts a
# duration. Unlimited traffic must arrive whole but for 2%.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root xdpmulti

SLGEN=$BUILD/wrgen
SLSINK=$BUILD/wrsink
PASSPROG=$BUILD/bench/xdp_pass.bpf.o
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT

for tool in jq xdp-filter xdp-loader unshare; do
	if ! command -v $tool >/dev/null; then
		skip xdpmulti "$tool is missing (make test-deps installs xdp-tools)"
		exit 0
	fi
done
for b in "$SLGEN" "$SLSINK" "$WEIR" "$PASSPROG"; do
	[ -e "$b" ] || { not_ok xdpmulti-setup "$b is missing (make test-build)"; exit 1; }
done
# A kernel booted without a bpffs on /sys/fs/bpf (tests/kernels.sh's guest).
if [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ]; then
	mount -t bpf bpf /sys/fs/bpf || { not_ok xdpmulti-setup "no bpffs"; exit 1; }
fi

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok xdpmulti-setup "no namespaces"; exit 1; }
if ! ip link add xm-s netns "$SND" type veth peer name xm-r netns "$RCV"; then
	not_ok xdpmulti-setup "cannot create veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/24 dev xm-r
for i in $(seq 2 20); do ip -n "$SND" addr add 198.18.0.$i/24 dev xm-s; done
ip -n "$RCV" link set xm-r up
ip -n "$SND" link set xm-s up
mac_r=$(ip -n "$RCV" -j link show xm-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show xm-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev xm-s nud permanent
for i in $(seq 2 20); do
	ip -n "$RCV" neigh replace 198.18.0.$i lladdr "$mac_s" dev xm-r nud permanent
done

ROOT=$(new_root xm)
OTHER=$(new_root xmo)
# libxdp's directory (and xdp-filter's), on the bpffs, this suite's own.
XF=$(new_root xf)
mkdir -p "$XF"
export LIBXDP_BPFFS=$XF

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# xdp-filter / xdp-loader in RCV, their /sys/fs/bpf being $XF.
xt() {
	in_ns "$RCV" unshare -m --propagation private sh -c \
		'mount --bind "$0" /sys/fs/bpf && LIBXDP_BPFFS=/sys/fs/bpf exec "$@"' "$XF" "$@"
}
# The program on xm-r's XDP hook: its name, or "none".
hook_prog() { ip -n "$RCV" -j link show xm-r | jq -r '.[0].xdp.prog.name // "none"'; }
hook_id() { ip -n "$RCV" -j link show xm-r | jq -r '.[0].xdp.prog.id // 0'; }
# The programs in the dispatcher, as xdp-loader lists them (names, one a line).
loader_progs() { xt xdp-loader status xm-r 2>/dev/null | awk '$1 ~ /^=>/ { print $3 }'; }

# send PORT SRC N: N datagrams from SRC to PORT at 400/s; prints how many
# arrived, and in $TMP/secs how long (whole seconds, rounded up) the
# generator took from its first to its last send.
send() {
	local port=$1 src=$2 n=$3 ready=$TMP/ready
	rm -f "$ready"
	ip netns exec "$RCV" "$SLSINK" --listen 198.18.0.1 --port "$port" --duration 30 \
		--idle 1.5 --json --ready-file "$ready" >"$TMP/sink.json" &
	local sink=$!
	for _ in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
	ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport "$port" --src "$src" \
		--rate 400 --count "$n" --duration 20 --json >"$TMP/gen.json"
	# Nothing may arrive at all (a dropped port): the sink then waits out
	# its duration, so stop it once the generator is done and the queue had
	# a moment to drain.
	sleep 1
	kill -INT $sink 2>/dev/null
	wait $sink
	jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9 | ceil' "$TMP/gen.json" >"$TMP/secs"
	jq -r '[.sources[].packets] | add // 0' "$TMP/sink.json"
}
# limited PORT SRC: 200 datagrams under "1pps burst 20 per src"; fails unless
# 20 to 20 + refill + 2 arrived.
limited() {
	local got max
	got=$(send "$1" "$2" 200)
	max=$((20 + $(cat "$TMP/secs") + 2))
	[ "$got" -ge 20 ] && [ "$got" -le $max ] ||
		fail "$3: $got of 200 datagrams from $2 to port $1 arrived, want 20 to $max (limit 1pps burst 20)"
}
# unlimited PORT SRC WHAT: 100 datagrams, at least 98 arrive.
unlimited() {
	local got
	got=$(send "$1" "$2" 100)
	[ "$got" -ge 98 ] || fail "$3: $got of 100 datagrams from $2 to port $1 arrived, want >= 98"
}
# dropped PORT SRC WHAT: 100 datagrams, none arrives.
dropped() {
	local got
	got=$(send "$1" "$2" 100)
	[ "$got" -eq 0 ] || fail "$3: $got of 100 datagrams from $2 to port $1 arrived, want 0"
}

# XDPMULTI_DISPATCHER_ONLY=1 (the qemu guests of tests/kernels.sh and make
# test-kernels): only the cases that need a dispatcher; the others are the
# same on every kernel. XDPMULTI_CASES names some of those (default: all):
# each loads weir's program again, which the guests' emulated CPU
# verifies slowly.
ONLY=${XDPMULTI_DISPATCHER_ONLY:-}
want() { [ -z "${XDPMULTI_CASES:-}" ] || [[ " $XDPMULTI_CASES " == *" $1 "* ]]; }

# ---- bad input: exit status 1, nothing attached ----
[ -z "$ONLY" ] && {
begin_case
expect_fail "dispatcher bogus" wr attach xm-r dispatcher bogus
expect_fail "priority -1" wr attach xm-r priority -1
expect_fail "priority 12x" wr attach xm-r priority 12x
expect_fail "priority 2^31" wr attach xm-r priority 2147483648
expect_fail "priority in mode tc" wr attach xm-r mode tc priority 5
expect_fail "dispatcher in mode tc" wr attach xm-r mode tc dispatcher libxdp
expect_fail "priority with dispatcher off" wr attach xm-r priority 5 dispatcher off
expect_fail "dispatcher without value" wr attach xm-r dispatcher
[ "$(hook_prog)" = none ] || fail "bad input left $(hook_prog) on xm-r"
end_case xdpmulti-bad-input
}

wr rule add lim proto udp dport 9000 limit 1pps burst 20 per src >/dev/null ||
	{ not_ok xdpmulti-setup "rule add"; exit 1; }

# Does this kernel give xdp-filter a dispatcher? Its program on the hook says.
xt xdp-filter load xm-r -m native >"$TMP/xf.log" 2>&1 ||
	{ not_ok xdpmulti-setup "xdp-filter load: $(tail -1 "$TMP/xf.log")"; exit 1; }
xt xdp-filter port 7777 >/dev/null || { not_ok xdpmulti-setup "xdp-filter port"; exit 1; }
HAVE_DISPATCHER=""
[ "$(hook_prog)" = xdp_dispatcher ] && HAVE_DISPATCHER=1
WHY="this kernel ($(uname -r)) refuses extension (freplace) programs: xdp-filter loads without libxdp's dispatcher ($(hook_prog))"
if [ -z "$HAVE_DISPATCHER" ] && [ -n "$ONLY" ]; then
	not_ok xdpmulti-dispatcher "$WHY"
	exit 1
fi

if [ -z "$HAVE_DISPATCHER" ] && [ -z "$ONLY" ]; then
	# ---- no dispatcher here: xdp-filter alone is a foreign program ----
	begin_case
	id=$(hook_id)
	out=$(wr attach xm-r 2>&1); rc=$?
	[ $rc -eq 1 ] || fail "attach beside a lone xdp-filter: exit $rc, want 1: $out"
	grep -q "not libxdp's dispatcher" <<<"$out" || fail "no clear refusal: $out"
	[ "$(hook_id)" = "$id" ] || fail "xdp-filter's program $id replaced by $(hook_id)"
	dropped 7777 198.18.0.2 "xdp-filter after the refusal"
	unlimited 9000 198.18.0.3 "no weir on the hook"
	end_case xdpmulti-lone-xdp-filter-refused
	xt xdp-filter unload xm-r >/dev/null 2>&1
	begin_case
	out=$(wr attach xm-r dispatcher libxdp 2>&1); rc=$?
	[ $rc -eq 1 ] || fail "dispatcher libxdp without freplace: exit $rc, want 1: $out"
	grep -q "refuses extension (freplace) programs" <<<"$out" || fail "no clear refusal: $out"
	[ "$(hook_prog)" = none ] || fail "the refusal left $(hook_prog) on xm-r"
	[ "$(wrj status | jq '.interfaces | length')" = 0 ] || fail "status shows an attachment"
	ls "$ROOT" | grep -q '^xdpm_' && fail "a record was left: $(ls "$ROOT" | grep '^xdpm_')"
	end_case xdpmulti-dispatcher-refused-without-freplace
	for c in xf-first weir-first generic fail-static; do
		want $c && skip "xdpmulti-$c" "$WHY"
	done
fi

if [ -n "$HAVE_DISPATCHER" ] && want xf-first; then
	# ---- xdp-filter first, then weir joins ----
	begin_case
	out=$(wrj attach xm-r 2>"$TMP/err") || fail "attach: $(cat "$TMP/err")"
	[ "$(jq -r .dispatcher <<<"$out")" = libxdp ] || fail "attach -j: $out"
	st=$(wrj status | jq -c '.interfaces[0]')
	[ "$(jq -r '.mode + "/" + .dispatcher + "/" + (.priority|tostring)' <<<"$st")" = \
		native/libxdp/20 ] || fail "status: $st"
	[ "$(jq -r .dispatcher_programs <<<"$st")" = 2 ] || fail "status: not 2 programs: $st"
	wr status | grep -q "mode native (libxdp dispatcher, priority 20)" ||
		fail "status text: $(wr status | grep attached)"
	progs=$(loader_progs | sort | tr '\n' ' ')
	[ "$progs" = "weir_xdpm xdpfilt_alw_all " ] || fail "xdp-loader status lists: $progs"
	[ "$(hook_prog)" = xdp_dispatcher ] || fail "hook holds $(hook_prog)"
	# The SYN-cookie programs are out of the dispatcher's reach: cookie rules refused.
	out=$(wr rule add ck proto tcp dport 8080 tcp-flags syn limit 10pps action cookie 2>&1)
	rc=$?
	[ $rc -eq 1 ] && grep -q "has weir in libxdp's dispatcher" <<<"$out" ||
		fail "a cookie rule beside the dispatcher: exit $rc: $out"
	dropped 7777 198.18.0.2 "xdp-filter beside weir"
	limited 9000 198.18.0.3 "weir beside xdp-filter"
	unlimited 9001 198.18.0.4 "neither"
	# tcp-state from inside the dispatcher: spoofed ACKs to a closed port
	# are looked up, found to belong to nothing, dropped and counted.
	if wr rule add ts proto tcp dport 9 tcp-state on >/dev/null; then
		oos=$(wrj stats | jq -r .global.out_of_state)
		ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport 9 --proto tcp-ack \
			--spoof-prefix 198.18.128.0/17 --rate 400 --count 50 --duration 5 \
			>/dev/null 2>&1
		sleep 0.5
		n=$(($(wrj stats | jq -r .global.out_of_state) - oos))
		# All 50 at 400/s over veth; 2 of slack for a busy emulated CPU.
		[ "$n" -ge 48 ] && [ "$n" -le 50 ] ||
			fail "tcp-state in the dispatcher: $n of 50 spoofed ACKs out of state"
		wr rule del ts >/dev/null || fail "rule del ts"
	else
		fail "a tcp-state rule in the dispatcher was refused"
	fi
	wr detach xm-r >/dev/null || fail "detach"
	progs=$(loader_progs | tr '\n' ' ')
	[ "$progs" = "xdpfilt_alw_all " ] || fail "after detach xdp-loader lists: $progs"
	[ "$(wrj status | jq '.interfaces | length')" = 0 ] || fail "status still shows weir"
	dropped 7777 198.18.0.2 "xdp-filter after weir's detach"
	unlimited 9000 198.18.0.5 "port 9000 after weir's detach"
	xt xdp-filter unload xm-r >/dev/null 2>&1 || fail "xdp-filter unload"
	[ "$(hook_prog)" = none ] || fail "after both left, xm-r holds $(hook_prog)"
	end_case xdpmulti-xf-first
fi
# xdp-filter off the hook for the next cases (it is, after xf-first).
xt xdp-filter unload xm-r >/dev/null 2>&1

if [ -n "$HAVE_DISPATCHER" ] && want weir-first; then
	# ---- weir first (dispatcher libxdp, priority 5), xdp-filter joins ----
	begin_case
	wr attach xm-r dispatcher libxdp priority 5 >/dev/null || fail "attach dispatcher libxdp"
	[ "$(hook_prog)" = xdp_dispatcher ] || fail "hook holds $(hook_prog), not the dispatcher"
	xt xdp-filter load xm-r -m native >/dev/null 2>&1 || fail "xdp-filter load beside weir"
	xt xdp-filter port 7777 >/dev/null || fail "xdp-filter port"
	progs=$(loader_progs | tr '\n' ' ')
	# Run order, lowest priority first: weir (5), then xdp-filter (10).
	[ "$progs" = "weir_xdpm xdpfilt_alw_all " ] || fail "xdp-loader lists: $progs"
	st=$(wrj status | jq -c '.interfaces[0]')
	[ "$(jq -r '.priority' <<<"$st")/$(jq -r .dispatcher_programs <<<"$st")" = 5/2 ] ||
		fail "status: $st"
	dropped 7777 198.18.0.6 "xdp-filter behind weir"
	limited 9000 198.18.0.7 "weir ahead of xdp-filter"
	xt xdp-filter unload xm-r >/dev/null 2>&1 || fail "xdp-filter unload"
	[ "$(loader_progs | tr '\n' ' ')" = "weir_xdpm " ] || fail "after xdp-filter left: $(loader_progs)"
	limited 9000 198.18.0.8 "weir after xdp-filter left"
	unlimited 7777 198.18.0.9 "port 7777 once xdp-filter left"
	wr detach xm-r >/dev/null || fail "detach"
	[ "$(hook_prog)" = none ] || fail "after detach xm-r holds $(hook_prog)"
	end_case xdpmulti-weir-first
fi

if [ -n "$HAVE_DISPATCHER" ] && want generic; then
	# ---- generic mode ----
	begin_case
	xt xdp-filter load xm-r -m skb >/dev/null 2>&1 || fail "xdp-filter load -m skb"
	xt xdp-filter port 7777 >/dev/null || fail "xdp-filter port"
	out=$(wr attach xm-r 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -q "in generic mode: attach in mode generic" <<<"$out" ||
		fail "native attach beside a generic dispatcher: exit $rc: $out"
	wr attach xm-r mode generic >/dev/null || fail "attach mode generic"
	st=$(wrj status | jq -c '.interfaces[0]')
	[ "$(jq -r '.mode + "/" + .dispatcher' <<<"$st")" = generic/libxdp ] || fail "status: $st"
	dropped 7777 198.18.0.10 "xdp-filter in generic mode"
	limited 9000 198.18.0.11 "weir in generic mode"
	wr detach xm-r >/dev/null || fail "detach"
	dropped 7777 198.18.0.10 "xdp-filter after weir's detach (generic)"
	xt xdp-filter unload xm-r >/dev/null 2>&1 || fail "xdp-filter unload"
	end_case xdpmulti-generic
fi

# ---- programs that are not libxdp's dispatcher: refused, left alone ----
[ -z "$ONLY" ] && {
begin_case
ip -n "$RCV" link set xm-r xdpdrv obj "$PASSPROG" sec xdp || fail "ip link set xdp"
id=$(hook_id)
for d in auto libxdp; do
	out=$(wr attach xm-r dispatcher $d 2>&1); rc=$?
	[ $rc -eq 1 ] || fail "dispatcher $d beside a netlink program: exit $rc, want 1: $out"
	grep -q "(id $id, \"xdp_pass_all\") that is not libxdp's dispatcher; weir leaves it alone" \
		<<<"$out" || fail "dispatcher $d: no clear refusal naming the program: $out"
done
[ "$(hook_id)" = "$id" ] || fail "the netlink program $id replaced by $(hook_id)"
unlimited 9000 198.18.0.12 "behind the netlink program"
ip -n "$RCV" link set xm-r xdpdrv off
# A generic program keeps either mode out (the kernel runs one of them at a time).
ip -n "$RCV" link set xm-r xdpgeneric obj "$PASSPROG" sec xdp || fail "ip link set xdpgeneric"
id=$(hook_id)
for m in generic native; do
	out=$(wr attach xm-r mode $m 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -q "(id $id, \"xdp_pass_all\") that is not libxdp's dispatcher" \
		<<<"$out" || fail "mode $m beside a generic netlink program: exit $rc: $out"
done
[ "$(hook_id)" = "$id" ] || fail "the generic program $id replaced by $(hook_id)"
ip -n "$RCV" link set xm-r xdpgeneric off
# weir's own bpf_link, from another root, is just as foreign to this one.
in_ns "$RCV" "$WEIR" --bpffs "$OTHER" attach xm-r dispatcher off >/dev/null ||
	fail "attach from the other root"
id=$(hook_id)
out=$(wr attach xm-r 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "not libxdp's dispatcher" <<<"$out" ||
	fail "beside a bpf_link: exit $rc: $out"
[ "$(hook_id)" = "$id" ] || fail "the linked program $id replaced by $(hook_id)"
in_ns "$RCV" "$WEIR" --bpffs "$OTHER" detach all >/dev/null
[ "$(wrj status | jq '.interfaces | length')" = 0 ] || fail "status shows an attachment"
end_case xdpmulti-foreign
}

# ---- fail-static: the daemon joins xdp-filter's dispatcher, then dies ----
if [ -n "$HAVE_DISPATCHER" ] && want fail-static; then
	begin_case
	xt xdp-filter load xm-r -m native >/dev/null 2>&1 || fail "xdp-filter load"
	xt xdp-filter port 7777 >/dev/null || fail "xdp-filter port"
	cat >"$TMP/weir.yaml" <<-EOF
	interfaces:
	  - { name: xm-r, mode: native, dispatcher: libxdp, priority: 30 }
	rules:
	  - name: lim
	    proto: udp
	    dport: 9000
	    limits: [ { rate: 1pps, burst: 20, per: src } ]
	EOF
	if start_daemon "$RCV" "$ROOT" "$TMP/weir.yaml" "$TMP/daemon.log"; then
		for _ in $(seq 100); do
			[ "$(wrj status | jq -r '.interfaces[0].dispatcher // ""')" = libxdp ] && break
			sleep 0.1
		done
		st=$(wrj status | jq -c '.interfaces[0]')
		[ "$(jq -r '.dispatcher + "/" + (.priority|tostring)' <<<"$st")" = libxdp/30 ] ||
			fail "the daemon's attachment: $st"
		stop_daemons
		st=$(wrj status | jq -c '.interfaces[0]')
		[ "$(jq -r '.dispatcher + "/" + (.dispatcher_programs|tostring)' <<<"$st")" = libxdp/2 ] ||
			fail "after the daemon died: $st"
		limited 9000 198.18.0.13 "weir after the daemon died"
		dropped 7777 198.18.0.14 "xdp-filter after the daemon died"
		wr detach xm-r >/dev/null || fail "detach"
		dropped 7777 198.18.0.14 "xdp-filter after detach"
	else
		fail "the daemon did not start: $(tail -2 "$TMP/daemon.log")"
	fi
	xt xdp-filter unload xm-r >/dev/null 2>&1
	end_case xdpmulti-fail-static
fi
exit 0
