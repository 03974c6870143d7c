#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The last step of tools/bench/bench.sh: the targets checked against what the
# stages measured, the plots, and the whole of BENCHMARKS.md.
#
#   tools/bench/report.sh TMP OUT_MD SMOKE SECONDS GENCPU HOSTCPU ROUNDS "STAGES"
set -u
TMP=$1 OUT_MD=$2 SMOKE=$3 SECS=$4 GENCPU=$5 HOSTCPU=$6 ROUNDS=$7 STAGES=$8
OUT_DIR=$(dirname "$OUT_MD")
cd "$(dirname "$0")/../.."
PJ=$TMP/progcost.json
RULE_WIDE=10000
RULE_WIDE_BURST=1000

have() { [ -s "$1" ]; }
# verdict 1|0|"": met, missed, or no figure to judge by.
verdict() {
	case $1 in
	1) echo "**met**" ;;
	0) echo "**missed**" ;;
	*) echo "no figure" ;;
	esac
}
# ok EXPR: 1 if EXPR holds, 0 if not, "" if a figure is missing.
ok() {
	case "$1" in
	*n/a* | *nan* | *inf* | "" | " "* | *" " | *"  "*) echo "" ;;
	*) awk "BEGIN { print ($1) ? 1 : 0 }" 2>/dev/null ;;
	esac
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'
}
num() {
	awk -v v="$1" -v f="${2:-%.0f}" 'BEGIN {
		if (v == "" || v == "nan") print "n/a"; else printf f, v }'
}
med() { awk -v s="$1" -v c="$2" -v k="$3" '$1 == s && $2 == c { print $k }' "$TMP/flood_med.txt"; }
# row TARGET MEASURED EXPR: one line of the targets table.
row() { echo "| $1 | $2 | $(verdict "$(ok "$3")") |"; }
norun() { echo "| $1 | | not run |"; }

# The largest |error| in % of a candidate's accuracy rows.
acc_worst() {
	awk -F'\t' -v c="$1" '$1 == c { e = $8 < 0 ? -$8 : $8; if (e > m) m = e; n++ }
		END { if (n) printf "%.2f", m; else print "" }' "$TMP/acc.tsv"
}

# The SYN-flood target from synflood.tsv (rate cand clients first_syn ...):
# the rates where the floor kept 99% of its clients on their first SYN, and
# the least share of action cookie's clients that connected on theirs there.
synflood_target() {
	local kept worst measured
	kept=$(awk -F'\t' '$2 == "floor" && $3 > 0 && $4 >= 0.99 * $3 { printf "%s%s", s, $1; s = " " }' \
		"$TMP/synflood.tsv")
	if [ -z "$kept" ]; then
		row "$1" "the floor kept the service at no rate measured" ""
		return
	fi
	worst=$(awk -F'\t' -v kept=" $kept " '$2 == "cookie" && index(kept, " " $1 " ") && $3 > 0 {
		p = 100 * $4 / $3; if (!n++ || p < m) m = p } END { if (n) printf "%.1f", m }' \
		"$TMP/synflood.tsv")
	measured=$(awk -F'\t' -v kept=" $kept " '$2 == "cookie" {
		note = index(kept, " " $1 " ") ? "" : ", where the floor did not keep it"
		printf "%s%s pps: %d of %d%s", s, $1, $4, $3, note; s = "; " }' "$TMP/synflood.tsv")
	row "$1" "at least ${worst:-n/a}% of first SYNs where the floor kept the service ($measured)" \
		"${worst:-n/a} >= 99"
}

