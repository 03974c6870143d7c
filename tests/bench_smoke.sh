#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench, for a moment: every stage of tools/bench/bench.sh runs with tiny
# counts into a temporary directory and must print its table, and the report
# must come out with its targets and plots. No figure is checked: at this
# size they mean nothing (make bench is the benchmark; this keeps it from
# rotting).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root bench-smoke
for t in nft iptables-legacy ip6tables-legacy ethtool; do
	if ! command -v $t >/dev/null; then
		skip bench-smoke "$t is missing (make bench-deps installs it)"
		exit 0
	fi
done
for b in bench/progcost bench/slflood bench/slrr; do
	if [ ! -x "$BUILD/$b" ]; then
		not_ok bench-smoke "$BUILD/$b is missing (make bench-build)"
		exit 1
	fi
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

begin_case
start=$(date +%s)
if ! tools/bench/bench.sh --smoke --rounds 1 --out "$TMP/BENCHMARKS.md" >"$TMP/out" 2>&1; then
	fail "bench.sh --smoke failed: $(tail -5 "$TMP/out" | tr '\n' ' ')"
fi
echo "# smoke run took $(($(date +%s) - start)) s"
end_case bench-smoke-runs

# Every stage's table, in what it printed and in the file.
for h in "## 1. Program cost" "| path | auto ns |" "| one rule, existing key, admitted |" \
	"| new key into a full table" "### What the pieces cost" "| set-associative lookup" \
	"## 2. Flood cost end to end" "### Shape A" "### Shape B" "### Shape C" \
	"## 3. Scaling" "| tracked keys |" "### Memory per tracked key" "## 4. Accuracy" \
	"| candidate | rate/s |" "## 5. Service under attack" "| flood (offered pps) |" \
	"## Targets"; do
	begin_case
	grep -qF -- "$h" "$TMP/out" || fail "the output has no \"$h\""
	grep -qF -- "$h" "$TMP/BENCHMARKS.md" 2>/dev/null || fail "BENCHMARKS.md has no \"$h\""
	end_case "bench-smoke-table: $h"
done

begin_case
for c in "bare XDP_DROP (floor)" "no filter" "sluice" "nftables netdev meter" \
	"iptables hashlimit (raw)"; do
	n=$(grep -cF "| $c |" "$TMP/BENCHMARKS.md")
	[ "$n" -ge 3 ] || fail "the flood tables have \"$c\" $n times, want one per shape"
done
end_case bench-smoke-candidates

begin_case
if command -v gnuplot >/dev/null; then
	for p in rules flood keys accuracy service; do
		[ -s "$TMP/bench-$p.png" ] || fail "no plot bench-$p.png"
	done
fi
end_case bench-smoke-plots
