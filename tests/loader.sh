#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The loader: options that only a fresh load sets (table size, clock) are
# refused once weir is loaded, never silently ignored, and status shows
# them; the connection counter sits on the host's cgroup root only while a
# rule has a connection limit.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root loader
trap cleanup EXIT

for tool in jq bpftool; do
	if ! command -v $tool >/dev/null; then
		skip loader "$tool is missing"
		exit 0
	fi
done
NS=$(new_netns ld) || { not_ok loader-setup "no namespace"; exit 1; }
ROOT=$(new_root ld)
for i in 0 1 2; do
	in_ns "$NS" ip link add ld$i type veth peer name ldp$i || { not_ok loader-setup "veth"; exit 1; }
	in_ns "$NS" ip link set ld$i up
done
wr() { in_ns "$NS" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# ---- the binary itself ----

# libbpf is linked in: the binary runs where the distribution's is older.
begin_case
if ! deps=$(ldd "$WEIR" 2>&1); then
	fail "ldd $WEIR: $deps"
elif echo "$deps" | grep -q 'libbpf'; then
	fail "linked against a shared libbpf: $(echo "$deps" | grep libbpf | tr -s ' \t' ' ')"
elif ! "$WEIR" version | grep -q 'libbpf 1\.'; then
	fail "version names no libbpf 1.x: $("$WEIR" version | tr '\n' ' ')"
fi
end_case loader-libbpf-linked-in

# The same object without bpf_loop (as kernels before 5.17 get it) loads,
# and -d says what replaced it.
begin_case
out=$(WEIR_FEATURES_OFF=bpf_loop,xdp_frags wr -d attach ld2 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	fail "attach without bpf_loop: $(echo "$out" | grep -v '^libbpf' | tail -2 | tr '\n' ' ')"
elif ! echo "$out" | grep -q 'has no bpf_loop() (Linux 5.17): the rules are walked in a bounded loop'; then
	fail "-d did not say what replaced bpf_loop: $(echo "$out" | grep -i bpf_loop | head -2)"
elif ! echo "$out" | grep -q 'has no XDP multi-buffer (xdp.frags) (Linux 5.18)'; then
	fail "the missing xdp.frags was not said: $(echo "$out" | grep -i frags | head -2)"
fi
wr detach all >/dev/null 2>&1
end_case loader-loads-without-bpf_loop

# Multi-buffer XDP is asked for only where the kernel has it: a kernel
# before 5.18 refuses the flag outright, so an object that carries it there
# cannot load at all. A veth peer whose MTU needs more than a page takes
# only a multi-buffer program in native mode: with the flag it attaches,
# with xdp_frags switched off it is refused, by name, and nothing is left.
begin_case
in_ns "$NS" ip link add ldj type veth peer name ldjp mtu 9000 &&
	in_ns "$NS" ip link set ldj mtu 9000 up && in_ns "$NS" ip link set ldjp up ||
	fail "jumbo veth"
out=$(wr attach ldj mode native 2>&1) || fail "native attach at MTU 9000 with xdp.frags: $out"
wr detach all >/dev/null 2>&1
out=$(WEIR_FEATURES_OFF=xdp_frags wr attach ldj mode native 2>&1) &&
	fail "attached at MTU 9000 with xdp_frags off: the program still carries the flag"
echo "$out" | grep -q 'its MTU needs multi-buffer XDP.*lower the MTU, or use mode generic or tc' ||
	fail "the refusal does not say why: $(echo "$out" | tail -1)"
[ "$(wrj status | jq '.interfaces | length')" == 0 ] ||
	fail "an interface is attached after the refusal: $(wrj status | jq -c .interfaces)"
expect_ok "generic attach at MTU 9000 with xdp_frags off" wr attach ldj mode generic
wr detach all >/dev/null 2>&1
in_ns "$NS" ip link del ldj 2>/dev/null
end_case loader-xdp-frags-only-where-the-kernel-has-it

# Without the netns cookie in sock_ops (before 5.15) connection limits are
# turned off by name and every other limit works.
begin_case
export WEIR_FEATURES_OFF=sockops_netns_cookie
out=$(wr attach ld2 2>&1) || fail "attach without the sock_ops netns cookie: $out"
echo "$out" | grep -q 'connection limits (conns N) are refused; every other limit works' ||
	fail "the attach did not say connection limits are off: $out"
err=$(wr rule add lc proto tcp dport 22 conns 5 per src 2>&1) && fail "a conns rule was added"
echo "$err" | grep -q 'connection limits need bpf_get_netns_cookie() in sock_ops programs (Linux 5.15)' ||
	fail "the conns rule's refusal does not name the feature: $err"
expect_ok "rate rule" wr rule add lr proto udp dport 53 limit 10pps
[ "$(wrj rule list | jq -r '[.rules[].name] | join(",")')" == lr ] ||
	fail "rules after the refusal: $(wrj rule list | jq -c '[.rules[].name]')"
unset WEIR_FEATURES_OFF
wr detach all >/dev/null 2>&1
end_case loader-conns-off-without-sockops-netns-cookie

# A feature weir cannot do without is refused by name, nothing left behind.
begin_case
out=$(WEIR_FEATURES_OFF=cmpxchg wr attach ld2 2>&1)
rc=$?
if [ $rc -ne 1 ]; then
	fail "attach without compare-and-swap exited $rc: $out"
elif ! echo "$out" | grep -q 'has no BPF atomic compare-and-swap, which weir needs (Linux 5.12 or later)'; then
	fail "the refusal does not name the feature: $out"
elif echo "$out" | grep -qi 'verifier\|permission denied'; then
	fail "the refusal shows a verifier error: $out"
elif [ -n "$(ls -A "$ROOT" 2>/dev/null)" ]; then
	fail "left pins behind: $(ls "$ROOT" | head -3 | tr '\n' ' ')"
fi
end_case loader-refuses-missing-cmpxchg-by-name

# ---- options only a load sets ----

begin_case
expect_ok "first attach" wr attach ld0 keys 4096 clock coarse
st=$(wrj status)
[ "$(jq -r .keys.capacity <<<"$st")" == 4096 ] || fail "status keys.capacity: $(jq -c .keys <<<"$st")"
[ "$(jq -r .clock <<<"$st")" == coarse ] || fail "status clock: $(jq -r .clock <<<"$st")"
wr status | grep -q '^clock: coarse$' || fail "text status has no 'clock: coarse'"
wr status | grep -q 'per-source buckets: capacity 4096' || fail "text status has no capacity 4096"
[ -z "$(jq -r '.key_capacity // empty' <<<"$st")" ] || fail "status still has key_capacity"
end_case loader-status-shows-keys-and-clock

# keys or clock that differ from what is loaded: exit 1, naming detach all, nothing attached.
for opt in "keys 8192" "clock precise" "clock auto"; do
	begin_case
	# shellcheck disable=SC2086
	out=$(wr attach ld1 $opt 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] || fail "attach ld1 $opt exited $rc, want 1: $out"
	[[ "$out" == *"detach all"* ]] || fail "the refusal does not say 'detach all': $out"
	n=$(wrj status | jq '[.interfaces[] | select(.interface == "ld1")] | length')
	[ "$n" == 0 ] || fail "ld1 was attached despite the refusal"
	end_case "loader-refuses-$(echo "$opt" | tr ' ' -)-once-loaded"
done

begin_case
# The same values as loaded (keys rounded as the loader rounds them) are no change.
expect_ok "attach ld1 with the loaded options" wr attach ld1 keys 4093 clock coarse
expect_ok "attach ld2 without options" wr attach ld2
n=$(wrj status | jq '.interfaces | length')
[ "$n" == 3 ] || fail "$n interfaces attached, want 3"
end_case loader-accepts-same-options

# Pins an older build left (one without a map this build has, as
# wr_src_drops was added): commands that need the map say so, naming
# 'detach all', and change nothing; the program stays attached.
begin_case
if [ ! -e "$ROOT/wr_src_drops" ]; then
	fail "no pin $ROOT/wr_src_drops to take away: $(ls "$ROOT" | tr '\n' ' ')"
else
	mv "$ROOT/wr_src_drops" "$ROOT/wr_src_drops_away"
	out=$(wr stats 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] || fail "stats over an older build's pins exited $rc, want 1: $out"
	[[ "$out" == *"an older build, without wr_src_drops"*"detach all"* ]] ||
		fail "the error does not say what is missing and what to do: $out"
	out=$(wr rule add old-pins limit 10/s 2>&1) && fail "rule add over an older build's pins succeeded: $out"
	mv "$ROOT/wr_src_drops_away" "$ROOT/wr_src_drops"
	n=$(wrj status | jq '.interfaces | length')
	[ "$n" == 3 ] || fail "$n interfaces attached after the refusals, want 3"
	wrj rule list | jq -e '.rules[] | select(.name == "old-pins")' >/dev/null 2>&1 &&
		fail "the refused rule add left rule old-pins"
	expect_ok "stats with the pin back" wr stats
fi
end_case loader-older-build-pins-named

# ---- the connection counter on the cgroup root ----

# Where the loader looks, in its order (user/lib/loader.c cgroup2_root).
CG=""
for d in /sys/fs/cgroup /sys/fs/cgroup/unified /run/weir/cgroup2; do
	[ "$(stat -f -c %T "$d" 2>/dev/null)" == cgroup2fs ] && { CG=$d; break; }
done
# attached ID: is program ID attached as sock_ops to the cgroup root?
# (bpftool prints nothing at all when nothing is attached)
attached() {
	local out
	out=$(bpftool -j cgroup show "$CG" 2>/dev/null)
	[ -n "$out" ] && [ "$(jq --argjson id "$1" \
		'[.[] | select(.id == $id and (.attach_type | test("sock_ops")))] | length' <<<"$out")" -gt 0 ]
}
if [ -z "$CG" ]; then
	skip loader-conn-counter "no cgroup v2 hierarchy mounted"
else
	PID=$(bpftool -j prog show pinned "$ROOT/prog_sockops" 2>/dev/null | jq -r .id)
	begin_case
	[ -n "$PID" ] && [ "$PID" != null ] || fail "no pinned prog_sockops"
	[ ! -e "$ROOT/cgroup_sockops" ] || fail "cgroup_sockops pinned with no connection limit"
	attached "$PID" && fail "weir_sockops (id $PID) on $CG with no connection limit"
	expect_ok "rule add (rate)" wr rule add dns proto udp dport 53 limit 10pps
	attached "$PID" && fail "weir_sockops on $CG after a rule without a connection limit"
	end_case loader-no-conn-counter-without-conn-limit

	begin_case
	expect_ok "rule add (conns)" wr rule add web proto tcp dport 443 conns 10 per src
	[ -e "$ROOT/cgroup_sockops" ] || fail "no cgroup_sockops after a connection limit"
	attached "$PID" || fail "weir_sockops (id $PID) is not on $CG"
	expect_ok "rule add (second conns)" wr rule add ssh proto tcp dport 22 conns 2 per src
	expect_ok "rule del web" wr rule del web
	attached "$PID" || fail "the counter went while rule ssh still has a connection limit"
	end_case loader-conn-counter-with-conn-limit

	begin_case
	expect_ok "rule del ssh" wr rule del ssh
	[ ! -e "$ROOT/cgroup_sockops" ] || fail "cgroup_sockops still pinned"
	attached "$PID" && fail "weir_sockops still on $CG after the last connection limit went"
	n=$(bpftool -j map dump pinned "$ROOT/wr_conns" | jq length)
	[ "$n" == 0 ] || fail "wr_conns keeps $n counts"
	expect_ok "rule add (conns again)" wr rule add web proto tcp dport 443 conns 10 per src
	attached "$PID" || fail "not attached again"
	expect_ok "detach all" wr detach all
	attached "$PID" && fail "weir_sockops on $CG after detach all"
	end_case loader-conn-counter-removed-with-last-conn-limit
fi

# ---- the same through the daemon, which has dropped its privileges by then ----

if [ -n "$CG" ]; then
	begin_case
	TMP=$(mktemp -d)
	trap 'cleanup; rm -rf "$TMP"' EXIT
	R2=$(new_root ldd)
	printf 'rules:\n  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 10pps } ] }\nmetrics: off\n' \
		>"$TMP/a.yaml"
	printf 'rules:\n  - { name: web, proto: tcp, dport: 443, limits: [ { conns: 5 } ] }\nmetrics: off\n' \
		>"$TMP/b.yaml"
	chmod 600 "$TMP"/*.yaml
	cp "$TMP/a.yaml" "$TMP/run.yaml"
	# until_state attached|detached ID: bounded wait (10 s) for the counter to be so
	detached() { ! attached "$1"; }
	until_state() {
		local i
		for i in $(seq 100); do "$1" "$2" && return 0; sleep 0.1; done
		return 1
	}
	start_daemon "$NS" "$R2" "$TMP/run.yaml" "$TMP/log" ||
		fail "the daemon did not start: $(tail -2 "$TMP/log")"
	PID=$(bpftool -j prog show pinned "$R2/prog_sockops" 2>/dev/null | jq -r .id)
	attached "$PID" && fail "counter attached with no connection limit in the config"
	cp "$TMP/b.yaml" "$TMP/run.yaml" && kill -HUP "$DPID"
	until_state attached "$PID" || fail "the daemon did not attach the counter for a connection limit: $(tail -2 "$TMP/log")"
	cp "$TMP/a.yaml" "$TMP/run.yaml" && kill -HUP "$DPID"
	until_state detached "$PID" || fail "the daemon left the counter attached after the last connection limit went"
	kill -0 "$DPID" 2>/dev/null || fail "the daemon died: $(tail -2 "$TMP/log")"
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	in_ns "$NS" "$WEIR" --bpffs "$R2" detach all >/dev/null 2>&1
	end_case loader-daemon-conn-counter-follows-reloads
fi

# ---- TC mode through clsact (what kernels before 6.6, without tcx, get) ----

begin_case
R3=$(new_root ldt)
wrt() { in_ns "$NS" "$WEIR" --bpffs "$R3" "$@"; }
in_ns "$NS" ip link add lt0 type veth peer name ltp0 && in_ns "$NS" ip link set lt0 up &&
	in_ns "$NS" ip link add lt1 type veth peer name ltp1 && in_ns "$NS" ip link set lt1 up ||
	fail "veth"
# lt1 has a clsact qdisc and a filter of someone else's already.
in_ns "$NS" tc qdisc add dev lt1 clsact
# (a classic BPF filter that matches nothing: cls_bpf is what weir needs anyway)
in_ns "$NS" tc filter add dev lt1 ingress pref 7 protocol all bpf bytecode "1,6 0 0 0," classid 1:1 ||
	fail "cannot add the other filter"
expect_ok "attach lt0 through clsact" wrt attach lt0 mode tc tc-hook clsact
expect_ok "attach lt1 through clsact" wrt attach lt1 mode tc tc-hook clsact
for d in lt0 lt1; do
	in_ns "$NS" tc filter show dev $d ingress | grep -q 'handle 0x51c3 weir_tc' ||
		fail "no weir_tc filter on $d: $(in_ns "$NS" tc filter show dev $d ingress | tr '\n' ' ')"
done
hooks=$(in_ns "$NS" "$WEIR" -j --bpffs "$R3" status |
	jq -r '[.interfaces[] | "\(.interface):\(.mode):\(.tc_hook)"] | sort | join(",")')
[ "$hooks" == "lt0:tc:clsact,lt1:tc:clsact" ] || fail "status shows $hooks"
out=$(wrt attach lt0 mode tc tc-hook clsact 2>&1)
[ $? -eq 1 ] || fail "a second attach of lt0 did not fail with 1: $out"
expect_ok "detach lt0" wrt detach lt0
in_ns "$NS" tc qdisc show dev lt0 | grep -q clsact && fail "the clsact qdisc weir made on lt0 stayed"
expect_ok "detach all" wrt detach all
in_ns "$NS" tc filter show dev lt1 ingress | grep -q weir_tc && fail "weir's filter stayed on lt1"
in_ns "$NS" tc filter show dev lt1 ingress | grep -q "pref 7 bpf" ||
	fail "detach removed the other filter on lt1"
in_ns "$NS" tc qdisc show dev lt1 | grep -q clsact || fail "detach removed the clsact qdisc it did not make"
[ ! -e "$R3" ] || fail "detach all left $R3: $(ls "$R3")"
end_case loader-tc-through-clsact
