#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The metrics endpoint (user/daemon/metrics.c), served by build/tests/metrics_serve
# from the maps the CLI pinned, as the daemon serves it: two namespaces
# joined by veth, weir attached on the receiving side, the server on
# loopback inside that namespace, scraped with curl and checked with
# `promtool check metrics` (lint included: any complaint fails).
#
# Traffic is exact: 300 packets at 1000 pps against a 1 pps limit with
# burst 100 all arrive within 0.3 s, before a second token could, so 100
# pass and 200 are dropped, every time.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root metrics

SERVE=$BUILD/tests/metrics_serve
POKE=$BUILD/tests/shed_poke
SLGEN=$BUILD/wrgen
PORT=9464		# inside the test's own namespace: nothing else there
URL=http://127.0.0.1:$PORT/metrics
TMP=$(mktemp -d)
SERVERS=()

# Stop the servers this suite started, by pid, letting them exit cleanly.
stop_servers() {
	local p
	for p in "${SERVERS[@]}"; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	SERVERS=()
}
trap 'stop_servers; cleanup; rm -rf "$TMP"' EXIT

for tool in curl promtool jq ss; do
	if ! command -v $tool >/dev/null; then
		skip metrics "$tool is missing (make deps installs it)"
		exit 0
	fi
done
for b in "$SERVE" "$SLGEN" "$WEIR" "$POKE"; do
	[ -x "$b" ] || { not_ok metrics-setup "$b is missing (make test-build)"; exit 1; }
done

RCV=$(new_netns rcv) && SND=$(new_netns snd) || { not_ok metrics-setup "no namespaces"; exit 1; }
ROOT=$(new_root metrics)
if ! ip link add mt-s netns "$SND" type veth peer name mt-r netns "$RCV"; then
	not_ok metrics-setup "cannot create veth"
	exit 1
fi
ip -n "$RCV" addr add 198.18.0.1/16 dev mt-r
ip -n "$SND" addr add 198.18.0.2/16 dev mt-s
ip -n "$SND" addr add 198.18.0.3/16 dev mt-s
ip -n "$RCV" link set mt-r up
ip -n "$SND" link set mt-s up
# Permanent neighbours: no ARP, so every packet counted is one wrgen sent.
mac_r=$(ip -n "$RCV" -j link show mt-r | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show mt-s | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev mt-s nud permanent
for a in 198.18.0.2 198.18.0.3; do
	ip -n "$RCV" neigh replace $a lladdr "$mac_s" dev mt-r nud permanent
done
# A second attachment on an interface whose name needs escaping in a label;
# deleted later to show an attachment whose interface is gone.
ODD='mt"q\x'
ODD_LABEL='mt\"q\\x'
if ! ip -n "$RCV" link add "$ODD" type veth peer name mt-p; then
	not_ok metrics-setup "cannot create veth $ODD"
	exit 1
fi
ip -n "$RCV" link set "$ODD" up
ip -n "$RCV" link set mt-p up

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }

