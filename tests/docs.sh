#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The man pages and the bash completion against the CLI itself, so neither
# can drift from it: every object `weir help` lists has its section in
# weir(8) and is completed; every keyword in each object's usage (the same
# words the completion offers) is in weir(8); every key the config parser
# knows (its schema tables in user/config/*.c, the rule keyword table in
# user/lib/rules.c) is in weir.yaml(5); both pages
# render without a warning; completion really completes, rule names from a
# live weir on the --bpffs of the line included; make install puts all
# three where man and bash-completion look; every file and function
# docs/ARCHITECTURE.md names exists. README.md stays a front door (at most
# 300 lines, linking every guide in docs/), every relative link and #anchor
# in README.md and docs/*.md resolves, and docs/commands.md covers every
# object `weir help` lists and no other.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root docs
trap cleanup EXIT
# README.md is the front door and the reference lives in docs/: the README
# stays short, links each guide, and every relative link in README.md and
# docs/*.md reaches a file and, with #anchor, a heading of it.
GUIDES=$(ls docs/*.md)
# md_links FILE: each relative link target outside fenced code, one a line
md_links() {
	awk '/^[ \t]*```/ { code = !code; next } !code {
		s = $0
		while (match(s, /\]\([^) ]+\)/)) {
			print substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$1" | grep -vE '^(https?|mailto):'
}
# md_anchors FILE: the anchors of its headings, as GitHub makes them
md_anchors() {
	awk '/^[ \t]*```/ { code = !code; next } !code && /^#+ / {
		h = tolower($0); sub(/^#+ +/, "", h)
		gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
		if (h in seen) { print h "-" seen[h]; seen[h]++ } else { print h; seen[h] = 1 }
	}' "$1"
}

begin_case
n=$(wc -l <README.md)
[ "$n" -le 300 ] || fail "README.md has $n lines, at most 300"
grep -q 'make test' README.md || fail "README.md does not give the test command (make test)"
linked=$(md_links README.md | sed 's/#.*//' | grep -E '^docs/[^/]+\.md$' | sort -u)
for g in $linked; do
	[ -f "$g" ] || fail "README.md links $g, which does not exist"
done
for g in $GUIDES; do
	grep -qx -- "$g" <<<"$linked" || fail "README.md does not link $g"
done
echo "# README.md: $n lines, $(echo "$linked" | grep -c .) guides linked"
[ "$(echo "$linked" | grep -c .)" -ge 10 ] || fail "README.md links only $(echo "$linked" | grep -c .) guides"
end_case docs-readme-front-door

begin_case
n=0
missing=""
for f in README.md $GUIDES; do
	dir=$(dirname "$f")
	while read -r l; do
		[ -n "$l" ] || continue
		n=$((n + 1))
		path=${l%%#*}
		anchor=; [[ "$l" == *'#'* ]] && anchor=${l#*#}
		if [ -z "$path" ]; then target=$f; else target=$dir/$path; fi
		if [ ! -e "$target" ]; then
			fail "$f links $l: no $target"
		elif [ -n "$anchor" ]; then
			[[ "$target" == *.md ]] || { fail "$f links $l: an anchor into a file that is not markdown"; continue; }
			md_anchors "$target" | grep -qx -- "$anchor" || fail "$f links $l: $target has no heading #$anchor"
		fi
	done < <(md_links "$f")
done
echo "# $n relative links in README.md and docs/*.md, each reaching its file and heading"
[ "$n" -ge 40 ] || fail "only $n relative links found"
end_case docs-links-resolve

# The command reference (docs/commands.md) against the CLI: every object
# `weir help` lists is there as `weir OBJECT, and every row of its table
# names an object the CLI has.
begin_case
C=docs/commands.md
objs=$("$WEIR" help | awk '/^Objects:/ { on = 1; next } on && NF { print $1 } on && !NF { exit }')
[ "$(echo "$objs" | grep -c .)" -ge 15 ] || fail "weir help lists $(echo "$objs" | grep -c .) objects"
for o in $objs; do
	grep -qE "\`weir $o[\` ]" "$C" || fail "$C does not describe weir $o"
done
rows=$(grep -oE '^\| `weir [a-z]+' "$C" | awk '{ print $3 }' | sort -u)
for r in $rows; do
	grep -qx -- "$r" <<<"$objs" || fail "$C has a row for weir $r, which weir help does not list"
done
[ "$(echo "$rows" | grep -c .)" -ge 15 ] || fail "only $(echo "$rows" | grep -c .) command rows in $C"
end_case docs-commands-cover-every-object

if ! command -v groff >/dev/null; then
	skip docs "groff is missing (make test-deps installs groff-base)"
	exit 0
fi
export PATH="$(dirname "$WEIR"):$PATH"
MAN8=docs/man/weir.8
MAN5=docs/man/weir.yaml.5
# shellcheck source=/dev/null
. etc/bash-completion/weir
# comp WORD...: what completing the last word offers
comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _weir; echo "${COMPREPLY[*]}"; }
# man_text PAGE: the page as text, one word a line
man_words() { groff -man -Tascii -rLL=400n -rHY=0 -P-cbou "$1" 2>/dev/null | tr -cs 'A-Za-z0-9./-' '\n' | sort -u; }

objects=$("$WEIR" help | awk '/^Objects:/ { on = 1; next } on && NF { print $1 } on && !NF { exit }')

begin_case
[ "$(echo "$objects" | grep -c .)" -ge 15 ] || fail "weir help lists $(echo "$objects" | grep -c .) objects"
completed=$(comp weir "")
for o in $objects; do
	grep -qE "^\.SS .*\b$o\b" "$MAN8" || fail "weir(8) has no section for $o"
	[[ " $completed " == *" $o "* ]] || fail "completion does not offer $o"
done
end_case docs-every-object

begin_case
words=$(man_words "$MAN8")
n=0
missing=""
for o in $objects; do
	for w in $(_weir_words "$o"); do
		n=$((n + 1))
		grep -qx -- "$w" <<<"$words" || { missing="$missing $w"; fail "weir(8) lacks \"$w\" (weir $o help)"; }
	done
done
echo "# $n keywords from the objects' usage, each in weir(8)"
[ "$n" -ge 50 ] || fail "only $n keywords found in the usage texts"
end_case docs-every-keyword-in-man

begin_case
keys=$(grep -ohE '\.(name|key) = "[a-z0-9-]+"' user/config/*.c user/lib/rules.c | cut -d'"' -f2 | sort -u)
words=$(man_words "$MAN5")
for k in $keys; do
	grep -qx -- "$k" <<<"$words" || fail "weir.yaml(5) lacks the config key \"$k\""
done
echo "# $(echo "$keys" | grep -c .) config keys, each in weir.yaml(5)"
[ "$(echo "$keys" | grep -c .)" -ge 30 ] || fail "only $(echo "$keys" | grep -c .) keys found in user/config/*.c and user/lib/rules.c"
end_case docs-every-config-key-in-man

begin_case
for p in "$MAN8" "$MAN5"; do
	out=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$out" ] || fail "$p: $out"
done
end_case docs-man-pages-render-clean

begin_case
NS=$(new_netns dc) || fail "namespace"
ROOT=$(new_root dc)
in_ns "$NS" ip link add dcomp0 type veth peer name dcomp1
in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add alpha proto udp dport 53 limit 10pps >/dev/null &&
	in_ns "$NS" "$WEIR" --bpffs "$ROOT" rule add beta limit 5pps >/dev/null || fail "rule add"
[ "$(comp weir ru)" == "rule run" ] || fail "'ru' completes to \"$(comp weir ru)\""
[ "$(comp weir rule "")" == "add del list" ] || fail "rule verbs: $(comp weir rule "")"
got=$(comp weir rule add x "")
for w in proto dport src tcp-flags icmp-type family limit conns burst per algo class action \
	 token-bucket sliding-window; do
	[[ " $got " == *" $w "* ]] || fail "rule add does not offer $w"
done
[[ " $got " == *" the "* ]] && fail "rule add offers prose: $got"
got=$(in_ns "$NS" bash -c ". etc/bash-completion/weir; PATH=$(dirname "$WEIR"):\$PATH
	COMP_WORDS=(weir attach ''); COMP_CWORD=2; _weir; echo \${COMPREPLY[*]}")
[[ " $got " == *" dcomp0 "* ]] || fail "attach does not offer the namespace's dcomp0: $got"
got=$(in_ns "$NS" bash -c ". etc/bash-completion/weir; PATH=$(dirname "$WEIR"):\$PATH
	COMP_WORDS=(weir --bpffs $ROOT rule del ''); COMP_CWORD=5; _weir; echo \${COMPREPLY[*]}")
[ "$got" == "alpha beta" ] || fail "rule del on --bpffs $ROOT offers \"$got\", want alpha beta"
[ "$(comp weir shed "")" == "off on set status" ] || fail "shed: $(comp weir shed "")"
[[ " $(comp weir detach "") " == *" all "* ]] || fail "detach does not offer all"
[ "$(comp weir deny add 198.18.0.0/24 f)" == force ] || fail "deny add does not offer force"
end_case docs-completion-completes

begin_case
D=$(mktemp -d)
if make --no-print-directory -s install OUT="$BUILD" DESTDIR="$D" PREFIX=/usr/local >"$D/log" 2>&1; then
	for f in usr/local/share/man/man8/weir.8 usr/local/share/man/man5/weir.yaml.5 \
		 usr/local/share/bash-completion/completions/weir; do
		[ -s "$D/$f" ] || fail "make install did not install /$f"
	done
else
	fail "make install: $(tail -2 "$D/log" | tr '\n' ' ')"
fi
rm -rf "$D"
end_case docs-installed

# docs/ARCHITECTURE.md names files and functions: each must exist, so the
# map cannot go stale when code moves.
begin_case
A=docs/ARCHITECTURE.md
n=0
missing=""
for f in $(grep -oE '\b(user|bpf|include|tools|tests|etc)/[A-Za-z0-9_./-]+\.(c|h|sh|yaml)\b' "$A" | sort -u); do
	n=$((n + 1))
	[ -e "$f" ] || fail "$A names $f, which does not exist"
done
for fn in $(grep -oE '`(wr|weir)_[a-z0-9_]+`' "$A" | tr -d '`' | sort -u); do
	n=$((n + 1))
	grep -rqE "\b$fn\b" user bpf include || fail "$A names $fn, which is nowhere in user/, bpf/ or include/"
done
[ "$n" -ge 20 ] || fail "only $n names checked in $A"
end_case docs-architecture-names-exist
