#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench, for a moment: every stage of tools/bench/bench.sh runs with tiny
# counts into a temporary report, and each stage's table must hold numbers
# that make sense. At this size they measure nothing worth quoting (make
# bench is the benchmark), but each case below fails if its stage did not
# run, ran something else, or produced nonsense:
#   program cost  every path's ns/packet a positive number below 100 us, the
#                 fleet-scope path among them, its ratio among the targets
#   verifier      every program within the verifier's limits (instructions, stack)
#   floods        per shape, every candidate a positive cost and rate; the
#                 bare XDP drop admits nothing, no filter admits more than
#                 weir (which limits); of the fingerprinted flood (F) weir
#                 and nftables admit nothing
#   scaling       the table's bytes per key positive and at most 128
#   accuracy      every candidate admits something and no more than it was
#                 sent; weir (exact GCRA) no more than burst + rate x T
#   service       every candidate serves requests without a flood
#   synflood      four candidates, each with counts of clients (first SYN,
#                 after a retransmission, failed) that add up and times to
#                 connect that are numbers; the SYN-ACKs sent a number
#   fleet load    the hot keys made are sent, CPU and command counts numbers
#   targets       every target has a verdict, met or missed
#   plots         PNG files (a skip when gnuplot is missing)
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root bench-smoke
for t in nft iptables-legacy ip6tables-legacy ethtool; do
	if ! command -v $t >/dev/null; then
		skip bench-smoke "$t is missing (make test-deps installs it)"
		exit 0
	fi
done
for b in bench/progcost bench/vstats bench/wrflood bench/wrrr; do
	if [ ! -x "$BUILD/$b" ]; then
		not_ok bench-smoke "$BUILD/$b is missing (make bench-build)"
		exit 1
	fi
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
R=$TMP/BENCHMARKS.md

begin_case
if ! tools/bench/bench.sh --smoke --rounds 1 --out "$R" >"$TMP/out" 2>&1; then
	fail "bench.sh --smoke failed: $(tail -5 "$TMP/out" | tr '\n' ' ')"
fi
[ -s "$R" ] || fail "no report written"
end_case bench-smoke-runs

# rows HEADING: the rows of the first table under the heading that starts
# with HEADING, header and rule lines left out, cells trimmed, '|'-separated.
rows() {
	awk -v h="$1" '
		index($0, h) == 1 { on = 1; next }
		on && /^#/ { if (seen) exit }
		on && /^\|/ { seen = 1; n++; if (n > 2) print; next }
		on && seen && !/^\|/ { exit }
	' "$R" | sed 's/^| *//; s/ *|$//; s/ *| */|/g'
}
# num X: X is a number (digits, an optional point)
num() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

begin_case
n=0 fleet=0
while IFS='|' read -r path auto _ precise _ coarse _; do
	n=$((n + 1))
	case $path in *"fleet scope"*) fleet=1 ;; esac
	for v in "$auto" "$precise" "$coarse"; do
		num "$v" && awk -v v="$v" 'BEGIN { exit !(v > 0 && v < 100000) }' ||
			fail "\"$path\": $v ns/packet"
	done
done < <(rows "## 1. Program cost")
[ "$n" -ge 10 ] || fail "$n program-cost rows, want at least 10"
# The fleet path beside the same limit per host, and its ratio among the targets.
[ $fleet -eq 1 ] || fail "no fleet-scope row in the program cost table"
grep -q '^| data path, same rounds: fleet scope, tracked key / the same limit per host' "$R" ||
	fail "no target row for the fleet path"
end_case bench-smoke-program-cost

# The verifier's headroom: every program loaded, within both of its limits.
begin_case
n=0
while IFS='|' read -r prog insns _ stack insns2 stack2; do
	n=$((n + 1))
	for v in "$insns" "$insns2"; do
		num "$v" && [ "$v" -gt 0 ] && [ "$v" -lt 1000000 ] || fail "$prog: $v instructions"
	done
	for v in "${stack% B}" "${stack2% B}"; do
		num "$v" && [ "$v" -gt 0 ] && [ "$v" -le 512 ] || fail "$prog: a stack chain of $v"
	done
done < <(rows "### The verifier's headroom")
# The XDP and TC entries, the dispatcher's copy, the two cookie programs, sock_ops,
# the clock sync, the egress recorder.
[ "$n" -eq 8 ] || fail "$n programs in the verifier table, want 8"
end_case bench-smoke-verifier