# serve ADDR: start a server in RCV; its pid in SERVER. Fails if it does not come up.
serve() {
	local ready=$TMP/ready.$RANDOM i
	# nsenter itself, not in_ns: $! must be the server (nsenter execs it), not a subshell.
	nsenter --net="/run/netns/$RCV" "$SERVE" --bpffs "$ROOT" --listen "$1" --ready "$ready" \
		2>>"$TMP/serve.err" &
	SERVER=$!
	SERVERS+=("$SERVER")
	for i in $(seq 100); do
		[ -e "$ready" ] && return 0
		kill -0 "$SERVER" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# scrape [URL]: the body into $TMP/scrape, the status code on stdout.
scrape() {
	in_ns "$RCV" curl -s --max-time 10 -o "$TMP/scrape" -w '%{http_code}' "${1:-$URL}"
}
# val SERIES: the value of one series ("name" or "name{labels}") in the last scrape.
# (The key goes through the environment: awk -v would undo the label escapes.)
val() { K=$1 awk '$1 == ENVIRON["K"] { print $2; found = 1 } END { if (!found) print "missing" }' \
	"$TMP/scrape"; }
# expect SERIES VALUE
expect() {
	local got
	got=$(val "$1")
	[ "$got" == "$2" ] || fail "$1 is $got, expected $2"
}
# promtool_ok FILE: valid and lint-clean (promtool prints nothing then).
promtool_ok() {
	local out
	if ! out=$(promtool check metrics <"$1" 2>&1) || [ -n "$out" ]; then
		fail "promtool: $(echo "$out" | tr '\n' ' ')"
	fi
}
# wrgen SRC DPORT: 300 UDP packets at 1000 pps from SRC in SND to RCV.
send300() {
	ip netns exec "$SND" "$SLGEN" --dst 198.18.0.1 --dport "$2" --src "$1" --rate 1000 \
		--count 300 --duration 5 --json >"$TMP/gen.json" ||
		fail "wrgen from $1: $(cat "$TMP/gen.json")"
	[ "$(jq -r .total_sent "$TMP/gen.json")" == 300 ] ||
		fail "wrgen sent $(jq -r .total_sent "$TMP/gen.json") of 300"
}

if ! out=$(wr attach mt-r mode native keys 4096 2>&1) || ! out=$(wr attach "$ODD" mode tc 2>&1)
then
	not_ok metrics-setup "attach: $out"
	exit 1
fi
wr rule add burst proto udp dport 9000 limit 1pps burst 100 >/dev/null &&
	wr rule add dry proto udp dport 9001 limit 1pps burst 50 limit 10kpps per all \
		action dry-run >/dev/null || { not_ok metrics-setup "rule add"; exit 1; }
if ! serve 127.0.0.1:$PORT; then
	not_ok metrics-setup "metrics_serve did not start: $(cat "$TMP/serve.err")"
	exit 1
fi

# Before any traffic: the whole exposition, valid, every family documented.
begin_case
code=$(scrape)
[ "$code" == 200 ] || fail "GET /metrics: $code"
promtool_ok "$TMP/scrape"
cp "$TMP/scrape" "$TMP/first"
keys_at=$(date +%s.%N)
in_ns "$RCV" curl -s -o /dev/null -D "$TMP/headers" "$URL"
grep -qi '^content-type: text/plain; version=0.0.4' "$TMP/headers" ||
	fail "content type: $(grep -i content-type "$TMP/headers")"
for f in weir_rule_packets_total:counter weir_rule_bytes_total:counter \
	 weir_frames_total:counter weir_packets_total:counter weir_faults_total:counter \
	 weir_fail_open_total:counter weir_contended_total:counter weir_events_total:counter \
	 weir_events_lost_total:counter weir_keys:gauge weir_keys_capacity:gauge \
	 weir_rules:gauge weir_rule_limits:gauge weir_enabled:gauge \
	 weir_fail_closed:gauge weir_ruleset_generation:gauge weir_tcp_state_on:gauge \
	 weir_interface_attached:gauge weir_interface_packets_total:counter \
	 weir_interface_bytes_total:counter weir_up:gauge weir_deny_entries:gauge \
	 weir_allow_entries:gauge weir_shed_utilization:gauge weir_shed_amount:gauge \
	 weir_shed_probability:gauge weir_shed_enabled:gauge weir_shed_active:gauge \
	 weir_shed_signal:gauge weir_shed_signal_readable:gauge weir_capacity_rate:gauge \
	 weir_class_packets_total:counter weir_class_bytes_total:counter \
	 weir_class_shed_packets_total:counter weir_class_shed_bytes_total:counter \
	 weir_class_over_capacity_packets_total:counter \
	 weir_class_over_capacity_bytes_total:counter; do
	name=${f%:*} type=${f#*:}
	grep -q "^# HELP $name ." "$TMP/scrape" || fail "no HELP for $name"
	grep -qx "# TYPE $name $type" "$TMP/scrape" || fail "no TYPE $type for $name"
done
# The metrics table (docs/metrics.md) and the endpoint, both ways: every
# family emitted is documented, every documented one (but the daemon's own)
# is emitted, and the results of weir_packets_total are the ones it lists.
doc_metrics() {
	grep '^| `weir_' docs/metrics.md |
		{ if [ "${1:-}" == no-daemon ]; then grep -v 'daemon only'; else cat; fi; } |
		cut -d'|' -f2 | grep -o 'weir_[a-z_]*' | sort -u
}
# (weir_test_*: metrics_serve's own, the test server's)
emitted=$(sed -n 's/^# TYPE \(weir_[a-z_]*\) .*/\1/p' "$TMP/scrape" | grep -v '^weir_test_' | sort -u)
undocumented=$(comm -23 <(echo "$emitted") <(doc_metrics))
missing=$(comm -13 <(echo "$emitted") <(doc_metrics no-daemon))
[ -z "$undocumented" ] || fail "emitted but not in docs/metrics.md: $(echo $undocumented)"
[ -z "$missing" ] || fail "in docs/metrics.md but not emitted: $(echo $missing)"
[ "$(echo "$emitted" | wc -l)" -ge 30 ] || fail "only $(echo "$emitted" | wc -l) families emitted"
results=$(sed -n 's/^weir_packets_total{result="\([a-z_]*\)"}.*/\1/p' "$TMP/scrape" | sort)
documented=$(grep '^| `weir_packets_total`' docs/metrics.md |
	sed 's/.*`result` = \([^|]*\)|.*/\1/' | tr -d ' ' | tr ',' '\n' | sort)
[ -n "$results" ] && [ "$results" == "$documented" ] ||
	fail "weir_packets_total results [$(echo $results)], docs/metrics.md lists [$(echo $documented)]"
for v in passed dropped would_drop; do
	expect "weir_rule_packets_total{rule=\"burst\",verdict=\"$v\"}" 0
	expect "weir_rule_bytes_total{rule=\"dry\",verdict=\"$v\"}" 0
done
expect weir_up 1
expect weir_rules 2
expect 'weir_rule_limits{rule="burst"}' 1
expect 'weir_rule_limits{rule="dry"}' 2
expect weir_keys 0
expect weir_keys_capacity 4096
expect weir_enabled 1
expect weir_fail_closed 0
expect 'weir_interface_attached{interface="mt-r",mode="native"}' 1
expect "weir_interface_attached{interface=\"$ODD_LABEL\",mode=\"tc\"}" 1
# No controller has run: nothing is shed, no capacity is configured.
expect weir_shed_enabled 1
expect weir_shed_active 0
for c in 0 1 2 3; do
	expect "weir_shed_probability{class=\"$c\"}" 0
	expect "weir_class_shed_packets_total{class=\"$c\"}" 0
	expect "weir_class_over_capacity_packets_total{class=\"$c\"}" 0
done
grep -q '^weir_capacity_rate{' "$TMP/scrape" && fail "capacity shown though not configured"
grep -q '^weir_shed_signal' "$TMP/scrape" && fail "signals shown though there are none"
end_case metrics-exposition

# The counter enum drives the exposition: every global counter of the data
# path (enum weir_global, as metrics_serve --counters lists it) is in the
# scrape, in its own family or as a result of a shared one, and each of those
# families is documented (the check above). A counter added to the enum
# without a family fails here.
begin_case
counters=$("$SERVE" --counters)
[ "$(grep -c . <<<"$counters")" -ge 20 ] || fail "metrics_serve --counters listed: $(echo $counters)"
while read -r cname family how; do
	case $how in
	result) grep -q "^$family{result=\"$cname\"} [0-9]" "$TMP/scrape" ||
		fail "the counter $cname is not in the scrape as $family{result=\"$cname\"}" ;;
	-) grep -q "^$family [0-9]" "$TMP/scrape" || fail "the counter $cname is not in the scrape as $family" ;;
	*) fail "the counter $cname has no family ($family $how)" ;;
	esac
	[ "$family" != "(none)" ] || fail "the counter $cname has no family"
