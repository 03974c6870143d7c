#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Faults: what weir does when something around it breaks. Every case runs
# in namespaces and on bpffs roots of this suite's own (tests/lib.sh); the
# host's interfaces and /sys/fs/bpf/weir are never touched.
#
#   the daemon killed (SIGKILL) at random points in a stream of reloads: the
#     rule set in force is config A or config B, never a mix
#   the pin directory removed, and pins replaced by other objects, while
#     running: clear errors, no crash, nothing foreign attached
#   the interface removed while attached (and created again)
#   a second daemon on another root for the same interface; another XDP
#     program already on the interface: refused, that program untouched
#   a full deny list; deny files that never end (a FIFO, /dev/zero)
#   jumbo frames at MTU 9000 through native XDP (or a refusal that names
#     the MTU), generic XDP and TC
# The data path's own fault (a per-source key whose set wr_state lacks, fail
# open and fail closed) is in tests/bpf_hostile.c: a full table evicts, it
# never fails, so only the test object can make it.
#
# FAULT_KILLS: daemons killed in the reload case (default 30).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root faults

SLGEN=$BUILD/wrgen
FAULT_KILLS=${FAULT_KILLS:-30}
TMP=$(mktemp -d)
# cleanup (tests/lib.sh) also kills the daemons listed in DAEMONS.
trap 'cleanup; rm -rf "$TMP"' EXIT
# Every failure as a comment too, not only the first.
fail() { echo "# $*"; [ -z "$CASE_FAILED" ] && CASE_FAILED="$*"; return 0; }

for tool in jq bpftool; do
	if ! command -v $tool >/dev/null; then
		skip faults "$tool is missing (make deps installs it)"
		exit 0
	fi
done
for b in "$WEIR" "$SLGEN" "$BUILD/bench/trivial.bpf.o"; do
	[ -e "$b" ] || { not_ok faults-setup "$b is missing (make)"; exit 1; }
done

NS=$(new_netns f) || { not_ok faults-setup "no namespace"; exit 1; }
# veth pairs inside NS: (fa0, fa1) for daemons, more per case
veth() { in_ns "$NS" ip link add "$1" type veth peer name "$2" && in_ns "$NS" ip link set "$1" up &&
	in_ns "$NS" ip link set "$2" up; }
veth fa0 fa1 || { not_ok faults-setup "cannot create veth"; exit 1; }

# start_daemon (tests/lib.sh) in NS.
run_daemon() { start_daemon "$NS" "$@"; }
# Exit status of a command, and whether a signal or a sanitizer ended it.
died() { [ "$1" -ge 128 ] || grep -qE 'Sanitizer|stack smashing|Segmentation|core dumped' "$2"; }
# A rule set as `rule list` or `check` says it, identities aside.
canon() { jq -cS '[.rules[] | del(.uid)]'; }
xdp_prog_id() { in_ns "$NS" ip -j -d link show "$1" | jq -r '.[0].xdp.prog.id // "none"'; }
xdp_prog_name() { in_ns "$NS" ip -j -d link show "$1" | jq -r '.[0].xdp.prog.name // "none"'; }

# ---- 1. the daemon killed in the middle of reloads ----

# A and B: different rules under some of the same names, in another order,
# so that any mixture of the two is neither.
cat >"$TMP/A.yaml" <<'EOF'
interfaces: [ { name: fa0, mode: native } ]
rules:
  - { name: ssh, proto: tcp, dport: 22, tcp-flags: syn, limits: [ { rate: 10pps, burst: 20 } ] }
  - name: dns
    proto: udp
    dport: 53
    limits: [ { rate: 100pps, per: src }, { rate: 50kpps, per: all } ]
  - { name: web, proto: tcp, dport: "80-443", limits: [ { rate: 8mbit, per: src/24 } ] }
  - { name: ping, family: ipv4, proto: icmp, icmp-type: 8, limits: [ { rate: 20pps } ] }
  - { name: a-only, proto: udp, dport: 9000, limits: [ { rate: 1kpps } ] }
