#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The quick tier of make test-kernels: Debian 12's own kernel (6.1) booted
# in a qemu guest (tools/kernels/guest.sh), weir loaded and attached there
# in native, generic and tc mode (tc through clsact: 6.1 has no tcx), one
# ok line per mode; then, native again, once as a kernel before 5.17 loads
# it (WEIR_FEATURES_OFF=bpf_loop: the rules walked without bpf_loop) and
# once with no kernel config file anywhere (/boot unmounted; Debian's
# kernels have no /proc/config.gz); and a rule with action cookie (6.1
# has the raw SYN cookie helpers); the capture suite (bpf_capture: the
# copy into the ring from XDP and TC); tcp-state against real sockets
# (four cases of bpf_tcpstate); and weir joining the real xdp-filter's
# libxdp dispatcher (tests/xdpmulti.sh's xf-first case: freplace programs,
# which this machine's own kernel refuses; make test-kernels runs all its
# dispatcher cases). The kernel package is fetched from Debian's archive the
# first time. The whole table (6.1, 6.12, 5.10; traffic and the BPF
# suites) is make test-kernels, too slow for every run.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root kernels
for t in qemu-system-x86_64 cpio; do
	if ! command -v $t >/dev/null; then
		skip kernels "$t is missing (make test-deps installs it)"
		exit 0
	fi
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if ! tools/kernels/guest.sh fetch 6.1 >"$TMP/fetch" 2>&1; then
	not_ok kernels-fetch-6.1 "$(tail -2 "$TMP/fetch" | tr '\n' ' ')"
	exit 1
fi
cat >"$TMP/load.sh" <<'EOS'
S="build/weir --bpffs /sys/fs/bpf/kq"
ip link add kq0 type veth peer name kq1 && ip link set kq0 up && ip link set kq1 up
for mode in native generic tc; do
	if out=$($S attach kq0 mode $mode 2>&1); then
		m=$($S -j status | jq -r '.interfaces[0] | .mode + "/" + (.tc_hook // "xdp")')
		n=$($S rule add r$mode proto udp dport 53 limit 10pps >/dev/null && $S -j rule list | jq length)
		if [ "$m" == "$mode/$([ $mode == tc ] && echo clsact || echo xdp)" ] && [ "$n" -ge 1 ]; then
			echo "ok - kernels-6.1-attach-$mode"
		else
			echo "not ok - kernels-6.1-attach-$mode: status says $m, $n rules"
		fi
		$S detach kq0 >/dev/null || echo "not ok - kernels-6.1-detach-$mode"
	else
		echo "not ok - kernels-6.1-attach-$mode: $(echo "$out" | tail -1)"
	fi
done
$S detach all >/dev/null 2>&1
# The bounded-loop walk that kernels before 5.17 get, verified by 6.1.
if out=$(WEIR_FEATURES_OFF=bpf_loop $S attach kq0 2>&1) &&
	$S rule add rl proto udp dport 53 limit 10pps >/dev/null; then
	echo "ok - kernels-6.1-without-bpf_loop"
else
	echo "not ok - kernels-6.1-without-bpf_loop: $(echo "$out" | tail -1)"
fi
$S detach all >/dev/null 2>&1
# No kernel config to read: CONFIG_HZ comes from the clock's resolution.
umount /boot 2>/dev/null
if ls /boot/config-* /proc/config.gz >/dev/null 2>&1; then
	echo "not ok - kernels-6.1-no-kernel-config: a kernel config is still readable"
elif out=$($S attach kq0 2>&1) && [ "$($S -j status | jq -r .clock)" = auto ]; then
	echo "ok - kernels-6.1-no-kernel-config"
else
	echo "not ok - kernels-6.1-no-kernel-config: $(echo "$out" | tail -1)"
fi
$S detach all >/dev/null 2>&1
# SYN cookies: 6.1 has the raw cookie helpers, so the cookie programs load
# (verified by 6.1, beside the entry that tail-calls them) and a rule is taken.
sysctl -qw net.ipv4.tcp_syncookies=2
if out=$($S attach kq0 2>&1) &&
	out=$($S rule add ck proto tcp dport 80 tcp-flags syn limit 10pps per all action cookie 2>&1) &&
	[ "$($S -j rule list | jq -r '.rules[0].action')" = cookie ]; then
	echo "ok - kernels-6.1-cookie-rule"
else
	echo "not ok - kernels-6.1-cookie-rule: $(echo "$out" | tail -1)"
fi
$S detach all >/dev/null 2>&1
# Captures: records in the ring from XDP and TC, with 6.1's verifier.
if out=$(build/tests/bpf_capture 2>&1) && ! grep -q '^not ok' <<<"$out" &&
	[ "$(grep -c '^ok' <<<"$out")" -ge 7 ]; then
	echo "ok - kernels-6.1-capture"
else
	echo "not ok - kernels-6.1-capture: $(grep -m1 -v '^ok' <<<"$out")"
fi
# tcp-state against real sockets (bpf_tcpstate's socket lookups and cache,
# with 6.1's helpers and verifier): four of its cases, the whole suite
# takes ten minutes under TCG (make test-kernels runs it all).
TS_CASES=ts_established_cached_xdp,ts_out_of_state_ack_dropped_tc,ts_synack_xdp,ts_cookie_ack_ipv4
if out=$(WEIR_TEST_CASES=$TS_CASES build/tests/bpf_tcpstate 2>&1) &&
	! grep -q '^not ok' <<<"$out" && [ "$(grep -c '^ok' <<<"$out")" -eq 4 ]; then
	echo "ok - kernels-6.1-tcp-state"
else
	echo "not ok - kernels-6.1-tcp-state: $(grep -m1 -v '^ok' <<<"$out")"
fi
# libxdp's dispatcher with xdp-filter (tests/xdpmulti.sh, its dispatcher cases).
XDPMULTI_DISPATCHER_ONLY=1 XDPMULTI_CASES=xf-first BUILD=build WEIR=$PWD/build/weir \
	tests/xdpmulti.sh 2>&1 |
	sed -E 's/^(ok|not ok|skip) - xdpmulti-/\1 - kernels-6.1-xdpmulti-/'
EOS
BUILD=$BUILD tools/kernels/guest.sh run 6.1 "$TMP/load.sh" 900 >"$TMP/out" 2>&1
rc=$?
grep -E '^(ok|not ok|skip) - ' "$TMP/out"
n=$(grep -cE '^(ok|not ok) - kernels-6.1-' "$TMP/out")
if [ "$rc" -ne 0 ] || [ "$n" -ne 9 ]; then
	not_ok kernels-6.1-guest "the guest ran $n of 9 checks (exit $rc): $(grep -v '^ok' "$TMP/out" | tail -3 | tr '\n' ' ')"
fi
