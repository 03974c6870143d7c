#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench: weir against the floor, nftables and iptables, side by side.
#
#   tools/bench/bench.sh [--smoke] [--out FILE] [--stages LIST] [--rounds N]
#
# Stages (all by default, in this order):
#   cost      bpf_prog_test_run cost per path, the pieces, tracked keys, bytes
#             per key (build/bench/progcost)
#   flood     CPU per packet of a fixed flood over veth into each candidate:
#             no filter, bare XDP_DROP (the floor), weir (clock auto and precise
#             clock), an nftables netdev meter, iptables hashlimit (raw);
#             three traffic shapes, candidates alternated over rounds
#   scale     weir's in-program time (bpf_stats) and CPU per packet against
#             1k .. 4M tracked keys, next to the floor
#   accuracy  admitted against burst + rate x time at 10, 1k and 100k pps for
#             10 s, sent from both CPUs, for weir, nftables and hashlimit
#   service   TCP request/response rate to a server behind each filter while
#             a UDP + SYN flood rises; the ladder run SVC_ROUNDS times (3,
#             at most --rounds), medians with their spread
#   synflood  real clients connecting under a spoofed SYN flood at rising
#             rates: the kernel's own cookies, the bare XDP-drop floor, a
#             rule-wide limit, action cookie; connections made on their
#             first SYN and the time to connect (tests/cookie.sh's harness,
#             COOKIE_FLOOD per rate, SYNFLOOD_CLIENTS clients per candidate
#             and rate, default 200)
#   ackflood  TCP request/response under a rising spoofed ACK flood: no
#             filter, weir without and with tcp-state, the floor; requests/s,
#             p99 latency and the RSTs the host sent
#   feeds     blocklist feeds: load time for 10k, 100k and 1M prefixes, the
#             kernel memory per prefix, per-packet cost with none, 10k and 1M
#             (build/bench/feedbench)
#   crowdsec  CrowdSec decisions (CS_DECISIONS, default 60000) ingested by
#             `weir crowdsec run ... once` from a real local API
#   fleet     fleet-wide limits with a real Redis: accuracy against 1-3 hosts
#             and sync intervals, Redis and daemon load against hot keys
#             (tools/bench/fleetbench.sh)
#   attack    the attack harness (tools/attack/run.sh, docs/attacks.md): 13
#             vectors against no rules, static rules and weir auto; share
#             dropped, clients served, time to 99% dropped, rules gone
#
# Writes FILE (default docs/BENCHMARKS.md) and its plots (bench-*.png next
# to it) at the end, and prints every table as its stage finishes. --smoke
# runs each stage for a moment with tiny counts and writes into a temporary
# directory unless --out is given: it checks that everything runs, and its
# figures mean nothing.
#
# Traffic flows only between namespaces made here (198.18.0.0/15 and
# 2001:db8::/32); nftables and iptables rules live only in them. Everything
# is removed on exit. Needs root, nft, iptables-legacy, jq, gnuplot (plots).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export WEIR="$BUILD/weir" BUILD
. tests/lib.sh

SMOKE=0
OUT_MD=docs/BENCHMARKS.md
OUT_SET=0
STAGES="cost flood scale accuracy service synflood ackflood feeds crowdsec fleet attack"
ROUNDS=5
usage() { sed -n '3,/^set -u$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--out) OUT_MD=$2; OUT_SET=1; shift ;;
	--stages) STAGES=${2//,/ }; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench: unknown argument \"$1\" (--help)" >&2; exit 2 ;;
	esac
	shift
done
if ! [[ $ROUNDS =~ ^[1-9][0-9]?$ ]]; then
	echo "bench: invalid --rounds \"$ROUNDS\" (1..99)" >&2
	exit 2
fi
for s in $STAGES; do
	case $s in cost | flood | scale | accuracy | service | synflood | ackflood | feeds | crowdsec | fleet | \
		attack) ;;
	*) echo "bench: unknown stage \"$s\"" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root" >&2; exit 1; }
for t in jq nft iptables-legacy ip6tables-legacy nsenter taskset bpftool; do
	if ! command -v $t >/dev/null; then
		echo "bench: $t is missing (make bench-deps installs it)" >&2
		exit 1
	fi
done
for b in weir bench/trivial.bpf.o bench/progcost bench/vstats bench/wrflood bench/wrrr bench/xdp_pass.bpf.o \
	bench/xdp_unspoof.bpf.o bench/fleetkeys bench/feedbench wrgen wrserve wrconn; do
	[ -e "$BUILD/$b" ] || { echo "bench: $BUILD/$b is missing (make bench-build)" >&2; exit 1; }
done

TMP=$(mktemp -d "${TMPDIR:-/var/tmp}/weir-bench.XXXXXX")
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
declare -A PIDS=()
finish() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
	cleanup
	rm -rf "$TMP"
}
trap finish EXIT
trap 'exit 130' INT TERM
if [ $SMOKE -eq 1 ] && [ $OUT_SET -eq 0 ]; then
	OUT_MD=$TMP/out/BENCHMARKS.md
fi
OUT_DIR=$(dirname "$OUT_MD")
mkdir -p "$OUT_DIR" "$TMP/out"
T0=$(date +%s)

NCPU=$(nproc)
GENCPU=$((NCPU - 1))	# the flood's CPU (the "wire" in the service stage)
HOSTCPU=0		# the protected host's CPU in the service stage
HZ_USER=$(getconf CLK_TCK)

say() { printf '%s\n' "$*" >&2; }
# section STAGE: the stage's markdown, printed now and kept for the file.
section() { tee -a "$TMP/sec-$1.md"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit }
	print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
fmt() { awk -v v="$1" -v f="${2:-%.0f}" 'BEGIN { if (v == "nan" || v == "") print "n/a";
	else printf f, v }'; }
# calc EXPR: floating point arithmetic on already-formatted numbers.
calc() { awk "BEGIN { x = $1; print x }"; }
# verdict COND: "met" or "missed" for an awk condition on numbers ("n/a" if one is missing).
verdict() { awk "BEGIN { print ($1) ? \"met\" : \"missed\" }" 2>/dev/null || echo n/a; }

# ---------------------------------------------------------------- topology
# One namespace per candidate, each joined by its own veth pair to one
# generator namespace, so every candidate keeps its state between rounds
# and nothing of one (an iptables table, say) is left in another's path.
#   candidate i: receiver 198.18.(10+i).1/24 and 2001:db8:ff0i::1/64 on
#   r<c><pid>; the generator's end g<c><pid> holds .2 / ::2.
CANDS=(fl no wr sc nf ht)
declare -A CNAME=([fl]="bare XDP_DROP (floor)" [no]="no filter" [wr]="weir"
	[sc]="weir, clock precise" [nf]="nftables netdev meter" [ht]="iptables hashlimit (raw)")
declare -A NS=() RIF=() GIF=() RMAC=() GMAC=() DST4=() DST6=() SRC4=() ROOT=()
GEN=""
WR_KEYS=8388608		# weir (clock auto): the flood's 1M keys, the scale stage's 4M
SC_KEYS=2097152

topo_up() {
	local i=0 c ns
	[ -n "$GEN" ] && return 0
	GEN=$(new_netns gen) || return 1
	in_ns "$GEN" sysctl -qw net.ipv4.icmp_msgs_per_sec=0 net.ipv4.icmp_msgs_burst=0
	for c in "${CANDS[@]}"; do
		ns=$(new_netns "$c") || return 1
		NS[$c]=$ns
		RIF[$c]=r$c$$
		GIF[$c]=g$c$$
		DST4[$c]=198.18.$((10 + i)).1
		SRC4[$c]=198.18.$((10 + i)).2
		DST6[$c]=2001:db8:ff0$i::1
		# A queue per CPU: what each CPU sends is received on that CPU.
		ip link add "${GIF[$c]}" netns "$GEN" numtxqueues "$NCPU" numrxqueues "$NCPU" \
			type veth peer name "${RIF[$c]}" netns "$ns" \
			numtxqueues "$NCPU" numrxqueues "$NCPU" || return 1
		ip -n "$ns" addr add "${DST4[$c]}/24" dev "${RIF[$c]}"
		ip -n "$ns" addr add "${DST6[$c]}/64" dev "${RIF[$c]}" nodad
		ip -n "$GEN" addr add "${SRC4[$c]}/24" dev "${GIF[$c]}"
		ip -n "$GEN" addr add "2001:db8:ff0$i::2/64" dev "${GIF[$c]}" nodad
		ip -n "$ns" link set "${RIF[$c]}" up
		ip -n "$GEN" link set "${GIF[$c]}" up
		RMAC[$c]=$(ip -n "$ns" -j link show "${RIF[$c]}" | jq -r '.[0].address')
		GMAC[$c]=$(ip -n "$GEN" -j link show "${GIF[$c]}" | jq -r '.[0].address')
		# Static neighbours; replies to any other source go back the same way.
		ip -n "$GEN" neigh replace "${DST4[$c]}" lladdr "${RMAC[$c]}" \
			dev "${GIF[$c]}" nud permanent
		ip -n "$ns" neigh replace "${SRC4[$c]}" lladdr "${GMAC[$c]}" \
			dev "${RIF[$c]}" nud permanent
		ip -n "$ns" neigh replace "2001:db8:ff0$i::2" lladdr "${GMAC[$c]}" \
			dev "${RIF[$c]}" nud permanent
		ip -n "$ns" route add 198.18.0.0/15 via "${SRC4[$c]}"
		ip -n "$ns" -6 route add 2001:db8::/32 via "2001:db8:ff0$i::2"
		# No ICMP errors: a port nobody listens on costs the same everywhere.
		in_ns "$ns" sysctl -qw net.ipv4.icmp_msgs_per_sec=0 net.ipv4.icmp_msgs_burst=0
		case $c in
		fl) ip -n "$ns" link set dev "${RIF[$c]}" xdpdrv \
			obj "$BUILD/bench/trivial.bpf.o" sec xdp ;;
		no | nf | ht) ip -n "$ns" link set dev "${RIF[$c]}" xdpdrv \
			obj "$BUILD/bench/xdp_pass.bpf.o" sec xdp ;;
		wr | sc)
			ROOT[$c]=$(new_root "$c")
			local keys=$WR_KEYS clk=auto
			[ "$c" = sc ] && keys=$SC_KEYS clk=precise
			[ $SMOKE -eq 1 ] && keys=65536
			wrc "$c" attach "${RIF[$c]}" mode native keys $keys clock $clk \
				>/dev/null || return 1
			;;
		esac || return 1
		i=$((i + 1))
	done
}
wrc() { local c=$1; shift; in_ns "${NS[$c]}" "$WEIR" --bpffs "${ROOT[$c]}" "$@"; }
nft_in() { in_ns "${NS[$1]}" nft "${@:2}"; }
ipt_in() { in_ns "${NS[$1]}" iptables-legacy "${@:2}"; }
ip6t_in() { in_ns "${NS[$1]}" ip6tables-legacy "${@:2}"; }
# Drop every weir rule of candidate c.
wr_clear() {
	local r
	for r in $(wrc "$1" -j rule list | jq -r '.rules[]?.name // empty' 2>/dev/null); do
		wrc "$1" rule del "$r" >/dev/null
	done
}
# nft_load c BODY: replace the candidate's ruleset with one netdev table.
nft_load() {
	printf 'flush ruleset\ntable netdev wrbench {\n%s\n}\n' "$2" |
		sed "s/@DEV@/${RIF[$1]}/g" | nft_in "$1" -f -
}
ipt_clear() { ipt_in "$1" -t raw -F PREROUTING; ip6t_in "$1" -t raw -F PREROUTING; }

