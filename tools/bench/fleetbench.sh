#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The benchmark's fleet stage (tools/bench/bench.sh --stages fleet): fleet-wide
# limits on the fleet of tests/fleet_lib.sh (namespaces, one Redis), printed
# as markdown on stdout, with the figures as tab-separated rows in OUT_TSV.
#
#   tools/bench/fleetbench.sh OUT_TSV [--smoke] [--load-only [KEYS...]]
#
# --load-only runs the load table alone (for profiling the sync by hand),
# over KEYS (default 100 10000 100000).
#
# Accuracy: one source sends to N = 1, 2, 3 hosts at once at 5x a fleet
# limit (200 pps, burst 100) with sync intervals of 50, 250 and 1000 ms.
# "Hot" is what the fleet admitted from 1.5 s in to 1.5 s before the end
# against rate x that time; "whole" is the whole 8 s against burst + rate x
# time.
# Load: N hot keys made without traffic (build/bench/fleetkeys) on one
# host syncing every 250 ms: Redis commands and CPU per second, the
# daemon's CPU, the sync's duration. Each figure is one run.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export WEIR="$BUILD/weir" BUILD
. tests/lib.sh
OUT_TSV=$1
SMOKE=0 LOAD_ONLY=0 LOAD_KEYS=""
shift
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--load-only) LOAD_ONLY=1 ;;
	[0-9]*) LOAD_KEYS="$LOAD_KEYS $1" ;;
	*) echo "fleetbench: unknown argument $1" >&2; exit 1 ;;
	esac
	shift
done
SLGEN=$BUILD/wrgen
TMP=$(mktemp -d "${TMPDIR:-/var/tmp}/weir-fleetbench.XXXXXX")
. tests/fleet_lib.sh
trap 'fleet_down; cleanup; rm -rf "$TMP"' EXIT
say() { printf '%s\n' "$*" >&2; }
for t in redis-server redis-cli jq; do
	command -v $t >/dev/null || { say "fleetbench: $t is missing (make bench-deps)"; exit 1; }
done
fleet_up || exit 1
: >"$OUT_TSV"

