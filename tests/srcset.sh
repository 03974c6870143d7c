#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Rules whose source match is a set (`src country:DE`, `src asn:64496`,
# `src feed:NAME`, "!" for outside it), end to end: a real MMDB written by
# tools/mkmmdb.py that puts the two senders' networks in different
# countries and ASNs, two sender namespaces each on its own veth to the
# receiver, paced UDP from each counted by wrsink on the receiver. Cases:
# - bad input (an unknown feed, a bad country or ASN, a database that is
#   not an MMDB or is missing, a config rule without geo-db) refused with
#   status 1 and the word named, no rule added;
# - country:DE limits the DE sender and not the NL one; !country:DE the
#   other way round; asn:64497 the NL one; rule list and -j print the set
#   as given;
# - a feed with action match denies nothing by itself; `src feed:NAME`
#   limits what it lists, and a refresh of the feed moves the set; the
#   feed cannot be deleted while a rule names it;
# - the daemon: geo-db: and a rule with country:NL; a new database file
#   (the countries swapped) is read by the daemon itself and the limit
#   follows it without a command; a config feed with action match, empty
#   until its first fetch, refetched by the daemon when its file changed,
#   and the rule's set follows it.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root srcset

GEN=$PWD/$BUILD/wrgen
SINK=$PWD/$BUILD/wrsink
PORT=9415		# the sink's UDP port
N=30			# datagrams of each burst, at 300 a second

if ! command -v python3 >/dev/null; then
	not_ok srcset-setup "python3 is missing (make test-deps installs it)"
	exit 1
fi

RCV=$(new_netns r) && S1=$(new_netns a) && S2=$(new_netns b) && ROOT=$(new_root srcset) || {
	not_ok srcset-setup "cannot create the namespaces"
	exit 1
}
# veth NS DEV-SUFFIX NET: sender NS at NET.2 on its own veth to the receiver's NET.1.
veth() {
	local ns=$1 s=$2 net=$3 mr ms
	ip link add "$TAG-$s" netns "$ns" type veth peer name "$TAG-r$s" netns "$RCV" &&
		in_ns "$RCV" sysctl -qw "net.ipv6.conf.$TAG-r$s.disable_ipv6=1" &&
		in_ns "$ns" sysctl -qw "net.ipv6.conf.$TAG-$s.disable_ipv6=1" &&
		ip -n "$RCV" addr add "$net.1/24" dev "$TAG-r$s" &&
		ip -n "$ns" addr add "$net.2/24" dev "$TAG-$s" &&
		ip -n "$RCV" link set "$TAG-r$s" up && ip -n "$ns" link set "$TAG-$s" up || return 1
	mr=$(ip -n "$RCV" -j link show "$TAG-r$s" | jq -r '.[0].address')
	ms=$(ip -n "$ns" -j link show "$TAG-$s" | jq -r '.[0].address')
	ip -n "$ns" neigh replace "$net.1" lladdr "$mr" dev "$TAG-$s" nud permanent &&
		ip -n "$RCV" neigh replace "$net.2" lladdr "$ms" dev "$TAG-r$s" nud permanent
}
veth "$S1" a 198.18.60 && veth "$S2" b 198.18.61 || {
	not_ok srcset-setup "cannot create the veths"
	exit 1
}

# The database: the first sender's /24 in DE (AS64496), the second's in NL
# (AS64497); swapped.mmdb the other way round.
cat >"$TMP/geo.json" <<'EOF'
{"networks": [
 {"network": "198.18.60.0/24", "country": "DE", "asn": 64496},
 {"network": "198.18.61.0/24", "country": "NL", "asn": 64497},
 {"network": "2001:db8:60::/48", "country": "DE", "asn": 64496}
]}
EOF
sed 's/"DE", "asn": 64496}/"XX"}/; s/"NL", "asn": 64497}/"DE"}/; s/"XX"}/"NL"}/' \
	"$TMP/geo.json" >"$TMP/swapped.json"