done <<<"$counters"
end_case metrics-every-counter-exported

# What the caller appends comes after weir's own, in the same response.
begin_case
last_own=$(grep -n '^weir_allow_entries{' "$TMP/first" | tail -1 | cut -d: -f1)
extra_at=$(grep -n '^weir_test_scrapes_total ' "$TMP/first" | cut -d: -f1)
[ -n "$extra_at" ] || fail "the extra callback's metric is missing"
[ -n "$extra_at" ] && [ -n "$last_own" ] && [ "$extra_at" -gt "$last_own" ] ||
	fail "extra metrics not after weir's (line $extra_at, last own $last_own)"
end_case metrics-extra-appended

# Counters move with traffic, exactly.
begin_case
send300 198.18.0.2 9000
send300 198.18.0.3 9001
scrape >/dev/null
promtool_ok "$TMP/scrape"
# 64-byte payload: 92 bytes of IP per packet.
expect 'weir_rule_packets_total{rule="burst",verdict="passed"}' 100
expect 'weir_rule_packets_total{rule="burst",verdict="dropped"}' 200
expect 'weir_rule_packets_total{rule="burst",verdict="would_drop"}' 0
expect 'weir_rule_bytes_total{rule="burst",verdict="passed"}' 9200
expect 'weir_rule_bytes_total{rule="burst",verdict="dropped"}' 18400
# Dry run: everything passes, what is over the limit is a would-drop.
expect 'weir_rule_packets_total{rule="dry",verdict="passed"}' 300
expect 'weir_rule_packets_total{rule="dry",verdict="dropped"}' 0
expect 'weir_rule_packets_total{rule="dry",verdict="would_drop"}' 250
expect 'weir_rule_bytes_total{rule="dry",verdict="would_drop"}' 23000
expect 'weir_packets_total{result="dropped"}' 200
expect 'weir_packets_total{result="would_drop"}' 250
parsed=$(val 'weir_packets_total{result="parsed"}')
frames=$(val weir_frames_total)
[ "$parsed" != missing ] && [ "$parsed" -ge 600 ] || fail "parsed $parsed, sent 600"
[ "$frames" != missing ] && [ "$frames" -ge "$parsed" ] || fail "frames $frames < parsed $parsed"
expect weir_faults_total 0
end_case metrics-counters-follow-traffic