# Busy USER_HZ ticks: on one CPU ("cpuN") or all ("cpu").
busy() { awk -v c="$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# UDP datagrams the stack found no socket for (v4 + v6): what a filter let through.
noports() {
	in_ns "$1" cat /proc/net/snmp /proc/net/snmp6 | awk '$1 == "Udp:" && $3 ~ /^[0-9]+$/ {
		n += $3 } $1 == "Udp6NoPorts" { n += $2 } END { print n + 0 }'
}
# The XDP program attached to the candidate's interface, and its bpf_stats.
xdp_id() { ip -n "${NS[$1]}" -j link show "${RIF[$1]}" | jq -r '.[0].xdp.prog.id // empty'; }
prog_stats() { bpftool prog show id "$1" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }

# flood c ARGS...: wrflood out of the candidate's veth, on the flood CPU.
flood() {
	local c=$1; shift
	ip netns exec "$GEN" "$BUILD/bench/wrflood" --dev "${GIF[$c]}" --dmac "${RMAC[$c]}" \
		--cpu "$GENCPU" --json "$@"
}

# ---------------------------------------------------------------- stage: cost
stage_cost() {
	# Rounds are cheap here: more of them keep a busy neighbour out of the median.
	local args=(--json "$TMP/progcost.json" --rounds 9)
	[ $SMOKE -eq 1 ] && args+=(--rounds 1 --repeat 1000 --distinct 100 --max-keys 1024)
	say "== cost: bpf_prog_test_run (progcost)"
	"$BUILD/bench/progcost" "${args[@]}" >"$TMP/progcost.md" || return 1
	"$BUILD/bench/vstats" --json >"$TMP/vstats.json" || return 1
	WEIR_FEATURES_OFF=bpf_loop "$BUILD/bench/vstats" --json >"$TMP/vstats-noloop.json" || return 1
	local pj=$TMP/progcost.json
	{
		echo "## 1. Program cost (bpf_prog_test_run)"
		echo
		echo "ns per packet of weir's XDP program on a crafted 64-byte UDP packet"
		echo "(86 bytes for IPv6), next to the trivial XDP_DROP program measured in the"
		echo "same rounds, under each clock the data path offers: \`clock auto\`, the"
		echo "default (the jiffies clock, and \`bpf_ktime_get_ns\` only for rules whose"
		echo "limits need it; the rules here carry the flags the controller would give"
		echo "them), \`clock precise\` and \`clock coarse\`. Each instance is set up as"
		echo "the loader sets weir up (wr_state's hash seed and set count written,"
		echo "the jiffies clock's offset measured). \"Over trivial\" is the program's"
		echo "own cost. Source: \`build/bench/progcost\`."
		echo
		sed -n '1,/^Median of/p' "$TMP/progcost.md"
		echo
		# Each path's spread over the rounds, and the aims' same-round ratios.
		awk '/^\| path \(clock auto\)/,/^$/' "$TMP/progcost.md"
		grep -m1 '^The spread of each path' "$TMP/progcost.md"
		echo
		awk '/^\| ratio of two paths/,/^$/' "$TMP/progcost.md"
		echo "### What the pieces cost"
		echo
		local helper gcall srso
		helper=$(awk -F'|' '/bpf_get_prandom_u32/ { gsub(/ /, "", $4); print $4; exit }' "$TMP/progcost.md")
		gcall=$(awk -F'|' '/call of a global BPF function/ { gsub(/ /, "", $4); print $4; exit }' "$TMP/progcost.md")
		srso=$(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null || echo unknown)
		echo "The trivial program plus one thing, same rounds. Here a call into the"
		echo "kernel that does nothing (\`bpf_get_prandom_u32\`) costs ${helper:-?} ns and a"
		echo "call of a global BPF function ${gcall:-?}; this CPU's speculative return stack"
		echo "overflow status is \"$srso\". Where its Safe-RET mitigation is on (AMD"
		echo "Zen, as on the VM of earlier runs) every return in the kernel goes through"
		echo "a thunk and each call costs about 20 ns before it does anything; what the"
		echo "JIT inlines (array and per-CPU lookups, \`bpf_jiffies64\`) is nearly free"
		echo "either way. The set-associative lookup is weir's per-source lookup"
		echo "(wr_state): the key's hash, the array lookup of its set, the key compared"
		echo "with each way's, the TAT's compare-and-swap; the hash map pieces are the"
		echo "kernel's maps with the same key, for comparison."
		echo
		awk '/^\| piece/,/^$/' "$TMP/progcost.md"
		echo
		echo "### The verifier's headroom"
		echo
		echo "Per program on this kernel ($(uname -r)): the instructions the verifier"
		echo "processed, of its 1 000 000, and the deepest call chain's stack, of 512"
		echo "bytes (frames rounded to 32 bytes as 6.1's verifier rounds them), as the"
		echo "object loads here and as a kernel without \`bpf_loop\` (before 5.17) gets"
		echo "it. docs/KERNELS.md has the same for Debian's kernels. Source:"
		echo "\`build/bench/vstats\`."
		echo
		echo "| program | insns | of the limit | stack chain | insns without bpf_loop | stack chain without |"
		echo "|---|---:|---:|---:|---:|---:|"
		join -j1 <(jq -r '.programs[] | "\(.name) \(.insns) \(.stack)"' "$TMP/vstats.json" | sort) \
			<(jq -r '.programs[] | "\(.name) \(.insns) \(.stack)"' "$TMP/vstats-noloop.json" | sort) |
			awk '{ printf "| %s | %d | %.0f%% | %d B | %d | %d B |\n", $1, $2, $2 / 10000, $3, $4, $5 }'
	} | section cost
	# Plot data: rules (over trivial under clock auto, precise, coarse) and tracked keys.
	jq -r '.paths | [["1", .hit], ["8", .rules8], ["32", .rules32], ["64", .rules64], ["256", .rules256]][] |
		"\(.[0]) \(.[1].auto - .[1].floor) \(.[1].precise - .[1].floor)" +
		" \(.[1].coarse - .[1].floor)"' "$pj" >"$TMP/rules.dat"
	jq -r '. as $r | .keys[] | "\(.keys) \(.ns - $r.trivial_one_run6)"' "$pj" \
		>"$TMP/keys_tr.dat"
}

# ---------------------------------------------------------------- stage: flood
# Shapes: A 256 sources over their limit, B a random spoofed source per
# packet under a rule-wide limit, C 1M IPv6 sources each under its limit,
# F a random spoofed source per packet that a fingerprint drops (the rule
# weir auto installs: port and length, action block, spare verified);
# D a random spoofed source per packet from a denied prefix (weir's deny
# list, nftables' and iptables' source match); A0 and B0 are A and B with
# weir's first stage off (weir and the floor only: what the first stage
# gains, in the same rounds).
SHAPES="A A0 B B0 C F D"
declare -A SHAPE_NAME=([A]="256 sources, all over their limit"
	[A0]="the same, weir's first stage off (set first-stage off): every packet through the rule walk"
	[B0]="the same, weir's first stage off"
	[B]="random spoofed source per packet, rule-wide limit"
	[C]="1M distinct IPv6 sources, each under its limit (cache-cold table)"
	[F]="random spoofed source per packet, a fingerprint (port, length) dropped"
	[D]="random spoofed source per packet from a denied prefix")
DENIED=198.18.128.0/17	# shape D: the prefix its spoofed sources come from
RULE_WIDE=10000		# shape B: packets/s the whole rule admits
RULE_WIDE_BURST=1000