python3 tools/mkmmdb.py "$TMP/geo.json" "$TMP/geo.mmdb" 2>"$TMP/mk" &&
	python3 tools/mkmmdb.py "$TMP/swapped.json" "$TMP/swapped.mmdb" 2>>"$TMP/mk" || {
	not_ok srcset-setup "mkmmdb: $(cat "$TMP/mk")"
	exit 1
}
export WEIR_GEO_DB=$TMP/geo.mmdb

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }

# burst NS SRC: N datagrams from SRC in NS to the receiver; prints how many arrived.
burst() {
	local ns=$1 src=$2 dst=${2%.2}.1 ready=$TMP/ready sink
	rm -f "$ready"
	nsenter --net="/run/netns/$RCV" "$SINK" --listen "$dst" --port $PORT \
		--duration 20 --idle 1 --json --ready-file "$ready" >"$TMP/sink.json" &
	sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	in_ns "$ns" "$GEN" --dst "$dst" --dport $PORT --src "$src" \
		--rate 300 --count $N --size 32 --duration 10 --json >/dev/null
	sleep 0.3
	kill -TERM "$sink" 2>/dev/null
	wait "$sink"
	jq -r '[.sources[]?.packets] | add // 0' "$TMP/sink.json"
}
# both: "DE-arrived NL-arrived"
both() { echo "$(burst "$S1" 198.18.60.2) $(burst "$S2" 198.18.61.2)"; }
# limited "A B": A limited (fewer than half arrived) and B not (all arrived).
limited() {
	local a=${1% *} b=${1#* }
	echo "# $a and $b of $N arrived"
	[ "$a" -lt $((N / 2)) ] && [ "$b" -eq $N ]
}
# A rule that limits UDP to the sink's port from SET: 5 a second, burst 5.
add() { wr rule add "$1" proto udp dport $PORT src "$2" limit 5pps burst 5; }
rules() { wrj rule list | jq -r '[.rules[].name] | join(",")'; }

# ---- bad input: refused with status 1, the word named, nothing added ----
begin_case
expect_ok "attach a" wr attach "$TAG-ra" mode native
expect_ok "attach b" wr attach "$TAG-rb" mode native
echo "198.18.60.0/24 DE" >"$TMP/text.mmdb"
# bad WORD CMD...: status 1, WORD in its error.
bad() {
	local word=$1 out; shift
	expect_fail "$*" "$@"
	out=$("$@" 2>&1 >/dev/null)
	[[ "$out" == *"$word"* ]] || fail "$*: the error does not name \"$word\": $out"
}
bad "unknown feed nope" add r1 feed:nope
bad "invalid country \"DEU\"" add r1 country:DEU
bad "invalid country" add r1 country:DE,
bad "invalid ASN \"0\"" add r1 asn:0
bad "invalid feed name" add r1 feed:a/b
bad "invalid CIDR \"geo:DE\" (or a source set" add r1 geo:DE
bad "is not a MaxMind DB file" env WEIR_GEO_DB="$TMP/text.mmdb" nsenter --net="/run/netns/$RCV" \
	"$WEIR" --bpffs "$ROOT" rule add r1 proto udp src country:DE limit 5pps
bad "country:ZZ matches no network" add r1 country:ZZ
bad "No such file" env WEIR_GEO_DB="$TMP/none.mmdb" nsenter --net="/run/netns/$RCV" \
	"$WEIR" --bpffs "$ROOT" rule add r1 proto udp src asn:64496 limit 5pps
[ -z "$(rules)" ] || fail "rules added by bad input: $(rules)"
cat >"$TMP/nodb.yaml" <<EOF
rules:
  - name: r1
    proto: udp
    src: country:DE
    limits:
      - rate: 5pps
EOF
bad "needs a geo database (geo-db: PATH)" "$WEIR" check "$TMP/nodb.yaml"
end_case srcset-bad-input

# ---- country: and asn:, and "!" ----
begin_case
expect_ok "add de" add de country:DE
got=$(both)
limited "$got" || fail "country:DE: DE and NL arrived $got of $N"
[ "$(wrj rule list | jq -r '.rules[0].src')" = country:DE ] ||
	fail "-j: src $(wrj rule list | jq -c '.rules[0]')"
wr rule list | grep -q "^de .* src country:DE " || fail "rule list: $(wr rule list)"
# status: the set in force, its prefixes of each family (DE: a /24 and a /48).
[ "$(wrj status | jq -c '.srcsets')" = '[{"set":"country:DE","prefixes4":1,"prefixes6":1,"slot":0}]' ] ||
	fail "status: $(wrj status | jq -c '.srcsets')"
expect_ok "del de" wr rule del de
expect_ok "add notde" add notde '!country:de'
got=$(both)
limited "${got#* } ${got% *}" || fail "!country:de: DE and NL arrived $got of $N"
# (one spelling a set: the rule keeps it upper case, so de and DE share a slot)
[ "$(wrj rule list | jq -r '.rules[0].src')" = '!country:DE' ] ||
	fail "-j: src $(wrj rule list | jq -c '.rules[0]')"
expect_ok "del notde" wr rule del notde
expect_ok "add nl" add nl asn:AS64497
got=$(both)
limited "${got#* } ${got% *}" || fail "asn:AS64497: DE and NL arrived $got of $N"
expect_ok "del nl" wr rule del nl
got=$(both)
[ "$got" = "$N $N" ] || fail "no rule: DE and NL arrived $got of $N"
[ "$(wrj status | jq -c '.srcsets')" = '[]' ] || fail "status after del: $(wrj status | jq -c '.srcsets')"
end_case srcset-country-asn

# ---- a match feed: nothing by itself; a rule's set; its refresh moves the set ----
begin_case
echo 198.18.61.0/24 >"$TMP/list.txt"
expect_ok "feed add" wr list feed add watch file "$TMP/list.txt" action match
wrj list feed show | jq -e '.feeds[] | select(.name == "watch") | .action == "match"' \
	>/dev/null || fail "feed show: $(wrj list feed show)"
got=$(both)
[ "$got" = "$N $N" ] || fail "a match feed dropped by itself: $got of $N"
bad "deny, allow, match or limit-class N" wr list feed add w2 file "$TMP/list.txt" action limit
expect_ok "add watched" add watched feed:watch
got=$(both)
limited "${got#* } ${got% *}" || fail "feed:watch: DE and NL arrived $got of $N"
echo 198.18.60.0/25 >"$TMP/list.txt"
expect_ok "refresh" wr list feed refresh watch force
got=$(both)
limited "$got" || fail "feed:watch refreshed: DE and NL arrived $got of $N"
bad "rule watched's source set" wr list feed del watch
wrj list feed show | jq -e '.feeds[] | select(.name == "watch")' >/dev/null ||
	fail "the feed went although a rule names it"
expect_ok "del watched" wr rule del watched
expect_ok "feed del" wr list feed del watch
end_case srcset-feed-match

# ---- the daemon: geo-db:, a new database read by itself ----
begin_case
expect_ok "detach" wr detach all
cp "$TMP/geo.mmdb" "$TMP/live.mmdb"
cat >"$TMP/weir.yaml" <<EOF
interfaces:
  - name: $TAG-ra
    mode: native
  - name: $TAG-rb
    mode: native
geo-db: $TMP/live.mmdb
metrics: off
rules:
  - name: nl
    proto: udp
    dport: $PORT
    src: country:NL
    limits:
      - rate: 5pps
        burst: 5
EOF
out=$(env -u WEIR_GEO_DB "$WEIR" -j check "$TMP/weir.yaml" 2>&1)
[ "$(jq -r '.rules[0].src' <<<"$out")" = country:NL ] || fail "check -j: $out"
[ "$(jq -r '.geo_db' <<<"$out")" = "$TMP/live.mmdb" ] || fail "check -j geo_db: $out"
if ! start_daemon "$RCV" "$ROOT" "$TMP/weir.yaml" "$TMP/d.log"; then
	fail "daemon did not start: $(tail -3 "$TMP/d.log")"
else
	got=$(both)
	limited "${got#* } ${got% *}" || fail "daemon, country:NL: DE and NL arrived $got of $N"
	# A new database, the countries swapped: the daemon reads it within its poll.
	cp "$TMP/swapped.mmdb" "$TMP/live.mmdb.new" && touch -d '+1 min' "$TMP/live.mmdb.new" &&
		mv "$TMP/live.mmdb.new" "$TMP/live.mmdb"
	for _ in $(seq 100); do
		grep -q "source sets: 1 read anew" "$TMP/d.log" && break
		sleep 0.1
	done
	grep -q "source sets: 1 read anew" "$TMP/d.log" ||
		fail "the daemon did not read the new database: $(tail -3 "$TMP/d.log")"
	got=$(both)
	limited "$got" || fail "daemon, swapped database: DE and NL arrived $got of $N"
fi
end_case srcset-daemon-geo-db

# ---- the daemon: a config feed with action match, refreshed by the daemon itself ----
begin_case
stop_daemons
expect_ok "detach" wr detach all
echo 198.18.60.0/24 >"$TMP/list2.txt"
cat >"$TMP/feed.yaml" <<EOF2
interfaces:
  - name: $TAG-ra
    mode: native
  - name: $TAG-rb
    mode: native
metrics: off
lists:
  - name: watch2
    file: $TMP/list2.txt
    refresh: 10s
    action: match
rules:
  - name: fed
    proto: udp
    dport: $PORT
    src: feed:watch2
    limits:
      - rate: 5pps
        burst: 5
EOF2
# seen N: the daemon said N times that it read a feed's source set anew (bounded wait).
seen() {
	local i
	for i in $(seq 300); do
		[ "$(grep -c "source sets: 1 read anew after a feed changed" "$TMP/f.log")" -ge "$1" ] &&
			return 0
		sleep 0.1
	done
	return 1
}
# weir check: a rule's feed set names a feed of lists: (or of the store); one that names
# neither is an error there, before any daemon meets it.
"$WEIR" check "$TMP/feed.yaml" >/dev/null 2>&1 || fail "check feed.yaml: $("$WEIR" check "$TMP/feed.yaml" 2>&1)"
sed 's/src: feed:watch2/src: "!feed:nosuch"/' "$TMP/feed.yaml" >"$TMP/nofeed.yaml"
out=$("$WEIR" check "$TMP/nofeed.yaml" 2>&1)
rc=$?
[ $rc -eq 1 ] && [[ "$out" == *"rule fed: src !feed:nosuch: no feed nosuch"* ]] ||
	fail "check with an unknown feed: exit $rc: $out"
[ "$("$WEIR" -j check "$TMP/nofeed.yaml" 2>/dev/null | jq -c '[.valid, (.errors[0].reason | test("no feed nosuch"))]')" = '[false,true]' ] ||
	fail "check -j with an unknown feed: $("$WEIR" -j check "$TMP/nofeed.yaml" 2>&1)"
if ! start_daemon "$RCV" "$ROOT" "$TMP/feed.yaml" "$TMP/f.log"; then
	fail "daemon did not start: $(tail -3 "$TMP/f.log")"
elif ! seen 1; then
	fail "the first fetch did not fill the set: $(tail -3 "$TMP/f.log")"
else
	# A match feed drops nothing by itself: only the rule limits what it lists.
	got=$(both)
	limited "$got" || fail "daemon, feed:watch2 (DE's /24): DE and NL arrived $got of $N"
	echo 198.18.61.0/24 >"$TMP/list2.txt"
	touch -d '+1 min' "$TMP/list2.txt"
	if ! seen 2; then
		fail "the daemon's refresh did not refill the set: $(tail -3 "$TMP/f.log")"
	else
		got=$(both)
		limited "${got#* } ${got% *}" ||
			fail "daemon, feed:watch2 refreshed (NL's /24): DE and NL arrived $got of $N"
	fi
fi
end_case srcset-daemon-feed-refresh
