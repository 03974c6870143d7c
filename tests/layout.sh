#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The shape of the code, so that it stays a house: userspace is layered
# (util < lib < config < fleet, integrations < daemon < cmd < main.c) with
# no file including or calling upward and no circle of files, lib/ included
# (tools/depgraph.py --check, which prints the graphs); no file of the
# library, its front ends or the data path grows past 900 lines; lib/ holds
# no command; every test binary that needs userspace links libweir.a
# rather than a hand-picked list of objects.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh

begin_case
if ! command -v python3 >/dev/null; then
	fail "python3 is missing"
else
	out=$(python3 tools/depgraph.py --check 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || fail "$(grep '^not layered' <<<"$out" | head -3 | tr '\n' ' ')"
	grep -q '^# calls by directory' <<<"$out" || fail "tools/depgraph.py printed no call graph"
	# The check must see the layers it enforces: lib/ calls only util/.
	grep -qE '^lib +-> util$' <<<"$out" || fail "lib/ calls: $(grep -E '^lib +->' <<<"$out")"
fi
end_case layout-layered

# The check itself refuses an upward include: a copy of user/ with one
# lib/ file including a front end's header.
begin_case
T=$(mktemp -d)
mkdir -p "$T/tools" && cp tools/depgraph.py "$T/tools/" && cp -r user "$T/user"
f=$T/user/lib/maps.c
sed -i '0,/^#include "lib\/libweir.h"/s//#include "lib\/libweir.h"\n#include "cmd\/cmd.h"/' "$f"
out=$(python3 "$T/tools/depgraph.py" --check 2>&1)
rc=$?
[ "$rc" -ne 0 ] || fail "an include of cmd/cmd.h from $(basename "$f") passed the check"
grep -q "lib/$(basename "$f") -> cmd/cmd.h (upward)" <<<"$out" ||
	fail "the check did not name the upward include: $(grep '^not layered' <<<"$out" | head -2 | tr '\n' ' ')"
rm -rf "$T"
end_case layout-check-refuses-upward

begin_case
n=0
for f in user/*.c user/*/*.[ch] bpf/*.[ch]; do
	n=$((n + 1))
	l=$(wc -l <"$f")
	[ "$l" -le 900 ] || fail "$f has $l lines (at most 900: cut it by job)"
done
[ "$n" -ge 40 ] || fail "only $n files measured"
echo "# $n files, the longest: $(wc -l user/*.c user/*/*.[ch] bpf/*.[ch] | sort -n | tail -2 | head -1)"
end_case layout-files-under-900-lines

begin_case
cmds=$(grep -lE '^int do_[a-z_]+\(int argc, char \*\*argv\)' user/lib/*.c user/util/*.c 2>/dev/null)
[ -z "$cmds" ] || fail "commands defined in the library: $(echo $cmds)"
# Every do_* main.c's table names is declared in cmd/cmd.h.
for fn in $(grep -oE '\{ "[a-z]+", (do_[a-z_]+),' user/main.c | grep -oE 'do_[a-z_]+' | sort -u); do
	grep -qE "^static int $fn\(" user/main.c && continue	# help, version: main.c's own
	grep -qE "^int $fn\(int argc, char \*\*argv\);" user/cmd/cmd.h ||
		fail "$fn (main.c) is not declared in user/cmd/cmd.h"
done
end_case layout-commands-in-cmd

begin_case
# No test or tool links a hand-picked list of user/ objects: they take
# the archive (and, for the fleet and config front ends, their directory).
picked=$(grep -nE '\$\(OUT\)/user/[a-z_]+\.o|addprefix \$\(OUT\)/user/' Makefile tests/tests.mk |
	grep -v '^Makefile:[0-9]*:\$(OUT)/weir: \$(OUT)/user/main.o ')
[ -z "$picked" ] || fail "hand-picked objects: $(echo $picked)"
grep -q 'LIBWEIR' tests/tests.mk || fail "tests/tests.mk does not link libweir.a"
end_case layout-tests-link-libweir