metrics: off
EOF
cat >"$TMP/B.yaml" <<'EOF'
interfaces: [ { name: fa0, mode: native } ]
rules:
  - { name: ping, family: ipv4, proto: icmp, icmp-type: 8, limits: [ { rate: 40pps } ] }
  - { name: b-only, proto: udp, dport: 9001, limits: [ { rate: 2kpps, per: all } ] }
  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 200pps, per: src } ] }
  - { name: ssh, proto: tcp, dport: 2222, tcp-flags: syn, limits: [ { rate: 5pps, burst: 5 } ] }
  - { name: web, proto: tcp, dport: "80-443", action: dry-run, limits: [ { rate: 16mbit } ] }
  - { name: b-two, proto: udp, dport: 9002, limits: [ { rate: 3kpps } ] }
metrics: off
EOF
want_a=$("$WEIR" -j check "$TMP/A.yaml" | canon)
want_b=$("$WEIR" -j check "$TMP/B.yaml" | canon)
if [ -z "$want_a" ] || [ -z "$want_b" ] || [ "$want_a" == "$want_b" ]; then
	not_ok faults-setup "configs A and B do not check: $want_a / $want_b"
	exit 1
fi

# Reloads as fast as the daemon takes them: the file swapped (inotify) and SIGHUP.
reloader() {
	local pid=$1 i=0
	while :; do
		if ((i++ % 2)); then cfg=A; else cfg=B; fi
		cp "$TMP/$cfg.yaml" "$TMP/cfg/.tmp"
		mv -f "$TMP/cfg/.tmp" "$TMP/cfg/weir.yaml"
		kill -HUP "$pid" 2>/dev/null || return 0
		sleep 0.00$((RANDOM % 5))
	done
}
# Reads the live rule set over and over; every reading that is neither A nor B goes to $1.
poller() {
	local have
	while :; do
		have=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" rule list 2>/dev/null |
			canon 2>/dev/null)
		[ -n "$have" ] && [ "$have" != "$want_a" ] && [ "$have" != "$want_b" ] &&
			echo "$have" >>"$1"
	done
}

begin_case
ROOT=$(new_root reload)
mkdir -p "$TMP/cfg"
cp "$TMP/A.yaml" "$TMP/cfg/weir.yaml"
seen_a=0 seen_b=0 reloads=0 kills=0
: >"$TMP/mixed"
for i in $(seq "$FAULT_KILLS"); do
	if ! run_daemon "$ROOT" "$TMP/cfg/weir.yaml" "$TMP/reload.log"; then
		fail "daemon $i did not start: $(tail -3 "$TMP/reload.log" | tr '\n' ' ')"
		break
	fi
	reloader "$DPID" & R=$!
	poller "$TMP/mixed" & P=$!
	sleep 0.$((50 + RANDOM % 400))
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	kills=$((kills + 1))
	kill "$R" "$P" 2>/dev/null
	wait "$R" "$P" 2>/dev/null
	reloads=$((reloads + $(grep -c '^weir: reloaded ' "$TMP/reload.log")))
	have=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" rule list | canon)
	if [ "$have" == "$want_a" ]; then
		seen_a=$((seen_a + 1))
	elif [ "$have" == "$want_b" ]; then
		seen_b=$((seen_b + 1))
	else
		fail "after kill $i the rule set is neither A nor B: $have"
		break
	fi
	# The data path still has it: the program is attached and counts.
	[ "$(xdp_prog_name fa0)" == weir_xdp ] || fail "after kill $i fa0 runs $(xdp_prog_name fa0)"
done
echo "# $kills daemons killed by SIGKILL during $reloads completed reloads;" \
	"left in force: A $seen_a times, B $seen_b times"
if [ -s "$TMP/mixed" ]; then
	fail "rule list read a set that is neither A nor B $(wc -l <"$TMP/mixed") times," \
		"e.g. $(head -1 "$TMP/mixed")"