# Feeds: load rows for 10k and 100k (smoke's largest), the cost rows, the aim line.
begin_case
n=0
while IFS='|' read -r pfx secs v4 v6 _ mib per; do
	n=$((n + 1))
	num "$secs" && num "$mib" && num "$per" || fail "$pfx prefixes: load $secs s, $mib MiB, $per B"
	[ $((v4 + v6)) -gt $((pfx * 9 / 10)) ] || fail "$pfx prefixes: $v4 + $v6 written"
done < <(rows "## 8. Blocklist feeds")
[ "$n" -eq 3 ] || fail "$n load rows, want 3"
grep -q '^| 100000 prefixes: IPv4 source listed, dropped | [0-9]' "$R" || fail "no dropped row"
grep -q '^Aim: a source no feed lists costs at most 5 ns more' "$R" || fail "no aim line"
end_case bench-smoke-feeds

# CrowdSec: the one row, every decision taken.
begin_case
n=0
while IFS='|' read -r dec imp alone bouncer whole own; do
	n=$((n + 1))
	[ "$dec" = 2000 ] || fail "$dec decisions, want the smoke's 2000"
	for v in "$imp" "$alone" "$bouncer" "$whole" "$own"; do num "$v" || fail "not a number: $v"; done
done < <(rows "## 9. CrowdSec decisions")
[ "$n" -eq 1 ] || fail "$n CrowdSec rows, want 1"
end_case bench-smoke-crowdsec

for shape in A B C F D; do
	begin_case
	declare -A adm=()
	n=0
	while IFS='|' read -r cand ns _ _ _ admitted mpps; do
		n=$((n + 1))
		num "$ns" && num "$mpps" && num "$admitted" ||
			fail "$cand: not numbers: ns $ns, admitted $admitted, Mpps $mpps"
		awk -v v="$ns" -v m="$mpps" 'BEGIN { exit !(v > 0 && m > 0) }' ||
			fail "$cand: $ns ns/packet at $mpps Mpps"
		adm[$cand]=$admitted
	done < <(rows "### Shape $shape")
	[ "$n" -eq 6 ] || fail "$n candidates, want 6"
	[ "${adm[bare XDP_DROP (floor)]:-x}" == 0 ] ||
		fail "the bare XDP drop admitted ${adm[bare XDP_DROP (floor)]:-nothing}"
	if [ "$shape" != C ]; then
		# A, B, F and D are floods over their limits: weir passes far less than no filter.
		awk -v s="${adm[weir]:-0}" -v f="${adm[no filter]:-0}" 'BEGIN { exit !(s < f) }' ||
			fail "weir admitted ${adm[weir]:-?}/s, no filter ${adm[no filter]:-?}/s"
	fi
	# F's fingerprint (action block) and D's denied prefix drop every packet, in weir and in nftables.
	if [ "$shape" = F ] || [ "$shape" = D ]; then
		[ "${adm[weir]:-x}" == 0 ] && [ "${adm[nftables netdev meter]:-x}" == 0 ] ||
			fail "shape $shape's flood admitted: weir ${adm[weir]:-?}/s, nftables ${adm[nftables netdev meter]:-?}/s"
	fi
	unset adm
	end_case "bench-smoke-flood-shape-$shape"
done

begin_case
n=0
while IFS='|' read -r keys _ _ present bytes _; do
	n=$((n + 1))
	num "$bytes" && awk -v b="$bytes" 'BEGIN { exit !(b > 0 && b <= 128) }' ||
		fail "$keys keys: $bytes bytes per key"
	[[ "$present" == *% ]] || fail "$keys keys: keys still present \"$present\""
done < <(rows "### Against tracked keys and rules")
[ "$n" -ge 1 ] || fail "no scaling rows"
end_case bench-smoke-scaling

begin_case
n=0
while IFS='|' read -r cand rate burst sent admitted t ideal _; do
	n=$((n + 1))
	for v in "$rate" "$burst" "$sent" "$admitted" "$t" "$ideal"; do
		num "$v" || fail "$cand at $rate/s: \"$v\" is not a number"
	done
	[ "$admitted" -gt 0 ] && [ "$admitted" -le "$sent" ] ||
		fail "$cand at $rate/s admitted $admitted of $sent"
	if [[ "$cand" == weir* ]]; then
		awk -v a="$admitted" -v i="$ideal" 'BEGIN { exit !(a <= i * 1.01 + 1) }' ||
			fail "$cand at $rate/s admitted $admitted, more than burst + rate x T = $ideal"
	fi