shape_rules() {
	local s=$1 c
	for c in wr sc; do
		wr_clear $c
		wrc $c deny del $DENIED missing-ok >/dev/null
		wrc $c set first-stage on >/dev/null
	done
	case $s in
	A | A0)
		for c in wr sc; do
			[ "$s" = A0 ] && wrc $c set first-stage off >/dev/null
			wrc $c rule add fa proto udp dport 9001 limit 10pps burst 10 per src \
				>/dev/null
		done
		nft_load nf '	set s { type ipv4_addr; size 65536; flags dynamic,timeout; timeout 120s; }
	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		udp dport 9001 update @s { ip saddr limit rate over 10/second burst 10 packets } drop
	}'
		ipt_clear ht
		ipt_in ht -t raw -A PREROUTING -p udp --dport 9001 -m hashlimit \
			--hashlimit-above 10/sec --hashlimit-burst 10 --hashlimit-mode srcip \
			--hashlimit-name fa --hashlimit-htable-size 65536 \
			--hashlimit-htable-max 131072 \
			--hashlimit-htable-expire 120000 -j DROP
		;;
	B | B0)
		for c in wr sc; do
			[ "$s" = B0 ] && wrc $c set first-stage off >/dev/null
			wrc $c rule add fb proto udp dport 9002 limit ${RULE_WIDE}pps \
				burst $RULE_WIDE_BURST per all limit 10pps burst 10 per src \
				>/dev/null
		done
		nft_load nf '	set s { type ipv4_addr; size 65536; flags dynamic,timeout; timeout 120s; }
	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		udp dport 9002 limit rate over '$RULE_WIDE'/second burst '$RULE_WIDE_BURST' packets drop
		udp dport 9002 update @s { ip saddr limit rate over 10/second burst 10 packets } drop
	}'
		ipt_clear ht
		ipt_in ht -t raw -A PREROUTING -p udp --dport 9002 -m hashlimit \
			--hashlimit-above $RULE_WIDE/sec --hashlimit-burst $RULE_WIDE_BURST \
			--hashlimit-name fball -j DROP
		ipt_in ht -t raw -A PREROUTING -p udp --dport 9002 -m hashlimit \
			--hashlimit-above 10/sec --hashlimit-burst 10 --hashlimit-mode srcip \
			--hashlimit-name fbsrc --hashlimit-htable-size 65536 \
			--hashlimit-htable-max 131072 \
			--hashlimit-htable-expire 120000 -j DROP
		;;
	F)
		# IP length 44: wrflood's UDP packets (20 + 24).
		for c in wr sc; do
			wrc $c rule add ff proto udp dport 9004 len 44 action block spare verified \
				>/dev/null
		done
		nft_load nf '	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		udp dport 9004 ip length 44 drop
	}'
		ipt_clear ht
		ipt_in ht -t raw -A PREROUTING -p udp --dport 9004 -m length --length 44 -j DROP
		;;
	D)
		for c in wr sc; do
			wrc $c deny add $DENIED >/dev/null
		done
		nft_load nf '	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		ip saddr '$DENIED' drop
	}'
		ipt_clear ht
		ipt_in ht -t raw -A PREROUTING -s $DENIED -j DROP
		;;
	C)
		for c in wr sc; do
			wrc $c rule add fc family ipv6 proto udp dport 9003 limit 10pps burst 10 \
				per src >/dev/null
		done
		nft_load nf '	set s { type ipv6_addr; size 2097152; flags dynamic,timeout; timeout 120s; }
	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		udp dport 9003 update @s { ip6 saddr & ffff:ffff:ffff:ffff:: limit rate over 10/second burst 10 packets } drop
	}'
		ipt_clear ht
		ip6t_in ht -t raw -A PREROUTING -p udp --dport 9003 -m hashlimit \
			--hashlimit-above 10/sec --hashlimit-burst 10 --hashlimit-mode srcip \
			--hashlimit-srcmask 64 --hashlimit-name fc --hashlimit-htable-size 1048576 \
			--hashlimit-htable-max 2097152 --hashlimit-htable-expire 120000 -j DROP
		;;
	esac
}

# shape_args SHAPE c: wrflood's traffic arguments.
FA_COUNT=1000000 FB_COUNT=1000000 FC_SOURCES=1048576
shape_args() {
	case $1 in
	A | A0) echo "--dst ${DST4[$2]} --src 198.18.1.0 --sources 256 --dport 9001 --count $FA_COUNT" ;;
	B | B0) echo "--dst ${DST4[$2]} --src 198.18.128.0 --spoof-bits 15 --dport 9002" \
		"--count $FB_COUNT" ;;
	F) echo "--dst ${DST4[$2]} --src 198.18.128.0 --spoof-bits 15 --dport 9004" \
		"--count $FB_COUNT" ;;
	D) echo "--dst ${DST4[$2]} --src 198.18.128.0 --spoof-bits 15 --dport 9005" \
		"--count $FB_COUNT" ;;
	C) echo "--dst ${DST6[$2]} --src 2001:db8:1000::1 --sources $FC_SOURCES --dport 9003 \
		--count $FC_SOURCES" ;;
	esac
}

# ns ksoftirqd on the flood's CPU has run (schedstat: exact, per task).
KSOFTIRQD=$(pgrep -x "ksoftirqd/$GENCPU" | head -1)
ksoft() { awk '{ print $1 }' "/proc/$KSOFTIRQD/schedstat" 2>/dev/null || echo 0; }

# flood_run SHAPE c ROUND: one measured flood; appends to flood.tsv:
#   shape cand round own_ns stat_ns all_ns wall_ns admitted/s sent pps
# own_ns: the generator thread's CPU time (the receiver's softirq work runs
# in its context) plus ksoftirqd's on that CPU, per packet: the flood's own
# CPU, which other tenants of a shared machine do not inflate. stat_ns and
# all_ns: busy time in /proc/stat on the flood's CPU and on all of them.
flood_run() {
	local s=$1 c=$2 r=$3 b1 a1 n1 k1 b2 a2 n2 k2 out
	n1=$(noports "${NS[$c]}")
	k1=$(ksoft)
	b1=$(busy "cpu$GENCPU")
	a1=$(busy cpu)
	out=$(flood "$c" $(shape_args "$s" "$c")) || { say "flood $s $c failed: $out"; return 1; }
	b2=$(busy "cpu$GENCPU")
	a2=$(busy cpu)
	k2=$(ksoft)
	n2=$(noports "${NS[$c]}")
	echo "$out" | jq -r --arg s "$s" --arg c "$c" --arg r "$r" --argjson b $((b2 - b1)) \
		--argjson a $((a2 - a1)) --argjson n $((n2 - n1)) --argjson hz "$HZ_USER" \
		--argjson k $((k2 - k1)) \
		'[$s, $c, $r, ((.cpu_ns + $k) / .sent), ($b * 1e9 / $hz / .sent),
		  ($a * 1e9 / $hz / .sent), (.elapsed_s * 1e9 / .sent), ($n / .elapsed_s), .sent,
		  .pps] | @tsv' >>"$TMP/flood.tsv"
}

# In-program ns per packet from bpf_stats, for the XDP candidates.
flood_bpf_stats() {
	local s=$1 c id before after
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	for c in fl wr sc; do
		id=$(xdp_id $c)
		before=$(prog_stats "$id")
		flood "$c" $(shape_args "$s" "$c") >/dev/null || return 1
		after=$(prog_stats "$id")
		echo "$s $c $before $after" | awk '{ printf "%s\t%s\t%.1f\n", $1, $2,
			($5 - $3) / ($6 - $4) }' >>"$TMP/flood_prog.tsv"
	done
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
}

# perf profile of one weir flood: the top symbols on the flood CPU.
flood_profile() {
	local s=$1
	command -v perf >/dev/null || return 0
	if ! perf record -q -e cpu-clock -F 4999 -o "$TMP/perf-$s.data" -- \
		ip netns exec "$GEN" "$BUILD/bench/wrflood" --dev "${GIF[wr]}" \
		--dmac "${RMAC[wr]}" --cpu "$GENCPU" $(shape_args "$s" wr) \
		>/dev/null 2>"$TMP/perf-$s.err"; then
		say "   (perf record failed: $(tail -1 "$TMP/perf-$s.err"))"
		return 0
	fi
	perf report -q -i "$TMP/perf-$s.data" --sort sym --stdio 2>/dev/null |
		awk 'NF >= 3 && $1 ~ /%$/ { $2 = ""; print }' | head -14 >"$TMP/perf-$s.txt"
}

