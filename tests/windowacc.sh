#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/windowacc runs and prints its accuracy table: a row for the token
# bucket, the fixed window, the sliding window and the exact sliding log on
# every trace. The figures themselves are asserted in tests/windows_unit.c
# (bounds, not this table's numbers); README.md shows the table.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

begin_case
if ! out=$("$BUILD/windowacc" 2>&1); then
	fail "windowacc failed: $out"
else
	traces=$(echo "$out" | grep '^| ' | grep -v '^| trace ' | cut -d'|' -f2 | sort -u | wc -l)
	[ "$traces" -ge 1 ] || fail "no table rows: $out"
	for a in "token bucket" "fixed window" "sliding window" "sliding log"; do
		n=$(echo "$out" | grep -c "^| [^|]* | $a")
		[ "$n" -eq "$traces" ] || fail "$a: $n rows for $traces traces"
	done
fi
end_case windowacc-table