# The key count is cached for 5 s, then recounted: one bucket per source.
begin_case
since=$(awk -v a="$keys_at" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
if awk -v s="$since" 'BEGIN { exit !(s < 4) }'; then
	expect weir_keys 0
else
	echo "# $since s since the first count: too late to see the cached value"
fi
keys=missing
for _ in $(seq 80); do
	scrape >/dev/null
	keys=$(val weir_keys)
	[ "$keys" == 2 ] && break
	sleep 0.1
done
[ "$keys" == 2 ] || fail "weir_keys $keys after the cache expired, expected 2"
end_case metrics-keys-counted-and-cached

# Switches, lists and the rule set generation.
begin_case
scrape >/dev/null
gen=$(val weir_ruleset_generation)
wr set fail closed >/dev/null && wr disable >/dev/null &&
	wr deny add 198.18.200.0/24 >/dev/null && wr deny add 2001:db8:dead::/48 >/dev/null &&
	wr allow add 198.18.201.0/24 >/dev/null &&
	wr rule add third proto tcp dport 22 limit 5pps >/dev/null || fail "CLI changes failed"
scrape >/dev/null
promtool_ok "$TMP/scrape"
expect weir_enabled 0
expect weir_fail_closed 1
expect 'weir_deny_entries{family="ipv4"}' 1
expect 'weir_deny_entries{family="ipv6"}' 1
expect 'weir_allow_entries{family="ipv4"}' 1
expect 'weir_allow_entries{family="ipv6"}' 0
expect weir_rules 3
expect 'weir_rule_limits{rule="third"}' 1
[ "$gen" != missing ] && expect weir_ruleset_generation $((gen + 1))
wr enable >/dev/null && wr set fail open >/dev/null
scrape >/dev/null
expect weir_enabled 1
expect weir_fail_closed 0
end_case metrics-switches-lists-generation

# An attachment whose interface is gone is still listed, at 0, under the
# name and mode it was attached with.
begin_case
ip -n "$RCV" link del mt-p
scrape >/dev/null
promtool_ok "$TMP/scrape"
expect "weir_interface_attached{interface=\"$ODD_LABEL\",mode=\"tc\"}" 0
expect 'weir_interface_attached{interface="mt-r",mode="native"}' 1
end_case metrics-interface-gone

# Shedding and reserved capacity: a state written as a controller writes it
# (S 0.5: class 3 sheds all, class 2 half, class 1 nothing; classes 1..3
# held to 1 pps, burst 100), then 300 packets at 1000 pps of each class.
begin_case
wr rule add c1 proto udp dport 9101 class 1 limit 1mpps per all >/dev/null &&
	wr rule add c2 proto udp dport 9102 class 2 limit 1mpps per all >/dev/null &&
	wr rule add c3 proto udp dport 9103 class 3 limit 1mpps per all >/dev/null ||
	fail "rule add"
"$POKE" --bpffs "$ROOT" || fail "shed_poke failed"
scrape >/dev/null
promtool_ok "$TMP/scrape"
expect weir_shed_utilization 0.900000
expect weir_shed_amount 0.500000
expect 'weir_shed_probability{class="0"}' 0
expect 'weir_shed_probability{class="1"}' 0
expect 'weir_shed_probability{class="2"}' 0.5
expect 'weir_shed_probability{class="3"}' 1
expect weir_shed_enabled 1
expect weir_shed_active 1
expect 'weir_shed_signal{signal="cpu"}' 0.900000
expect 'weir_shed_signal{signal="psi"}' missing
expect 'weir_shed_signal{signal="file:/run/a\"b\\c"}' 0.250000
expect 'weir_shed_signal_readable{signal="cpu"}' 1
expect 'weir_shed_signal_readable{signal="psi"}' 0
expect 'weir_capacity_rate{unit="packets",scope="total"}' 1000
expect 'weir_capacity_rate{unit="packets",scope="noncritical"}' 1
expect 'weir_capacity_rate{unit="bytes",scope="total"}' 1000000
expect 'weir_capacity_rate{unit="bytes",scope="noncritical"}' missing
shed0=$(val 'weir_packets_total{result="shed"}')
cap0=$(val 'weir_packets_total{result="over_capacity"}')
send300 198.18.0.2 9101
send300 198.18.0.2 9103
send300 198.18.0.3 9102
scrape >/dev/null
promtool_ok "$TMP/scrape"
for c in 1 2 3; do
	expect "weir_class_packets_total{class=\"$c\"}" 300
	expect "weir_class_bytes_total{class=\"$c\"}" 27600
done
# Class 1: never shed; the non-critical capacity's burst of 100, the rest refused.
expect 'weir_class_shed_packets_total{class="1"}' 0
expect 'weir_class_over_capacity_packets_total{class="1"}' 200
expect 'weir_class_over_capacity_bytes_total{class="1"}' 18400
expect 'weir_rule_packets_total{rule="c1",verdict="passed"}' 100
# Class 3: all shed, before capacity.
expect 'weir_class_shed_packets_total{class="3"}' 300
expect 'weir_class_shed_bytes_total{class="3"}' 27600
expect 'weir_class_over_capacity_packets_total{class="3"}' 0
# Class 2: half shed (150 +- 50, 5.8 sigma); what is left finds the capacity spent.
shed2=$(val 'weir_class_shed_packets_total{class="2"}')
cap2=$(val 'weir_class_over_capacity_packets_total{class="2"}')
if [ "$shed2" == missing ] || [ "$cap2" == missing ]; then
	fail "class 2 counters missing"
else
	[ "$shed2" -ge 100 ] && [ "$shed2" -le 200 ] || fail "class 2: $shed2 of 300 shed at p 0.5"
	[ $((shed2 + cap2)) -ge 290 ] && [ $((shed2 + cap2)) -le 300 ] ||
		fail "class 2: $shed2 shed + $cap2 over capacity, of 300"
	[ "$shed0" != missing ] && expect 'weir_packets_total{result="shed"}' $((shed0 + 300 + shed2))
	[ "$cap0" != missing ] &&
		expect 'weir_packets_total{result="over_capacity"}' $((cap0 + 200 + cap2))
fi
expect 'weir_class_shed_packets_total{class="0"}' 0
# Cleared: nothing shed, no capacity, no controller.
"$POKE" --bpffs "$ROOT" --clear || fail "shed_poke --clear failed"
scrape >/dev/null
promtool_ok "$TMP/scrape"
expect 'weir_shed_probability{class="3"}' 0
expect weir_shed_active 0
grep -q '^weir_capacity_rate{' "$TMP/scrape" && fail "capacity shown after clearing"
grep -q '^weir_shed_signal' "$TMP/scrape" && fail "signals shown after clearing"
end_case metrics-shedding

# Only GET and HEAD of /metrics: anything else is 404, or 405 on /metrics.
begin_case
for path in / /metric /metrics/ /metricsx /debug; do
	code=$(scrape "http://127.0.0.1:$PORT$path")
	[ "$code" == 404 ] || fail "GET $path: $code"
done
for method in POST PUT DELETE PATCH OPTIONS; do
	code=$(in_ns "$RCV" curl -s --max-time 5 -o /dev/null -D "$TMP/headers" -w '%{http_code}' \
		-X $method --data 'enabled=0' "$URL")
	[ "$code" == 405 ] || fail "$method /metrics: $code"
	grep -qi '^allow: GET, HEAD' "$TMP/headers" || fail "$method: no Allow header"
done
code=$(in_ns "$RCV" curl -s --max-time 5 -o "$TMP/head" -w '%{http_code}' -I "$URL")
[ "$code" == 200 ] || fail "HEAD /metrics: $code"
grep -q '^weir_' "$TMP/head" && fail "HEAD returned a body"
# Still serving, unchanged, after all that.
scrape >/dev/null
expect weir_enabled 1
end_case metrics-read-only-get-only

# Bound to the given address only: loopback, not the veth address.
begin_case
listeners=$(in_ns "$RCV" ss -ltnH "sport = :$PORT" | awk '{ print $4 }')
[ "$listeners" == "127.0.0.1:$PORT" ] || fail "listening on: $(echo $listeners)"
code=$(in_ns "$SND" curl -s --max-time 3 -o /dev/null -w '%{http_code}' \
	"http://198.18.0.1:$PORT/metrics")
[ "$code" == 000 ] || fail "reachable from the other namespace: $code"
end_case metrics-bound-to-loopback

# IPv6 loopback, bracketed.
begin_case
if serve "[::1]:$((PORT + 1))"; then
	listeners=$(in_ns "$RCV" ss -ltnH "sport = :$((PORT + 1))" | awk '{ print $4 }')
	[ "$listeners" == "[::1]:$((PORT + 1))" ] || fail "listening on: $(echo $listeners)"
	code=$(scrape "http://[::1]:$((PORT + 1))/metrics")
	[ "$code" == 200 ] || fail "GET over IPv6: $code"
	expect weir_up 1
else
	fail "no server on [::1]: $(tail -1 "$TMP/serve.err")"
fi
end_case metrics-ipv6-listen

# Bad addresses and a port in use are refused, saying why.
begin_case
for a in localhost:9000 127.0.0.1 127.0.0.1: 127.0.0.1:0 127.0.0.1:65536 '::1:9000' \
	 '[::1]9000' '[::1' 0x7f000001:9000 '127.0.0.1:9000 '; do
	if err=$(in_ns "$RCV" "$SERVE" --bpffs "$ROOT" --listen "$a" 2>&1); then
		fail "accepted \"$a\""
	elif ! grep -q "invalid metrics address" <<<"$err"; then
		fail "\"$a\": $err"
	fi
done
if err=$(in_ns "$RCV" timeout 5 "$SERVE" --bpffs "$ROOT" --listen 127.0.0.1:$PORT 2>&1); then
	fail "a second server on the same port started"
else
	grep -q "Address already in use" <<<"$err" || fail "port in use: $err"
fi
end_case metrics-bad-listen-refused

# SIGTERM stops the server promptly and frees the port.
begin_case
serve 127.0.0.1:$((PORT + 2)) || fail "server did not start"
start=$(date +%s%N)
kill -TERM "$SERVER"
wait "$SERVER"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] || fail "exit status $rc"
[ $ms -lt 2000 ] || fail "took $ms ms to stop"
[ -z "$(in_ns "$RCV" ss -ltnH "sport = :$((PORT + 2))")" ] || fail "port still open"
end_case metrics-stop