stage_flood() {
	local s c r i k cands order
	if [ $SMOKE -eq 1 ]; then
		FA_COUNT=20000 FB_COUNT=20000 FC_SOURCES=4096
	fi
	say "== flood: CPU per packet over veth (wrflood), $ROUNDS rounds"
	topo_up || { say "topology setup failed"; return 1; }
	: >"$TMP/flood.tsv"
	: >"$TMP/flood_prog.tsv"
	for s in $SHAPES; do
		cands=(fl no wr sc nf ht)
		case $s in A0 | B0) cands=(fl wr) ;; esac
		shape_rules "$s" || { say "rules for shape $s failed"; return 1; }
		if [ "$s" = C ]; then
			# Every candidate meets each source once before it is measured.
			for c in "${cands[@]}"; do flood "$c" $(shape_args C "$c") >/dev/null; done
		fi
		for ((r = 0; r < ROUNDS; r++)); do
			# Rotate the order every round: nobody always goes first.
			order=()
			for ((i = 0; i < ${#cands[@]}; i++)); do
				order+=("${cands[(i + r) % ${#cands[@]}]}")
			done
			for c in "${order[@]}"; do flood_run "$s" "$c" "$r" || return 1; done
		done
		flood_bpf_stats "$s" || return 1
		[ $SMOKE -eq 1 ] || [ "$s" = C ] || [ "$s" = A0 ] || [ "$s" = B0 ] ||
			flood_profile "$s"
		say "   shape $s done ($(($(date +%s) - T0)) s)"
	done
	flood_report | section flood
}

# Medians per shape and candidate: own stat all admitted pps.
flood_medians() {
	local s=$1 c=$2 col
	for col in 4 5 6 8 10; do
		awk -F'\t' -v s="$s" -v c="$c" -v k=$col '$1 == s && $2 == c { print $k }' \
			"$TMP/flood.tsv" | median
	done | paste -sd' '
}

flood_report() {
	local s c m fl cpu stat all adm mpps marg wr nf ht prog
	echo "## 2. Flood cost end to end"
	echo
	echo "A fixed number of 64-byte packets (\`wrflood\`: BPF_PROG_RUN live frames, XDP_TX"
	echo "out of one end of a veth pair, so they arrive at the other end as xdp_frames,"
	echo "as from a NIC) sent into each candidate on the other end. The generator, veth"
	echo "and everything the receiver does run on one CPU (cpu$GENCPU). \"ns/packet\" is the"
	echo "flood's own CPU time over the packets sent: the generator thread's (the"
	echo "receiver's softirq work runs in its context; this kernel does not account"
	echo "softirq time apart) plus ksoftirqd's on that CPU, from schedstat. The"
	echo "/proc/stat columns are busy time on that CPU and on all CPUs over the same"
	echo "run: on a quiet machine the first matches \"ns/packet\", on a shared one"
	echo "both also count what other tenants ran meanwhile."
	echo "Candidates are alternated, $ROUNDS rounds, median shown. The stack"
	echo "candidates get an XDP_PASS program so that they receive packets the same"
	echo "way (veth builds the skb for what XDP passes); admitted packets go to a UDP"
	echo "port nobody listens on, with ICMP errors off. \"Admitted/s\" counts them"
	echo "(UDP NoPorts). Limits: A 10 pps burst 10 per source; B ${RULE_WIDE} pps burst"
	echo "${RULE_WIDE_BURST} per rule, then 10 pps per source (rule-wide checked first"
	echo "everywhere); C 10 pps burst 10 per /64 (nftables and hashlimit mask to /64"
	echo "too); each source of C was sent once before the measured rounds. F: the"
	echo "rule weir auto installs for a fingerprint (\`proto udp dport 9004 len 44 action"
	echo "block spare verified\`), nftables' \`udp dport 9004 ip length 44 drop\`,"
	echo "iptables' \`-m length --length 44 -j DROP\` (no hashlimit: none is needed)."
	echo "D: the spoofed sources' prefix ($DENIED) on weir's deny list (\`weir deny add\`),"
	echo "nftables' \`ip saddr $DENIED drop\`, iptables' \`-s $DENIED -j DROP\` (in the"
	echo "hashlimit row: no hashlimit is needed)."
	echo
	for s in $SHAPES; do
		local rcands="fl no wr sc nf ht" flm wrm
		case $s in A0 | B0) rcands="fl wr" ;; esac
		fl=$(flood_medians "$s" fl | cut -d' ' -f1)
		echo "### Shape $s: ${SHAPE_NAME[$s]}"
		echo
		printf '| candidate | ns/packet | marginal over the floor |'
		printf ' /proc/stat cpu%s |' "$GENCPU"
		echo " /proc/stat all CPUs | admitted/s | Mpps |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for c in $rcands; do
			read -r cpu stat all adm mpps <<<"$(flood_medians "$s" "$c")"
			marg=$(calc "$cpu - $fl")
			[ "$c" = fl ] && marg=""
			printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${CNAME[$c]}" \
				"$(fmt "$cpu")" "$([ -n "$marg" ] && fmt "$marg" '%+.0f')" \
				"$(fmt "$stat")" "$(fmt "$all")" "$(fmt "$adm")" \
				"$(fmt "$(calc "$mpps / 1e6")" '%.2f')"
			echo "$s $c $cpu $marg $adm" >>"$TMP/flood_med.txt"
		done
		wr=$(awk -v s="$s" '$1 == s && $2 == "wr" { print $4 }' "$TMP/flood_med.txt")
		nf=$(awk -v s="$s" '$1 == s && $2 == "nf" { print $4 }' "$TMP/flood_med.txt")
		ht=$(awk -v s="$s" '$1 == s && $2 == "ht" { print $4 }' "$TMP/flood_med.txt")
		flm=$(flood_medians "$s" fl | cut -d' ' -f5)
		wrm=$(flood_medians "$s" wr | cut -d' ' -f5)
		echo
		# The aims for a flood weir has judged bad: drop rate >= 0.8x the floor's,
		# marginal <= 0.15x nftables' and hashlimit's; B: <= +40 ns over the floor.
		case $s in
		C) printf 'weir Mpps / the floor'"'"'s: **%s** (traffic under its limits: no aim). ' \
			"$(fmt "$(calc "$wrm / $flm")" '%.2f')" ;;
		*) printf 'weir Mpps / the floor'"'"'s: **%s** (aim >= 0.8: %s). ' \
			"$(fmt "$(calc "$wrm / $flm")" '%.2f')" "$(verdict "$wrm / $flm >= 0.8")" ;;
		esac
		case $s in
		A | B | F | D) printf 'weir marginal / nftables marginal: **%s**; / hashlimit: **%s** (aim <= 0.15: %s, %s).' \
			"$(fmt "$(calc "$wr / $nf")" '%.2f')" "$(fmt "$(calc "$wr / $ht")" '%.2f')" \
			"$(verdict "$wr / $nf <= 0.15")" "$(verdict "$wr / $ht <= 0.15")" ;;
		esac
		case $s in
		B | B0) printf ' Marginal over the floor %s ns (aim <= +40: %s).' \
			"$(fmt "$wr" '%+.0f')" "$(verdict "$wr <= 40")" ;;
		esac
		prog=$(awk -v s="$s" '$1 == s { printf "%s%s %.0f ns", (n++ ? ", " : ""),
			($2 == "fl" ? "floor" : $2 == "wr" ? "weir" : "weir precise"), $3 }' \
			"$TMP/flood_prog.tsv")
		echo " In-program time (bpf_stats run_time_ns / run_cnt, one extra run): $prog."
		echo
		if [ -s "$TMP/perf-$s.txt" ]; then
			echo "Where the flood's time goes under weir (\`perf record -e"
			echo "cpu-clock\` of the generator, whose context runs the receiver too;"
			echo "top symbols):"
			echo
			echo '```'
			cat "$TMP/perf-$s.txt"
			echo '```'
			echo
		fi
	done
	# Plot data: marginal over floor per shape and candidate (the three shapes every candidate ran).
	for c in no wr sc nf ht; do
		printf '"%s"' "${CNAME[$c]}"
		for s in A B C; do
			printf ' %s' "$(awk -v s="$s" -v c="$c" '$1 == s && $2 == c { print $4 }' \
				"$TMP/flood_med.txt")"
		done
		echo
	done >"$TMP/flood.dat"
}

# ---------------------------------------------------------------- stage: scale
SCALE_KEYS="1024 65536 1048576 4194304"
SCALE_ROUNDS=3
stage_scale() {
	local n r c id b a k1 k2 out cnt
	[ $SMOKE -eq 1 ] && SCALE_KEYS="1024 4096" SCALE_ROUNDS=1
	cnt=1048576
	[ $SMOKE -eq 1 ] && cnt=20000
	say "== scale: weir against tracked keys (bpf_stats)"
	topo_up || return 1
	wr_clear wr
	: >"$TMP/scale.tsv"
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	for n in $SCALE_KEYS; do
		wr_clear wr
		wrc wr rule add k$n family ipv6 proto udp dport 9005 limit 10pps burst 10 per src \
			>/dev/null || return 1
		# Warm up: every key exists before anything is measured.
		flood wr --dst "${DST6[wr]}" --src 2001:db8:2000::1 --sources "$n" --dport 9005 \
			--count "$n" >/dev/null || return 1
		for ((r = 0; r < SCALE_ROUNDS; r++)); do
			for c in fl wr; do
				id=$(xdp_id $c)
				b=$(prog_stats "$id")
				k1=$(ksoft)
				out=$(flood $c --dst "${DST6[$c]}" --src 2001:db8:2000::1 \
					--sources "$n" --dport 9005 --count $cnt) || return 1
				k2=$(ksoft)
				a=$(prog_stats "$id")
				out=$(echo "$out" | jq -r '"\(.cpu_ns) \(.sent)"')
				echo "$n $c $b $a $out $((k2 - k1))" | awk '{
					printf "%s\t%s\t%.1f\t%.1f\n", $1, $2,
						($5 - $3) / ($6 - $4), ($7 + $9) / $8 }' \
					>>"$TMP/scale.tsv"
			done
		done
		say "   $n keys done ($(($(date +%s) - T0)) s)"
	done
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
	wr_clear wr
	scale_report | section scale
}

# scale_med KEYS CAND COLUMN
scale_med() {
	awk -F'\t' -v n="$1" -v c="$2" -v k="$3" '$1 == n && $2 == c { print $k }' \
		"$TMP/scale.tsv" | median
}

