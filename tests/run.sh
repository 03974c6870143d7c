#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every weir test suite and sums the per-case lines they print:
#   ok - NAME | not ok - NAME: why | skip - NAME: why
# A suite that exits non-zero without a "not ok" line counts as one failure,
# and so does a suite that runs past its time limit (SUITE_TIMEOUT seconds,
# default 1200; it gets SIGTERM, so its EXIT trap cleans up, then SIGKILL
# 30 s later).
# Ends with "N passed, N failed" (and skipped) and exits non-zero on failure.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export WEIR="$PWD/$BUILD/weir" BUILD

# The C suites, unit ones first, as tests/tests.mk finds them by name.
c_suites=$(make --no-print-directory -s print-c-suites) || exit 1
suites=()
for c in $c_suites; do suites+=("$BUILD/tests/$c"); done
suites+=(
	tests/bpf_headers.sh
	tests/windowacc.sh
	tests/features_off.sh
	tests/cli.sh
	tests/docs.sh
	tests/layout.sh
	tests/config.sh
	tests/e2e.sh
	tests/keys.sh
	tests/cookie.sh
	tests/tcpstate.sh
	tests/tcpauto.sh
	tests/reflect.sh
	tests/iface.sh
	tests/geo.sh
	tests/feeds.sh
	tests/penalty.sh
	tests/first_stage.sh
	tests/capture.sh
	tests/offload.sh
	tests/xdpmulti.sh
	tests/daemon.sh
	tests/ttl.sh
	tests/fail2ban.sh
	tests/crowdsec.sh
	tests/metrics.sh
	tests/shed.sh
	tests/conns.sh
	tests/fleet.sh
	tests/faults.sh
	tests/permissions.sh
	tests/loader.sh
	tests/deb.sh
	tests/trixie.sh
	tests/kernels.sh
	tests/memcheck.sh
	tests/soak.sh
	tests/fuzz.sh
	tests/bench_smoke.sh
)
[ $# -gt 0 ] && suites=("$@")
SUITE_TIMEOUT=${SUITE_TIMEOUT:-1200}

pass=0 fail=0 skip=0
for s in "${suites[@]}"; do
	echo "== $s"
	out=$(mktemp)
	timeout --kill-after=30 "$SUITE_TIMEOUT" "$s" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	k=$(grep -c '^skip - ' "$out")
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $s: no result within its time limit of $SUITE_TIMEOUT s"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $s: exited $rc"
		f=$((f + 1))
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
	rm -f "$out"
done
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