fi
[ "$reloads" -gt "$kills" ] ||
	fail "only $reloads reloads completed: kills did not land in a stream of reloads"
# One more daemon adopts what was left, and a last reload applies whole.
if run_daemon "$ROOT" "$TMP/cfg/weir.yaml" "$TMP/reload.log"; then
	cp "$TMP/B.yaml" "$TMP/cfg/weir.yaml"
	kill -HUP "$DPID"
	for _ in $(seq 100); do grep -q '^weir: reloaded ' "$TMP/reload.log" && break; sleep 0.05; done
	[ "$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" rule list | canon)" == "$want_b" ] ||
		fail "the last daemon did not apply B"
	kill -TERM "$DPID"
	wait "$DPID" || fail "the last daemon exited $? on SIGTERM"
else
	fail "the last daemon did not start: $(tail -3 "$TMP/reload.log" | tr '\n' ' ')"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-reload-killed-old-or-new

# ---- 2. the pin directory removed while the daemon runs ----

begin_case
ROOT=$(new_root gone)
cp "$TMP/A.yaml" "$TMP/gone.yaml"
if ! run_daemon "$ROOT" "$TMP/gone.yaml" "$TMP/gone.log"; then
	fail "the daemon did not start: $(tail -3 "$TMP/gone.log" | tr '\n' ' ')"
else
	rm -rf "$ROOT"
	# The CLI: a clear "not loaded", no crash.
	for cmd in "rule list" "stats interval 0" "deny list" "top" "detach fa0"; do
		in_ns "$NS" "$WEIR" --bpffs "$ROOT" $cmd >"$TMP/out" 2>&1
		rc=$?
		died "$rc" "$TMP/out" && fail "$cmd died ($rc): $(head -2 "$TMP/out")"
		[ "$rc" -eq 1 ] || fail "$cmd exited $rc"
		grep -qE 'not loaded|not attached|nothing under' "$TMP/out" ||
			fail "$cmd: unclear error: $(head -2 "$TMP/out" | tr '\n' ' ')"
	done
	st=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" status | jq -r .loaded)
	[ "$st" == false ] || fail "status says loaded: $st"
	# The daemon survives, and says what happened when asked to reload.
	kill -HUP "$DPID"
	sleep 1
	kill -0 "$DPID" 2>/dev/null || fail "the daemon died after its pins were removed"
	echo "# the daemon after its pins were removed and SIGHUP:"
	grep -E '^weir: ' "$TMP/gone.log" | tail -4 | sed 's/^/#   /'
	if grep -q '^weir: reloaded ' "$TMP/gone.log"; then
		# It says it reloaded: then what it enforces must be there.
		have=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" rule list 2>/dev/null | canon)
		[ "$have" == "$want_a" ] || fail "the daemon says it reloaded, the rule set is: ${have:-none}"
		[ "$(xdp_prog_name fa0)" == weir_xdp ] || fail "fa0 runs $(xdp_prog_name fa0)"
	elif ! grep -E '^weir: ' "$TMP/gone.log" | grep -F -- "$ROOT" | grep -qvE 'running on'; then
		fail "the daemon's error does not say that the pinned state under $ROOT is gone:" \
			"$(grep -E '^weir: ' "$TMP/gone.log" | tail -2 | tr '\n' ' ')"
	fi
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	rc=$?
	[ "$rc" -lt 128 ] || fail "the daemon died of signal $((rc - 128)) on SIGTERM"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
in_ns "$NS" ip link set dev fa0 xdp off 2>/dev/null
end_case faults-pins-removed

# ---- 3. pins replaced by other maps ----

# replace_pin ROOT NAME bpftool-map-create-args...
replace_pin() {
	local root=$1 name=$2
	shift 2
	rm -f "$root/$name" && bpftool map create "$root/$name" "$@" name "$name"
}
begin_case
ROOT=$(new_root tamper)
in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add r1 proto udp dport 53 limit 10pps >/dev/null ||
	fail "rule add"