scale_report() {
	local n fp sp fc sc pj=$TMP/progcost.json
	echo "## 3. Scaling"
	echo
	echo "### Against tracked keys, end to end"
	echo
	echo "The flood of stage 2 from N IPv6 sources (one /64 each) in a scattered"
	echo "order, each source under its limit, after one warm-up pass that creates"
	echo "every key; weir keeps $([ $SMOKE -eq 1 ] && echo 65536 || echo $WR_KEYS) keys."
	echo "In-program time from bpf_stats"
	echo "(run_time_ns / run_cnt, which adds its own clock reads to both programs);"
	echo "CPU per packet as in stage 2 (the admitted packets' trip to the stack"
	echo "is in it). $SCALE_ROUNDS rounds alternated with the floor, median."
	echo
	echo "| tracked keys | weir in program ns | floor in program ns | over the floor |" \
		"weir CPU ns/packet | floor CPU ns/packet |"
	echo "|---:|---:|---:|---:|---:|---:|"
	for n in $SCALE_KEYS; do
		fp=$(scale_med "$n" fl 3)
		sp=$(scale_med "$n" wr 3)
		fc=$(scale_med "$n" fl 4)
		sc=$(scale_med "$n" wr 4)
		printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$(fmt "$sp")" "$(fmt "$fp")" \
			"$(fmt "$(calc "$sp - $fp")" '%+.0f')" "$(fmt "$sc")" "$(fmt "$fc")"
		echo "$n $(calc "$sp - $fp")" >>"$TMP/keys_e2e.dat"
	done
	echo
	if [ -s "$pj" ]; then
		echo "### Against tracked keys and rules, program cost"
		echo
		echo "From stage 1's tool: an existing key picked at random among N (one"
		echo "bpf_prog_test_run per packet, so every packet starts cold), and the"
		echo "number of rules (the packet matches the last one)."
		echo
		awk '/^\| tracked keys/,/^One run per packet/' "$TMP/progcost.md"
		echo
		echo "| rules | auto, over trivial | precise, over trivial | coarse, over trivial |"
		echo "|---:|---:|---:|---:|"
		awk '{ printf "| %s | %+.0f | %+.0f | %+.0f |\n", $1, $2, $3, $4 }' "$TMP/rules.dat"
		echo
		echo "### Memory per tracked key"
		echo
		jq -r '. as $r | .keys[-1] |
			"At \(.keys) keys (\(.sets) sets of \($r.ways) ways) the table takes" +
			" **\(.bytes_per_key) bytes per key** (memlock / ways, the map" + "\u0027" +
			"s own accounting): a way is \($r.way_bytes) bytes (key, bucket and the" +
			" end of a window), plus \((.bytes_per_key - $r.way_bytes) * 10 | round / 10)" +
			" of the array" + "\u0027" + "s own. The kernel" +
			"\u0027" + "s hash maps holding the same key and bucket" +
			" (\($r.payload_bytes) bytes) take \(.hash) bytes per entry (plain hash)" +
			" and \(.lru_hash) (LRU hash, what wr_state was before): their element" +
			" header and bucket come on top of the payload."' "$pj"
		echo
	fi
}

# ---------------------------------------------------------------- stage: accuracy
ACC_RATES="10 1000 100000"
ACC_CANDS="wr sc nf ht"
ACC_SECS=10
acc_burst() { awk -v r="$1" 'BEGIN { b = int(r / 10); print (b < 10 ? 10 : b) }'; }
acc_port() { case $1 in 10) echo 9101 ;; 1000) echo 9102 ;; *) echo 9103 ;; esac; }

acc_rules() {
	local c=$1 rate port burst nft="" sets=""
	case $c in
	wr | sc) wr_clear "$c" ;;
	ht) ipt_clear ht ;;
	esac
	for rate in $ACC_RATES; do
		port=$(acc_port "$rate")
		burst=$(acc_burst "$rate")
		case $c in
		wr | sc) wrc "$c" rule add acc$rate proto udp dport "$port" limit "${rate}pps" \
			burst "$burst" per src >/dev/null || return 1 ;;
		nf)
			# A set per rule: an element's limit is created by the rule that adds it.
			sets="$sets
	set s$rate { type ipv4_addr; size 65536; flags dynamic,timeout; timeout 120s; }"
			nft="$nft
		udp dport $port update @s$rate { ip saddr limit rate over $rate/second burst $burst packets } drop
		udp dport $port counter" ;;
		ht)
			ipt_in ht -t raw -A PREROUTING -p udp --dport "$port" -m hashlimit \
				--hashlimit-above "$rate/sec" --hashlimit-burst "$burst" \
				--hashlimit-mode srcip --hashlimit-name acc$rate -j DROP || return 1
			ipt_in ht -t raw -A PREROUTING -p udp --dport "$port"
			;;
		esac
	done
	if [ "$c" = nf ]; then
		nft_load nf "$sets
	chain in { type filter hook ingress device \"@DEV@\" priority 0; policy accept;$nft
	}" || return 1
	fi
}

# Packets the candidate let through on port p.
acc_admitted() {
	local c=$1 port=$2
	case $c in
	wr | sc) wrc "$c" -j stats interval 0 | jq --arg n "acc$3" '.rules[] | select(.name == $n) |
		.passed_packets' ;;
	nf) nft_in nf -j list chain netdev wrbench in | jq --argjson p "$port" '[.nftables[] |
		.rule? // empty | select((.expr | length) == 2 and .expr[0].match.right == $p) |
		.expr[1].counter.packets] | add' ;;
	ht) ipt_in ht -t raw -L PREROUTING -v -x -n |
		awk -v p="dpt:$port" '$NF == p { print $1 }' ;;
	esac
}

stage_accuracy() {
	local c rate port pids cpu f burst
	[ $SMOKE -eq 1 ] && ACC_SECS=0.5
	say "== accuracy: admitted against burst + rate x time, ${ACC_SECS} s, both CPUs"
	topo_up || return 1
	: >"$TMP/acc.tsv"
	for c in $ACC_CANDS; do
		acc_rules "$c" || { say "accuracy rules for $c failed"; return 1; }
		pids=()
		for rate in $ACC_RATES; do
			port=$(acc_port "$rate")
			for cpu in 0 "$GENCPU"; do
				ip netns exec "$GEN" "$BUILD/bench/wrflood" --dev "${GIF[$c]}" \
					--dmac "${RMAC[$c]}" --cpu "$cpu" --dst "${DST4[$c]}" \
					--src "${SRC4[$c]}" --dport "$port" --rate "$rate" --catch-up \
					--count "$(awk -v r="$rate" -v t="$ACC_SECS" \
					'BEGIN { printf "%d", r * t }')" \
					--json >"$TMP/acc-$c-$rate-$cpu.json" &
				pids+=($!)
			done
		done
		wait "${pids[@]}"
		sleep 0.2
		for rate in $ACC_RATES; do
			port=$(acc_port "$rate")
			burst=$(acc_burst "$rate")
			f=("$TMP"/acc-$c-$rate-*.json)
			jq -s --arg c "$c" --argjson rate "$rate" --argjson burst "$burst" \
				--argjson adm "$(acc_admitted "$c" "$port" "$rate")" -r \
				'([.[].first_ns] | min) as $f | ([.[].last_ns] | max) as $l |
				 (($l - $f) / 1e9) as $t | ($burst + $rate * $t) as $ideal |
				 [$c, $rate, $burst, ([.[].sent] | add), $adm, $t, $ideal,
				  (100 * ($adm - $ideal) / $ideal)] | @tsv' "${f[@]}" \
				>>"$TMP/acc.tsv"
		done
		say "   ${CNAME[$c]} done ($(($(date +%s) - T0)) s)"
	done
	wr_clear wr
	wr_clear sc
	acc_report | section accuracy
}

acc_report() {
	echo "## 4. Accuracy"
	echo
	echo "One source limited to 10, 1k and 100k packets/s (burst: a tenth of a second"
	echo "of rate, at least 10) for ${ACC_SECS} s, all three at once, each sent by two"
	echo "\`wrflood\` processes paced at the rate (so twice the limit is offered),"
	echo "pinned to different CPUs; the veth pair has a queue per CPU, so the same"
	echo "bucket is charged from both CPUs at once. A paced sender that falls behind"
	echo "catches up. Ideal = burst + rate x T, T from the first to the last packet"
	echo "sent; admitted = the candidate's own count of what it let through."
	echo
	echo "| candidate | rate/s | burst | sent | admitted | T (s) | ideal | error |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	awk -F'\t' -v n1="${CNAME[wr]}" -v n2="${CNAME[nf]}" -v n3="${CNAME[ht]}" \
		-v n4="${CNAME[sc]}" '{
		name = $1 == "wr" ? n1 : $1 == "nf" ? n2 : $1 == "sc" ? n4 : n3
		printf "| %s | %d | %d | %d | %d | %.3f | %.0f | %+.2f%% |\n", name, $2, $3, $4, $5,
			$6, $7, $8 }' "$TMP/acc.tsv"
	echo
	# Plot data: error per rate (rows) and candidate (columns).
	awk -F'\t' '{ e[$2, $1] = $8; r[$2] = 1 } END { for (x in r)
		printf "%s %s %s %s %s\n", x, e[x, "wr"], e[x, "nf"], e[x, "ht"], e[x, "sc"] }' \
		"$TMP/acc.tsv" | sort -n >"$TMP/acc.dat"
}

