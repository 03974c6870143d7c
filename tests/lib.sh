# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared by weir's shell test suites. Each case prints one line:
#   ok - NAME | not ok - NAME: why | skip - NAME: why
# Namespaces and bpffs roots get unique names and are removed by cleanup,
# which every suite runs from an EXIT trap.

WEIR=${WEIR:-$PWD/build/weir}
BUILD=${BUILD:-build}
TAG="wr$$"
NETNS=()
ROOTS=()
CASE_FAILED=""

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; }
skip() { echo "skip - $1: $2"; }

# case NAME: start a case; check ...; end_case NAME
begin_case() { CASE_FAILED=""; }
fail() { [ -z "$CASE_FAILED" ] && CASE_FAILED="$*"; return 0; }
end_case() {
	if [ -n "$CASE_FAILED" ]; then not_ok "$1" "$CASE_FAILED"; else ok "$1"; fi
}

# expect_fail DESC CMD...: the command must fail as weir fails on bad
# input: exit status exactly 1, not killed by a signal (status 128 + N),
# and no sanitizer report. A crash is a failure, never an expected one.
expect_fail() {
	local desc=$1 out rc; shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$desc: succeeded"
	elif [ "$rc" -ge 128 ]; then
		fail "$desc: killed by signal $((rc - 128)): $(tail -1 <<<"$out")"
	elif [ "$rc" -ne 1 ]; then
		fail "$desc: exit status $rc, want 1: $(tail -1 <<<"$out")"
	elif grep -qE 'AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:' \
		<<<"$out"; then
		fail "$desc: sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error:' <<<"$out")"
	fi
	return 0
}
# expect_ok DESC CMD...
expect_ok() {
	local desc=$1; shift
	local out
	if ! out=$("$@" 2>&1); then fail "$desc: failed: $out"; fi
}

new_netns() {
	local ns="$TAG-$1"
	# One left by a killed run whose PID this one has now (no trap ran):
	# no live suite has this TAG, so it is nobody's.
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" || return 1
	NETNS+=("$ns")
	ip -n "$ns" link set lo up
	echo "$ns"
}

# A bpffs directory of this suite's own: --bpffs for every weir call.
new_root() {
	local r="/sys/fs/bpf/$TAG-$1"
	ROOTS+=("$r")
	echo "$r"
}

# in_ns NS CMD...: only the network namespace changes, so bpffs stays visible.
# In the background `in_ns ... &` is a subshell: $! is not the command's pid;
# run nsenter directly where the pid matters.
in_ns() {
	local ns=$1; shift
	nsenter --net="/run/netns/$ns" "$@"
}

# Daemons a suite started: it appends their pids; cleanup kills them.
DAEMONS=()
stop_daemons() {
	local p
	for p in "${DAEMONS[@]}"; do
		kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	DAEMONS=()
}

# Removes everything named "$TAG-*", so names handed out from a $(...)
# subshell (where the arrays above do not reach) are removed too: the
# suite's daemons first, then their roots, instance locks and namespaces.
cleanup() {
	local r ns
	stop_daemons
	for r in "${ROOTS[@]}" /sys/fs/bpf/"$TAG"-*; do
		[ -e "$r" ] || continue
		"$WEIR" --bpffs "$r" detach all >/dev/null 2>&1
		rm -rf "$r" 2>/dev/null
	done
	for ns in "${NETNS[@]}" $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$TAG-"); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	# The daemons' instance lock files, named after their bpffs roots.
	rm -f /run/weir-sys-fs-bpf-"$TAG"-*.lock
	# Their feed stores (weir list feed, lists:), named after the roots too.
	rm -rf /var/lib/weir/feeds/sys-fs-bpf-"$TAG"-*
	return 0
}

# Preconditions a suite needs; prints a skip and exits 0 if one is missing
# (the runner counts skips separately, never as passes).
require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "$1" "needs root"
		exit 0
	fi
}

# start_daemon NS ROOT CFG LOG: `weir run` on bpffs ROOT in namespace NS,
# in the background, its stderr into LOG (emptied first unless DAEMON_APPEND
# is set; each line through DAEMON_FILTER if that names a command). Run from
# / so that relative paths in the config do not depend on the cwd; env -C
# execs nsenter, which execs weir, so $! is the daemon itself: its pid is
# in DPID and in DAEMONS (cleanup kills it). Returns non-zero unless the
# daemon says it is running within 10 s (bounded, never a timing assertion).
start_daemon() {
	local ns=$1 root=$2 cfg=$3 log=$4 i
	if [ -n "${DAEMON_APPEND:-}" ]; then : >>"$log"; else : >"$log"; fi
	if [ -n "${DAEMON_FILTER:-}" ]; then
		env -C / nsenter --net="/run/netns/$ns" "$WEIR" --bpffs "$root" run --config "$cfg" \
			2> >($DAEMON_FILTER >>"$log") &
	else
		env -C / nsenter --net="/run/netns/$ns" "$WEIR" --bpffs "$root" run --config "$cfg" \
			2>>"$log" &
	fi
	DPID=$!
	DAEMONS+=("$DPID")
	for i in $(seq 400); do
		grep -q "weir: running on .*(pid $DPID)" "$log" && return 0
		kill -0 "$DPID" 2>/dev/null || return 1
		sleep 0.025
	done
	return 1
}
