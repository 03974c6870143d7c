#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo-fleet: three hosts (namespaces, each with its own weir daemon)
# behind one client, a Redis in a namespace of its own, and one abusive
# source sending to all three hosts at 5x a fleet-wide limit of 200 pps.
# Each second prints what each host admitted and the fleet's total against
# the limit; halfway Redis is stopped (SIGSTOP), so the safe fallback takes
# over (each host enforces a third), and then it comes back. Everything is
# removed afterwards, also on Ctrl-C. DEMO_SECS (default 12) sets the length.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export WEIR="$BUILD/weir" BUILD
SECS=${DEMO_SECS:-12}
if [ "$(id -u)" -ne 0 ]; then
	echo "make demo-fleet needs root (network namespaces, XDP)" >&2
	exit 1
fi
. tests/lib.sh
SLGEN=$BUILD/wrgen
TMP=$(mktemp -d)
. tests/fleet_lib.sh
trap 'fleet_down; cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
for t in redis-server redis-cli jq; do
	command -v $t >/dev/null || { echo "demo-fleet: $t is missing (make deps)" >&2; exit 1; }
done
fleet_up || exit 1
for i in 1 2 3; do
	config "$i" fleet
	start_host "$i" || { echo "demo-fleet: host $i did not start: $(tail -3 "$TMP/h$i.log")" >&2; exit 1; }
done
for _ in $(seq 100); do [ "$(wrh 1 -j fleet status | jq '.hosts')" == 3 ] && break; sleep 0.1; done

echo "Fleet limit: ${RATE} pps, burst ${BURST}, per source, scope fleet, synced every ${INTERVAL_MS} ms."
echo "One source sends $((RATE * 5 / 3)) pps to each of three hosts: $((RATE * 5 / 3 * 3)) pps in all."
echo
echo "Admitted per second (pps) over each step, as the counters and the clock say:"
printf '%5s  %8s %8s %8s  %8s  %s\n' "t" "host 1" "host 2" "host 3" "fleet" "Redis"
# The generators outlast the loop, which reads the counters of three hosts.
send $((SECS + 30)) $((RATE * 5 / 3)) >/dev/null 2>&1 &
spid=$!
prev=(0 0 0 0)
t_prev=$(now_s)
t0=$t_prev
redis="up"
for t in $(seq "$SECS"); do
	sleep 1
	if [ "$t" -eq $((SECS / 3)) ]; then kill -STOP "$REDIS_PID"; redis="stopped"; fi
	if [ "$t" -eq $((2 * SECS / 3)) ]; then kill -CONT "$REDIS_PID"; redis="back"; fi
	now=(0 "$(passed 1)" "$(passed 2)" "$(passed 3)")
	t_now=$(now_s)
	st=$(wrh 1 -j fleet status)
	fb=$(jq -r 'if .fallback_active then "fallback: each host 1/\(.limits[0].multiplier)" else "in step" end' <<<"$st")
	awk -v t="$t_now" -v t0="$t0" -v dt="$(awk -v a="$t_prev" -v b="$t_now" 'BEGIN { print b - a }')" \
		-v a1=$((now[1] - prev[1])) -v a2=$((now[2] - prev[2])) -v a3=$((now[3] - prev[3])) \
		-v r="$redis, $fb" 'BEGIN { printf "%4.1fs  %8.0f %8.0f %8.0f  %8.0f  %s\n", t - t0,
		a1 / dt, a2 / dt, a3 / dt, (a1 + a2 + a3) / dt, r }'
	prev=("${now[@]}")
	t_prev=$t_now
done
kill "$(jobs -p)" 2>/dev/null
pkill -f "wrgen --dst 198.18.6" 2>/dev/null
wait $spid 2>/dev/null
echo
echo "The fleet admitted about ${RATE} pps in all, wherever the packets landed; per host"
echo "limits would have admitted up to $((RATE * 3)). weir fleet status on host 1:"
wrh 1 fleet status