for tamper in "wr_config:type array key 4 value 4096 entries 1" \
	      "wr_config:type hash key 4 value 32 entries 16" \
	      "wr_rulesets:type array key 4 value 64 entries 2" \
	      "wr_global:type array key 4 value 8 entries 1"; do
	name=${tamper%%:*}
	in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
	in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add r1 proto udp dport 53 limit 10pps >/dev/null
	# shellcheck disable=SC2086
	replace_pin "$ROOT" "$name" ${tamper#*:} || { fail "cannot replace $name"; continue; }
	for cmd in "status" "rule list" "stats interval 0" "rule add r2 limit 1pps" "set fail closed" \
		   "deny add 198.18.0.0/24" "top"; do
		in_ns "$NS" "$WEIR" --bpffs "$ROOT" $cmd >"$TMP/out" 2>&1
		rc=$?
		if died "$rc" "$TMP/out"; then
			fail "$name replaced by (${tamper#*:}): '$cmd' died (exit $rc)"
		elif [ "$cmd" != status ] && [ "$rc" -eq 0 ]; then
			fail "$name replaced by (${tamper#*:}): '$cmd' succeeded"
		elif [ "$cmd" != status ] && ! grep -q "$name" "$TMP/out"; then
			fail "$name replaced by (${tamper#*:}): '$cmd' does not name it: $(head -1 "$TMP/out")"
		fi
	done
done
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-pin-tampered-map

# ---- 4. the pinned program replaced by another ----

begin_case
ROOT=$(new_root tamperprog)
veth fp0 fp1
in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add r1 proto udp dport 53 limit 10pps >/dev/null ||
	fail "rule add"
rm -f "$ROOT/prog_xdp"
bpftool prog load "$BUILD/bench/trivial.bpf.o" "$ROOT/prog_xdp" type xdp || fail "cannot pin trivial"
out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fp0 2>&1)
rc=$?
name=$(xdp_prog_name fp0)
echo "# attach with a foreign prog_xdp pin: exit $rc, fp0 runs $name: $out"
[ "$name" == none ] || [ "$name" == weir_xdp ] ||
	fail "weir attached the program it found at $ROOT/prog_xdp ($name) to fp0"
[ "$rc" -ne 0 ] || [ "$name" == weir_xdp ] || fail "attach exited 0"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
in_ns "$NS" ip link set dev fp0 xdp off 2>/dev/null
end_case faults-pin-tampered-prog

# ---- 5. the interface removed while attached ----

begin_case
ROOT=$(new_root ifgone)
veth fi0 fi1
veth fj0 fj1
in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fi0 mode generic >/dev/null || fail "attach fi0"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fj0 mode tc >/dev/null || fail "attach fj0"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add keep proto udp dport 53 limit 10pps >/dev/null ||
	fail "rule add"
in_ns "$NS" ip link del fi0
in_ns "$NS" ip link del fj0
in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" status >"$TMP/out" 2>&1
rc=$?
died "$rc" "$TMP/out" && fail "status died"
gone=$(jq -r '[.interfaces[] | select(.interface_gone)] | length' "$TMP/out")
[ "$gone" == 2 ] || fail "status does not say both interfaces are gone: $(cat "$TMP/out")"
# Named and moded as they were attached, not "ifindexN" and "xdp".
seen=$(jq -r '[.interfaces[] | "\(.interface):\(.mode)"] | sort | join(",")' "$TMP/out")
[ "$seen" == "fi0:generic,fj0:tc" ] || fail "status shows $seen, want fi0:generic,fj0:tc"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" status | grep -q "interface gone: 'weir detach fi0'" ||
	fail "text status does not say the interface is gone and how to remove it"