# ---------------------------------------------------------------- stage: service
SVC_LEVELS="0 100000 300000 1000000 2000000 max"
SVC_SECS=2
# Rounds of the whole ladder (at most --rounds): each cell is their median,
# and the report gives their spread.
SVC_ROUNDS=3
SVC_R=0		# the round svc_run records
SVC_SETTLE=0.5
SVC_PORT=8080
# No filter, nftables, weir, and the floor: what veth and an XDP program
# that drops the spoofed range and nothing else cost the host at that rate,
# the best any filter can do.
SVC_CANDS="no nf wr fl"
svc_rules() {
	wr_clear wr
	wrc wr rule add syn proto tcp dport $SVC_PORT tcp-flags syn limit 2kpps burst 2000 per all \
		limit 100pps burst 200 per src >/dev/null || return 1
	wrc wr rule add udp proto udp dport $SVC_PORT limit 10kpps burst 10000 per all \
		limit 100pps burst 100 per src >/dev/null || return 1
	nft_load nf '	set syn4 { type ipv4_addr; size 65536; flags dynamic,timeout; timeout 120s; }
	set udp4 { type ipv4_addr; size 65536; flags dynamic,timeout; timeout 120s; }
	chain in { type filter hook ingress device "@DEV@" priority 0; policy accept;
		tcp dport '$SVC_PORT' tcp flags & (syn | ack) == syn limit rate over 2000/second burst 2000 packets drop
		tcp dport '$SVC_PORT' tcp flags & (syn | ack) == syn update @syn4 { ip saddr limit rate over 100/second burst 200 packets } drop
		udp dport '$SVC_PORT' limit rate over 10000/second burst 10000 packets drop
		udp dport '$SVC_PORT' update @udp4 { ip saddr limit rate over 100/second burst 100 packets } drop
	}'
}

# The protected host is CPU $HOSTCPU: the receiving interface's NAPI runs
# there in a thread (threaded NAPI), beside the server and the client; the
# generator has CPU $GENCPU to itself, like a wire.
svc_pin() {
	local c=$1 pid
	# One queue: the client's packets wait in the same ring as the flood's,
	# as behind a single-queue NIC (with a queue per CPU the flood, sent
	# from one CPU, would have a ring of its own).
	ip netns exec "$GEN" ethtool -L "${GIF[$c]}" rx 1 tx 1 >/dev/null 2>&1
	ip netns exec "${NS[$c]}" ethtool -L "${RIF[$c]}" rx 1 tx 1 >/dev/null 2>&1
	in_ns "${NS[$c]}" sh -c "echo 1 > /sys/class/net/${RIF[$c]}/threaded" 2>/dev/null ||
		ip netns exec "${NS[$c]}" sh -c "echo 1 > /sys/class/net/${RIF[$c]}/threaded"
	# The thread is napi/DEV-ID, cut to 15 characters.
	for pid in $(ps -e -o pid=,comm= | awk -v d="napi/${RIF[$c]}" \
		'index($2, substr(d, 1, 15)) == 1 { print $1 }'); do
		taskset -p -c "$HOSTCPU" "$pid" >/dev/null
	done
	ip -n "$GEN" link set dev "${GIF[$c]}" xdpdrv obj "$BUILD/bench/xdp_unspoof.bpf.o" sec xdp
	# The floor drops the spoofed range, not everything: the client must get in.
	if [ "$c" = fl ]; then
		ip -n "${NS[$c]}" link set dev "${RIF[$c]}" xdpdrv off
		ip -n "${NS[$c]}" link set dev "${RIF[$c]}" xdpdrv \
			obj "$BUILD/bench/xdp_unspoof.bpf.o" sec xdp
	fi
}

# RSTs the candidate's host has sent (Tcp OutRsts of its namespace).
out_rsts() {
	in_ns "${NS[$1]}" awk '$1 == "Tcp:" && !h { for (i = 2; i <= NF; i++) if ($i == "OutRsts") k = i
		h = 1; next } $1 == "Tcp:" && h { print $k; exit }' /proc/net/snmp
}

# Frames the candidate's XDP program saw (flood and client alike).
xdp_seen() {
	ip netns exec "${NS[$1]}" ethtool -S "${RIF[$1]}" 2>/dev/null |
		awk '$1 ~ /xdp_packets:$/ { n += $2 } END { print n + 0 }'
}

# svc_run CAND LEVEL [PROTO [LABEL [TSV]]]: one measured level; wrflood's
# --proto PROTO (default mix), the row labelled LABEL (default CAND) in
# $TMP/TSV (default svc.tsv).
svc_run() {
	local c=$1 level=$2 proto=${3:-mix} label=${4:-$1} tsv=$TMP/${5:-svc.tsv}
	local ready=$TMP/svc-ready out fpid count rate x1 x2 r1 r2
	rm -f "$ready"
	taskset -c "$HOSTCPU" ip netns exec "$GEN" "$BUILD/bench/wrrr" client \
		--connect "${DST4[$c]}" --port $SVC_PORT --conns 8 --duration "$SVC_SECS" \
		--settle "$SVC_SETTLE" --ready-file "$ready" --json >"$TMP/svc-client.json" &
	local cpid=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	x1=$(xdp_seen "$c")
	r1=$(out_rsts "$c")
	fpid=""
	if [ "$level" != 0 ]; then
		if [ "$level" = max ]; then
			rate=0
			count=400000000
		else
			rate=$level
			count=$(awk -v r="$level" -v d="$SVC_SECS" \
				'BEGIN { printf "%d", r * (d + 2) }')
		fi
		ip netns exec "$GEN" "$BUILD/bench/wrflood" --dev "${GIF[$c]}" \
			--dmac "${RMAC[$c]}" \
			--cpu "$GENCPU" --dst "${DST4[$c]}" --src 198.18.128.0 --spoof-bits 15 \
			--proto "$proto" --dport $SVC_PORT --count "$count" --rate "$rate" --json \
			>"$TMP/svc-flood.json" &
		fpid=$!
	fi
	wait $cpid
	[ -n "$fpid" ] && { kill -TERM $fpid 2>/dev/null; wait $fpid; }
	x2=$(xdp_seen "$c")
	r2=$(out_rsts "$c")
	out=$(jq -r '.rps' "$TMP/svc-client.json")
	local fr=0 el=1
	if [ -n "$fpid" ]; then
		fr=$(jq -r '.pps' "$TMP/svc-flood.json")
		el=$(jq -r '.elapsed_s' "$TMP/svc-flood.json")
	fi
	# rps, flood sent/s, broken connections, frames the host's XDP saw/s (the
	# rest overflowed the ring), the client's p99 latency (us), RSTs the
	# host sent/s, the round.
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$level" "$out" "$fr" \
		"$(jq -r '.broken' "$TMP/svc-client.json")" \
		"$(awk -v a="$x1" -v b="$x2" -v t="$el" 'BEGIN { printf "%.0f", (b - a) / t }')" \
		"$(jq -r '.p99_us' "$TMP/svc-client.json")" \
		"$(awk -v a="$r1" -v b="$r2" -v t="$el" 'BEGIN { printf "%.0f", (b - a) / t }')" \
		"$SVC_R" >>"$tsv"
}

# svc_servers CAND...: each candidate pinned (svc_pin) and its wrrr echo
# server started, in PIDS[srvCAND].
svc_servers() {
	local c ready=$TMP/svc-srv-ready
	for c in "$@"; do
		svc_pin "$c"
		rm -f "$ready"
		taskset -c "$HOSTCPU" ip netns exec "${NS[$c]}" "$BUILD/bench/wrrr" server \
			--listen "${DST4[$c]}" --port $SVC_PORT --duration 600 \
			--ready-file "$ready" &
		PIDS[srv$c]=$!
		for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	done
}

stage_service() {
	local c level cands
	[ "$ROUNDS" -lt "$SVC_ROUNDS" ] && SVC_ROUNDS=$ROUNDS
	[ $SMOKE -eq 1 ] && SVC_SECS=0.3 SVC_SETTLE=0.1 SVC_LEVELS="0 max" SVC_ROUNDS=1
	say "== service: TCP request/response under a rising UDP + SYN flood, $SVC_ROUNDS rounds"
	topo_up || return 1
	svc_rules || { say "service rules failed"; return 1; }
	: >"$TMP/svc_rounds.tsv"
	svc_servers $SVC_CANDS
	# Round by round the whole ladder; level by level the candidates side by
	# side, their order turned by one each round.
	cands=$SVC_CANDS
	for ((SVC_R = 0; SVC_R < SVC_ROUNDS; SVC_R++)); do
		for level in $SVC_LEVELS; do
			for c in $cands; do svc_run "$c" "$level" mix "$c" svc_rounds.tsv; done
			say "   round $((SVC_R + 1)), flood $level done ($(($(date +%s) - T0)) s)"
		done
		cands="${cands#* } ${cands%% *}"
	done
	SVC_R=0
	for c in $SVC_CANDS; do kill "${PIDS[srv$c]}" 2>/dev/null; done
	svc_median <"$TMP/svc_rounds.tsv" >"$TMP/svc.tsv"
	svc_report | section service
}

