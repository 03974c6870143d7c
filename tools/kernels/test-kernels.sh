#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make test-kernels: weir on Debian's own kernels, each booted in a qemu
# guest (tools/kernels/guest.sh). In each kernel, one guest boot per check:
#   load     attach in native, generic and tc mode on a veth, each refused
#            cleanly or working (a verdict through it)
#   traffic  tests/e2e.sh: paced UDP through veth, admitted counts
#   reflect  tests/reflect.sh: the reflection preset, real DNS and NTP
#            servers and clients under a spoofed flood
#   BPF suites  the data-path, limits, hostile, shedding and SYN-cookie suites
#            (and tcp-state's, bpf_tcpstate, and the source sets', bpf_srcset, when
#            CHECKS names them)
#   xdpmulti tests/xdpmulti.sh's cases that need libxdp's dispatcher: weir
#            beside the real xdp-filter, native and generic, after its
#            daemon died (freplace: Linux 5.10+)
#   verifier the verifier's headroom (tools/bench/vstats): instructions
#            processed and deepest stack per program, with bpf_loop and
#            with the bounded-loop walk that replaces it before 5.17
# and one table, kernel x check -> passed / failed (with counts), printed
# and written to docs/KERNELS.md (or KERNELS_OUT). KERNELS (default
# "6.1 6.12 5.10") and CHECKS choose; QUICK=1 runs only load on 6.1.
# DATAPATH_CASES: the data-path suite's cases a guest runs (names or
# patterns, WEIR_TEST_CASES in tests/check.h). Each case loads the
# object afresh, 10-40 s under TCG, so the whole suite outruns a guest;
# the default is the cases that tell kernels apart: the limiter's paths
# (fast, one rule with several limits, the general walk), faults,
# contention and the two-CPU races, IPv6 and VLAN parsing, and TC.
# DATAPATH_CASES=all runs every case, in two guest boots (bpf_datapath:1,
# the cases dp_a* to dp_m*, and bpf_datapath:2, the rest): the whole suite
# outruns one boot's time limit under TCG.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
OUT=${KERNELS_OUT:-docs/KERNELS.md}
KERNELS=${KERNELS:-6.1 6.12 5.10}
CHECKS=${CHECKS:-load verifier traffic reflect bpf_datapath bpf_limits bpf_hostile bpf_shed bpf_cookie bpf_capture xdpmulti}
if [ -n "${QUICK:-}" ]; then KERNELS=6.1 CHECKS=load; fi
DATAPATH_CASES=${DATAPATH_CASES:-dp_per_src_burst_then_rate dp_check_then_charge dp_per_all_limit
	dp_fault_fail_open_and_closed dp_stalled_claim_* dp_two_cpus_* dp_ipv6_extension_headers_matched
	dp_vlan_limited_like_untagged tc_check_then_charge}
G=tools/kernels/guest.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The load check: every mode on a veth pair, a limit, a verdict per mode.
cat >"$TMP/load.sh" <<'EOF'
export PATH=$PWD/build/deps/bin:$PATH
S="build/weir --bpffs /sys/fs/bpf/kt"
pass=0 fail=0
ip link add kt0 type veth peer name kt1 && ip link set kt0 up && ip link set kt1 up
for mode in native generic tc; do
	if out=$($S attach kt0 mode $mode 2>&1); then
		st=$($S -j status | jq -r '.interfaces[0].mode + "/" + (.interfaces[0].tc_hook // "-")')
		echo "ok - load-$mode: attached ($st)"
		pass=$((pass + 1))
		$S detach kt0 >/dev/null || { echo "not ok - detach-$mode"; fail=$((fail + 1)); }
	else
		echo "not ok - load-$mode: $(echo "$out" | tail -1)"
		fail=$((fail + 1))
	fi
done
$S detach all >/dev/null 2>&1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
EOF
# The verifier's figures, as the object loads here and without bpf_loop.
cat >"$TMP/verifier.sh" <<'EOF'
pass=0 fail=0
for off in "" bpf_loop; do
	if out=$(WEIR_FEATURES_OFF=$off build/bench/vstats --json); then
		echo "ok - vstats${off:+ without $off}: $(echo "$out" | jq -c .programs)"
		pass=$((pass + 1))
	else
		echo "not ok - vstats${off:+ without $off}: $(echo "$out" | jq -c '.programs[] | select(.refused)' 2>/dev/null | head -1)"
		fail=$((fail + 1))
	fi
	echo "figures${off:+-$off} $(echo "$out" | jq -r '[.programs[] | select(.name == "weir_xdp" or .name == "weir_tc") | "\(.name | ltrimstr("weir_")) \(.insns / 1000 | floor)k insns, stack \(.stack) B"] | join("; ")' 2>/dev/null)"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
EOF
cat >"$TMP/traffic.sh" <<'EOF'
export PATH=$PWD/build/deps/bin:$PATH BUILD=build WEIR=$PWD/build/weir
tests/run.sh tests/e2e.sh
EOF
# The reflection preset with real DNS and NTP servers under a spoofed flood:
# before 6.6 its egress program goes on the egress hook through clsact.
cat >"$TMP/reflect.sh" <<'EOF'
export PATH=$PWD/build/deps/bin:$PATH BUILD=build WEIR=$PWD/build/weir
tests/run.sh tests/reflect.sh
EOF
cat >"$TMP/xdpmulti.sh" <<'EOF'
export PATH=$PWD/build/deps/bin:$PATH BUILD=build WEIR=$PWD/build/weir
XDPMULTI_DISPATCHER_ONLY=1 tests/run.sh tests/xdpmulti.sh
EOF
for c in bpf_datapath bpf_limits bpf_hostile bpf_shed bpf_cookie bpf_capture bpf_tcpstate bpf_srcset; do
	printf 'export BUILD=build\ntests/run.sh build/tests/%s\n' "$c" >"$TMP/$c.sh"