# detach by the name it had: only that link goes; rules and the other link stay.
out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach fi0 2>&1) || fail "detach fi0 (gone): $out"
[[ "$out" == *"detached from fi0"* ]] || fail "detach fi0 said: $out"
left=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" status | jq -r '[.interfaces[].interface] | join(",")')
[ "$left" == fj0 ] || fail "after detach fi0, status shows [$left], want [fj0]"
n=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" rule list | jq length)
[ "$n" == 1 ] || fail "detach of a gone interface removed rules ($n left)"
out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach fi0 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "a second detach fi0 exited $rc"
[[ "$out" == *fi0* ]] || fail "unclear error: $out"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach fj0 >/dev/null || fail "detach fj0 (gone)"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null || fail "detach all"
[ ! -e "$ROOT" ] || fail "detach all left $ROOT"
end_case faults-interface-removed

# ---- 6. ... under the daemon, and created again ----

begin_case
ROOT=$(new_root ifback)
veth fr0 fr1
cat >"$TMP/ifback.yaml" <<'EOF'
interfaces: [ { name: fr0, mode: native } ]
rules:
  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 10pps } ] }
metrics: off
events: { interval: 1s }
EOF
if ! run_daemon "$ROOT" "$TMP/ifback.yaml" "$TMP/ifback.log"; then
	fail "the daemon did not start: $(tail -3 "$TMP/ifback.log" | tr '\n' ' ')"
else
	in_ns "$NS" ip link del fr0
	sleep 1.5
	kill -0 "$DPID" 2>/dev/null || fail "the daemon died when its interface went"
	in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" status | jq -e '[.interfaces[] | select(.interface_gone)] | length == 1' \
		>/dev/null || fail "status does not say the interface is gone"
	veth fr0 fr1
	# docs/service.md: an interface that does not exist (yet) is retried every event interval.
	for _ in $(seq 40); do [ "$(xdp_prog_name fr0)" == weir_xdp ] && break; sleep 0.1; done
	[ "$(xdp_prog_name fr0)" == weir_xdp ] ||
		fail "fr0 created again is not protected after 4 event intervals (only a reload attaches it)"
	kill -HUP "$DPID"
	for _ in $(seq 40); do [ "$(xdp_prog_name fr0)" == weir_xdp ] && break; sleep 0.1; done
	[ "$(xdp_prog_name fr0)" == weir_xdp ] || fail "fr0 not attached after a reload either"
	kill -TERM "$DPID"
	wait "$DPID" || fail "exit status $? on SIGTERM"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-interface-recreated

# ---- 7. two roots, one interface ----

begin_case
ROOT=$(new_root first)
ROOT2=$(new_root second)
veth fs0 fs1
in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fs0 >/dev/null || fail "first attach"
id=$(xdp_prog_id fs0)
out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT2" attach fs0 2>&1) && fail "a second weir attached to fs0"
echo "# $out"
[[ "$out" == *"already has an XDP program (id $id"* ]] || fail "unclear error: $out"
[ "$(xdp_prog_id fs0)" == "$id" ] || fail "the first program was replaced: $(xdp_prog_id fs0)"
# a daemon on the second root that names fs0 keeps running, and leaves it
printf 'interfaces: [ { name: fs0 } ]\nmetrics: off\n' >"$TMP/second.yaml"
if run_daemon "$ROOT2" "$TMP/second.yaml" "$TMP/second.log"; then
	grep -q "already has an XDP program (id $id" "$TMP/second.log" ||
		fail "the daemon did not say why: $(grep '^weir:' "$TMP/second.log" | tr '\n' ' ')"
	[ "$(xdp_prog_id fs0)" == "$id" ] || fail "the daemon replaced the first program"
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
else
	fail "the daemon on the second root did not run: $(tail -3 "$TMP/second.log" | tr '\n' ' ')"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT2" detach all >/dev/null 2>&1
[ "$(xdp_prog_id fs0)" == "$id" ] || fail "detach all on the second root removed the first program"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-second-root-same-interface

# ---- 8. another XDP program already attached ----

begin_case
ROOT=$(new_root foreign)
veth fx0 fx1
in_ns "$NS" ip link set dev fx0 xdp obj "$BUILD/bench/trivial.bpf.o" sec xdp || fail "cannot load trivial"
id=$(xdp_prog_id fx0)
for mode in native generic; do
	out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fx0 mode $mode 2>&1) &&
		fail "attach in $mode mode succeeded"
	[[ "$out" == *"already has an XDP program (id $id"* ]] || fail "$mode: unclear error: $out"
	[ "$(xdp_prog_id fx0)" == "$id" ] || fail "$mode: the program on fx0 changed"
