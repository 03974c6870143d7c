#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Every header under bpf/ stands on its own: it starts with its SPDX line,
# is wrapped in an include guard, and compiles alone (included twice, so
# the guard is exercised) with the flags the object is built with
# (BPF_CFLAGS, vmlinux.h from $BUILD), not only after whatever
# weir.bpf.c happens to include before it. Compiler only: no root, no
# kernel. One case per header: bpf-header-NAME.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
CLANG=${CLANG:-clang}

if ! command -v "$CLANG" >/dev/null; then
	skip bpf-headers "$CLANG is missing (make deps installs clang)"
	exit 0
fi
if [ ! -s "$BUILD/vmlinux.h" ]; then
	skip bpf-headers "$BUILD/vmlinux.h is missing (make $BUILD/vmlinux.h)"
	exit 0
fi
# shellcheck disable=SC2207
cflags=($(make --no-print-directory -s print-bpf-cflags OUT="$BUILD")) || exit 1

n=0
for h in bpf/*.h; do
	name=$(basename "$h" .h)
	n=$((n + 1))
	begin_case
	head -1 "$h" | grep -q 'SPDX-License-Identifier:' || fail "$h: the first line is not its SPDX line"
	# The first directives: #ifndef GUARD, then #define GUARD.
	guard=$(grep -m2 -E '^#(ifndef|define)\b' "$h" | awk '{ print $2 }' | uniq -c | awk '$1 == 2 { print $2 }')
	[ -n "$guard" ] && grep -qE "^#ifndef $guard\$" "$h" ||
		fail "$h: no include guard (#ifndef GUARD / #define GUARD before anything else)"
	out=$(printf '#include "%s"\n#include "%s"\n' "$(basename "$h")" "$(basename "$h")" |
		"$CLANG" "${cflags[@]}" -fsyntax-only -Wno-unused-function -x c - 2>&1) ||
		fail "$h does not compile alone: $(grep -m1 -E 'error|warning' <<<"$out")"
	end_case "bpf-header-$name"
done
begin_case
[ "$n" -ge 10 ] || fail "only $n headers under bpf/"
end_case bpf-headers-found
