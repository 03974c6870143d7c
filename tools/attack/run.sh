#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The attack harness (docs/attacks.md): every vector against every defence,
# with a real service and real clients on the receiver.
#
#   tools/attack/run.sh [--defences LIST] [--vectors LIST] [--rate PPS]
#                       [--secs SEC] [--pre SEC] [--post SEC] [--seed N]
#                       [--src CIDR] [--out DIR]
#
# Two namespaces joined by a veth: the sender (198.18.0.2, the clients and
# tools/wrattack, spoofing from 198.19.0.0/16) and the receiver (198.18.0.1
# and, for carpet bombing, all of 198.18.100.0/24) with dnsmasq on udp/53,
# python3 -m http.server on tcp/8080 and tools/wrserve on tcp/7001, and
# `weir run` attached to its veth (native XDP) with the defence's config:
#   none    weir attached, no rules
#   static  100 pps per source and a rule-wide limit per service
#   auto    auto: { mode: on, warmup: 10s, linger: 10s } (skipped, with the
#           reason, where `weir check` does not know auto:)
# For each defence and vector: PRE seconds of clients alone, SECS of attack
# at RATE pps, POST of clients alone; then, with auto rules, until they are
# gone (at most linger + 30 s). Writes DIR/results.jsonl (one line per
# vector and defence), DIR/table.txt, the generator's first packets as
# DIR/gen-VECTOR.pcap and, with defence none, what reached the receiver's
# veth as DIR/rx-VECTOR.pcap. Defaults: every vector and defence, 10000 pps
# for 5 s, 3 s before, 2 s after, seed 1, a new directory under /var/tmp.
# --src sets the attack's sources (default 198.19.0.0/16, spoofed);
# 198.18.0.3/32 is one real-looking source on the sender's link.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export WEIR=${WEIR:-$BUILD/weir} BUILD
. tests/lib.sh

ALL_VECTORS="udp-prefix udp-random dns ntp memcached ssdp cldap ack syn carpet frag icmp change"
DEFENCES="none static auto"
VECTORS=$ALL_VECTORS
RATE=10000		# attack packets per second
SECS=5			# seconds of attack per vector
PRE=3			# seconds of clients alone before the onset
POST=2			# seconds of clients alone after the attack
SEED=1			# wrattack's --seed (each vector adds its index)
OUT=""
SRC=198.19.0.0/16	# the attack's sources
AUTO_WARMUP=10		# auto: the warm-up and linger the auto defence's config sets, s
AUTO_LINGER=10
GONE_MAX=$((AUTO_LINGER + 30))	# longest wait for auto rules to go, s
SAMPLE=0.1		# seconds between two samples of weir's counters
PCAP_PKTS=${ATTACK_PCAP_PKTS:-300}	# packets each capture keeps
CHANGE_VECTORS=udp-prefix,ntp	# the "change" vector: this one, then that one

usage() { sed -n '3,/^set -u$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
num() { [[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "attack: invalid $1 \"$2\"" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--defences) DEFENCES=${2//,/ }; shift ;;
	--vectors) VECTORS=${2//,/ }; shift ;;
	--rate) num --rate "$2"; RATE=$2; shift ;;
	--secs) num --secs "$2"; SECS=$2; shift ;;
	--pre) num --pre "$2"; PRE=$2; shift ;;
	--post) num --post "$2"; POST=$2; shift ;;
	--seed) num --seed "$2"; SEED=$2; shift ;;
	--src) SRC=$2; shift ;;
	--out) OUT=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "attack: unknown argument \"$1\" (--help)" >&2; exit 2 ;;
	esac
	shift
done
for v in $VECTORS; do
	[[ " $ALL_VECTORS " == *" $v "* ]] || { echo "attack: unknown vector \"$v\"" >&2; exit 2; }
done
for d in $DEFENCES; do
	case $d in
	none | static | auto) ;;
	*) echo "attack: unknown defence \"$d\"" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "attack: needs root" >&2; exit 1; }
PATH=$PATH:/usr/sbin
for t in jq dnsmasq tcpdump nsenter /usr/bin/python3; do
	command -v $t >/dev/null || { echo "attack: $t is missing (make test-deps)" >&2; exit 1; }
done
for b in weir wrattack wrserve; do
	[ -x "$BUILD/$b" ] || { echo "attack: $BUILD/$b is missing (make test-build)" >&2; exit 1; }