done
echo "# $out"
# TC is another hook: weir goes there, the XDP program stays
in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fx0 mode tc >/dev/null || fail "attach mode tc"
[ "$(xdp_prog_id fx0)" == "$id" ] || fail "tc attach changed the XDP program"
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null
[ "$(xdp_prog_id fx0)" == "$id" ] || fail "detach all removed the foreign program"
# a daemon naming fx0 (native) says why and keeps running
printf 'interfaces: [ { name: fx0 } ]\nmetrics: off\n' >"$TMP/foreign.yaml"
if run_daemon "$ROOT" "$TMP/foreign.yaml" "$TMP/foreign.log"; then
	grep -q "already has an XDP program (id $id" "$TMP/foreign.log" || fail "the daemon did not say why"
	kill -HUP "$DPID"
	sleep 0.5
	kill -0 "$DPID" 2>/dev/null || fail "the daemon exited"
	[ "$(xdp_prog_id fx0)" == "$id" ] || fail "the daemon replaced the program"
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
else
	fail "the daemon did not run: $(tail -3 "$TMP/foreign.log" | tr '\n' ' ')"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
[ "$(xdp_prog_id fx0)" == "$id" ] || fail "the foreign program is gone at the end"
end_case faults-foreign-xdp-untouched

# ---- 9. a full deny list ----

begin_case
ROOT=$(new_root full)
# 65536 /32s of 198.18.0.0/16: exactly what the list holds
awk 'BEGIN { for (i = 0; i < 65536; i++) printf "198.18.%d.%d/32\n", i / 256, i % 256 }' >"$TMP/deny65536.txt"
printf 'deny-files: [ deny65536.txt ]\nmetrics: off\n' >"$TMP/full.yaml"
if run_daemon "$ROOT" "$TMP/full.yaml" "$TMP/full.log"; then
	n=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" deny list | jq '[.. | strings | select(test("/"))] | length')
	[ "$n" == 65536 ] || fail "deny list holds $n, want 65536"
	out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" deny add 198.19.0.1/32 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] || fail "deny add to a full list exited $rc"
	[[ "$out" == *"full"* ]] || fail "unclear error: $out"
	echo "# $out"
	# one more in the file: check and the reload refuse it, the running list stays
	echo 198.19.0.1/32 >>"$TMP/deny65536.txt"
	out=$("$WEIR" check "$TMP/full.yaml" 2>&1) && fail "check accepted 65537 prefixes"
	[[ "$out" == *"65537"* ]] || fail "check's error: $out"
	kill -HUP "$DPID"
	for _ in $(seq 100); do grep -q 'reload (SIGHUP) rejected' "$TMP/full.log" && break; sleep 0.05; done
	grep -q 'reload (SIGHUP) rejected' "$TMP/full.log" || fail "the reload was not rejected"
	n=$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" deny list | jq '[.. | strings | select(test("/"))] | length')
	[ "$n" == 65536 ] || fail "after the rejected reload the list holds $n"
	kill -0 "$DPID" 2>/dev/null || fail "the daemon exited"
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
else
	fail "the daemon did not run: $(tail -3 "$TMP/full.log" | tr '\n' ' ')"
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-deny-list-full

# ---- 10. deny files that never end ----