done < <(rows "## 4. Accuracy")
[ "$n" -ge 12 ] || fail "$n accuracy rows, want 4 candidates x 3 rates"
end_case bench-smoke-accuracy

begin_case
row=$(rows "## 5. Service under attack" | grep '^none|')
[ -n "$row" ] || fail "no unattacked row"
IFS='|' read -r _ a b c d _ <<<"$row"
for v in "$a" "$b" "$c" "$d"; do
	v=${v%% *}
	num "$v" && [ "${v%.*}" -gt 0 ] || fail "a candidate served $v req/s without a flood"
done
[ "$(rows "## 5. Service under attack" | grep -c .)" -ge 2 ] || fail "no row under a flood"
end_case bench-smoke-service

# The SYN flood: four candidates a rate, each with counts of clients that add
# up, and times to connect that are numbers (or "timed out").
begin_case
n=0
declare -A cands=()
while IFS='|' read -r rate cand first re failed med p90; do
	n=$((n + 1))
	cands[$cand]=1
	if [[ "$first" =~ ^([0-9]+)\ of\ ([0-9]+)\ \( ]]; then
		got=${BASH_REMATCH[1]} of=${BASH_REMATCH[2]}
		num "$re" && num "$failed" && [ $((got + re + failed)) -eq "$of" ] ||
			fail "at $rate, $cand: $first first, $re after a retransmission, $failed failed"
	else
		fail "at $rate, $cand: first SYN \"$first\""
	fi
	for v in "$med" "$p90"; do
		num "$v" || [ "$v" == "timed out" ] || fail "at $rate, $cand: time to connect \"$v\""
	done
done < <(rows "## 6. SYN flood")
[ "$n" -ge 4 ] || fail "$n SYN flood rows, want at least 4"
[ ${#cands[@]} -eq 4 ] || fail "candidates: ${!cands[*]}"
grep -q '^SYN-ACKs weir sent (action cookie), per rate: [0-9]* pps: [0-9]*' "$R" ||
	fail "no count of SYN-ACKs sent"
end_case bench-smoke-synflood

# The fleet's load row: the hot keys fleetkeys made are sent (at least half
# of them per sync on average: a sync right after an overrun one may find
# nothing new), with CPU and command counts that are numbers.
begin_case
row=$(grep -E '^\| [0-9]+ \(of [0-9]+ made\) \|' "$R" | head -1 | sed 's/^| *//; s/ *|$//; s/ *| */|/g')
if [ -z "$row" ]; then
	fail "no fleet load row"
else
	IFS='|' read -r hot calls cmds rcpu dcpu ms <<<"$row"
	made=$(sed 's/.*(of \([0-9]*\) made).*/\1/' <<<"$hot")
	hot=${hot%% *}
	[ "$hot" -ge $((made / 2)) ] || fail "$hot keys sent per sync of $made made"
	for v in "$calls" "$cmds" "${rcpu%\%}" "${dcpu%\%}" "${ms% ms}"; do
		num "$v" || fail "fleet load row: \"$v\" in $row"
	done
fi
end_case bench-smoke-fleet-load

begin_case
n=0
while IFS='|' read -r target measured verdict; do
	n=$((n + 1))
	[[ "$verdict" == "**met**" || "$verdict" == "**missed**" ]] ||
		fail "\"$target\": verdict \"$verdict\""
	[ -n "$measured" ] || fail "\"$target\": nothing measured"
done < <(rows "## Targets")
[ "$n" -ge 5 ] || fail "$n targets"
end_case bench-smoke-targets

if command -v gnuplot >/dev/null; then
	begin_case
	for p in rules flood keys accuracy service; do
		[ "$(head -c 8 "$TMP/bench-$p.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" == \
			89504e470d0a1a0a ] || fail "bench-$p.png is not a PNG"
	done
	end_case bench-smoke-plots
else
	skip bench-smoke-plots "gnuplot is missing (make bench installs gnuplot-nox)"
fi
