#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every weir test suite and sums the per-case lines they print:
#   ok - NAME | not ok - NAME: why | skip - NAME: why
# A suite that exits non-zero without a "not ok" line counts as one failure,
# and so does a suite that runs past its time limit (SUITE_TIMEOUT seconds,
# default 1200; it gets SIGTERM, so its EXIT trap cleans up, then SIGKILL
# 30 s later).
# Each suite's time is printed after it ("# SUITE: N s").
#
# tests/trixie.sh brings its own machine and shares nothing with the other
# suites: a Debian 13 root of its own, in a private mount and PID namespace
# with its own bpffs, and its own qemu guest. In a whole run it starts
# first, in the background at a lower CPU priority (nice), and its output
# is printed, and counted, after the others'. The file named by
# WEIR_TESTS_BUSY exists while the others run: trixie.sh waits for it to go
# before its guest's traffic, whose limiter accuracy an emulated CPU shared
# with the other suites would skew. Not done SUITE_TIMEOUT seconds after
# the others, it counts as failed. tests/kernels.sh stays in line: its
# emulated 6.1 guest, starved beside the other suites and trixie's build,
# ran past its own time limit. WEIR_TESTS_APART=0 runs trixie.sh in line too.
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
	tests/auto.sh
	tests/reflect.sh
	tests/attack.sh
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
	tests/fleet_auto.sh
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
apart=()
if [ $# -gt 0 ]; then
	suites=("$@")
elif [ "${WEIR_TESTS_APART:-1}" != 0 ]; then
	rest=()
	for s in "${suites[@]}"; do
		case $s in
		tests/trixie.sh) apart+=("$s") ;;
		*) rest+=("$s") ;;
		esac
	done
	suites=("${rest[@]}")
fi
SUITE_TIMEOUT=${SUITE_TIMEOUT:-1200}

pass=0 fail=0 skip=0
# count SUITE OUT RC SECONDS: add a finished suite's lines to the sums.
count() {
	local s=$1 out=$2 rc=$3 secs=$4 limit=$5 p f k
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	k=$(grep -c '^skip - ' "$out")
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $s: no result within its time limit ($limit)"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $s: exited $rc"
		f=$((f + 1))
	fi
	echo "# $s: $secs s"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
}

adir=$(mktemp -d)
apids=()
# On the way out early, each apart suite gets SIGTERM; its EXIT trap cleans up.
trap 'for f in "$adir"/*.pid; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
	rm -rf "$adir"' EXIT
if [ ${#apart[@]} -gt 0 ]; then
	export WEIR_TESTS_BUSY=$adir/busy
	: >"$WEIR_TESTS_BUSY"
fi
for i in "${!apart[@]}"; do
	(
		t0=$(date +%s)
		nice -n 10 "${apart[$i]}" >"$adir/$i.out" 2>&1 &
		echo $! >"$adir/$i.pid"
		wait $!
		echo "$? $(($(date +%s) - t0))" >"$adir/$i.rc"
		rm -f "$adir/$i.pid"
	) &
	apids+=($!)
	echo "== ${apart[$i]}: started alongside the others"
done

for s in "${suites[@]}"; do
	echo "== $s"
	out=$(mktemp)
	t0=$(date +%s)
	timeout --kill-after=30 "$SUITE_TIMEOUT" "$s" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	count "$s" "$out" "$rc" $(($(date +%s) - t0)) "$SUITE_TIMEOUT s"
	rm -f "$out"
done

rm -f "$adir/busy"
deadline=$(($(date +%s) + SUITE_TIMEOUT))
for i in "${!apart[@]}"; do
	echo "== ${apart[$i]} (ran alongside)"
	t0=$(date +%s)
	while [ ! -f "$adir/$i.rc" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 2; done
	if [ ! -f "$adir/$i.rc" ] && [ -f "$adir/$i.pid" ]; then
		pid=$(cat "$adir/$i.pid")
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "${apids[$i]}"
	cat "$adir/$i.out"
	read -r rc secs <"$adir/$i.rc" 2>/dev/null || { rc=1 secs=0; }
	# Past the deadline it ran into, it counts as a suite out of time.
	[ "$(date +%s)" -ge "$deadline" ] && [ "$rc" -ne 0 ] && rc=124
	echo "# ${apart[$i]}: done $(($(date +%s) - t0)) s after the others"
	count "${apart[$i]}" "$adir/$i.out" "$rc" "$secs" "$SUITE_TIMEOUT s after the others"
done
apids=()
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