begin_case
mkfifo "$TMP/fifo"
printf 'deny-files: [ %s ]\n' "$TMP/fifo" >"$TMP/fifo.yaml"
timeout 3 "$WEIR" check "$TMP/fifo.yaml" >"$TMP/out" 2>&1
rc=$?
[ "$rc" -ne 124 ] || fail "weir check waits (3 s and more) on a deny file that is a FIFO"
[ "$rc" -ne 0 ] || fail "weir check accepted a FIFO as a deny file"
# a daemon reloading such a file still answers SIGTERM
ROOT=$(new_root fifo)
printf 'metrics: off\n' >"$TMP/fifod.yaml"
if run_daemon "$ROOT" "$TMP/fifod.yaml" "$TMP/fifod.log"; then
	cp "$TMP/fifo.yaml" "$TMP/fifod.yaml"
	kill -HUP "$DPID"
	sleep 0.5
	kill -TERM "$DPID"
	for _ in $(seq 30); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DPID" 2>/dev/null; then
		fail "the daemon is wedged reading the FIFO: no answer to SIGTERM in 3 s"
		kill -9 "$DPID"
	fi
	wait "$DPID" 2>/dev/null
fi
in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
end_case faults-deny-file-fifo

begin_case
printf 'deny-files: [ /dev/zero ]\n' >"$TMP/zero.yaml"
# Under a 1 GiB address-space limit, so a reader that never stops cannot take the machine.
(ulimit -v 1048576; timeout 20 "$WEIR" check "$TMP/zero.yaml") >"$TMP/out" 2>&1
rc=$?
[ "$rc" -ne 124 ] || fail "weir check did not finish reading /dev/zero in 20 s"
[ "$rc" -ne 0 ] || fail "weir check says a config whose deny file is /dev/zero is valid: $(cat "$TMP/out")"
died "$rc" "$TMP/out" && fail "weir check died ($rc)"
end_case faults-deny-file-endless

# ---- 11. jumbo frames at MTU 9000, in every mode ----

begin_case
ROOT=$(new_root jumbo)
SND=$(new_netns jsnd)
in_ns "$NS" ip link add fj0 mtu 9000 type veth peer name fj1 mtu 9000 netns "$SND"
in_ns "$NS" ip addr add 198.18.0.1/24 dev fj0
in_ns "$SND" ip addr add 198.18.0.2/24 dev fj1
in_ns "$NS" ip link set fj0 up
in_ns "$SND" ip link set fj1 up
in_ns "$SND" ip link set lo up
in_ns "$SND" ip neigh replace 198.18.0.1 dev fj1 nud permanent \
	lladdr "$(in_ns "$NS" ip -j link show fj0 | jq -r '.[0].address')"
for mode in native generic tc; do
	in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add big proto udp dport 9000 limit 1gbit >/dev/null
	if ! out=$(in_ns "$NS" "$WEIR" --bpffs "$ROOT" attach fj0 mode $mode 2>&1); then
		echo "# $mode attach at MTU 9000: $out"
		# native XDP may refuse the MTU; then it must say so
		if [ $mode != native ]; then
			fail "attach in $mode mode at MTU 9000: $out"
		elif [[ "$out" != *MTU* ]]; then
			fail "native attach at MTU 9000 fails without naming the MTU: $out"
		fi
		in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
		continue
	fi
	ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport 9000 --src 198.18.0.2 --rate 200 \
		--count 100 --duration 2 --size 8900 --json >"$TMP/jgen.json" 2>&1 ||
		fail "wrgen: $(cat "$TMP/jgen.json")"
	in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" stats interval 0 >"$TMP/jstats" 2>&1
	mal=$(jq -r .global.malformed "$TMP/jstats")
	pb=$(jq -r '.rules[] | select(.name == "big") | .passed_bytes' "$TMP/jstats")
	pp=$(jq -r '.rules[] | select(.name == "big") | .passed_packets' "$TMP/jstats")
	echo "# $mode: 100 datagrams of 8900 bytes: rule passed $pp packets, $pb bytes; malformed $mal"
	[ "$mal" == 0 ] || fail "$mode: $mal jumbo frames counted malformed"
	[ "$pp" == 100 ] || fail "$mode: rule passed $pp of 100"
	[ "$pb" == $((100 * (8900 + 28))) ] || fail "$mode: charged $pb bytes, want $((100 * 8928))"
	in_ns "$NS" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
done
end_case faults-jumbo-mtu
