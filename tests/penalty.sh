#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The penalty box end to end: `weir run` with a rule whose limit says
# `ban 6s after 10 max 10s`, real UDP floods over a veth from a sender
# namespace, counted by wrsink on the receiver. Cases:
# - the grammar: ban, after, max in `rule add`, `rule list` and a config,
#   and each bad combination refused by name;
# - a source that floods is banned within the daemon's tick: on the deny
#   list as a penalty-box entry with a ttl of at most 6 s, its datagrams
#   dropped as denied, a source under the limit untouched;
# - the ban ends by itself and the source gets through again;
# - a second flood bans it again for longer (6 s doubled, capped at 10 s);
# - a source with live TCP connections to this host is limited but not
#   banned, and the daemon says why;
# - metrics count the bans and the spared source.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root penalty

GEN=$PWD/$BUILD/wrgen
SINK=$PWD/$BUILD/wrsink
PORT=9414		# the flooded UDP port
TPORT=9415		# the TCP server the NAT-like source holds connections to
MPORT=9472		# metrics, on the receiver's loopback

RCV=$(new_netns r) && SND=$(new_netns s) && ROOT=$(new_root penalty) || {
	not_ok penalty-setup "cannot create the namespaces"
	exit 1
}
ip link add "$TAG-s" netns "$SND" type veth peer name "$TAG-r" netns "$RCV" &&
	in_ns "$RCV" sysctl -qw "net.ipv6.conf.$TAG-r.disable_ipv6=1" &&
	in_ns "$SND" sysctl -qw "net.ipv6.conf.$TAG-s.disable_ipv6=1" &&
	ip -n "$RCV" addr add 198.18.44.1/24 dev "$TAG-r" &&
	for a in 2 3 4; do ip -n "$SND" addr add "198.18.44.$a/24" dev "$TAG-s" || exit 1; done &&
	ip -n "$RCV" link set "$TAG-r" up && ip -n "$SND" link set "$TAG-s" up || {
	not_ok penalty-setup "cannot create the veth"
	exit 1
}
mac_r=$(ip -n "$RCV" -j link show "$TAG-r" | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show "$TAG-s" | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.44.1 lladdr "$mac_r" dev "$TAG-s" nud permanent
for a in 2 3 4; do
	ip -n "$RCV" neigh replace "198.18.44.$a" lladdr "$mac_s" dev "$TAG-r" nud permanent
done

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
g() { wrj stats | jq -r ".global.$1 // 0"; }
# ban_of ADDR: "ttl ban" of ADDR/32 on the deny list, or nothing
ban_of() { wrj deny list | jq -r --arg c "$1/32" '.deny[] | select(.cidr == $c) | "\(.ttl) \(.ban)"'; }
banned() { [ -n "$(ban_of "$1")" ]; }
not() { ! "$@"; }
wait_for() {
	local n=$(($1 * 10)); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}
# send SRC RATE COUNT: datagrams from SRC; prints how many arrived.
send() {
	local ready=$TMP/ready sink
	rm -f "$ready"
	nsenter --net="/run/netns/$RCV" "$SINK" --listen 198.18.44.1 --port $PORT \
		--duration 30 --idle 1 --json --ready-file "$ready" >"$TMP/sink.json" &
	sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	in_ns "$SND" "$GEN" --dst 198.18.44.1 --dport $PORT --src "$1" \
		--rate "$2" --count "$3" --size 32 --duration 20 --json >/dev/null
	sleep 0.3
	kill -TERM "$sink" 2>/dev/null
	wait "$sink"
	jq -r '[.sources[]?.packets] | add // 0' "$TMP/sink.json"
}

# ---- the grammar ----
begin_case
expect_ok "attach" wr attach "$TAG-r" mode native
expect_ok "rule add" wr rule add g1 proto udp dport 1000 limit 10pps ban 10m after 5 max 1h \
	limit 1kpps per src/24
[ "$(wr rule list | grep '^g1 ')" = "g1 proto udp dport 1000 limit 10pps burst 10 per src/32 src6/64 ban 10m after 5 max 1h limit 1kpps burst 1000 per src/24 src6/64 action drop" ] ||
	fail "rule list: $(wr rule list)"
[ "$(wrj rule list | jq -c '.rules[0].limits[0] | [.ban_s, .ban_after, .ban_max_s]')" = "[600,5,3600]" ] ||
	fail "rule list -j: $(wrj rule list | jq -c '.rules[0].limits[0]')"
expect_fail "after without ban" wr rule add g2 proto udp limit 10pps after 5
expect_fail "max without ban" wr rule add g2 proto udp limit 10pps max 1h
expect_fail "max under ban" wr rule add g2 proto udp limit 10pps ban 1h max 10m
expect_fail "after 0" wr rule add g2 proto udp limit 10pps ban 1h after 0
expect_fail "ban 0s" wr rule add g2 proto udp limit 10pps ban 0s
expect_fail "ban 31d" wr rule add g2 proto udp limit 10pps ban 31d
expect_fail "ban fraction" wr rule add g2 proto udp limit 10pps ban 1.5s
expect_fail "ban per all" wr rule add g2 proto udp limit 10pps per all ban 1m
expect_fail "ban per dst" wr rule add g2 proto udp limit 10pps per dst ban 1m
expect_fail "ban on conns" wr rule add g2 proto tcp conns 5 ban 1m
expect_fail "ban before a limit" wr rule add g2 proto udp ban 1m limit 10pps
expect_fail "ban twice" wr rule add g2 proto udp limit 10pps ban 1m ban 2m
out=$(wr rule add g2 proto udp limit 10pps ban 1h max 10m 2>&1)
grep -q "max 600s is shorter than ban 3600s" <<<"$out" || fail "max under ban: $out"
out=$(wr rule add g2 proto udp limit 10pps per all ban 1m 2>&1)
grep -q "a rule-wide bucket has no source to ban" <<<"$out" || fail "per all: $out"
expect_ok "rule del" wr rule del g1
cat >"$TMP/bad.yaml" <<EOF
rules:
  - name: x
    proto: udp
    limits:
      - rate: 10pps
        after: 5
EOF
out=$("$WEIR" check "$TMP/bad.yaml" 2>&1)
grep -q ':5:15: "after" goes with ban DURATION in the same limit' <<<"$out" || fail "config: $out"
end_case penalty-grammar

# ---- the daemon bans a flooding source ----
cat >"$TMP/weir.yaml" <<EOF
interfaces:
  - name: $TAG-r
    mode: native
metrics:
  listen: 127.0.0.1:$MPORT
events:
  interval: 2s
rules:
  - name: pb
    proto: udp
    dport: $PORT
    limits:
      - rate: 20pps
        burst: 5
        ban: 6s
        after: 10
        max: 10s
EOF
begin_case
start_daemon "$RCV" "$ROOT" "$TMP/weir.yaml" "$TMP/daemon.log" ||
	fail "the daemon did not start: $(tail -3 "$TMP/daemon.log")"
got=$(send 198.18.44.3 10 10)
[ "$got" = 10 ] || fail "a source under the limit: $got of 10 arrived"
d0=$(g denied)
send 198.18.44.2 300 300 >/dev/null
wait_for 5 banned 198.18.44.2 || fail "not banned: $(wrj deny list) $(tail -3 "$TMP/daemon.log")"
read -r ttl isban <<<"$(ban_of 198.18.44.2)"
[ "$isban" = true ] || fail "the entry is not the penalty box's: $(wrj deny list)"
[ "${ttl:-99}" -le 6 ] || fail "ttl $ttl, want at most 6"
grep -q "198.18.44.2 banned for 6s by rule pb: refused [0-9]* times within 1s (ban 1 of it" \
	"$TMP/daemon.log" || fail "no ban line: $(grep 198.18.44.2 "$TMP/daemon.log" | tail -2)"
[ "$(($(g denied) - d0))" -gt 0 ] || fail "the flood's tail was not dropped as denied"
banned 198.18.44.3 && fail "the source under the limit was banned"
grep -q '198.18.44.2/32 ttl [0-9]*s (penalty box: rule pb, ban 1)' <<<"$(wr deny list)" ||
	fail "deny list text: $(wr deny list)"
[ "$(wrj deny list | jq -c '.deny[] | select(.cidr == "198.18.44.2/32") | [.ban_rule, .ban_count]')" = '["pb",1]' ] ||
	fail "deny list -j: $(wrj deny list)"
t=$(wrj top | jq -c '.banned[] | select(.cidr == "198.18.44.2/32") | [.rule, .ban_count]')
[ "$t" = '["pb",1]' ] || fail "top -j banned: $(wrj top | jq -c .banned)"
grep -q '^1 sources in the penalty box:' <<<"$(wr top)" || fail "top: $(wr top)"
end_case penalty-ban

# ---- it ends by itself; a repeat is banned for longer ----
begin_case
wait_for 15 not banned 198.18.44.2 || fail "the ban did not end: $(wrj deny list)"
got=$(send 198.18.44.2 5 5)
[ "$got" = 5 ] || fail "after the ban, $got of 5 arrived"
send 198.18.44.2 300 300 >/dev/null
wait_for 5 banned 198.18.44.2 || fail "not banned again: $(tail -3 "$TMP/daemon.log")"
read -r ttl isban <<<"$(ban_of 198.18.44.2)"
# Read once the flood ended (a second or two into the ban): more than the
# first ban's 6 s can be left only if it was doubled.
[ "${ttl:-0}" -gt 6 ] && [ "${ttl:-0}" -le 10 ] || fail "repeat ttl $ttl, want 7..10 (6s doubled, max 10s)"
grep -q "198.18.44.2 banned for 10s by rule pb: .*(ban 2 of it in a day)" "$TMP/daemon.log" ||
	fail "no repeat line: $(grep 198.18.44.2 "$TMP/daemon.log" | tail -2)"
[ "$(wrj deny list | jq -r '.deny[] | select(.cidr == "198.18.44.2/32") | .ban_count')" = 2 ] ||
	fail "ban count: $(wrj deny list)"
end_case penalty-repeat-longer

# ---- a source with live connections is limited, not banned ----
begin_case
cat >"$TMP/srv.py" <<'EOF'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.44.1", int(sys.argv[1])))
s.listen(16)
conns = []
s.settimeout(30)
try:
    while True:
        conns.append(s.accept()[0])
except Exception:
    pass
EOF
cat >"$TMP/cli.py" <<'EOF'
import socket, sys, time
cs = []
for _ in range(3):
    c = socket.socket()
    c.bind(("198.18.44.4", 0))
    c.connect(("198.18.44.1", int(sys.argv[1])))
    cs.append(c)
print("connected", flush=True)
time.sleep(float(sys.argv[2]))
EOF
nsenter --net="/run/netns/$RCV" python3 "$TMP/srv.py" $TPORT &
srv=$!
sleep 0.5
nsenter --net="/run/netns/$SND" python3 "$TMP/cli.py" $TPORT 15 >"$TMP/cli.out" 2>&1 &
cli=$!
wait_for 5 grep -q connected "$TMP/cli.out" || fail "the client did not connect: $(cat "$TMP/cli.out")"
drops0=$(wrj stats | jq -r '.rules[] | select(.name == "pb") | .dropped_packets')
send 198.18.44.4 300 600 >/dev/null
wait_for 5 grep -q "198.18.44.4 limited by rule pb, not banned: it holds live connections" \
	"$TMP/daemon.log" || fail "no spared line: $(tail -3 "$TMP/daemon.log")"
banned 198.18.44.4 && fail "a source with 3 live connections was banned"
drops=$(wrj stats | jq -r '.rules[] | select(.name == "pb") | .dropped_packets')
[ $((drops - drops0)) -gt 100 ] || fail "the rule dropped only $((drops - drops0)) of its flood"
kill "$cli" "$srv" 2>/dev/null
wait "$cli" "$srv" 2>/dev/null
end_case penalty-spares-live-connections

# ---- metrics ----
begin_case
m=$(in_ns "$RCV" curl -s "http://127.0.0.1:$MPORT/metrics")
grep -q '^weir_bans_total 2$' <<<"$m" || fail "bans: $(grep bans <<<"$m")"
grep -q '^weir_bans_spared_total{reason="connections"} 1$' <<<"$m" ||
	fail "spared: $(grep spared <<<"$m")"
stop_daemons
end_case penalty-metrics
exit 0
