#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The weir command line: bad input fails clearly and changes nothing;
# -j output parses; what is listed can be typed back in.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
trap cleanup EXIT
require_root cli

NS=$(new_netns cli) || { not_ok cli-setup "cannot create a namespace"; exit 1; }
ROOT=$(new_root cli)
in_ns "$NS" ip link add cli0 type veth peer name cli1
in_ns "$NS" ip link set cli0 up
in_ns "$NS" ip link set cli1 up

wr() { in_ns "$NS" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# The whole observable state, to compare before and after a failed command.
TMPE=$(mktemp)
trap 'cleanup; rm -f "$TMPE"' EXIT
snapshot() {
	{
		wrj status | jq -S 'del(.interfaces[]?.link_id, .interfaces[]?.prog_id)'
		wrj rule list | jq -S .
		wrj deny list | jq -S .
		wrj allow list | jq -S .
	} 2>&1
}

# bad_input NAME WORD ARGS...: exits with status 1 (not 0, not a crash),
# names WORD in its error, changes nothing.
bad_input() {
	local name=$1 word=$2; shift 2
	local before after err rc
	begin_case
	before=$(snapshot)
	err=$(wr "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, want 1, for: $*"
	[[ "$err" == *"$word"* ]] || fail "error does not name \"$word\": $err"
	[ "$(echo "$err" | grep -c .)" -ge 1 ] || fail "no error printed"
	after=$(snapshot)
	[ "$before" == "$after" ] || fail "state changed"
	end_case "cli-bad-$name"
}

# Before anything is loaded: read commands say so; status says not loaded.
begin_case
out=$(wr stats 2>&1) && fail "stats succeeded with nothing loaded"
[[ "$out" == *"not loaded"* ]] || fail "unclear error: $out"
[ "$(wrj status | jq -r .loaded)" == "false" ] || fail "status claims loaded"
end_case cli-not-loaded

begin_case
expect_ok "attach" wr attach cli0 mode generic
[ "$(wrj status | jq -r '.interfaces[0].interface')" == "cli0" ] || fail "status lacks cli0"
[ "$(wrj status | jq -r '.interfaces[0].mode')" == "generic" ] || fail "mode not generic"
end_case cli-attach

# The loader's one-time setup of the per-source table and the jiffies clock:
# the table has keys / 4 sets and a random hash key, and jiffies x tick +
# the measured offset is CLOCK_MONOTONIC rounded down to a tick (read from
# /proc/timer_list: its "now" is ktime_get, then each CPU's jiffies, read
# a moment later, so a tick may pass in between: -1 to 2 ticks are taken).
begin_case
# wr_config's fields by byte offset (struct weir_config), little-endian;
# a 64-bit value as a decimal string through awk (the offset may wrap).
cfgb=$(bpftool -j map dump pinned "$ROOT/wr_config" |
	jq -r '.[0].value | map(ltrimstr("0x")) | join(" ")')
le() {
	awk -v o="$1" -v n="$2" -v d=0123456789abcdef 'function hex(s) {
		return (index(d, substr(s, 1, 1)) - 1) * 16 + index(d, substr(s, 2, 1)) - 1 }
	{ v = 0; for (i = o + n; i > o; i--) v = v * 256 + hex($i); printf "%.0f", v }' <<<"$cfgb"
}
[ "$(le 40 4)" == "262144" ] || fail "state_sets $(le 40 4), want 262144: $cfgb"
[ "$(le 32 8)" != "0" ] || fail "state_seed is 0"
tick=$(le 44 4)
off=$(le 48 8)
if [ "${tick:-0}" -le 0 ] 2>/dev/null; then
	fail "clock_tick not measured: $cfgb"
else
	# now - (jiffies x tick + off), in ticks, off being a 64-bit wrapping sum
	lag=$(awk -v tick="$tick" -v off="$off" '
		/^now at/ { now = $3 }
		/^jiffies:/ && !j { j = $2 }
		END { e = j * tick + off; if (e > 2^63) e -= 2^64; printf "%.3f", (now - e) / tick }
	' /proc/timer_list)
	awk -v l="$lag" 'BEGIN { exit !(l > -1 && l < 2) }' ||
		fail "jiffies clock is $lag ticks behind CLOCK_MONOTONIC, want 0 to 1"
fi
end_case cli-state-and-clock-setup

expect_ok "seed rule" wr rule add base proto udp dport 53 limit 100pps
expect_ok "seed deny" wr deny add 198.18.9.0/24

bad_input unknown-interface nosuch0 attach nosuch0
bad_input attach-twice cli0 attach cli0
bad_input bad-mode turbo attach cli1 mode turbo
bad_input bad-cidr-len 198.18.0.0/33 deny add 198.18.0.0/33
bad_input bad-cidr-word notanaddress allow add notanaddress
bad_input bad-cidr-hostbits 198.18.0.1/24 deny add 198.18.0.1/24
bad_input rule-bad-cidr 300.1.1.1 rule add r1 src 300.1.1.1 limit 10pps
bad_input rate-zero 0pps rule add r1 limit 0pps
bad_input rate-junk 10xpps rule add r1 limit 10xpps
bad_input rate-bits 13bit rule add r1 limit 13bit
bad_input rate-overflow 99999999999999999999pps rule add r1 limit 99999999999999999999pps
bad_input burst-zero '"0"' rule add r1 limit 10pps burst 0
bad_input burst-junk 5x rule add r1 limit 10pps burst 5x
bad_input bad-port 70000 rule add r1 dport 70000 limit 10pps
bad_input bad-port-range 90-80 rule add r1 dport 90-80 limit 10pps
bad_input bad-proto tcpx rule add r1 proto tcpx limit 10pps
bad_input bad-flags syn,bogus rule add r1 tcp-flags syn,bogus limit 10pps
bad_input bad-prefix src/33 rule add r1 limit 10pps per src/33
bad_input bad-prefix6 src6/129 rule add r1 limit 10pps per src6/129
bad_input bad-dst-prefix 'per dst prefix "dst/33"' rule add r1 limit 10pps per dst/33
bad_input bad-dst-prefix6 'per dst prefix "dst6/129"' rule add r1 limit 10pps per dst6/129
bad_input flow-prefix 'per flow key' rule add r1 limit 10pps per flow/24
bad_input mixed-kinds 'one key kind per limit' rule add r1 limit 10pps per src/24 dst6/64
bad_input dst-conns 'not per dst' rule add r1 proto tcp dport 80 conns 10 per dst
bad_input flow-fleet 'per flow fleet' rule add r1 limit 10pps per flow fleet
bad_input no-limit r1 rule add r1 proto tcp
bad_input five-limits "at most 4" rule add r1 limit 1pps limit 2pps limit 3pps limit 4pps limit 5pps
bad_input unknown-word frobnicate rule add r1 limit 10pps frobnicate 3
bad_input duplicate-name base rule add base limit 10pps
bad_input unknown-rule nosuch rule del nosuch
bad_input deny-del-missing 198.18.7.0/24 deny del 198.18.7.0/24
bad_input family-conflict 2001:db8::/32 rule add r1 family ipv4 src 2001:db8::/32 limit 10pps
bad_input flags-udp tcp-flags rule add r1 proto udp tcp-flags syn limit 10pps
bad_input bad-action maybe rule add r1 limit 10pps action maybe
bad_input bad-name 'bad name' rule add 'bad name' limit 10pps
bad_input unknown-object frob frob
bad_input set-bad-policy sometimes set fail sometimes
bad_input top-bad-count many top many
# A keyword given twice is refused by name, never the last one silently kept.
bad_input twice-src '"src" given twice' rule add r1 src 198.18.0.0/24 src 198.18.1.0/24 limit 10pps
bad_input twice-dport '"dport" given twice' rule add r1 dport 53 dport 54 limit 10pps
bad_input twice-proto '"proto" given twice' rule add r1 proto udp proto tcp limit 10pps
bad_input twice-action '"action" given twice' rule add r1 limit 10pps action drop action dry-run
bad_input twice-burst '"burst" given twice' rule add r1 limit 10pps burst 5 burst 6
bad_input twice-per '"per" given twice' rule add r1 limit 10pps per src per all
bad_input block-limit 'action block drops every packet the rule matches: it takes no limit' \
	rule add r1 proto udp limit 10pps action block
bad_input no-limit 'needs at least one limit (or tcp-state, or action block)' rule add r1 proto udp
# The further match fields: each bad value names its keyword, nothing is written.
bad_input sport-empty 'sport range "90-80"' rule add r1 proto udp sport 90-80 limit 10pps
bad_input sport-junk sport rule add r1 proto udp sport 7x limit 10pps
bad_input sport-icmp 'sport needs proto tcp or udp' rule add r1 proto icmp sport 53 limit 10pps
bad_input ttl-empty 'ttl range "9-3"' rule add r1 ttl 9-3 limit 10pps
bad_input ttl-big ttl rule add r1 ttl 1-256 limit 10pps
bad_input len-empty 'len range "100-20"' rule add r1 len 100-20 limit 10pps
bad_input dscp-big dscp rule add r1 dscp 64 limit 10pps
bad_input iface-unknown 'iface "weir-nodev0": no such interface' \
	rule add r1 iface weir-nodev0 limit 10pps
bad_input iface-long 'invalid iface' rule add r1 iface abcdefghijklmnopq limit 10pps
bad_input frag-word 'invalid frag "some"' rule add r1 frag some limit 10pps
bad_input frag-later-port 'frag later' rule add r1 proto udp dport 53 frag later limit 10pps
bad_input dst-bad-cidr 'invalid dst "198.18.0.1/33"' rule add r1 dst 198.18.0.1/33 limit 10pps
bad_input dst-hostbits 'invalid dst "198.18.0.1/24"' rule add r1 dst 198.18.0.1/24 limit 10pps
bad_input dst-not-cidr 'invalid dst "foo"' rule add r1 dst foo limit 10pps
bad_input dst-overlap 'overlaps dst "198.18.0.0/16"' \
	rule add r1 dst 198.18.0.0/16 198.18.3.0/24 limit 10pps
bad_input dst-five 'at most 4' \
	rule add r1 dst 198.18.0.1 198.18.0.2 198.18.0.3 198.18.0.4 198.18.0.5 limit 10pps
bad_input dst-family 'dst prefix 1 is IPv6 but the rule is ipv4' \
	rule add r1 family ipv4 dst 2001:db8::1 limit 10pps
bad_input dst-src-family 'dst prefix 1 is IPv4 but the rule is ipv6' \
	rule add r1 dst 198.18.0.1 src 2001:db8::/32 limit 10pps
bad_input pay-off 'payload offset 1501' rule add r1 proto udp payload 1501=1 limit 10pps
bad_input pay-no-value 'payload term "4/0xff" needs =VALUE' \
	rule add r1 proto udp payload 4/0xff limit 10pps
bad_input pay-fifth 'payload takes at most 4 terms' \
	rule add r1 proto udp payload 0=1 4=1 8=1 12=1 16=1 limit 10pps
bad_input pay-overlap 'overlaps "0=0x01020304"' \
	rule add r1 proto udp payload 0=0x01020304 2/0xffff0000=0x03040000 limit 10pps
bad_input pay-outside-mask 'bits outside' rule add r1 proto udp payload 0/0xff00=0x1234 limit 10pps
bad_input pay-junk 'invalid payload term' rule add r1 proto udp payload 0x=1 limit 10pps
bad_input pay-icmp 'payload needs proto tcp or udp' rule add r1 proto icmp payload 0=1 limit 10pps
bad_input pay-conns 'conns counts connections' rule add r1 proto tcp sport 80 conns 10
bad_input fields-cookie 'action cookie matches SYNs' \
	rule add r1 proto tcp tcp-flags syn ttl 1-64 limit 10pps action cookie
bad_input twice-dst '"dst" given twice' rule add r1 dst 198.18.0.1 dst 198.18.0.2 limit 10pps
# A whole family denied only when said twice.
bad_input deny-all4 force deny add 0.0.0.0/0
bad_input deny-all6 force deny add ::/0
bad_input deny-junk-after frob deny add 198.18.7.0/24 frob
bad_input rule-del-no-name NAME rule del
bad_input preset-unknown nosuch rule add refl preset nosuch
bad_input preset-tcp "preset reflection" rule add refl preset reflection proto tcp
bad_input preset-tcp-flags tcp-flags rule add refl preset reflection tcp-flags syn
bad_input preset-no-value '"preset" needs a value' rule add refl preset

# preset reflection: no limit needed; listed expanded (text and JSON), and it round-trips.
begin_case
expect_ok "preset rule" wr rule add refl preset reflection
line=$(wr rule list | grep '^refl ')
[ "$line" = "refl proto udp preset reflection action drop" ] || fail "rule list: $line"
wr rule list | grep -q '^  # preset reflection: UDP from source port 17 (qotd), 19 (chargen), 53' ||
	fail "rule list does not expand the preset: $(wr rule list)"
j=$(wrj rule list | jq -c '.rules[] | select(.name == "refl")')
[ "$(jq -c '[.amplifier_ports[].port]' <<<"$j")" = \
  "[17,19,53,69,111,123,137,161,389,520,1900,3283,3702,5353,10001,11211]" ] ||
	fail "JSON ports: $j"
[ "$(jq -r '.unsolicited + " " + (.limits | length | tostring)' <<<"$j")" = "drop 0" ] ||
	fail "JSON default: $j"
[ "$(wrj status | jq -c '[.reflection.rules, (.reflection.amplifier_ports | length)]')" = "[1,16]" ] ||
	fail "status: $(wrj status | jq -c .reflection)"
expect_ok "del" wr rule del refl
# The listed words add the same rule.
expect_ok "re-add" wr rule add ${line}
[ "$(wr rule list | grep '^refl ')" = "$line" ] || fail "round trip: $(wr rule list | grep '^refl ')"
expect_ok "del" wr rule del refl
[ "$(wrj status | jq -c .reflection.rules)" = 0 ] || fail "status after del"
end_case cli-preset-reflection
bad_input rate-too-fast 1000000000000 rule add r1 limit 1000000000000pps
bad_input byte-burst-under-a-packet "burst 1500 or more" rule add r1 limit 1mbit burst 100

begin_case
expect_ok "two limits on one rule" wr rule add two limit 10pps limit 100pps per all
expect_ok "rule del two" wr rule del two
expect_ok "a byte limit with a packet's burst" wr rule add bytes limit 1mbit burst 1500
expect_ok "rule del bytes" wr rule del bytes
expect_ok "deny add ::/0 force" wr deny add ::/0 force
[ "$(wrj deny list | jq -r '[.. | strings | select(. == "::/0")] | length')" -ge 1 ] ||
	fail "::/0 not listed after force: $(wrj deny list)"
expect_ok "deny del ::/0" wr deny del ::/0
end_case cli-repeats-and-force-allowed

# Help asked for goes to stdout with status 0; usage after a mistake to stderr with 1.
begin_case
objects=$("$WEIR" help | awk '/^Objects:/ { on = 1; next } on && NF { print $1 } on && !NF { exit }')
[ "$(echo "$objects" | grep -c .)" -ge 15 ] || fail "weir help lists $(echo "$objects" | grep -c .) objects"
for o in $objects; do
	out=$("$WEIR" "$o" help 2>"$TMPE")
	rc=$?
	[ "$rc" -eq 0 ] || fail "$o help exited $rc"
	[ -n "$out" ] || fail "$o help printed nothing on stdout"
	[ ! -s "$TMPE" ] || fail "$o help wrote to stderr: $(head -1 "$TMPE")"
done
for o in attach rule deny shed check; do
	out=$("$WEIR" "$o" 2>"$TMPE")
	rc=$?
	[ "$rc" -eq 1 ] && [ -z "$out" ] && grep -q Usage "$TMPE" ||
		fail "$o without arguments: status $rc, stdout \"$out\""
done
end_case cli-help-on-stdout

# Rule capacity: 256 rules fit (with "base"), the next is refused whole.
begin_case
for i in $(seq 1 255); do
	wr rule add "cap$i" proto udp dport "$((1000 + i))" limit 10pps >/dev/null 2>&1 ||
		fail "rule cap$i refused"
done
[ "$(wrj rule list | jq '.rules | length')" == "256" ] || fail "not 256 rules"
end_case cli-256-rules
bad_input too-many-rules "too many rules" rule add cap256 proto udp dport 2000 limit 10pps
begin_case
for i in $(seq 1 255); do wr rule del "cap$i" >/dev/null 2>&1 || fail "del cap$i"; done
[ "$(wrj rule list | jq '.rules | length')" == "1" ] || fail "rules left behind"
end_case cli-rule-del
# At most 64 rules may meet one packet: beside "base" (UDP 53), 63 rules
# without a port fit; a 64th would make 65 for UDP 53 and is refused whole.
begin_case
for i in $(seq 1 63); do
	wr rule add "every$i" limit 10pps >/dev/null 2>&1 || fail "rule every$i refused"
done
[ "$(wrj rule list | jq '.rules | length')" == "64" ] || fail "not 64 rules"
end_case cli-64-rules-meet-one-packet
bad_input rules-over-one-cell "65 rules may match one UDP packet to port 53" rule add every64 limit 10pps
begin_case
for i in $(seq 1 63); do wr rule del "every$i" >/dev/null 2>&1 || fail "del every$i"; done
[ "$(wrj rule list | jq '.rules | length')" == "1" ] || fail "rules left behind"
end_case cli-rule-del-every

# -j output parses, and errors are JSON too.
begin_case
for c in status "rule list" "deny list" "allow list" "stats interval 0" stats top version; do
	# shellcheck disable=SC2086
	wrj $c | jq -e . >/dev/null 2>&1 || fail "-j $c does not parse"
	# shellcheck disable=SC2086
	in_ns "$NS" "$WEIR" -p --bpffs "$ROOT" $c | jq -e . >/dev/null 2>&1 || fail "-p $c"
done
err=$(wrj rule del nosuch)
[ "$(echo "$err" | jq -r .error)" == 'unknown rule "nosuch"' ] || fail "JSON error: $err"
end_case cli-json

# What `rule list` prints can be typed back in and lists the same.
begin_case
rules=(
	"web family ipv4 proto tcp dport 80-443 src 198.18.0.0/15 tcp-flags syn limit 100pps burst 20 per src/24 src6/64 limit 5kpps burst 5000 per all action dry-run"
	"dns6 family ipv6 proto udp dport 53 limit 8mbit burst 20000 per src/32 src6/48"
	"ping proto icmp icmp-type 8 limit 10pps burst 10 per src/32 src6/64 action drop"
	"flags proto tcp tcp-flags fin,syn/fin,syn,rst limit 64kbyte burst 64000 per all action drop"
	"win proto udp dport 5353 class 2 limit 10pps burst 10 per src/32 src6/64 limit 100/min per src/32 src6/64 algo sliding-window limit 500/hour per all algo fixed-window action drop"
	"amp family ipv4 proto udp dport 1024-65535 sport 123 dst 198.18.0.0/24 198.18.5.1/32 len 468-490 ttl 30-64 frag none dscp 0 payload 0/0xff000000=0x17000000 4=0x00030000 limit 100pps burst 100 per all action drop"
	"amp6 family ipv6 proto udp sport 53 dst 2001:db8::/64 2001:db8:1::1/128 ttl 1-255 frag first dscp 46 limit 10pps burst 10 per src/32 src6/64"
	"frags len 1000 frag later limit 1kpps burst 1000 per src/32 src6/64"
	"carpet proto udp dst 198.18.7.0/24 limit 100pps burst 100 per dst/32 dst6/128 limit 1kpps burst 1000 per src/24 src6/64"
	"flows proto udp dport 53 limit 10pps burst 10 per flow limit 50pps burst 50 per dst/24 dst6/64 action drop"
	"fp proto udp sport 53 len 468-490 limit 1/day burst 1 per all action drop spare verified"
	"blk proto udp dport 19 len 400-1500 action block spare verified"
)
for r in "${rules[@]}"; do
	# shellcheck disable=SC2086
	wr rule add $r >/dev/null 2>&1 || fail "cannot add: $r"
done
listed=$(wr rule list | grep -v '^base ')
want=$(printf '%s\n' "${rules[@]}" | sed 's/ action drop$//; s/$//' )
while read -r line; do
	name=${line%% *}
	expected=$(printf '%s\n' "${rules[@]}" | grep "^$name ")
	[[ "$expected" == *" action "* ]] || expected="$expected action drop"
	[ "$line" == "$expected" ] || fail "listed \"$line\", added \"$expected\""
done <<<"$listed"
[ "$(echo "$listed" | grep -c .)" == "${#rules[@]}" ] || fail "wrong rule count listed"
: "$want"
# -j gives the fields as values: ranges as text, prefixes and terms as lists.
j=$(wrj rule list | jq -c '.rules[] | select(.name == "amp")')
echo "$j" | jq -e '.sport == "123" and .dst == ["198.18.0.0/24", "198.18.5.1/32"] and
	.len == "468-490" and .ttl == "30-64" and .frag == "none" and .dscp == 0 and
	.payload == ["0/0xff000000=0x17000000", "4=0x00030000"]' >/dev/null ||
	fail "rule list -j: $j"
for r in "${rules[@]}"; do wr rule del "${r%% *}" >/dev/null; done
end_case cli-roundtrip

# stats: rates per second over an interval, or totals at once; live views refresh.
begin_case
j=$(wrj stats)
echo "$j" | jq -e '.interval_s > 0.5 and (.global | has("packets_per_sec")) and
	(.rules[0] | has("dropped_packets_per_sec"))' >/dev/null || fail "no rates: $j"
wrj stats interval 0 | jq -e 'has("interval_s") | not' >/dev/null || fail "interval 0 waited"
# Contention (a new bucket another CPU is still claiming) has a counter of its own, beside faults.
wrj stats interval 0 | jq -e '.global | (.contended | type == "number") and has("faults")' \
	>/dev/null || fail "no contended counter in stats -j: $(wrj stats interval 0 | jq -c .global)"
frames=$(timeout -s INT 3 "$WEIR" -j --bpffs "$ROOT" top live 0.5 2>/dev/null |
	jq -c .limited | grep -c .)
[ "$frames" -ge 2 ] || fail "top live gave $frames frames in 3 s"
# Into a pipe the text view has no screen-clearing codes: frames follow one another.
timeout -s INT 3 "$WEIR" --bpffs "$ROOT" top live 0.5 >"$TMPE" 2>/dev/null
grep -q $'\033' "$TMPE" && fail "top live wrote control codes into a pipe"
[ "$(grep -c 'sources limited' "$TMPE")" -ge 2 ] || fail "top live into a pipe: $(head -3 "$TMPE")"
frames=$(timeout -s INT 3 "$WEIR" -j --bpffs "$ROOT" stats live 0.5 2>/dev/null |
	jq -c .interval_s | grep -c .)
[ "$frames" -ge 2 ] || fail "stats live gave $frames frames in 3 s"
expect_fail "bad interval" wr stats interval 5x
end_case cli-stats-rates-and-live

# Switches show in status.
begin_case
wr disable >/dev/null && [ "$(wrj status | jq -r .enabled)" == "false" ] || fail "disable"
wr enable >/dev/null && [ "$(wrj status | jq -r .enabled)" == "true" ] || fail "enable"
wr set fail closed >/dev/null && [ "$(wrj status | jq -r .fail)" == "closed" ] || fail "fail"
wr set fail open >/dev/null
wr set malformed pass >/dev/null && [ "$(wrj status | jq -r .malformed)" == "pass" ] ||
	fail "malformed"
wr set malformed drop >/dev/null
end_case cli-switches

# Prefixes work as in ip(8): the first object in `weir help` order wins.
begin_case
[ "$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" ru li | jq '.rules | length')" == "1" ] ||
	fail "'ru li' is not rule list"
[ "$(in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" sta | jq -r .loaded)" == "true" ] ||
	fail "'sta' is not status"
expect_fail "no object starts with 'x'" wr xyz
end_case cli-prefix

# A user without privileges gets a clear error, not a crash.
begin_case
if id nobody >/dev/null 2>&1; then
	err=$(in_ns "$NS" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$WEIR" --bpffs "$ROOT" stats 2>&1) && fail "unprivileged stats succeeded"
	[[ "$err" == *"root"* || "$err" == *"ermission"* || "$err" == *"not permitted"* ]] ||
		fail "unclear error: $err"
else
	fail "no user nobody"
fi
end_case cli-unprivileged

begin_case
expect_ok "detach one" wr detach cli0
[ "$(wrj status | jq '.interfaces | length')" == "0" ] || fail "still attached"
[ "$(wrj rule list | jq '.rules | length')" == "1" ] || fail "rules lost on detach DEV"
expect_ok "detach all" wr detach all
[ ! -e "$ROOT" ] || fail "$ROOT left behind"
[ "$(wrj status | jq -r .loaded)" == "false" ] || fail "still loaded"
end_case cli-detach
