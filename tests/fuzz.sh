#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every libFuzzer target in $BUILD/fuzz (built from tests/fuzz/fuzz_*.c
# by make) and prints one line per case for tests/run.sh:
#   - every file under tests/fuzz/regressions/<target>/ is replayed once: a
#     finding stays a test after it is fixed (and fails until it is);
#   - then the target fuzzes for FUZZ_SECS (default 30) from its seeds in
#     tests/fuzz/corpus/<target>/ plus the corpus earlier runs grew in
#     $BUILD/fuzz/corpus/<target>/, with crashes, leaks, timeouts and
#     out-of-memory all counted as findings and the run going on after each.
#     Its line gives executions, coverage and findings; a finding makes it
#     "not ok", with the inputs saved in $BUILD/fuzz/findings/<target>/.
# FUZZ_TARGETS="fuzz_args fuzz_rule" runs only those.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
FUZZ_SECS=${FUZZ_SECS:-30}
# Per input: a slow one is a finding (a wedge), and so is a big allocation.
TIMEOUT_SECS=10
RSS_MB=2048
# Every sanitizer report is fatal. While fuzzing, tests/fuzz/ubsan.supp holds
# known findings back; regressions are replayed without it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_FATAL=halt_on_error=1:print_stacktrace=1
UBSAN_FUZZ=$UBSAN_FATAL:suppressions=$PWD/tests/fuzz/ubsan.supp

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; }

targets=()
if [ -n "${FUZZ_TARGETS:-}" ]; then
	for t in $FUZZ_TARGETS; do targets+=("$BUILD/fuzz/$t"); done
else
	for t in tests/fuzz/fuzz_*.c; do
		t=${t##*/}
		targets+=("$BUILD/fuzz/${t%.c}")
	done
fi
if [ ${#targets[@]} -eq 0 ]; then
	not_ok fuzz "no targets under tests/fuzz"
	exit 1
fi

# What a failing run said first: the target's own message, or the sanitizer's.
why() {
	grep -m1 -E '^fuzz_[a-z]+: |ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' \
		"$1" | sed 's/^==[0-9]*==//' | cut -c1-300
}
# A message with its particulars (quoted words, escapes, numbers) taken out.
kind() { sed -E 's/\\x[0-9a-f]{2}//g; s/"[^"]*"?/"..."/g; s/(^|[^A-Za-z_0-9])[0-9]+/\1N/g'; }

rc=0
for bin in "${targets[@]}"; do
	t=${bin##*/}
	if [ ! -x "$bin" ]; then
		not_ok "$t" "$bin is missing (make $bin)"
		rc=1
		continue
	fi
	log=$(mktemp)

	# ---- regressions: each file once ----
	for f in tests/fuzz/regressions/"$t"/*; do
		[ -f "$f" ] || continue
		if UBSAN_OPTIONS=$UBSAN_FATAL timeout 60 "$bin" -timeout=$TIMEOUT_SECS \
			-rss_limit_mb=$RSS_MB "$f" </dev/null >"$log" 2>&1; then
			ok "$t regression ${f##*/}"
		else
			not_ok "$t regression ${f##*/}" "$(why "$log")"
			rc=1
		fi
	done

	# ---- a bounded run ----
	work=$BUILD/fuzz/corpus/$t
	found=$BUILD/fuzz/findings/$t
	mkdir -p "$work" "$found"
	before=$(find "$found" -type f | wc -l)
	mark=$(mktemp)
	seeds=tests/fuzz/corpus/$t
	[ -d "$seeds" ] || seeds=
	# -fork=1: each finding is saved and the run goes on in a fresh process.
	# stdin is /dev/null: an input that makes the target read it gets EOF.
	UBSAN_OPTIONS=$UBSAN_FUZZ timeout $((FUZZ_SECS + 120)) "$bin" -fork=1 -ignore_crashes=1 \
		-ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$FUZZ_SECS" -timeout=$TIMEOUT_SECS \
		-rss_limit_mb=$RSS_MB -artifact_prefix="$found/" -print_final_stats=1 \
		"$work" $seeds </dev/null >"$log" 2>&1
	status=$?
	after=$(find "$found" -type f | wc -l)
	# fork mode's status lines: "#N: cov: C ft: F corp: K exec/s: E oom/timeout/crash: a/b/c ..."
	last=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -1)
	execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	otc=$(echo "$last" | sed -n 's|.* oom/timeout/crash: \([0-9/]*\).*|\1|p')
	summary="${execs:-?} execs in ${FUZZ_SECS}s, coverage ${cov:-?} edges ${ft:-?} features,"
	summary="$summary corpus ${corp:-?}, oom/timeout/crash ${otc:-?}"
	echo "# $t: $summary"
	if [ "$status" -ne 0 ] && [ -z "$last" ]; then
		not_ok "$t fuzzing" "exited $status: $(tail -3 "$log" | tr '\n' ' ')"
		rc=1
	elif [ "$after" -gt "$before" ]; then
		# What each new finding is, replayed (at most 50), told apart by message.
		find "$found" -type f -newer "$mark" | head -50 | while read -r f; do
			UBSAN_OPTIONS=$UBSAN_FUZZ timeout 60 "$bin" -timeout=$TIMEOUT_SECS \
				-rss_limit_mb=$RSS_MB "$f" </dev/null >"$log.replay" 2>&1
			echo "$(why "$log.replay" | kind)|${f##*/}"
		done | sort -t'|' -k1,1 -u >"$log.kinds"
		while IFS='|' read -r kind f; do
			echo "# $t finding $f: $kind"
		done <"$log.kinds"
		kinds=$(wc -l <"$log.kinds")
		not_ok "$t fuzzing" "$((after - before)) new finding(s) of $kinds kind(s) in $found; $summary"
		rm -f "$log.replay" "$log.kinds"
		rc=1
	else
		ok "$t fuzzing: $summary"
	fi
	rm -f "$log" "$mark"
done
exit $rc
