#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/windowacc's accuracy table (the limiter code of include/ on four
# 60 s traces, limit L = 100 per 1 s) checked row by row against the bounds
# docs/rules-and-limits.md claims for each algorithm:
#   sliding log     the exact reference: never more than L in any 1 s span
#   token bucket    at most burst + L = 2L in any 1 s span, and over the
#                   whole trace at most burst + rate x 60 s = 61L
#   fixed window    at most 2L in any 1 s span (L on each side of an edge),
#                   at most L per window: 61L over a trace touching 61
#   sliding window  at most 2L in any 1 s span, at most L per window; on
#                   random bursts within 5% of the sliding log ("within a
#                   few percent")
# and, for every row, admitted <= the packets the trace holds and the
# 1 s maximum <= admitted. One case per trace and algorithm; tests/
# windows_unit.c asserts the same algorithms against the log in injected time.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

L=100
if ! out=$("$BUILD/windowacc" 2>&1); then
	not_ok windowacc-runs "windowacc failed: $out"
	exit 1
fi
rows=$(grep -E '^\| [a-z].*\([0-9]+ packets\) \|' <<<"$out")
n=$(grep -c . <<<"$rows")
begin_case
[ "$n" -eq 16 ] || fail "$n rows, want 4 traces x 4 algorithms"
end_case windowacc-table-complete

while IFS='|' read -r _ trace algo max admitted log err _; do
	trace=$(xargs <<<"$trace") algo=$(xargs <<<"$algo")
	packets=$(sed 's/.*(\([0-9]*\) packets).*/\1/' <<<"$trace")
	max=$(awk '{ print $1 }' <<<"$max")
	admitted=$(xargs <<<"$admitted") log=$(xargs <<<"$log")
	err=$(tr -d ' %+' <<<"$err")
	begin_case
	[[ "$max" =~ ^[0-9]+$ && "$admitted" =~ ^[0-9]+$ && "$log" =~ ^[0-9]+$ ]] ||
		fail "not numbers: max $max, admitted $admitted, log $log"
	[ "$admitted" -le "$packets" ] || fail "admitted $admitted of $packets packets"
	[ "$max" -le "$admitted" ] || fail "1 s maximum $max above admitted $admitted"
	[ "$log" -le $((61 * L)) ] || fail "the sliding log admitted $log over 61 windows"
	case $algo in
	"sliding log"*)
		[ "$max" -le $L ] || fail "the exact log admitted $max in 1 s"
		[ "$admitted" -eq "$log" ] || fail "the log row disagrees with itself: $admitted vs $log"
		;;
	"token bucket"*)
		[ "$max" -le $((2 * L)) ] || fail "token bucket: $max in 1 s, bound burst + L = $((2 * L))"
		[ "$admitted" -le $((61 * L)) ] || fail "token bucket: $admitted, bound $((61 * L))"
		;;
	"fixed window" | "sliding window")
		[ "$max" -le $((2 * L)) ] || fail "$algo: $max in 1 s, bound 2L = $((2 * L))"
		[ "$admitted" -le $((61 * L)) ] || fail "$algo: $admitted, bound L per window = $((61 * L))"
		if [ "$algo" == "sliding window" ] && [[ "$trace" == "random bursts"* ]]; then
			awk -v e="$err" 'BEGIN { exit !(e >= -5 && e <= 5) }' ||
				fail "sliding window on random bursts: error $err%, bound 5%"
		fi
		;;
	*) fail "unknown algorithm \"$algo\"" ;;
	esac
	end_case "windowacc: ${trace%% (*} / $algo"
done <<<"$rows"