# svc_rounds.tsv on stdin: one row per candidate and level, each number the
# median of its rounds (the round column: how many rounds).
svc_median() {
	awk -F'\t' '
		{ k = $1 "\t" $2; if (!(k in n)) ord[m++] = k
		  i = n[k]++; for (c = 3; c <= 8; c++) v[k, c, i] = $c }
		function med(k, c,   a, i, j, t, x) {
			x = n[k]; for (i = 0; i < x; i++) a[i] = v[k, c, i] + 0
			for (i = 1; i < x; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return x % 2 ? a[int(x / 2)] : (a[x / 2 - 1] + a[x / 2]) / 2 }
		END { for (o = 0; o < m; o++) { k = ord[o]; printf "%s", k
			for (c = 3; c <= 8; c++) printf "\t%.0f", med(k, c)
			printf "\t%d\n", n[k] } }'
}

# svc_get CAND LEVEL COLUMN
svc_get() {
	awk -F'\t' -v c="$1" -v l="$2" -v k="$3" '$1 == c && $2 == l { print $k }' "$TMP/svc.tsv"
}

# svc_spread CAND LEVEL: " [lo-hi]" of its req/s over the rounds, if more than one.
svc_spread() {
	awk -F'\t' -v c="$1" -v l="$2" '$1 == c && $2 == l {
		if (!n++ || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { if (n > 1) printf " [%d-%d]", lo, hi }' "$TMP/svc_rounds.tsv"
}

svc_report() {
	local c level base v fr
	echo "## 5. Service under attack"
	echo
	echo "\`wrrr\`: 8 TCP connections, each keeping one 64-byte request in flight to an"
	echo "echo server in the protected namespace; completed requests per second over"
	echo "${SVC_SECS} s. The flood alternates UDP and SYN packets to the server's port from"
	echo "random sources in 198.18.128.0/17 at the given rate (\`max\`: as fast as the"
	echo "generator goes). The host is cpu$HOSTCPU: the receiving veth's NAPI runs there"
	echo "in a thread, with the server and the client (threaded NAPI, pinned), so the"
	echo "flood is received where the service runs; the generator has cpu$GENCPU to"
	echo "itself; each receiving veth has one queue, so the client's packets wait in"
	echo "the same ring as the flood's. Limits: SYNs 2k/s per rule, 100/s burst 200 per"
	echo "source; UDP 10k/s per rule, 100/s per source (weir and nftables alike)."
	echo "\"Reached XDP\" is what the receiver took off the ring; the rest of what was"
	echo "sent overflowed it. Read the table for where each candidate falls off:"
	echo "once the ring overflows the client waits for TCP retransmission timeouts,"
	echo "so the rate drops off a cliff, and where exactly moves from run to run."
	echo "Rates above 100% under a light flood are no gain: a receive thread kept"
	echo "busy stops the host vCPU from halting between requests, and a halted vCPU"
	echo "takes tens of microseconds to wake. $SVC_ROUNDS round(s) of the whole ladder,"
	echo "the candidates' order turned each round; each cell is the median of the"
	echo "rounds, [lowest-highest] with more than one, and the flood figures medians."
	echo
	echo "| flood (offered pps) | no filter req/s | nftables req/s | weir req/s |" \
		"XDP drop of the spoofed range req/s |" \
		"flood sent / reached XDP (kpps): none; nft; weir; XDP drop |"
	echo "|---|---:|---:|---:|---:|---|"
	for level in $SVC_LEVELS; do
		printf '| %s |' "$([ "$level" = 0 ] && echo "none" || echo "$level")"
		fr=""
		for c in $SVC_CANDS; do
			base=$(svc_get "$c" 0 3)
			v=$(svc_get "$c" "$level" 3)
			printf ' %s (%s)%s |' "$(fmt "$v")" "$(awk -v v="$v" -v b="$base" 'BEGIN {
				if (b > 0 && v != "") printf "%.0f%%", 100 * v / b
				else print "n/a" }')" "$(svc_spread "$c" "$level")"
			fr="$fr${fr:+; }$(awk -F'\t' -v c="$c" -v l="$level" '$1 == c && $2 == l {
				printf "%.0f / %.0f", $4 / 1000, $6 / 1000 }' "$TMP/svc.tsv")"
		done
		echo " $fr |"
	done
	echo
	# Plot data: % of the unattacked rate per level (rows) and candidate (columns).
	awk -F'\t' '$2 == "0" { b[$1] = $3 } { v[$2, $1] = $3; if (!($2 in seen)) {
		seen[$2] = 1; lv[n++] = $2 } } END { for (i = 0; i < n; i++) {
		l = lv[i]; printf "\"%s\"", (l == "0" ? "none" : l)
		split("no nf wr fl", cs, " ")
		for (j = 1; j <= 4; j++)
			printf " %.1f", b[cs[j]] ? 100 * v[l, cs[j]] / b[cs[j]] : 0
		printf "\n" } }' "$TMP/svc.tsv" >"$TMP/svc.dat"
}

# ---------------------------------------------------------------- stage: ackflood
ACK_LEVELS="0 100000 300000 1000000 max"
# No filter; weir attached with no rule for the port (all it could do before
# tcp-state: a rule-wide ACK limit would starve the client with the flood);
# weir with `tcp-state on`; the floor. "ws" is weir's namespace ("wr") with
# the rule added.
ACK_CANDS="no wr ws fl"
stage_ackflood() {
	local cand c level
	[ $SMOKE -eq 1 ] && SVC_SECS=0.3 SVC_SETTLE=0.1 ACK_LEVELS="0 max"
	say "== ackflood: TCP request/response under a rising spoofed ACK flood"
	topo_up || return 1
	wr_clear wr
	: >"$TMP/ack.tsv"
	svc_servers no wr fl
	for level in $ACK_LEVELS; do
		for cand in $ACK_CANDS; do
			c=$cand
			if [ "$cand" = ws ]; then
				c=wr
				wrc wr rule add tcp proto tcp dport $SVC_PORT tcp-state on >/dev/null ||
					return 1
			fi
			svc_run "$c" "$level" ack "$cand" ack.tsv
			[ "$cand" = ws ] && wr_clear wr
		done
		say "   flood $level done ($(($(date +%s) - T0)) s)"
	done
	for c in no wr fl; do kill "${PIDS[srv$c]}" 2>/dev/null; done
	ack_report | section ackflood
}

ack_report() {
	local cand level base v
	echo "## 7. ACK flood"
	echo
	echo "As the service stage (\`wrrr\`: 8 TCP connections, one 64-byte request each in"
	echo "flight, ${SVC_SECS} s; the host's NAPI, server and client on cpu$HOSTCPU, the"
	echo "generator on cpu$GENCPU), under TCP ACKs of no connection (random sequence and"
	echo "acknowledgment numbers) to the server's port from random sources in"
	echo "198.18.128.0/17. Candidates: no filter; weir attached with no rule for the port"
	echo "(a rule-wide ACK limit would starve the client with the flood); weir with"
	echo "\`tcp-state on\` on the port; the floor, XDP drop of the spoofed range. Each"
	echo "cell: requests/s (% of the same candidate unattacked), the client's p99 request"
	echo "latency, and the RSTs the host sent a second (the kernel's answer to each ACK of"
	echo "no connection it sees). One run, one round."
	echo
	echo "| flood (offered pps) | no filter | weir, no tcp-state | weir, tcp-state on |" \
		"XDP drop of the spoofed range |"
	echo "|---|---|---|---|---|"
	for level in $ACK_LEVELS; do
		printf '| %s |' "$([ "$level" = 0 ] && echo "none" || echo "$level")"
		for cand in $ACK_CANDS; do
			base=$(awk -F'\t' -v c="$cand" '$1 == c && $2 == "0" { print $3 }' "$TMP/ack.tsv")
			awk -F'\t' -v c="$cand" -v l="$level" -v b="$base" '$1 == c && $2 == l {
				pct = "n/a"
				if (b > 0) pct = sprintf("%.0f%%", 100 * $3 / b)
				p99 = sprintf("%.0f us", $7)
				if ($7 >= 199999) p99 = "over 200 ms"
				if ($3 == 0) p99 = "none"
				printf " %.0f req/s (%s), p99 %s, %.0f RST/s |", $3, pct, p99, $8 }' \
				"$TMP/ack.tsv"
		done
		echo
	done
	echo
}

# ---------------------------------------------------------------- feeds
stage_feeds() {
	local args=(--rounds 9 --loads 3)
	[ $SMOKE -eq 1 ] && args=(--rounds 1 --loads 1 --max 100000)
	say "== feeds: blocklist feeds (feedbench)"
	{
		echo "## 8. Blocklist feeds"
		echo
		"$BUILD/bench/feedbench" "${args[@]}" | sed 1,2d || return 1
		echo
	} | section feeds
	[ "${PIPESTATUS[0]}" -eq 0 ] && grep -q '^Aim:' "$TMP/sec-feeds.md"
}