done
if [ "$DATAPATH_CASES" != all ]; then
	# shellcheck disable=SC2086 # one line of patterns, unexpanded
	{ printf 'export BUILD=build WEIR_TEST_CASES=%q\n' "$(set -f; echo $DATAPATH_CASES)"
	  echo 'tests/run.sh build/tests/bpf_datapath'; } >"$TMP/bpf_datapath.sh"
else
	# Every case, in two boots: each half within one boot's time.
	for half in 1 2; do
		{ printf 'export BUILD=build WEIR_TEST_CASES=%q\n' \
			"$([ $half = 1 ] && echo 'dp_[a-m]*' || echo 'dp_[n-z]* tc_*')"
		  echo 'tests/run.sh build/tests/bpf_datapath'; } >"$TMP/bpf_datapath:$half.sh"
	done
	CHECKS=$(echo "$CHECKS" | sed 's/\bbpf_datapath\b/bpf_datapath:1 bpf_datapath:2/')
fi

# The guests run the scripts above from the checkout: from BUILD's objects,
# with the dependencies of build/ (make deps).
if [ "$BUILD" != build ]; then
	sed -i -e "s#\$PWD/build/weir#\$PWD/$BUILD/weir#g; s#BUILD=build#BUILD=$BUILD#g" \
		-e "s#\"build/weir #\"$BUILD/weir #g; s#build/tests/#$BUILD/tests/#g" \
		-e "s#build/bench/#$BUILD/bench/#g" "$TMP"/*.sh
fi
# shellcheck disable=SC2086
$G fetch $KERNELS || exit 1
declare -A res
failed=0
for k in $KERNELS; do
	refused=
	for c in $CHECKS; do
		# A kernel the load refuses by name (a feature weir needs is
		# missing) is refused as designed: nothing else can run there.
		if [ -n "$refused" ]; then
			res[$k,$c]="— (refused)"
			continue
		fi
		echo "== $k: $c"
		start=$SECONDS
		$G run "$k" "$TMP/$c.sh" 1800 >"$TMP/out" 2>&1
		rc=$?
		sed 's/^/    /' "$TMP/out" | grep -E '^    (not ok|skip|[0-9]+ passed)' | head -20
		counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TMP/out" | tail -1 | cut -d, -f1-2)
		why=$(grep -o 'has no [^,]*, which weir needs (Linux [0-9.]* or later)' "$TMP/out" | head -1)
		if [ "$c" = load ] && [ -n "$why" ] && ! grep -q '^ok - ' "$TMP/out"; then
			refused=1
			res[$k,$c]="refused by name in every mode, as designed: \"$why\""
		elif [ "$c" = verifier ]; then
			res[$k,$c]="$(sed -n 's/^figures /with bpf_loop: /p; s/^figures-bpf_loop /without bpf_loop: /p' "$TMP/out" | paste -sd'|' | sed 's/|/<br>/')"
			if [ "$rc" -ne 0 ]; then
				res[$k,$c]="**failed** ($(grep -m1 '^not ok' "$TMP/out" | cut -c1-120 | tr '|' '/')) ${res[$k,$c]}"
				failed=$((failed + 1))
			fi
		elif [ "$rc" -eq 0 ]; then
			res[$k,$c]="passed (${counts:-?})"
			if [ "$c" = bpf_datapath ] && [ "$DATAPATH_CASES" != all ]; then
				res[$k,$c]="passed (${counts:-?} of the DATAPATH_CASES)"
			fi
		else
			res[$k,$c]="**failed** (${counts:-exit $rc}: $(grep -m1 '^not ok' "$TMP/out" |
				cut -c1-80 | tr '|' '/'))"
			failed=$((failed + 1))
		fi
		echo "   -> ${res[$k,$c]} in $((SECONDS - start)) s"
	done
done

{
	echo "Generated by \`make test-kernels\` $(date -u +%Y-%m-%d), build $(git rev-parse --short HEAD 2>/dev/null):"
	echo "one guest boot per check."
	echo
	printf '| check |'
	for k in $KERNELS; do printf ' %s (%s) |' "$k" "$(basename "$($G kdir "$k" 2>/dev/null || echo "$k")")"; done
	echo
	printf '|---|'
	for k in $KERNELS; do printf -- '---|'; done
	echo
	for c in $CHECKS; do
		printf '| %s |' "$c"
		for k in $KERNELS; do printf ' %s |' "${res[$k,$c]}"; done
		echo
	done
} >"$TMP/table"
cat "$TMP/table"
# Into OUT between its two markers, the text around them kept; a new file
# (or one without the markers) is the table alone, between them.
BEGIN='<!-- make test-kernels writes from here -->' END='<!-- to here -->'
if [ -z "${QUICK:-}" ]; then
	if [ -f "$OUT" ] && grep -qxF "$BEGIN" "$OUT" && grep -qxF "$END" "$OUT"; then
		awk -v b="$BEGIN" -v e="$END" -v t="$TMP/table" '
			$0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip' "$OUT" >"$TMP/out.md" && cp "$TMP/out.md" "$OUT"
	else
		{ echo "# weir on other kernels"; echo; echo "$BEGIN"; cat "$TMP/table"; echo "$END"; } >"$OUT"
	fi
fi
[ "$failed" -eq 0 ]