# The service target from svc.tsv (cand level req/s ..., the rounds'
# medians): at each flood rate
# where the floor (fl, the bare XDP drop of the spoofed range) keeps any
# service (at least 1% of its unattacked rate), weir's share of its own
# unattacked rate over the floor's share, the worst of them judged.
svc_target() {
	local per worst measured spread
	per=$(awk -F'\t' '$2 == "0" { b[$1] = $3 }
		$2 != "0" && ($1 == "wr" || $1 == "fl") { v[$2, $1] = $3; if (!($2 in seen)) {
			seen[$2] = 1; lv[n++] = $2 } }
		END { for (i = 0; i < n; i++) { l = lv[i]
			if (!(b["wr"] > 0) || !(b["fl"] > 0) || v[l, "fl"] == "" || v[l, "wr"] == "")
				continue
			f = v[l, "fl"] / b["fl"]; s = v[l, "wr"] / b["wr"]
			kept = f >= 0.01
			printf "%s\t%s\t%.4f\t%.0f\t%.0f\n", l, kept, kept ? s / f : -1,
				v[l, "wr"], v[l, "fl"] } }' "$TMP/svc.tsv")
	if [ -z "$per" ]; then
		row "$1" "no flood rate measured for both weir and the floor" ""
		return
	fi
	worst=$(awk -F'\t' '$2 == 1 && (!n++ || $3 < m) { m = $3; at = $1 }
		END { if (n) printf "%.2f %s", m, at }' <<<"$per")
	# The same ratio in each round, against that round's own unattacked
	# rates: its lowest and highest per level, where the floor kept service.
	spread=""
	if have "$TMP/svc_rounds.tsv"; then
		spread=$(awk -F'\t' '$2 == "0" { b[$1, $9] = $3; next }
			$1 == "wr" || $1 == "fl" { v[$2, $1, $9] = $3; lv[$2] = 1; r[$9] = 1 }
			END { for (l in lv) { n = 0
				for (k in r) { if (!(b["wr", k] > 0) || !(b["fl", k] > 0) ||
						v[l, "fl", k] == "" || v[l, "wr", k] == "")
						continue
					f = v[l, "fl", k] / b["fl", k]
					if (f < 0.01) continue
					x = v[l, "wr", k] / b["wr", k] / f
					if (!n++ || x < lo) lo = x; if (x > hi || n == 1) hi = x }
				if (n > 1) printf "%s\t%.2f-%.2f x over %d rounds\n", l, lo, hi, n } }' \
			"$TMP/svc_rounds.tsv")
	fi
	measured=$(awk -F'\t' 'NR == FNR { sp[$1] = $2; next }
		{ r = $1 == "max" ? "max" : sprintf("%.0f kpps", $1 / 1000)
		printf "%s%s: %s (%s vs %s req/s%s)", s, r,
			$2 == 1 ? sprintf("%.2f x", $3) : "floor kept none", $4, $5,
			($1 in sp) ? "; rounds " sp[$1] : ""; s = "; " }' <(printf '%s\n' "$spread") \
		<(printf '%s\n' "$per"))
	if [ -z "$worst" ]; then
		row "$1" "the floor kept no service at any flood rate measured ($measured)" "0"
		return
	fi
	row "$1" "worst ${worst%% *} x, at ${worst#* } ($measured)" "${worst%% *} >= 0.9"
}

targets() {
	local hit hitp hitc newk newp newc a_sl a_nf a_ht b_sl bound bytes bkeys worst fl
	local t_hit="hit path (existing key, one rule) within 35 ns of the trivial program"
	local t_new="new-key path within 150 ns"
	local t_ht="256 over-limit sources: marginal cost at most 0.5 x hashlimit's"
	local t_nf="256 over-limit sources: marginal cost at most 0.3 x nftables'"
	local t_sp="random spoofed sources: marginal cost at most 60 ns over the floor"
	local t_bd="random spoofed sources: admitted bounded by the rule-wide limit"
	local t_by="at most 128 bytes per tracked IPv4 key"
	local t_acc="accuracy within 1% of ideal at each rate (weir)"
	local t_svc="service under a rising flood: at every offered rate where the bare XDP-drop"
	local t_fl="fleet: 10 000 hot keys synced every 250 ms for under 5% of one CPU per host"
	local t_syn="SYN flood: at every flood rate where the bare XDP-drop floor still keeps the"
	t_syn="$t_syn service (at least 99% of its clients connect on their first SYN), cookies keep"
	t_syn="$t_syn at least 99% of real connections succeeding on their first SYN"
	t_svc="$t_svc floor keeps any service (at least 1% of its unattacked rate), weir keeps"
	t_svc="$t_svc at least 0.9 x the floor's share of its unattacked rate"

	echo "| target | measured | verdict |"
	echo "|---|---|---|"
	if have "$PJ"; then
		# Judged under the default clock (auto); the others alongside.
		hit=$(jq '.paths.hit.auto - .paths.hit.floor' "$PJ")
		hitp=$(jq '.paths.hit.precise - .paths.hit.floor' "$PJ")
		hitc=$(jq '.paths.hit.coarse - .paths.hit.floor' "$PJ")
		newk=$(jq '.paths.new_full.auto - .paths.new_full.floor' "$PJ")
		newp=$(jq '.paths.new_full.precise - .paths.new_full.floor' "$PJ")
		newc=$(jq '.paths.new_full.coarse - .paths.new_full.floor' "$PJ")
		bytes=$(jq '.keys[-1].bytes_per_key' "$PJ")
		bkeys=$(jq '.keys[-1].keys' "$PJ")
		row "$t_hit" "+$(num "$hit") ns, clock auto (precise +$(num "$hitp"), coarse +$(num \
			"$hitc"))" "$hit <= 35"
		row "$t_new" "+$(num "$newk") ns (precise +$(num "$newp"), coarse +$(num \
			"$newc")), full table, a limiting bucket evicted" "$newk <= 150"
		# Ratios of two paths' costs over trivial taken in the same rounds:
		# they hold on a busy day, when the absolute figures move.
		while IFS=$'\t' read -r name r mx lo hi; do
			[ -n "$name" ] || continue
			row "data path, same rounds: $name at most $mx x" \
				"$(num "$r" '%.2f') x" "$r <= $mx"
		done < <(jq -r '.aims[]? | [.name, .ratio, .max] | @tsv' "$PJ")
		# tcp-state's cache hit, in ns over the same rule without it (same rounds).
		tsx=$(jq '.tcp_state_hit_extra_ns // empty' "$PJ")
		tsa=$(jq '.tcp_state_hit_aim_ns // empty' "$PJ")
		if [ -n "$tsx" ] && [ -n "$tsa" ]; then
			row "data path, same rounds: tcp-state on an established flow (cache hit) at \
most +$tsa ns over the same rule without it" "$(num "$tsx" '%+.0f') ns" "$tsx <= $tsa"
		fi
	else
		norun "$t_hit"
		norun "$t_new"
	fi
	if have "$TMP/flood_med.txt"; then
		a_sl=$(med A wr 4) a_nf=$(med A nf 4) a_ht=$(med A ht 4) b_sl=$(med B wr 4)
		# flood.tsv: shape cand round own stat all wall admitted/s sent pps
		bound=$(awk -F'\t' -v w="$RULE_WIDE" -v b="$RULE_WIDE_BURST" '
			$1 == "B" && $2 == "wr" {
				t = $7 * $9 / 1e9; r = $8 * t / (b + w * t); if (r > m) m = r }
			END { printf "%.3f", m }' "$TMP/flood.tsv")
		row "$t_ht" "$(num "$a_sl") vs $(num "$a_ht") ns: $(ratio "$a_sl" "$a_ht") x" \
			"$a_sl <= 0.5 * $a_ht"
		row "$t_nf" "$(num "$a_sl") vs $(num "$a_nf") ns: $(ratio "$a_sl" "$a_nf") x" \
			"$a_sl <= 0.3 * $a_nf"
		row "$t_sp" "$(num "$b_sl" '%+.0f') ns" "$b_sl <= 60"
		row "$t_bd" "at most $(num "$bound" '%.3f') x (burst + rate x time)" \
			"$bound <= 1.001"
	else
		norun "$t_ht"
		norun "$t_nf"
		norun "$t_sp"
		norun "$t_bd"
	fi
	if have "$PJ"; then
		row "$t_by" "$(num "$bytes" '%.1f') bytes ($bkeys-key table)" "$bytes <= 128"
	else
		norun "$t_by"
	fi
	if have "$TMP/acc.tsv"; then
		worst=$(acc_worst wr)
		row "$t_acc" "worst $(num "$worst" '%.2f')% (clock precise $(num "$(acc_worst sc)" \
			'%.2f')%, nftables $(num "$(acc_worst nf)" '%.2f')%, hashlimit $(num \
			"$(acc_worst ht)" '%.2f')%)" "$worst <= 1"
	else
		norun "$t_acc"
	fi
	if have "$TMP/svc.tsv"; then
		svc_target "$t_svc"
	else
		norun "$t_svc"
	fi
	if have "$TMP/synflood.tsv"; then
		synflood_target "$t_syn"
	else
		norun "$t_syn"
	fi
	fl=$(awk -F'\t' '$1 == "load" && $2 == 10000 { print $5 }' "$TMP/fleet.tsv" 2>/dev/null)
	if [ -n "$fl" ]; then
		row "$t_fl" "$(num "$fl" '%.1f')% of one CPU" "$fl < 5"
	else
		norun "$t_fl"
	fi
}

# Where the hit path's time goes, from the pieces measured in the same run.
breakdown() {
	have "$PJ" || return 0
	# s: whole ns with their sign.
	jq -r 'def s: round as $v | if $v < 0 then "\($v)" else "+\($v)" end;
		.pieces as $p | .trivial as $t | (.paths.hit.auto - .trivial) as $hit |
		(.paths.hit.precise - .trivial) as $hitp |
		($p["bpf_ktime_get_ns (precise clock)"] - $t) as $clk |
		($p["bpf_jiffies64 (inlined by the JIT)"] - $t) as $jif |
		($p["set-associative lookup (key hash, array, 4 ways) + compare-and-swap"] - $t)
			as $set |
		($p["LRU hash lookup + compare-and-swap"] - $t) as $lru |
		($p["call of a global BPF function"] - $t) as $call |
		"The hit path costs \($hit | s) ns over the trivial program under the default" +
		" `clock auto` (\($hitp | s) under `clock precise`). From the pieces measured" +
		" in the same run: the jiffies clock, inlined, \($jif | s) (a" +
		" `bpf_ktime_get_ns` call would be \($clk | s)); the per-source lookup in the" +
		" set-associative table with its compare-and-swap \($set | s) (the LRU hash" +
		" wr_state used to be, with its compare-and-swap: \($lru | s)); the one global" +
		" BPF function on the path (`wr_match_rules_xdp`) \($call | s): together about" +
		" \($jif + $set + $call | round) ns; the remaining" +
		" \($hit - $jif - $set - $call | round) ns are parsing, rule matching, the" +
		" shedding and capacity checks and the counters."' "$PJ"
}

# img DATA ALT PNG: the plot's line when its data exists.
img() { [ -s "$TMP/$1" ] && printf '![%s](%s)\n\n' "$2" "$3"; }

plots() {
	command -v gnuplot >/dev/null || { echo "(gnuplot missing: no plots)" >&2; return 0; }
	gnuplot -e "dir='$TMP'; out='$OUT_DIR'" tools/bench/plots.gp 2>"$TMP/gnuplot.err" ||
		{ cat "$TMP/gnuplot.err" >&2; return 1; }
}

machine() {
	local model mem virt="VM" head dirty=""
	model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	grep -qw hypervisor /proc/cpuinfo || virt="machine"
	head=$(git rev-parse --short HEAD 2>/dev/null)
	git diff --quiet HEAD -- bpf include user 2>/dev/null ||
		dirty=" (data path with local changes)"
	echo "- Machine: $(nproc) vCPU $model, $mem RAM ($virt); kernel $(uname -r); $(uname -m)."
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); weir $head$dirty."
	echo "- Tools: $(clang --version | head -1); libbpf $(pkg-config --modversion libbpf \
		2>/dev/null); $(nft --version); $(iptables-legacy --version)."
	echo "- The whole \`make bench\` took ${SECS} s; $ROUNDS rounds where rounds apply;" \
		"flood on cpu$GENCPU."
}

{
	echo "# weir benchmarks"
	echo
	if [ "$SMOKE" = 1 ]; then
		echo "**Smoke run: tiny counts, the figures mean nothing.**"
		echo
	fi
	echo "Generated by \`make bench\` (\`tools/bench/bench.sh\`); do not edit by hand."
	echo "Figures come from **one run on a shared $(nproc)-vCPU VM**, where other work"
	echo "may run beside the benchmark: absolute numbers move from run to run, so"
	echo "compare candidates measured side by side in the same run (alternated,"
	echo "median of rounds), not figures across runs."
	echo
	machine
	echo
	echo "## Targets"
	echo
	echo "Checked by reading the figures below, never by a timed test."
	echo
	targets
	echo
	breakdown
	echo
	if [ -e tools/bench/notes.md ]; then
		cat tools/bench/notes.md
		echo
	fi
	for s in $STAGES; do
		[ -s "$TMP/sec-$s.md" ] && cat "$TMP/sec-$s.md"
		case $s in
		cost) img rules.dat "cost against rules" bench-rules.png ;;
		flood) img flood.dat "marginal cost per shape" bench-flood.png ;;
		scale) img keys_e2e.dat "cost against tracked keys" bench-keys.png ;;
		accuracy) img acc.dat "accuracy" bench-accuracy.png ;;
		service) img svc.dat "service under attack" bench-service.png ;;
		esac
	done
} >"$TMP/BENCHMARKS.md"
plots || exit 1
mkdir -p "$OUT_DIR"
cp "$TMP/BENCHMARKS.md" "$OUT_MD"
cat "$TMP/BENCHMARKS.md" | awk '/^## Targets/,/^## 1\./' | sed '$d'
