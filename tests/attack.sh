#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The attack harness (tools/attack/run.sh, docs/attacks.md) at small counts,
# its outcomes asserted with generous bounds, never its times:
# - defence none: every vector reaches the receiver (weir saw it and passed
#   it, the receiver's stack took it in), and what reached the receiver's
#   veth carries the vector's defining fields (tools/attack/pcapsum.py over
#   a tcpdump capture: source port 123 and 468-byte payloads for NTP, the
#   fixed prefix, fragment offsets, 256 destinations for carpet bombing,
#   one vector then the other for a change), while the clients are served;
# - defence static, one source (not spoofed) over its 100 pps: most of it
#   dropped, some admitted (a limit, not a block), the clients served;
# - defence auto, where this weir knows `auto:` (else a skip with the
#   reason): the spoofed flood mostly dropped, the clients served, the auto
#   rules gone after the attack.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root attack
PATH=$PATH:/usr/sbin
for b in dnsmasq tcpdump /usr/bin/python3; do
	if ! command -v $b >/dev/null; then
		skip attack "needs $b (make test-deps: dnsmasq-base, tcpdump, python3)"
		exit 0
	fi
done

RATE=2000		# attack packets per second in each run
SECS=1			# seconds of attack per vector (none)
SVEC="udp-prefix udp-random dns ntp memcached ssdp cldap ack syn carpet frag icmp change"
export ATTACK_PCAP_PKTS=$((RATE * SECS))	# captures keep every packet of a run
row() { jq -c --arg d "$1" --arg v "$2" 'select(.defence == $d and .vector == $v)' "$3"; }
# harness NAME ARGS...: one run of the harness into $TMP/NAME; 0 if it wrote its table.
harness() {
	local name=$1; shift
	BUILD=$BUILD tools/attack/run.sh --out "$TMP/$name" "$@" >"$TMP/$name.log" 2>&1 &&
		[ -s "$TMP/$name/table.txt" ]
}

# ---- wrattack alone: strict arguments, the same packets for the same seed ----
begin_case
A=$BUILD/wrattack
for bad in "--vector nope" "--vector ntp,syn,ack" "--dst 10.0.0.1" "--src-prefix 10.0.0.0/8" \
	"--rate 0" "--rate 10xpps" "--count 0" "--src-prefix 198.18.0.0/14"; do
	out=$($A --dst 198.18.0.1 --rate 10 --duration 1 --vector ntp $bad 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "wrattack $bad: exit $rc, want 2: $out"
done
G=$(new_netns agen)
ip -n "$G" addr add 198.18.0.2/24 dev lo
for run in 1 2 3; do
	seed=7
	[ $run = 3 ] && seed=8
	in_ns "$G" "$A" --vector dns,frag --dst 198.18.0.1 --rate 5000 --count 200 --duration 5 \
		--seed $seed --pcap "$TMP/seed$run.pcap" --json >"$TMP/seed$run.json" ||
		fail "wrattack run $run: $(cat "$TMP/seed$run.json")"
	tcpdump -r "$TMP/seed$run.pcap" -nn -t -x 2>/dev/null >"$TMP/seed$run.txt"
done
[ "$(jq .sent "$TMP/seed1.json")" = 200 ] || fail "sent $(jq .sent "$TMP/seed1.json") of 200"
n=$(grep -c 'IP ' "$TMP/seed1.txt")
[ "$n" = 200 ] || fail "the pcap holds $n packets of 200"
cmp -s "$TMP/seed1.txt" "$TMP/seed2.txt" || fail "seed 7 twice: different packets"
cmp -s "$TMP/seed1.txt" "$TMP/seed3.txt" && fail "seeds 7 and 8: the same packets"
end_case attack-wrattack-args-and-seed

# ---- defence none: every vector generated, delivered, and as described ----
begin_case
harness none --defences none --rate $RATE --secs $SECS --pre 0.5 --post 0.3 ||
	fail "the harness failed: $(tail -n 3 "$TMP/none.log")"
end_case attack-none-harness-runs
[ -s "$TMP/none/table.txt" ] || exit 1
sed 's/^/# /' "$TMP/none/table.txt"

for v in $SVEC; do
	begin_case
	r=$(row none $v "$TMP/none/results.jsonl")
	sent=$(jq '.sent // 0' <<<"$r")
	seen=$(jq '.weir_seen // 0' <<<"$r")
	dropped=$(jq '.weir_dropped // -1' <<<"$r")
	in=$(jq '.stack_in // 0' <<<"$r")
	[ "$sent" -eq $((RATE * SECS)) ] || fail "sent $sent, want $((RATE * SECS))"
	# Every packet crossed weir and was passed; the stack took in 90% at least
	# (the veth may lose some on a slow machine).
	[ "$seen" -ge "$sent" ] || fail "weir saw $seen of $sent"
	[ "$dropped" -eq 0 ] || fail "weir without rules dropped $dropped"
	[ "$in" -ge $((sent * 9 / 10)) ] || fail "the receiver's stack took in $in of $sent"
	[ "$(jq '.success >= 0.9' <<<"$r")" = true ] ||
		fail "clients served: $(jq .success <<<"$r")"
	end_case attack-none-$v-reaches-receiver

	begin_case
	s=$(/usr/bin/python3 tools/attack/pcapsum.py "$TMP/none/rx-$v.pcap" 2>&1)
	g=$(/usr/bin/python3 tools/attack/pcapsum.py "$TMP/none/gen-$v.pcap" 2>&1)
	echo "# $v on the receiver's veth: $(jq -c 'del(.runs)' <<<"$s" 2>/dev/null || echo "$s")"
	q() { jq -e "$1" <<<"$s" >/dev/null || fail "$v: not $1: $(jq -c "${2:-.}" <<<"$s")"; }
	# What wrattack wrote down (--pcap) arrived, but what the veth may lose.
	want=$(jq '.packets * 9 / 10 | floor' <<<"$g" 2>/dev/null || echo 1)
	q ".packets >= $want and .packets > 0" .packets
	case $v in
	udp-prefix)
		q '.prefix == "deadbeef57524154" and .dport_top[0] == [53, .packets]'
		q '.sources >= 900 and .len_min >= 64 and .len_max <= 256' ;;
	udp-random)
		q '.prefix == "" and .len_min == 512 and .len_max == 512 and .sources >= 900' ;;
	dns)
		q '.sport_top[0] == [53, .packets] and .dports >= 500'
		q '.len_min >= 1200 and .len_max <= 1452' ;;
	ntp)
		q '.sport_top[0] == [123, .packets] and .len_min == 468 and .len_max == 468'
		q '.prefix == "d700032a" and .dports >= 500' ;;
	memcached)
		q '.sport_top[0] == [11211, .packets] and .len_min == 1400 and .len_max == 1400'
		q '(.prefix | startswith("000000000001000056414c554520"))' .prefix ;;
	ssdp)
		q '.sport_top[0] == [1900, .packets] and .len_min >= 280 and .len_max <= 340'
		q '(.prefix | startswith("485454502f312e3120323030204f4b"))' .prefix ;;
	cldap)
		q '.sport_top[0] == [389, .packets] and (.prefix | startswith("3084"))' ;;
	ack)
		q '.tcp_flags == [16] and .dport_top[0] == [8080, .packets] and .sources >= 900' ;;
	syn)
		q '.tcp_flags == [2] and .dport_top[0] == [8080, .packets] and .sources >= 900' ;;
	carpet)
		q '.destinations == 256 and .dport_top[0] == [53, .packets]' ;;
	frag)
		q '.frag_offsets == [0, 1480] and .mf_first == .packets / 2' ;;
	icmp)
		q '.icmp_types == [8] and .protocols == {"1": .packets} and .len_min == 56' ;;
	change)
		q '(.runs | length) == 2 and .runs[0][0] == "deadbeef"'
		q '.runs[1][0] == "d700032a"' .runs
		q '.runs[0][1] >= 500 and .runs[1][1] >= 500' .runs ;;
	esac
	end_case attack-$v-defining-fields
