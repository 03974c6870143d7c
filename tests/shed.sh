#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Adaptive shedding end to end, through `weir run` with short configured
# constants (delay 1s, ramp 4s: configuration, not a test-only code path):
# a file signal at 1.0 sheds class 3 before class 2 and class 0 never; at
# 0.0 traffic comes back gradually; a real listener that nobody accepts from
# drives the accept-queue signal up. Orders and counts are asserted, never
# durations: the test polls the pinned state up to a bounded deadline.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'stop_daemon; cleanup; rm -rf "$TMP"' EXIT
require_root shed

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok shed-setup "no namespaces"; exit 1; }
ROOT=$(new_root shed)
if ! ip link add sh-s netns "$SND" type veth peer name sh-r netns "$RCV"; then
	not_ok shed-setup "no veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/24 dev sh-r
for a in 2 3 4; do ip -n "$SND" addr add 198.18.0.$a/24 dev sh-s; done
ip -n "$RCV" link set sh-r up
ip -n "$SND" link set sh-s up
ip -n "$RCV" link set lo up

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

DAEMON=
DLOG=
# Each daemon logs to a file of its own, so no earlier log can answer for it.
shed_daemon() {
	DLOG=$(mktemp "$TMP/daemon.XXXXXX")
	start_daemon "$RCV" "$ROOT" "$1" "$DLOG" && DAEMON=$DPID && return 0
	DAEMON=$DPID
	echo "# daemon did not come up: $(cat "$DLOG")"
	return 1
}
stop_daemon() {
	if [ -n "${DAEMON:-}" ]; then
		kill "$DAEMON" 2>/dev/null
		wait "$DAEMON" 2>/dev/null
	fi
	DAEMON=
}