# No leaks, no bad memory accesses and no descriptors left over a few
# scrapes. valgrind's model of bpf(BPF_MAP_GET_NEXT_KEY) flags libbpf's
# partly set attr and the NULL first key, which the kernel allows; those
# two are suppressed, anything else is an error.
begin_case
if ! command -v valgrind >/dev/null; then
	skip metrics-valgrind "valgrind is not installed"
else
	ready=$TMP/vg.ready
	for p in 'attr->flags' 'attr->key'; do
		printf '{\n   get_next_key-%s\n   Memcheck:Param\n   bpf(%s)\n' "$p" "$p"
		printf '   fun:syscall\n   fun:bpf_map_get_next_key\n   ...\n}\n'
	done >"$TMP/vg.supp"
	nsenter --net="/run/netns/$RCV" valgrind --leak-check=full --errors-for-leak-kinds=all \
		--track-fds=yes --suppressions="$TMP/vg.supp" --log-file="$TMP/vg.log" \
		"$SERVE" --bpffs "$ROOT" --listen 127.0.0.1:$((PORT + 3)) --ready "$ready" \
		2>/dev/null &
	vg=$!
	SERVERS+=("$vg")
	for _ in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
	for _ in 1 2 3 4 5; do
		code=$(scrape "http://127.0.0.1:$((PORT + 3))/metrics")
		[ "$code" == 200 ] || fail "scrape under valgrind: $code"
	done
	scrape "http://127.0.0.1:$((PORT + 3))/nothing" >/dev/null
	in_ns "$RCV" curl -s -o /dev/null -X POST "http://127.0.0.1:$((PORT + 3))/metrics"
	kill -TERM "$vg"
	wait "$vg" || fail "exit status $?"
	grep -q 'in use at exit: 0 bytes in 0 blocks' "$TMP/vg.log" ||
		fail "$(grep -A6 'HEAP SUMMARY' "$TMP/vg.log" | cut -d' ' -f2- | tr '\n' ' ')"
	grep -q 'ERROR SUMMARY: 0 errors' "$TMP/vg.log" ||
		fail "$(grep 'ERROR SUMMARY' "$TMP/vg.log" | cut -d' ' -f2-) (log: see below)"
	# Descriptors open at exit are only the ones inherited from the shell.
	awk '/Open (file descriptor|AF_)/ { getline n; if (n !~ /inherited/) print }' \
		"$TMP/vg.log" | grep -q . && fail "descriptors left open"
	[ -n "$CASE_FAILED" ] && sed 's/^/# /' "$TMP/vg.log"
	end_case metrics-valgrind
fi

stop_servers
