#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# valgrind memcheck on the CLI's paths, the failing ones included, and on
# the daemon (start, reload, SIGTERM): no leak (definite or indirect), no
# invalid read or write, no use of an uninitialised value. One case per
# command. tests/memcheck.supp holds what valgrind says about libbpf's
# bpf() calls, none of it weir's.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root memcheck
TMP=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null; rm -f /run/weir-sys-fs-bpf-"$TAG"-*.lock;
	cleanup; rm -rf "$TMP"' EXIT

if ! command -v valgrind >/dev/null; then
	skip memcheck "valgrind is missing (make deps installs it)"
	exit 0
fi
# A sanitizer build cannot run under valgrind.
if nm "$WEIR" 2>/dev/null | grep -q __asan_init; then
	skip memcheck "$WEIR is built with AddressSanitizer"
	exit 0
fi

NS=$(new_netns m) || { not_ok memcheck-setup "no namespace"; exit 1; }
ROOT=$(new_root m)
in_ns "$NS" ip link add mc0 type veth peer name mc1
in_ns "$NS" ip link set mc0 up
in_ns "$NS" ip link set mc1 up
# What memcheck reports, beyond its exit status.
REPORT='^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|[0-9,]+ bytes in)'
VG=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no
    --suppressions="$PWD/tests/memcheck.supp")

printf 'rules:\n  - { name: x, limits: [ { rate: 10xpps } ] }\n' >"$TMP/bad.yaml"
cat >"$TMP/run.yaml" <<'EOF'
interfaces: [ { name: mc1, mode: generic } ]
rules:
  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 100pps }, { rate: 1kpps, per: all } ] }
deny: [ 198.18.66.0/24 ]
metrics: { listen: "127.0.0.1:9464" }
events: { interval: 1s }
EOF

# vg NAME EXPECTED-STATUS ARGS...: weir under valgrind in the namespace.
vg() {
	local name=$1 want=$2 rc
	shift 2
	begin_case
	in_ns "$NS" "${VG[@]}" "$WEIR" --bpffs "$ROOT" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 99 ] || grep -qE "$REPORT" "$TMP/err"; then
		fail "$(grep -m1 -E '^==[0-9]+== [A-Z0-9]' "$TMP/err" | sed 's/^==[0-9]*== //')"
		grep -E '^==[0-9]+==' "$TMP/err" | head -20 | sed 's/^/# /'
	elif [ "$rc" -ne "$want" ]; then
		fail "exit status $rc, want $want: $(head -2 "$TMP/err" | tr '\n' ' ')"
	fi
	end_case "memcheck-$name"
}

vg help 0 help
vg not-loaded 1 rule list
vg attach 0 attach mc0 mode native
vg rule-add 0 rule add ssh proto tcp dport 22 tcp-flags syn limit 10pps burst 20
vg rule-add-limits 0 rule add dns proto udp dport 53 limit 100pps per src limit 2kpps per src/24 \
	src6/48 limit 50kpps per all
vg rule-add-window 0 rule add win proto udp dport 54 limit 100/min algo sliding-window
vg rule-add-bad-rate 1 rule add bad limit 10xpps
vg rule-add-bad-cidr 1 rule add bad src 198.18.0.1/24 limit 1pps
vg rule-add-duplicate 1 rule add ssh limit 1pps
vg rule-list-json 0 -j rule list
vg rule-del 0 rule del dns
vg rule-del-unknown 1 rule del nope
vg deny-add 0 deny add 198.18.9.0/24
vg deny-add-v6 0 deny add 2001:db8:bad::/48
vg deny-list 0 -j deny list
vg deny-del 0 deny del 198.18.9.0/24
vg allow-add 0 allow add 198.18.10.0/24
vg deny-add-ttl 0 deny add 198.18.11.0/24 ttl 1h30m
vg deny-add-ttl-v6 0 deny add 2001:db8:bad:1::/64 ttl 600.5
vg deny-add-bad-ttl 1 deny add 198.18.12.0/24 ttl 99999999999999999999h
vg deny-list-ttl 0 deny list
vg deny-del-ttl-only 0 deny del 198.18.11.0/24 ttl-only
vg deny-del-missing-ok 0 deny del 198.18.11.0/24 missing-ok
echo weir-memcheck-key >"$TMP/cskey"
vg crowdsec-bad-url 1 crowdsec run url 127.0.0.1:1 key-file "$TMP/cskey" once
vg crowdsec-dead-api 1 crowdsec run url http://127.0.0.1:1 key-file "$TMP/cskey" once
vg status 0 status
vg status-json 0 -p status
vg stats 0 stats interval 0
vg stats-json 0 -j stats interval 0
vg top 0 top
vg capture-bad-rate 1 capture rate 0/s
vg capture-unknown-rule 1 capture rule nope
vg switches 0 set fail closed
vg disable 0 disable
vg enable 0 enable
vg shed-status 0 shed status
vg shed-set 0 shed set 0.25
vg check-example 0 check etc/weir.yaml
vg check-invalid 1 -j check "$TMP/bad.yaml"
vg check-missing 1 check "$TMP/none.yaml"
vg unknown-object 1 frobnicate
vg detach 0 detach mc0
# Beside an XDP program that is not libxdp's dispatcher: libxdp looks at it.
if in_ns "$NS" ip link set mc1 xdpgeneric obj "$BUILD/bench/xdp_pass.bpf.o" sec xdp; then
	vg attach-beside-foreign 1 attach mc1 mode generic
	in_ns "$NS" ip link set mc1 xdpgeneric off
fi

# The daemon: starts, reloads once, stops on SIGTERM.
begin_case
: >"$TMP/d.err"
env -C / nsenter --net="/run/netns/$NS" "${VG[@]}" "$WEIR" --bpffs "$ROOT" run \
	--config "$TMP/run.yaml" 2>"$TMP/d.err" &
DPID=$!
for _ in $(seq 600); do grep -q 'weir: running on' "$TMP/d.err" && break; sleep 0.05; done
if grep -q 'weir: running on' "$TMP/d.err"; then
	in_ns "$NS" curl -s --max-time 10 -o /dev/null http://127.0.0.1:9464/metrics
	kill -HUP "$DPID"
	for _ in $(seq 200); do grep -q 'weir: reloaded' "$TMP/d.err" && break; sleep 0.05; done
	grep -q 'weir: reloaded' "$TMP/d.err" || fail "no reload"
	kill -TERM "$DPID"
	wait "$DPID"
	rc=$?
	DPID=
	if [ "$rc" -eq 99 ] || grep -qE "$REPORT" "$TMP/d.err"; then
		fail "$(grep -m1 -E '^==[0-9]+== [A-Z0-9]' "$TMP/d.err" | sed 's/^==[0-9]*== //')"
		grep -E '^==[0-9]+==' "$TMP/d.err" | head -20 | sed 's/^/# /'
	elif [ "$rc" -ne 0 ]; then
		fail "exit status $rc after SIGTERM"
	fi
else
	fail "the daemon did not start under valgrind: $(tail -3 "$TMP/d.err" | tr '\n' ' ')"
fi
end_case memcheck-daemon-run-reload-stop

vg detach-all 0 detach all
