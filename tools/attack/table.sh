#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The attack harness's table from its JSON lines (tools/attack/run.sh):
#   tools/attack/table.sh results.jsonl [--md]
# One row per defence and vector; "-" where a figure does not apply (no
# time to 99% where weir never dropped 99% of an interval, no rules-gone
# time but with auto). Skipped defences are listed under the table.
set -u
in=$1
md=${2:-}
jq -r --arg md "$md" '
	def pct: if . == null then "-" else (. * 1000 | round / 10 | tostring) + "%" end;
	def num: if . == null then "-" else tostring end;
	select(.skipped == null)
	| [.defence, .vector, (.sent | tostring), (.pps | floor | tostring), (.dropped_share | pct),
	   (.reached_share | pct), "\(.clients_ok)/\(.clients)", (.success | pct),
	   "\(.pre_failures)/\(.pre_clients)", (.t99_s | num), (.t99_change_s | num),
	   (.auto_rules | num),
	   (.rules_gone_s | num)]
	| if $md == "--md" then "| " + join(" | ") + " |" else @tsv end' "$in" \
	>"${TMPDIR:-/tmp}/attack-rows.$$"
hdr=(defence vector sent pps dropped reached clients_ok success pre_fail t99_s t99_chg_s auto_rules
	gone_s)
if [ "$md" = --md ]; then
	printf '| %s ' "${hdr[@]}"
	echo '|'
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	cat "${TMPDIR:-/tmp}/attack-rows.$$"
else
	{ (IFS=$'\t'; echo "${hdr[*]}"); cat "${TMPDIR:-/tmp}/attack-rows.$$"; } |
		awk -F'\t' '{ printf "%-7s %-11s %8s %7s %8s %8s %10s %8s %9s %6s %9s %10s %6s\n",
			$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 }'
fi
rm -f "${TMPDIR:-/tmp}/attack-rows.$$"
jq -r 'select(.skipped != null) | "skipped: defence \(.defence): \(.skipped)"' "$in"