done
[ -n "$OUT" ] || OUT=$(mktemp -d "${TMPDIR:-/var/tmp}/weir-attack.XXXXXX")
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
: >"$OUT/results.jsonl"
say() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- topology
SND=$(new_netns asnd) && RCV=$(new_netns arcv) || { say "attack: no namespaces"; exit 1; }
RIF=ar$$ SIF=as$$
ip link add "$SIF" netns "$SND" type veth peer name "$RIF" netns "$RCV" || exit 1
ip -n "$RCV" addr add 198.18.0.1/24 dev "$RIF"
ip -n "$SND" addr add 198.18.0.2/24 dev "$SIF"
ip -n "$RCV" link set "$RIF" up
ip -n "$SND" link set "$SIF" up
# Carpet bombing's /24: every address of it is the receiver's own.
ip -n "$RCV" route add local 198.18.100.0/24 dev lo
ip -n "$SND" route add 198.18.100.0/24 via 198.18.0.1
# Answers to the spoofed sources go back to the sender, which drops them
# (not its addresses, no forwarding): no neighbour lookups for each.
ip -n "$RCV" route add 198.19.0.0/16 via 198.18.0.2
nsenter --net="/run/netns/$RCV" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf."$RIF".rp_filter=0
mac_r=$(ip -n "$RCV" -j link show "$RIF" | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show "$SIF" | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.0.1 lladdr "$mac_r" dev "$SIF" nud permanent
ip -n "$RCV" neigh replace 198.18.0.2 lladdr "$mac_s" dev "$RIF" nud permanent
ip -n "$RCV" neigh replace 198.18.0.3 lladdr "$mac_s" dev "$RIF" nud permanent

# ---------------------------------------------------------------- services
mkdir -p "$TMP/www"
head -c 2048 /dev/zero | tr '\0' w >"$TMP/www/index.html"
nsenter --net="/run/netns/$RCV" dnsmasq --keep-in-foreground --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.0.1 --except-interface=lo \
	--address=/test.weir/198.18.9.9 --pid-file="$TMP/dnsmasq.pid" --user=root \
	--cache-size=0 --dns-forward-max=1000 --log-facility="$TMP/dnsmasq.log" &
DAEMONS+=($!)
env -C "$TMP/www" nsenter --net="/run/netns/$RCV" /usr/bin/python3 -m http.server 8080 \
	--bind 198.18.0.1 >"$TMP/http.log" 2>&1 &
DAEMONS+=($!)
nsenter --net="/run/netns/$RCV" "$BUILD/wrserve" --listen 198.18.0.1 --port 7001 \
	--duration 3600 --keepalive 0 >"$TMP/wrserve.log" 2>&1 &
DAEMONS+=($!)
up=""
for _ in $(seq 50); do
	nsenter --net="/run/netns/$SND" /usr/bin/python3 tools/attack/clients.py 198.18.0.1 0.3 \
		"$TMP/probe" 2>/dev/null &&
		[ "$(awk '$3 == 1 { k[$1] = 1 } END { print length(k) }' "$TMP/probe")" = 3 ] &&
		{ up=1; break; }
	sleep 0.2
done
[ -n "$up" ] || { say "attack: the services do not answer: $(tail -n 3 "$TMP"/*.log)"; exit 1; }

# ---------------------------------------------------------------- defences
# config DEFENCE FILE: the defence's config for `weir run`.
config() {
	{
		echo "interfaces:"
		echo "  - { name: $RIF, mode: native }"
		case $1 in
		none) ;;
		static)
			cat <<-EOF
			rules:
			  - name: dns
			    proto: udp
			    dport: 53
			    limits: [ { rate: 100pps, per: src }, { rate: 2kpps, per: all } ]
			  - name: web
			    proto: tcp
			    dport: 8080
			    limits: [ { rate: 100pps, per: src }, { rate: 2kpps, per: all } ]
			  - name: conns
			    proto: tcp
			    dport: 7001
			    limits: [ { rate: 100pps, per: src }, { rate: 2kpps, per: all } ]
			  - name: udp
			    proto: udp
			    limits: [ { rate: 100pps, per: src }, { rate: 5kpps, per: all } ]
			  - name: icmp
			    proto: icmp
			    limits: [ { rate: 100pps, per: src }, { rate: 1kpps, per: all } ]
			EOF
			;;
		auto) echo "auto: { mode: on, warmup: ${AUTO_WARMUP}s, linger: ${AUTO_LINGER}s }" ;;
		esac
	} >"$2"
}
wrj() { nsenter --net="/run/netns/$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# counters: weir's global packets and dropped now, from the text of
# `stats interval 0` (its -j form also counts the state table's buckets,
# a read of all of it: too heavy to repeat every SAMPLE s beside a flood).
counters() {
	nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" stats interval 0 |
		awk '/^global:/ { g = 1; next } g && !/^  / { exit }
		     g && $1 == "packets" { p = $2 } g && $1 == "dropped" { d = $2 }
		     END { print p + 0, d + 0 }'
}
# auto_rules: how many rules named auto-N weir has now.
auto_rules() {
	wrj rule list 2>/dev/null | jq '[.rules[]? | select(.name | startswith("auto-"))] | length'
}
# ip_in: IP packets the receiver's stack took in (IpInReceives, fragments one by one).
ip_in() {
	nsenter --net="/run/netns/$RCV" \
		awk '/^Ip:/ { if (h) { print $4; exit } h = 1 }' /proc/net/snmp
}
# Realtime minus monotonic, ns: the sampler's date +%s%N on wrattack's clock.
mono_off() { /usr/bin/python3 -c 'import time; print(time.time_ns() - time.monotonic_ns())'; }

# run_vector DEFENCE VECTOR INDEX: one attack and its figures, as a JSON line.
run_vector() {
	local def=$1 vec=$2 idx=$3 gv=$2 dst=198.18.0.1 dport=53 src=$SRC tot cpid
	local spid tpid g0 in0 g1 in1 off gone=null amax=0 t e
	case $vec in
	change) gv=$CHANGE_VECTORS ;;
	ack | syn) dport=8080 ;;
	carpet) dst=198.18.100.0 ;;
	esac
	# The clients stop at SIGTERM after POST; the bound only caps a stuck run.
	tot=$(awk -v a="$PRE" -v b="$SECS" -v c="$POST" 'BEGIN { print a + b + c + 60 }')
	rm -f "$TMP/cl" "$TMP/cl.started"
	nsenter --net="/run/netns/$SND" /usr/bin/python3 tools/attack/clients.py 198.18.0.1 "$tot" \
		"$TMP/cl" &
	cpid=$!
	for _ in $(seq 50); do [ -e "$TMP/cl.started" ] && break; sleep 0.05; done
	sleep "$PRE"
	g0=$(wrj stats interval 0 | jq -c .global) in0=$(ip_in) W0=$(date +%s%N)
	off=$(mono_off)
	# weir's counters every SAMPLE s: realtime ns, packets, dropped.
	(
		while :; do
			t=$(date +%s%N)
			echo "$t $(counters)"
			sleep $SAMPLE
		done
	) >"$TMP/samples" 2>/dev/null &
	spid=$!
	tpid=""
	if [ "$def" = none ]; then
		nsenter --net="/run/netns/$RCV" tcpdump -nn -Q in -i "$RIF" -c $PCAP_PKTS \
			-w "$OUT/rx-$vec.pcap" "not host 198.18.0.2" 2>/dev/null &
		tpid=$!
		sleep 0.3
	fi
	nsenter --net="/run/netns/$SND" "$BUILD/wrattack" --vector "$gv" --dst $dst --dport $dport \
		--src-prefix $src --rate "$RATE" --duration "$SECS" --seed $((SEED + idx)) --json \
		--pcap "$OUT/gen-$vec.pcap" --pcap-count $PCAP_PKTS >"$TMP/gen.json"
	sleep 0.2
	g1=$(wrj stats interval 0 | jq -c .global) in1=$(ip_in) W1=$(date +%s%N)
	# tcpdump hands packets over in blocks that retire each second: the last
	# block's arrive only then, and an interrupt before it loses them.
	[ -n "$tpid" ] && { sleep 1.1; kill -INT "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; }
	sleep "$POST"
	kill -TERM "$cpid" 2>/dev/null
	wait "$cpid"
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	if [ "$def" = auto ]; then
		e=$(date +%s%N)
		for _ in $(seq $((GONE_MAX * 2))); do
			t=$(auto_rules)
			[ "${t:-0}" -gt "$amax" ] && amax=$t
			[ "${t:-1}" = 0 ] && { gone=$((($(date +%s%N) - e) / 1000000)); break; }
			sleep 0.5
		done
	fi
	figures "$def" "$vec" "$g0" "$g1" "$in0" "$in1" "$off" "$gone" "$amax"
}