# ---------------------------------------------------------------- crowdsec
# CS_DECISIONS ban decisions on distinct IPv4 addresses imported into a
# private LAPI (tests/cs_lib.sh), then pulled once: the stream alone (curl)
# and weir's bouncer (the stream, parsing, deny entries), each timed.
CS_DECISIONS=${CS_DECISIONS:-60000}
stage_crowdsec() {
	local n=$CS_DECISIONS ns root t0 t1 t2 t3 out added key url=http://127.0.0.1:18412
	[ $SMOKE -eq 1 ] && n=2000
	say "== crowdsec: $n decisions from a real CrowdSec local API"
	if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null; then
		say "bench: crowdsec is missing (make test-deps installs it)"
		return 1
	fi
	. tests/ban_lib.sh
	. tests/cs_lib.sh
	ns=$(new_netns csb) && root=$(new_root csb) || return 1
	cs_start "$ns" "$TMP/cs" 18412 >"$TMP/cs_start.err" || { say "bench: $(cat "$TMP/cs_start.err")"; return 1; }
	PIDS[crowdsec]=$CS_PID
	# Loaded, nothing attached: the bouncer needs the maps only.
	in_ns "$ns" "$WEIR" --bpffs "$root" deny add 192.0.2.1 >/dev/null &&
		in_ns "$ns" "$WEIR" --bpffs "$root" deny del 192.0.2.1 >/dev/null || return 1
	awk -v n="$n" 'BEGIN { print "duration,scope,value"
		for (i = 0; i < n; i++) printf "4h,ip,100.%d.%d.%d\n", 64 + int(i / 65536), int(i / 256) % 256, i % 256 }' \
		>"$TMP/decisions.csv"
	t0=$(date +%s.%N)
	cscli_ decisions import -i "$TMP/decisions.csv" >"$TMP/cs_import.out" 2>&1 ||
		{ say "bench: cscli decisions import: $(tail -2 "$TMP/cs_import.out")"; return 1; }
	t1=$(date +%s.%N)
	key=$(head -1 "$TMP/cs/key")
	in_ns "$ns" curl -sf -H "X-Api-Key: $key" "$url/v1/decisions/stream?startup=true" \
		-o "$TMP/stream.json" || { say "bench: the stream did not answer"; return 1; }
	t2=$(date +%s.%N)
	out=$(in_ns "$ns" "$WEIR" -j --bpffs "$root" crowdsec run url "$url" key-file "$TMP/cs/key" once) ||
		{ say "bench: weir crowdsec run once failed"; return 1; }
	t3=$(date +%s.%N)
	kill "$CS_PID" 2>/dev/null
	wait "$CS_PID" 2>/dev/null
	unset 'PIDS[crowdsec]'
	added=$(jq -r .added <<<"$out")
	[ "$added" = "$n" ] || { say "bench: the bouncer added $added of $n: $out"; return 1; }
	{
		echo "## 9. CrowdSec decisions"
		echo
		echo "$n ban decisions on distinct IPv4 addresses, imported into a private CrowdSec"
		echo "$(crowdsec -version 2>&1 | awk '/version:/ { print $NF; exit }') local API (sqlite), then pulled"
		echo "once (startup=true): by curl alone (the API's own time to answer), and by"
		echo "\`weir crowdsec run ... once\` (the same request, the JSON parsed as it"
		echo "arrives, the deny entries written in batches once it is whole). One run."
		echo
		echo "| decisions | cscli import s | stream alone s | weir bouncer s | decisions/s, whole pull | decisions/s, weir's part |"
		echo "|---:|---:|---:|---:|---:|---:|"
		awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
			w = d - c; s = c - b; own = w - s; if (own < 0.001) own = 0.001
			printf "| %d | %.2f | %.2f | %.2f | %.0f | %.0f |\n", n, b - a, s, w, n / w, n / own }'
		echo
	} | section crowdsec
}

# ---------------------------------------------------------------- fleet
stage_fleet() {
	say "== fleet: fleet-wide limits with Redis"
	tools/bench/fleetbench.sh "$TMP/fleet.tsv" $([ $SMOKE -eq 1 ] && echo --smoke) | section fleet
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

# ---------------------------------------------------------------- stage: synflood
# tests/cookie.sh at each rate with SYNFLOOD_CLIENTS clients per candidate:
# its "# synflood cand=..." lines say how many connected on their first SYN,
# after a retransmission or not at all, and the median and 90th percentile
# of their time to connect. One row per rate and candidate in synflood.tsv:
#   rate cand clients first_syn retransmitted failed median_ms p90_ms kept_pps
# and the SYN-ACKs weir sent per rate in synflood_sent.tsv (rate sent).
SYNFLOOD_CLIENTS=${SYNFLOOD_CLIENTS:-200}
stage_synflood() {
	local rates="10000 40000 100000" n=$SYNFLOOD_CLIENTS r out c line sent
	[ $SMOKE -eq 1 ] && rates="2000" n=10
	if ! [[ $n =~ ^[1-9][0-9]{0,4}$ ]]; then
		say "bench: invalid SYNFLOOD_CLIENTS \"$n\" (1-99999)"
		return 1
	fi
	say "== synflood: real clients under a spoofed SYN flood ($rates pps, $n clients each)"
	: >"$TMP/synflood.tsv"
	: >"$TMP/synflood_sent.tsv"
	for r in $rates; do
		out=$TMP/synflood-$r.out
		COOKIE_FLOOD=$r COOKIE_CLIENTS=$n BUILD=$BUILD tests/cookie.sh >"$out" 2>&1
		for c in kernel floor drop cookie; do
			line=$(grep -m1 "^# synflood cand=$c " "$out")
			if [ -z "$line" ]; then
				say "synflood at $r pps: no figures for $c: $(grep -m1 '^not ok' "$out")"
				return 1
			fi
			# key=value pairs, in the order of the header above
			awk -v r="$r" -v c="$c" '{ for (i = 3; i <= NF; i++) { split($i, kv, "=")
				v[kv[1]] = kv[2] }
				printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, c, v["clients"],
				v["first_syn"], v["retransmitted"], v["failed"], v["median_ms"],
				v["p90_ms"], v["flood_kept_pps"] }' <<<"$line" >>"$TMP/synflood.tsv"
		done
		sent=$(sed -n 's/^# action cookie: .*; \([0-9]*\) SYN-ACKs.*/\1/p' "$out")
		printf '%s\t%s\n' "$r" "${sent:-n/a}" >>"$TMP/synflood_sent.tsv"
		grep '^not ok' "$out" | sed "s/^/synflood at $r pps: /" >&2
		say "   $r pps done ($(($(date +%s) - T0)) s)"
	done
	{
		echo "## 6. SYN flood"
		echo
		echo "Real clients (tools/wrconn), a new one every 50 ms whatever became of the"
		echo "others, each given 2.5 s to connect (the kernel's SYN retransmission at"
		echo "1 s fits, the next at 3 s does not), while tools/wrgen sends spoofed SYNs"
		echo "from 198.18.128.0/17 to the same port; $n clients per candidate and rate."
		echo "Candidates: the kernel's own cookies alone (net.ipv4.tcp_syncookies = 2,"
		echo "no weir); the floor, a bare XDP program that drops the spoofed range"
		echo "(a filter that knows the flood); a rule-wide SYN limit of 100 pps"
		echo "(\`action drop\`); the same rule with \`action cookie\`. \"First SYN\": the"
		echo "connection was up without the SYN being sent again; the time to connect"
		echo "runs from the first SYN, over all clients, one that never connected"
		echo "counting as longer than any (\"timed out\" when the percentile is one of"
		echo "those). \"Flood kept\" is the rate wrgen kept. Source: tests/cookie.sh with"
		echo "COOKIE_FLOOD and COOKIE_CLIENTS set. One run, one round."
		echo
		echo "| flood pps (kept) | candidate | first SYN | after a retransmission | failed |" \
			"median ms | p90 ms |"
		echo "|---|---|---:|---:|---:|---:|---:|"
		awk -F'\t' '
			BEGIN { nm["kernel"] = "kernel cookies, no weir"
				nm["floor"] = "bare XDP drop of the spoofed range (floor)"
				nm["drop"] = "rule-wide SYN limit, action drop"
				nm["cookie"] = "rule-wide SYN limit, action cookie" }
			function t(v) { return v == "inf" ? "timed out" : v }
			{ printf "| %s (%s) | %s | %d of %d (%.1f%%) | %d | %d | %s | %s |\n",
				$1, $9, nm[$2], $4, $3, $3 ? 100 * $4 / $3 : 0, $5, $6, t($7), t($8) }
		' "$TMP/synflood.tsv"
		echo
		printf 'SYN-ACKs weir sent (action cookie), per rate:'
		awk -F'\t' '{ printf " %s pps: %s;", $1, $2 }' "$TMP/synflood_sent.tsv" | sed 's/;$/./'
		echo
		echo
	} | section synflood
}

# ---------------------------------------------------------------- stage: attack
# The attack harness: every vector against every defence, its table into the
# report as measured (never judged here: docs/attacks.md has the aims).
stage_attack() {
	local args=(--rate 10000 --secs 5)
	[ $SMOKE -eq 1 ] && args=(--vectors udp-prefix,ntp --rate 1000 --secs 1 --pre 0.5 --post 0.3)
	say "== attack: the attack harness (${args[*]})"
	if ! BUILD=$BUILD tools/attack/run.sh --out "$TMP/attack" "${args[@]}" >"$TMP/attack.log" 2>&1; then
		say "attack: $(tail -n 3 "$TMP/attack.log")"
		return 1
	fi
	{
		echo "## 10. Attacks"
		echo
		echo "tools/attack/run.sh (docs/attacks.md): a DNS server (dnsmasq), an HTTP server and"
		echo "a TCP server behind weir (native XDP on a veth), real clients (DNS at 40/s, an"
		echo "HTTP fetch and a TCP connect every 200 ms each), and each vector from"
		echo "tools/wrattack at ${args[*]}, spoofed from 198.19.0.0/16. Defences: none (weir"
		echo "attached, no rules), static (100 pps per source and a rule-wide limit per"
		echo "service), auto (\`auto: { mode: on, warmup: 10s, linger: 10s }\`). "dropped":"
		echo "weir's drops over the packets sent; "reached": what the receiver's stack took"
		echo "in (IpInReceives) but the clients' packets, over the packets sent; "success":"
		echo "the clients' attempts during the attack that succeeded; "pre_fail": their"
		echo "failures before the onset; "t99_s": seconds from the first attack packet to"
		echo "the first 100 ms sample in which weir dropped 99% of the attack's packets;"
		echo ""gone_s": seconds from the attack's end until no auto rule was left. One run."
		echo
		tools/attack/table.sh "$TMP/attack/results.jsonl" --md
		echo
	} | section attack
}

# ---------------------------------------------------------------- run
for s in $STAGES; do
	if ! "stage_$s"; then
		say "bench: stage $s failed"
		exit 1
	fi
done
tools/bench/report.sh "$TMP" "$OUT_MD" "$SMOKE" "$(($(date +%s) - T0))" "$GENCPU" "$HOSTCPU" \
	"$ROUNDS" "$STAGES" || exit 1
say "bench: wrote $OUT_MD in $(($(date +%s) - T0)) s"