HZ_USER=$(getconf CLK_TCK)
# CPU seconds a process has used.
cpu_s() { awk -v hz="$HZ_USER" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
redis_info() { rcli info "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'; }
evalsha_calls() { rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\).*/\1/p'; }

# start_fleet N INTERVAL_MS: daemons on hosts 1..N only, syncing every INTERVAL_MS.
start_fleet() {
	local n=$1 i
	stop_daemons
	for r in "${ROOTS_H[@]}"; do "$WEIR" --bpffs "$r" detach all >/dev/null 2>&1; done
	INTERVAL_MS=$2
	STALE_MS=$(($2 * 4 > 600 ? $2 * 4 : 600))
	for i in $(seq "$n"); do
		config "$i" fleet
		start_host "$i" || { say "fleetbench: daemon $i did not start: $(tail -3 "$TMP/h$i.log")"; exit 1; }
	done
	for _ in $(seq 100); do
		[ "$(wrh 1 -j fleet status | jq '.hosts')" == "$n" ] && break
		sleep 0.1
	done
}

if [ $SMOKE -eq 1 ]; then NS="3"; IVS="250"; SECS=4; else NS="1 2 3"; IVS="50 250 1000"; SECS=8; fi
echo "## Fleet-wide limits"
echo
if [ $LOAD_ONLY -eq 0 ]; then
	echo "One source at 5x a fleet limit of ${RATE} pps, burst ${BURST}, sent to N hosts at"
	echo "once (tools/bench/fleetbench.sh, the fleet of tests/fleet_lib.sh, one Redis"
	echo "in a namespace). Hot: admitted from 1.5 s after the start to 1.5 s before"
	echo "the end, against rate x that time, with the bound N x rate x (interval +"
	echo "round trip) in"
	echo "packets; whole: the ${SECS} s run against burst + rate x time (each other"
	echo "host may add its first burst). One run each."
	echo
	echo "| hosts | sync interval | hot: admitted / rate x t | bound | whole run: admitted / (burst + rate x t) |"
	echo "|---:|---:|---:|---:|---:|"
	for n in $NS; do
		for iv in $IVS; do
			start_fleet "$n" "$iv"
			FLEET_HOSTS=$(seq -s ' ' "$n")
			export FLEET_HOSTS
			sleep 1
			p0=$(total_passed)
			send "$SECS" $((RATE * 5 / n)) &
			spid=$!
			sleep 1.5
			ta=$(now_s); a=$(total_passed); ta=$(mid_s "$ta")
			sleep $((SECS - 3))
			tb=$(now_s); b=$(total_passed); tb=$(mid_s "$tb")
			wait $spid
			whole=$(( $(total_passed) - p0 ))
			t=$(gen_secs)
			read -r hot lag wr <<<"$(awk -v a="$a" -v b="$b" -v ta="$ta" -v tb="$tb" -v r=$RATE \
				-v bu=$BURST -v n="$n" -v iv="$iv" -v w="$whole" -v t="$t" 'BEGIN {
				printf "%.3f %.0f %.3f", (b - a) / (r * (tb - ta)), n * r * (iv + 1) / 1000,
					w / (bu + r * t) }')"
			echo "| $n | $iv ms | $hot | +$lag | $wr |"
			printf 'acc\t%s\t%s\t%s\t%s\n' "$n" "$iv" "$hot" "$wr" >>"$OUT_TSV"
			unset FLEET_HOSTS
			sleep 1
		done
	done
	echo
fi

if [ $SMOKE -eq 1 ]; then KEYS_LIST="10000"; LSECS=5; else KEYS_LIST="100 10000 100000"; LSECS=10; fi
[ -n "$LOAD_KEYS" ] && KEYS_LIST=$LOAD_KEYS
echo "Load: N hot keys on one host syncing every 250 ms, made without traffic"
echo "(tools/bench/fleetkeys: each key charged at the limit's rate every 100 ms,"
echo "so every sync sends every key; the data path tracks at most 65 536, the"
echo "keys charged last). CPU is in % of one CPU over the middle $((LSECS - 4)) s; the"
echo "sync's duration is the last one's."
echo
echo "| hot keys (sent per sync) | script calls/s (round trips) | Redis commands/s (in scripts too) | Redis CPU | daemon CPU | sync duration |"
echo "|---:|---:|---:|---:|---:|---:|"
start_fleet 1 250
dpid=${DAEMONS[0]}
for k in $KEYS_LIST; do
	"$BUILD/bench/fleetkeys" --bpffs "${ROOTS_H[1]}" --rule api --keys "$k" --duration "$LSECS" \
		--interval-ms 100 >/dev/null &
	kpid=$!
	sleep 2
	c0=$(cpu_s "$dpid"); r0=$(redis_info stats total_commands_processed); e0=$(evalsha_calls)
	u0=$(redis_info cpu used_cpu_user); s0=$(redis_info cpu used_cpu_sys); t0=$(now_s)
	st0=$(wrh 1 -j fleet status)
	sleep $((LSECS - 4))
	c1=$(cpu_s "$dpid"); r1=$(redis_info stats total_commands_processed); e1=$(evalsha_calls)
	u1=$(redis_info cpu used_cpu_user); s1=$(redis_info cpu used_cpu_sys); t1=$(now_s)
	st=$(wrh 1 -j fleet status)
	wait $kpid || { say "fleetbench: fleetkeys --keys $k failed"; exit 1; }
	read -r cmds rcpu dcpu calls <<<"$(awk -v c0="$c0" -v c1="$c1" -v r0="$r0" -v r1="$r1" \
		-v u0="$u0" -v u1="$u1" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" -v e0="$e0" \
		-v e1="$e1" 'BEGIN { w = t1 - t0
		printf "%.0f %.1f %.1f %.0f", (r1 - r0) / w, 100 * (u1 + s1 - u0 - s0) / w,
			100 * (c1 - c0) / w, (e1 - e0) / w }')"
	ms=$(jq '.sync_us / 1000' <<<"$st")
	# Keys sent per sync over the window: the last sync alone may have
	# come right after a long one, with nothing charged since.
	hot=$(jq -n --argjson a "$st0" --argjson b "$st" \
		'if $b.syncs > $a.syncs then ($b.keys_synced - $a.keys_synced) / ($b.syncs - $a.syncs)
		 else 0 end | floor')
	echo "| $hot (of $k made) | $calls | $cmds | $rcpu% | $dcpu% | $(printf '%.1f' "$ms") ms |"
	printf 'load\t%s\t%s\t%s\t%s\t%s\n' "$k" "$cmds" "$rcpu" "$dcpu" "$ms" >>"$OUT_TSV"
	sleep 3
done
echo