# t99_after OFFSET FROM LAST LEGIT: seconds from FROM (ns, wrattack's clock) to the end of
# the first sample interval after it in which weir dropped 99% of the attack's packets
# (what it saw less the clients' LEGIT a second), or null if none did before LAST.
t99_after() {
	awk -v off="$1" -v a="$2" -v b="$3" -v l="$4" '
		NR > 1 { t = $1 - off; dt = ($1 - pt) / 1e9; dp = $2 - pp - l * dt; dd = $3 - pd
			if (pt - off >= a && pt - off <= b && dp > 0 && dd >= 0.99 * dp) {
				printf "%.2f", (t - a) / 1e9; found = 1; exit } }
		{ pt = $1; pp = $2; pd = $3 }
		END { if (!found) print "null" }' "$TMP/samples"
}

# figures DEFENCE VECTOR G0 G1 IN0 IN1 OFFSET GONE_MS AUTO_RULES: the JSON line.
figures() {
	local gen=$TMP/gen.json first last sent pre_ok pre_n dur_ok dur_n legit win t99 t99c ch
	first=$(jq .first_ns "$gen") last=$(jq .last_ns "$gen") sent=$(jq .sent "$gen")
	# The clients' packets per second in the window: weir sees every packet, the attack's
	# and theirs, before any verdict.
	win=$(((W1 - W0) / 1000000))
	legit=$(jq -n --argjson a "$3" --argjson b "$4" --argjson s "$sent" --argjson w "$win" \
		'[(($b.packets - $a.packets - $s) * 1000 / ([$w, 1] | max)), 0] | max | floor')
	read -r pre_ok pre_n dur_ok dur_n < <(awk -v a="$first" -v b="$last" '
		$2 < a { pn++; po += $3 } $2 >= a && $2 <= b { dn++; do_ += $3 }
		END { printf "%d %d %d %d\n", po, pn, do_, dn }' "$TMP/cl")
	ch=$(jq .change_ns "$gen")
	t99=$(t99_after "$7" "$first" "$last" "$legit")
	t99c=null
	[ "$ch" -gt 0 ] && t99c=$(t99_after "$7" "$ch" "$last" "$legit")
	cp "$TMP/samples" "$OUT/samples-$1-$2.txt"
	jq -nc --arg d "$1" --arg v "$2" --argjson g0 "$3" --argjson g1 "$4" --argjson i0 "$5" \
		--argjson i1 "$6" --argjson gen "$(cat "$gen")" --argjson pre_ok "$pre_ok" \
		--argjson pre_n "$pre_n" --argjson dur_ok "$dur_ok" --argjson dur_n "$dur_n" \
		--argjson t99 "$t99" --argjson t99c "$t99c" --argjson gone "$8" --argjson am "$9" \
		--argjson legit "$legit" --argjson win "$win" '
		($g1.dropped - $g0.dropped) as $drop | ($i1 - $i0) as $in
		| { defence: $d, vector: $v, sent: $gen.sent, pps: $gen.pps,
		    gen_errors: $gen.errors,
		    weir_seen: ($g1.packets - $g0.packets), weir_dropped: $drop,
		    dropped_share: (if $gen.sent > 0 then ([$drop / $gen.sent, 1] | min)
			else null end),
		    stack_in: $in,
		    reached_share: (if $gen.sent > 0 then ([([$in - $legit * $win / 1000, 0] | max)
			/ $gen.sent, 1] | min) else null end),
		    clients_ok: $dur_ok, clients: $dur_n,
		    success: (if $dur_n > 0 then $dur_ok / $dur_n else null end),
		    pre_failures: ($pre_n - $pre_ok), pre_clients: $pre_n,
		    t99_s: $t99, t99_change_s: $t99c, auto_rules: $am,
		    rules_gone_s: (if $gone == null then null else $gone / 1000 end) }'
}

# ---------------------------------------------------------------- run
ROOT=""
for def in $DEFENCES; do
	config "$def" "$TMP/$def.yaml"
	if ! out=$(env -C / "$WEIR" check "$TMP/$def.yaml" 2>&1); then
		say "attack: defence $def skipped: this weir does not take its config: $out"
		jq -nc --arg d "$def" --arg r "$out" '{defence: $d, skipped: $r}' \
			>>"$OUT/results.jsonl"
		continue
	fi
	ROOT=$(new_root "a$def")
	if ! start_daemon "$RCV" "$ROOT" "$TMP/$def.yaml" "$TMP/daemon-$def.log"; then
		say "attack: weir run ($def) did not start: $(tail -3 "$TMP/daemon-$def.log")"
		exit 1
	fi
	# auto learns its baselines from the clients' traffic first.
	if [ "$def" = auto ]; then
		nsenter --net="/run/netns/$SND" /usr/bin/python3 tools/attack/clients.py \
			198.18.0.1 $((AUTO_WARMUP + 2)) "$TMP/warm"
	fi
	i=0
	for vec in $VECTORS; do
		i=$((i + 1))
		say "attack: $def / $vec"
		run_vector "$def" "$vec" $i | tee -a "$OUT/results.jsonl" >/dev/null
	done
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	cp "$TMP/daemon-$def.log" "$OUT/"
	nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
done
tools/attack/table.sh "$OUT/results.jsonl" | tee "$OUT/table.txt"
say "attack: results in $OUT"