# prob CLASS: that class's drop probability now; shed CLASS: its shed count.
prob() { wrj shed status | jq ".classes[$1].probability"; }
shed() { wrj shed status | jq ".classes[$1].shed_packets"; }
util() { wrj shed status | jq ".utilization"; }
util_is() { [ "$(util)" = "$1" ]; }
# until_true SECS CMD...: run CMD every 0.1 s until it succeeds, for at most SECS.
until_true() {
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
# above FN ARG LIMIT: FN ARG prints a number above LIMIT.
above() { awk -v v="$($1 "${2:-}")" -v l="$3" 'BEGIN { exit !(v > l) }'; }

# Classes by source: .2 is critical (0), .3 class 2, .4 class 3.
cat >"$TMP/file.yaml" <<YAML
interfaces: [ { name: sh-r, mode: native } ]
rules:
  - { name: crit, src: 198.18.0.2/32, class: 0, limits: [ { rate: 1mpps } ] }
  - { name: mid, src: 198.18.0.3/32, class: 2, limits: [ { rate: 1mpps } ] }
  - { name: low, src: 198.18.0.4/32, class: 3, limits: [ { rate: 1mpps } ] }
shedding:
  interval: 200ms
  signals: [ { file: $TMP/utilization } ]
  curve: { good: 0.7, bad: 0.8, delay: 1s, ramp: 4s }
  default-class: 3
metrics: off
YAML
echo 0.0 >"$TMP/utilization"

begin_case
if ! shed_daemon "$TMP/file.yaml"; then
	fail "daemon did not start: $(cat "$DLOG")"
else
	# Steady traffic from all three classes for the whole case (bounded: 30 s).
	ip netns exec "$SND" "$BUILD/wrgen" --dst 198.18.0.1 --dport 9000 \
		--src 198.18.0.2,198.18.0.3,198.18.0.4 --rate 300 --duration 30 >/dev/null &
	GEN=$!
	sleep 0.5
	[ "$(shed 3)" = 0 ] || fail "class 3 shed at u = 0"
	echo 1.0 >"$TMP/utilization"
	# Class 3 first: when it starts, class 2 has shed nothing.
	if until_true 15 above shed 3 0; then
		[ "$(shed 2)" = 0 ] || fail "class 2 shed as early as class 3"
	else
		fail "class 3 never shed at u = 1"
	fi
	# Then class 2, once class 3 is shed entirely.
	until_true 15 above shed 2 0 || fail "class 2 never shed at u = 1"
	[ "$(prob 3)" = 1 ] || fail "class 3 probability $(prob 3) with class 2 shedding"
	[ "$(shed 0)" = 0 ] || fail "class 0 shed"
	[ "$(prob 0)" = 0 ] || fail "class 0 probability $(prob 0)"
	wrj shed status | jq -e '.signals[0].value == 1 and .utilization == 1' >/dev/null ||
		fail "status does not show the file signal at 1"
	grep -q "shedding amount S" "$DLOG" || fail "no change of S logged"

	# Recovery: gradual, through probabilities between 0 and 1, down to 0.
	echo 0.0 >"$TMP/utilization"
	seen=()
	for _ in $(seq 150); do
		p=$(prob 3)
		seen+=("$p")
		[ "$p" = 0 ] && break
		sleep 0.1
	done
	[ "${seen[-1]}" = 0 ] || fail "class 3 still shed after 15 s at u = 0"
	mid=$(printf '%s\n' "${seen[@]}" | awk '$1 > 0 && $1 < 1' | sort -u | wc -l)
	[ "$mid" -ge 2 ] || fail "recovery not gradual: class 3 went ${seen[*]}"
	echo "# class 3 drop probability on the way back: ${seen[*]}"
	kill "$GEN" 2>/dev/null
	wait "$GEN" 2>/dev/null
	[ "$(shed 0)" = 0 ] || fail "class 0 shed during recovery"
fi
stop_daemon
end_case shed-file-signal-classes-in-order

# The thresholds of a controller that is gone expire instead of shedding forever.
begin_case
echo 1.0 >"$TMP/utilization"
if shed_daemon "$TMP/file.yaml"; then
	until_true 15 above prob 3 0 || fail "no shedding at u = 1"
	kill -9 "$DAEMON" || fail "daemon gone before kill -9: $(cat "$DLOG")"
	wait "$DAEMON" 2>/dev/null
	DAEMON=
	# The last step promised its thresholds for 5 s; after that, none.
	sleep 6
	before=$(shed 3)
	ip netns exec "$SND" "$BUILD/wrgen" --dst 198.18.0.1 --dport 9000 --src 198.18.0.4 \
		--rate 200 --count 100 --duration 5 >/dev/null
	[ "$(shed 3)" = "$before" ] || fail "a dead controller still sheds: $before -> $(shed 3)"
else
	fail "daemon did not start"
fi
echo 0.0 >"$TMP/utilization"
end_case shed-expires-without-controller

# Accept queue: a listener nobody accepts from fills its backlog; u rises.
cat >"$TMP/aq.yaml" <<YAML
interfaces: [ { name: sh-r, mode: native } ]
rules:
  - { name: low, src: 198.18.0.4/32, class: 3, limits: [ { rate: 1mpps } ] }
shedding:
  interval: 200ms
  signals: [ { accept-queue: [ 8080 ] } ]
  curve: { good: 0.7, bad: 0.8, delay: 1s, ramp: 4s }
metrics: off
YAML
begin_case
ip netns exec "$RCV" "$BUILD/wrlisten" --listen 198.18.0.1 --port 8080 --backlog 4 \
	--duration 40 --ready-file "$TMP/listening" &
LISTENER=$!
until_true 5 test -e "$TMP/listening" || fail "listener did not start"
if shed_daemon "$TMP/aq.yaml"; then
	until_true 5 util_is 0 || fail "an empty accept queue does not read 0: $(util)"
	# Connections the kernel completes but nobody accepts: the queue fills.
	# (In a subshell each, so they are not this shell's jobs; timeout ends them.)
	for _ in $(seq 6); do
		(ip netns exec "$SND" timeout 20 bash -c \
			"exec 3<>/dev/tcp/198.18.0.1/8080 && sleep 19" 2>/dev/null &)
	done
	until_true 10 above util "" 0.99 ||
		fail "a full accept queue did not drive u to 1: $(wrj shed status | jq -c .signals)"
	until_true 15 above prob 3 0 || fail "u from the accept queue did not start shedding"
else
	fail "daemon did not start"
fi
stop_daemon
kill "$LISTENER" 2>/dev/null
wait "$LISTENER" 2>/dev/null
end_case shed-accept-queue-signal

# Operators in an incident: off, set, on.
begin_case
wr shed off >/dev/null || fail "shed off"
[ "$(wrj shed status | jq .enabled)" = false ] || fail "off not shown"
[ "$(prob 3)" = 0 ] || fail "off leaves class 3 at $(prob 3)"
wr shed on >/dev/null && wr shed set 0.5 >/dev/null || fail "on / set"
[ "$(prob 3)" = 1 ] && [ "$(prob 2)" = 0.5 ] && [ "$(prob 1)" = 0 ] ||
	fail "set 0.5 gave $(prob 3) $(prob 2) $(prob 1)"
expect_fail "set out of range" wr shed set 1.5
wr shed set -0.2 >/dev/null
end_case shed-operator-commands