done

# ---- defence static: one source over its 100 pps limit ----
begin_case
harness static --defences static --vectors udp-prefix --src 198.18.0.3/32 --rate $RATE --secs 2 \
	--pre 0.5 --post 0.3 || fail "the harness failed: $(tail -n 3 "$TMP/static.log")"
r=$(row static udp-prefix "$TMP/static/results.jsonl")
echo "# static, one source at $RATE pps for 2 s: $r"
sent=$(jq '.sent // 0' <<<"$r")
dropped=$(jq '.weir_dropped // 0' <<<"$r")
# 100 pps with a burst of 100 admits about 300 of 4000: most dropped, never all.
[ "$sent" -gt 0 ] || fail "sent nothing"
[ "$dropped" -ge $((sent * 80 / 100)) ] || fail "dropped $dropped of $sent over a 100 pps limit"
[ "$dropped" -le $((sent - 100)) ] || fail "dropped $dropped of $sent: the limit admitted nothing"
[ "$(jq '.success >= 0.9' <<<"$r")" = true ] || fail "clients served: $(jq .success <<<"$r")"
end_case attack-static-per-source-limit

# ---- defence auto, where this weir has it ----
printf 'auto: { mode: on, warmup: 10s, linger: 10s }\n' >"$TMP/auto.yaml"
if ! why=$(env -C / "$WEIR" check "$TMP/auto.yaml" 2>&1); then
	skip attack-auto "this weir does not know auto: ($why)"
	exit 0
fi
begin_case
harness auto --defences auto --vectors udp-prefix,ntp --rate 5000 --secs 8 --pre 2 --post 1 ||
	fail "the harness failed: $(tail -n 3 "$TMP/auto.log")"
sed 's/^/# /' "$TMP/auto/table.txt"
for v in udp-prefix ntp; do
	r=$(row auto $v "$TMP/auto/results.jsonl")
	[ "$(jq '.dropped_share >= 0.5' <<<"$r")" = true ] ||
		fail "$v: auto dropped $(jq .dropped_share <<<"$r") of the flood"
	[ "$(jq '.success >= 0.9' <<<"$r")" = true ] ||
		fail "$v: clients served $(jq .success <<<"$r")"
	[ "$(jq '.auto_rules >= 1 and .rules_gone_s != null' <<<"$r")" = true ] ||
		fail "$v: auto rules $(jq .auto_rules <<<"$r")," \
			"gone after $(jq .rules_gone_s <<<"$r") s"
done
end_case attack-auto-floods-dropped-clients-served
exit 0
