#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Blocklist feeds end to end: `weir list feed` and the daemon's `lists:`
# against a real HTTP server (python3's http.server with a handler of its
# own: ETag and Last-Modified, 304 for a matching If-None-Match, a 500, a
# body cut short of its Content-Length, an HTML page) inside a receiver
# namespace, and real traffic over a veth from a sender namespace, counted
# by wrsink on the receiver. Cases:
# - bad input (names, sources, refresh, action, bad lines by number, a /0,
#   a missing file) refused with status 1, nothing added;
# - a file feed denies the sender: its datagrams stop arriving, each one
#   counted feed_denied; `list feed test` says so; `allow add` by the
#   operator beats it; `del` lets them through again;
# - a limit-class 3 feed: its source served in calm, shed whole under load
#   (shed_poke) while an unlisted source is not, served again after;
# - a URL feed: the first fetch is unconditional, a refresh sends
#   If-None-Match and gets a 304, a changed list is fetched and in force;
# - failures (500, a cut transfer, an HTML page, a server gone) each keep
#   the previous list in force and say why; the next good fetch clears it;
# - every refresh swaps all feeds at once: a flood from a source every
#   version of the list denies loses nothing to the swaps made while it
#   runs (not one datagram arrives), while an address only some versions
#   list comes and goes;
# - the daemon: `lists:` fetched at start and refreshed by itself (the
#   server's list changes and the new address is denied without a
#   command), its metrics, the command line cannot change a config feed,
#   a reload without the feed removes it;
# - `detach all` removes the store.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
TMP=$(mktemp -d)
trap 'cleanup; rm -rf "$TMP"' EXIT
require_root feeds

GEN=$PWD/$BUILD/wrgen
POKE=$PWD/$BUILD/tests/shed_poke
SINK=$PWD/$BUILD/wrsink
PORT=9413		# the sink's UDP port
HPORT=8471		# the feed server's, on the receiver's loopback
MPORT=9471		# the daemon's metrics, on the receiver's loopback
N=30			# datagrams of each burst
FLOOD=40000		# datagrams of the flood the feeds are swapped under, at 5 kpps

RCV=$(new_netns r) && SND=$(new_netns s) && ROOT=$(new_root feeds) || {
	not_ok feeds-setup "cannot create the namespaces"
	exit 1
}
ip link add "$TAG-s" netns "$SND" type veth peer name "$TAG-r" netns "$RCV" &&
	in_ns "$RCV" sysctl -qw "net.ipv6.conf.$TAG-r.disable_ipv6=1" &&
	in_ns "$SND" sysctl -qw "net.ipv6.conf.$TAG-s.disable_ipv6=1" &&
	ip -n "$RCV" addr add 198.18.40.1/24 dev "$TAG-r" &&
	ip -n "$SND" addr add 198.18.40.2/24 dev "$TAG-s" &&
	ip -n "$SND" addr add 198.18.40.3/24 dev "$TAG-s" &&
	ip -n "$RCV" link set "$TAG-r" up && ip -n "$SND" link set "$TAG-s" up || {
	not_ok feeds-setup "cannot create the veth"
	exit 1
}
mac_r=$(ip -n "$RCV" -j link show "$TAG-r" | jq -r '.[0].address')
mac_s=$(ip -n "$SND" -j link show "$TAG-s" | jq -r '.[0].address')
ip -n "$SND" neigh replace 198.18.40.1 lladdr "$mac_r" dev "$TAG-s" nud permanent
ip -n "$RCV" neigh replace 198.18.40.2 lladdr "$mac_s" dev "$TAG-r" nud permanent
ip -n "$RCV" neigh replace 198.18.40.3 lladdr "$mac_s" dev "$TAG-r" nud permanent

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
g() { wrj stats | jq -r ".global.$1 // 0"; }
URL=http://127.0.0.1:$HPORT
# The feed store of this root (feedstore.c: the root's path, / as -).
STORE=/var/lib/weir/feeds/$(echo "${ROOT#/}" | tr / -)

# The feed server: files under $TMP/www; /NAME answers 200 with an ETag (a
# hash of the body) and Last-Modified, or 304 to a matching If-None-Match;
# /fail.txt 500, /cut.txt a Content-Length 1000 longer than its body. Each
# request is logged as "PATH STATUS INM" (INM: the If-None-Match sent, or -).
mkdir -p "$TMP/www"
cat >"$TMP/server.py" <<'EOF'
import hashlib, http.server, os, sys
root, log = sys.argv[2], open(sys.argv[3], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        inm = self.headers.get("If-None-Match", "-")
        p = os.path.join(root, self.path.lstrip("/"))
        if self.path == "/fail.txt":
            code, body = 500, b"internal error\n"
        elif not os.path.isfile(p):
            code, body = 404, b"not found\n"
        else:
            body = open(p, "rb").read()
            tag = '"%s"' % hashlib.sha1(body).hexdigest()
            code = 304 if inm == tag else 200
        log.write("%s %d %s\n" % (self.path, code, inm))
        self.send_response(code)
        if code in (200, 304) and self.path != "/cut.txt":
            self.send_header("ETag", tag)
            self.send_header("Last-Modified", "Tue, 01 Oct 2024 10:00:00 GMT")
        if code == 304:
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        extra = 1000 if self.path == "/cut.txt" else 0
        self.send_header("Content-Length", str(len(body) + extra))
        self.end_headers()
        self.wfile.write(body)
        if extra:
            self.close_connection = True
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
start_server() {
	nsenter --net="/run/netns/$RCV" python3 "$TMP/server.py" $HPORT "$TMP/www" \
		"$TMP/http.log" 2>"$TMP/server.err" &
	SERVER=$!
	for _ in $(seq 100); do
		in_ns "$RCV" curl -s -o /dev/null "$URL/" && return 0
		sleep 0.05
	done
	return 1
}
: >"$TMP/http.log"
start_server || {
	not_ok feeds-setup "the feed server did not start: $(tail -1 "$TMP/server.err")"
	exit 1
}

# burst SRC: N datagrams from SRC to the receiver; prints how many arrived.
burst() {
	local src=$1 ready=$TMP/ready sink
	rm -f "$ready"
	nsenter --net="/run/netns/$RCV" "$SINK" --listen 198.18.40.1 --port $PORT \
		--duration 20 --idle 1 --json --ready-file "$ready" >"$TMP/sink.json" &
	sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	in_ns "$SND" "$GEN" --dst 198.18.40.1 --dport $PORT --src "$src" \
		--rate 300 --count $N --size 32 --duration 10 --json >/dev/null
	sleep 0.3
	kill -TERM "$sink" 2>/dev/null
	wait "$sink"
	jq -r '[.sources[]?.packets] | add // 0' "$TMP/sink.json"
}
# verdict ADDR: what `list feed test` says of ADDR
verdict() { wrj list feed test "$1" | jq -r .verdict; }

# ---- bad input: each refused with status 1, nothing stored ----
begin_case
expect_ok "attach" wr attach "$TAG-r" mode native
printf '198.18.50.0/24\n198.18.51.0/24\n198.18.52.300\n' >"$TMP/bad-line.txt"
printf '# all of it\n0.0.0.0/0\n' >"$TMP/all.txt"
printf '198.18.40.2/24\n' >"$TMP/hostbits.txt"
printf '# nothing here\n' >"$TMP/empty.txt"
expect_fail "bad name" wr list feed add "a/b" file "$TMP/all.txt"
expect_fail "name too long" wr list feed add "$(printf 'x%.0s' $(seq 40))" file "$TMP/all.txt"
expect_fail "ftp url" wr list feed add f1 url ftp://127.0.0.1/x
expect_fail "relative file" wr list feed add f1 file relative.txt
expect_fail "no source" wr list feed add f1
expect_fail "two sources" wr list feed add f1 file "$TMP/all.txt" url "$URL/x"
expect_fail "bad refresh" wr list feed add f1 file "$TMP/all.txt" refresh 1s
expect_fail "bad action" wr list feed add f1 file "$TMP/all.txt" action maybe
for bad in "limit-class 4" "limit-class x" "limit-class" "limit-class -1"; do
	# shellcheck disable=SC2086 # the class is its own word
	out=$(wr list feed add f1 file "$TMP/all.txt" action $bad 2>&1)
	[ $? -eq 1 ] || fail "action $bad accepted: $out"
	grep -q "action" <<<"$out" || fail "action $bad: the error names no action: $out"
done
expect_fail "unknown word" wr list feed add f1 file "$TMP/all.txt" colour red
expect_fail "missing value" wr list feed add f1 file
out=$(wr list feed add f1 file "$TMP/bad-line.txt" 2>&1)
[ $? -eq 1 ] || fail "a bad line was accepted: $out"
grep -q "line 3: '198.18.52.300' is not an address" <<<"$out" || fail "bad line: $out"
out=$(wr list feed add f1 file "$TMP/all.txt" 2>&1)
grep -q "line 2: 0.0.0.0/0 would list every IPv4 source" <<<"$out" || fail "/0: $out"
out=$(wr list feed add f1 file "$TMP/hostbits.txt" 2>&1)
grep -q "line 1: '198.18.40.2/24' is not an address or a prefix with its host bits" \
	<<<"$out" || fail "host bits: $out"
expect_fail "empty list" wr list feed add f1 file "$TMP/empty.txt"
expect_fail "missing file" wr list feed add f1 file "$TMP/none.txt"
expect_fail "directory" wr list feed add f1 file "$TMP"
expect_fail "del unknown" wr list feed del nosuch
expect_fail "test no address" wr list feed test 198.18.0.0/16
[ "$(wrj list feed show | jq '.feeds | length')" = 0 ] ||
	fail "something was stored: $(wrj list feed show)"
[ "$(verdict 198.18.50.1)" = "not listed" ] || fail "198.18.50.1 listed after refusals"
end_case feeds-bad-input

# ---- lists: in a config, checked ----
begin_case
cat >"$TMP/bad.yaml" <<EOF
lists:
  - name: a
  - name: b
    url: ftp://x/y
  - name: c
    url: http://x/y
    file: /z
  - name: d
    geo: /db.mmdb
  - name: e
    geo: /db.mmdb
    country: DE,DEU
  - name: f
    geo: /db.mmdb
    asn: 64496,AS0
  - name: g
    file: /z
    country: DE
  - name: h
    file: /z
    refresh: 5s
    action: drop
  - name: bad/name
    file: /z
  - 5
  - name: i
    file: /z
    action: limit-class 4
EOF
out=$("$WEIR" check "$TMP/bad.yaml" 2>&1)
[ $? = 1 ] || fail "check passed a bad lists:"
for want in "2:5: a feed needs a url, a file or a geo database" \
	"4:10: url \"ftp://x/y\" is not http:// or https://" \
	"5:5: a feed needs a url, a file or a geo database" \
	"9:10: a geo feed needs country or asn" \
	"12:14: country \"DE,DEU\": \"DEU\" is not a two-letter country code" \
	"15:10: asn \"64496,AS0\": \"AS0\" is not an AS number" \
	"18:14: country and asn go with geo" \
	"21:14: invalid refresh \"5s\"" "22:13: invalid action \"drop\"" \
	"23:11: invalid name \"bad/name\"" "25:5: a feed must be a mapping" \
	"28:13: invalid action \"limit-class 4\""; do
	grep -qF "$want" <<<"$out" || fail "no \"$want\" in: $out"
done
cat >"$TMP/good.yaml" <<EOF
lists:
  - name: spamhaus
    url: https://www.spamhaus.org/drop/drop_v4.json
    refresh: 12h
  - name: mine
    file: mine.txt
    action: allow
  - name: geo
    geo: country.mmdb
    country: de,NL
    asn: AS64496
  - name: poor
    file: poor.txt
    action: limit-class 2
EOF
out=$("$WEIR" -j check "$TMP/good.yaml" 2>&1) || fail "check: $out"
[ "$(jq -r '.lists | map(.action) | join(",")' <<<"$out")" = \
	"deny,allow,deny,limit-class 2" ] || fail "actions: $(jq -c .lists <<<"$out")"
[ "$(jq -r '.lists | map(.name) | join(" ")' <<<"$out")" = "spamhaus mine geo poor" ] ||
	fail "lists: $(jq -c .lists <<<"$out")"
[ "$(jq -r '.lists[1].file' <<<"$out")" = "$TMP/mine.txt" ] || fail "relative file: $out"
[ "$(jq -r '.lists[2].geo' <<<"$out")" = "$TMP/country.mmdb" ] || fail "relative geo: $out"
[ "$(jq -r '.lists[0].refresh_s' <<<"$out")" = 43200 ] || fail "refresh: $out"
end_case feeds-config-check

# ---- a file feed denies the sender; the operator's allow beats it ----
begin_case
before=$(burst 198.18.40.2)
[ "$before" = $N ] || fail "before any feed, $before of $N arrived"
printf '# mine\n198.18.40.2 ; the sender\n198.18.60.0/22\n2001:db8:60::/48\n' \
	>"$TMP/mine.txt"
expect_ok "add mine" wr list feed add mine file "$TMP/mine.txt"
d0=$(g feed_denied)
got=$(burst 198.18.40.2)
[ "$got" = 0 ] || fail "$got of $N arrived from a denied source"
[ $(($(g feed_denied) - d0)) = $N ] || fail "feed_denied grew by $(($(g feed_denied) - d0))"
got=$(burst 198.18.40.3)
[ "$got" = $N ] || fail "$got of $N arrived from a source the feed does not list"
[ "$(verdict 198.18.40.2)" = denied ] || fail "test says $(verdict 198.18.40.2)"
[ "$(verdict 198.18.61.9)" = denied ] || fail "198.18.61.9: $(verdict 198.18.61.9)"
[ "$(verdict 2001:db8:60::9)" = denied ] || fail "IPv6: $(verdict 2001:db8:60::9)"
[ "$(wrj list feed test 198.18.40.2 | jq -r '.feeds[0].feed')" = mine ] ||
	fail "test names no feed: $(wrj list feed test 198.18.40.2)"
[ "$(wrj list feed show | jq -r '.feeds[0] | "\(.name) \(.entries) \(.action) \(.origin)"')" = \
	"mine 3 deny cli" ] || fail "show: $(wrj list feed show)"
expect_ok "operator allow" wr allow add 198.18.40.2
got=$(burst 198.18.40.2)
[ "$got" = $N ] || fail "with the operator's allow, $got of $N arrived"
expect_ok "operator allow del" wr allow del 198.18.40.2
got=$(burst 198.18.40.2)
[ "$got" = 0 ] || fail "after the operator's allow went, $got arrived"
expect_ok "del mine" wr list feed del mine
got=$(burst 198.18.40.2)
[ "$got" = $N ] || fail "after del, $got of $N arrived"
[ "$(verdict 198.18.40.2)" = "not listed" ] || fail "after del: $(verdict 198.18.40.2)"
end_case feeds-file-deny

# ---- limit-class: served in calm, shed first under load ----
begin_case
printf '198.18.40.2\n2001:db8:61::/48\n' >"$TMP/poor.txt"
expect_ok "add poor" wr list feed add poor file "$TMP/poor.txt" action limit-class 3
[ "$(wrj list feed show | jq -r '.feeds[0] | "\(.name) \(.action) \(.class)"')" = \
	"poor limit-class 3 3" ] || fail "show: $(wrj list feed show)"
out=$(wrj list feed test 198.18.40.2)
[ "$(jq -r '"\(.verdict) \(.class) \(.feeds[0].action)"' <<<"$out")" = \
	"classed 3 limit-class 3" ] || fail "test -j: $out"
wr list feed test 2001:db8:61::1 | grep -q ": class 3" ||
	fail "test: $(wr list feed test 2001:db8:61::1)"
c0=$(g feed_classed)
got=$(burst 198.18.40.2)
[ "$got" = $N ] || fail "in calm, $got of $N arrived from a class-3 source"
[ $(($(g feed_classed) - c0)) = $N ] || fail "feed_classed grew by $(($(g feed_classed) - c0))"
# Under load (shed_poke: class 3 shed whole; traffic no rule matches is class 0).
"$POKE" --bpffs "$ROOT" || fail "shed_poke failed"
got=$(burst 198.18.40.2)
[ "$got" = 0 ] || fail "under load, $got of $N arrived from a class-3 source"
got=$(burst 198.18.40.3)
[ "$got" = $N ] || fail "under load, $got of $N arrived from an unlisted source"
"$POKE" --bpffs "$ROOT" --clear || fail "shed_poke --clear failed"
got=$(burst 198.18.40.2)
[ "$got" = $N ] || fail "after the load, $got of $N arrived from a class-3 source"
expect_ok "del poor" wr list feed del poor
end_case feeds-limit-class

# ---- a URL feed: conditional requests ----
begin_case
printf '198.18.40.2\n198.18.70.0/24\n' >"$TMP/www/v1.txt"
cp "$TMP/www/v1.txt" "$TMP/www/feed.txt"
: >"$TMP/http.log"
expect_ok "add url" wr list feed add web url "$URL/feed.txt" refresh 10m
[ "$(head -1 "$TMP/http.log")" = "/feed.txt 200 -" ] ||
	fail "first fetch: $(head -1 "$TMP/http.log")"
out=$(wr list feed refresh web 2>&1) || fail "refresh: $out"
grep -q "web: not modified" <<<"$out" || fail "refresh said: $out"
line=$(sed -n 2p "$TMP/http.log")
[[ "$line" == "/feed.txt 304 \""* ]] || fail "second fetch: $line (want a 304 to If-None-Match)"
printf '198.18.40.3\n198.18.71.0/24\n' >"$TMP/www/feed.txt"
out=$(wr list feed refresh web 2>&1) || fail "refresh: $out"
grep -q "web: updated" <<<"$out" || fail "refresh of a changed list said: $out"
[ "$(verdict 198.18.40.3)" = denied ] || fail "new entry: $(verdict 198.18.40.3)"
[ "$(verdict 198.18.70.1)" = "not listed" ] || fail "old entry stays: $(verdict 198.18.70.1)"
out=$(wr list feed refresh web force 2>&1) || fail "refresh force: $out"
[ "$(tail -1 "$TMP/http.log")" = "/feed.txt 200 -" ] ||
	fail "force sent validators: $(tail -1 "$TMP/http.log")"
end_case feeds-url-conditional

# ---- failures keep the previous list ----
begin_case
for bad in fail cut html gone; do
	case $bad in
	fail) src=$URL/fail.txt want="HTTP status 500" ;;
	cut) printf '198.18.40.3\n198.18.72.0/24\n' >"$TMP/www/cut.txt"
		src=$URL/cut.txt want="transfer closed" ;;
	html) printf '<html><body>503</body></html>\n' >"$TMP/www/page.html"
		src=$URL/page.html want="line 1: '<html><body>503</body></html>' is not" ;;
	gone) src=http://127.0.0.1:$((HPORT + 1))/feed.txt want="Could not connect\|Connection refused\|Failed to connect" ;;
	esac
	# The feed's definition points at the bad source; its list on disk stays.
	sed -i "s|^url=.*|url=$src|" "$STORE/web.def"
	out=$(wr list feed refresh web 2>&1)
	rc=$?
	[ $rc = 1 ] || fail "$bad: refresh exit $rc: $out"
	grep -q "$want" <<<"$out" || fail "$bad: said \"$out\", want \"$want\""
	grep -q "the previous list stays" <<<"$out" || fail "$bad: $out"
	[ "$(verdict 198.18.40.3)" = denied ] || fail "$bad: the previous list is gone"
	err=$(wrj list feed show | jq -r '.feeds[] | select(.name == "web") | .error')
	grep -q "$want" <<<"$err" || fail "$bad: show's error: $err"
done
got=$(burst 198.18.40.3)
[ "$got" = 0 ] || fail "after the failures, $got of $N arrived from the listed source"
sed -i "s|^url=.*|url=$URL/feed.txt|" "$STORE/web.def"
out=$(wr list feed refresh web 2>&1) || fail "good refresh: $out"
[ "$(wrj list feed show | jq -r '.feeds[] | select(.name == "web") | .error')" = null ] ||
	fail "the error stayed after a good fetch: $(wrj list feed show)"
end_case feeds-failures-keep-the-list

# ---- every swap is whole: a source every version lists never gets through ----
begin_case
# Two versions: both list 198.18.40.3 (the flood's source); only A lists .2.
{ echo 198.18.40.3; echo 198.18.40.2; seq 0 199 | sed 's/^/198.18.80./'; } >"$TMP/www/a.txt"
{ echo 198.18.40.3; seq 0 199 | sed 's/^/198.18.81./'; } >"$TMP/www/b.txt"
cp "$TMP/www/a.txt" "$TMP/www/feed.txt"
expect_ok "refresh A" wr list feed refresh web
rm -f "$TMP/ready"
nsenter --net="/run/netns/$RCV" "$SINK" --listen 198.18.40.1 --port $PORT \
	--duration 60 --idle 5 --json --ready-file "$TMP/ready" >"$TMP/sink.json" &
sink=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
d0=$(g feed_denied)
p0=$(g packets)
vd0=$(ip -n "$RCV" -s -j link show "$TAG-r" | jq '.[0].stats64.rx.dropped')
nsenter --net="/run/netns/$SND" "$GEN" --dst 198.18.40.1 --dport $PORT --src 198.18.40.3 \
	--rate 5000 --count $FLOOD --size 32 --duration 60 --json >"$TMP/flood.json" &
fl=$!
swaps=0
i=0
while kill -0 $fl 2>/dev/null; do
	i=$((i + 1))
	if [ $((i % 2)) = 1 ]; then cp "$TMP/www/b.txt" "$TMP/www/feed.txt"
	else cp "$TMP/www/a.txt" "$TMP/www/feed.txt"; fi
	wr list feed refresh web >/dev/null 2>&1 || { fail "refresh $i failed"; break; }
	swaps=$((swaps + 1))
	v=$(verdict 198.18.40.2)
	if [ $((i % 2)) = 1 ]; then [ "$v" = "not listed" ] || fail "swap $i (B): .2 is $v"
	else [ "$v" = denied ] || fail "swap $i (A): .2 is $v"; fi
done
wait $fl
sleep 0.3
kill -TERM "$sink" 2>/dev/null
wait "$sink"
sent=$(jq -r '.total_sent // 0' "$TMP/flood.json")
arrived=$(jq -r '[.sources[]?.packets] | add // 0' "$TMP/sink.json")
denied=$(($(g feed_denied) - d0))
pk=$(($(g packets) - p0))
vd=$(($(ip -n "$RCV" -s -j link show "$TAG-r" | jq '.[0].stats64.rx.dropped') - vd0))
echo "# $swaps swaps under a flood: sent $sent, arrived $arrived, feed_denied $denied," \
	"weir saw $pk, veth dropped $vd"
[ "$swaps" -ge 4 ] || fail "only $swaps swaps while the flood ran"
[ "$sent" -gt 1000 ] || fail "the flood sent only $sent"
[ "$arrived" = 0 ] || fail "$arrived datagrams of a source every version lists got through"
[ "$denied" -ge $((sent * 95 / 100)) ] && [ "$denied" -le "$sent" ] ||
	fail "feed_denied grew by $denied for $sent sent (veth may drop a few, weir none)"
end_case feeds-swap-is-whole

# ---- the daemon: lists: fetched, refreshed by itself, reloaded away ----
begin_case
expect_ok "del web" wr list feed del web
printf '198.18.40.2\n' >"$TMP/www/d.txt"
printf '198.18.90.0/24\n' >"$TMP/d-file.txt"
printf '198.18.96.0/24\n' >"$TMP/d-class.txt"
cat >"$TMP/weir.yaml" <<EOF
interfaces:
  - name: $TAG-r
    mode: native
metrics:
  listen: 127.0.0.1:$MPORT
lists:
  - name: dweb
    url: $URL/d.txt
    refresh: 10s
  - name: dfile
    file: $TMP/d-file.txt
    action: deny
  - name: dclass
    file: $TMP/d-class.txt
    action: limit-class 2
EOF
start_daemon "$RCV" "$ROOT" "$TMP/weir.yaml" "$TMP/daemon.log" ||
	fail "the daemon did not start: $(tail -3 "$TMP/daemon.log")"
for _ in $(seq 100); do
	[ "$(verdict 198.18.40.2)" = denied ] && [ "$(verdict 198.18.90.1)" = denied ] &&
		[ "$(verdict 198.18.96.1)" = classed ] && break
	sleep 0.1
done
[ "$(verdict 198.18.40.2)" = denied ] || fail "dweb not in force: $(tail -3 "$TMP/daemon.log")"
[ "$(verdict 198.18.90.1)" = denied ] || fail "dfile not in force: $(tail -3 "$TMP/daemon.log")"
[ "$(wrj list feed test 198.18.96.1 | jq -r .class)" = 2 ] ||
	fail "dclass not in force: $(wrj list feed test 198.18.96.1)"
[ "$(wrj list feed show | jq -r '.feeds[] | select(.name == "dclass") | .action')" = \
	"limit-class 2" ] || fail "dclass: $(wrj list feed show)"
got=$(burst 198.18.40.2)
[ "$got" = 0 ] || fail "$got of $N arrived from a source the daemon's feed lists"
[ "$(wrj list feed show | jq -r '[.feeds[].origin] | join(" ")')" = "config config config" ] ||
	fail "origins: $(wrj list feed show)"
expect_fail "cli del of a config feed" wr list feed del dweb
expect_fail "cli add over a config feed" wr list feed add dweb file "$TMP/d-file.txt"
# The server's list changes; the daemon fetches it within its refresh (bounded: 40 s).
printf '198.18.40.3\n' >"$TMP/www/d.txt"
for _ in $(seq 400); do [ "$(verdict 198.18.40.3)" = denied ] && break; sleep 0.1; done
[ "$(verdict 198.18.40.3)" = denied ] || fail "the daemon did not refresh dweb: $(tail -3 "$TMP/daemon.log")"
[ "$(verdict 198.18.40.2)" = "not listed" ] || fail "the old entry stayed"
grep -q "feed dweb: 1 prefixes fetched" "$TMP/daemon.log" || fail "no log line: $(tail -3 "$TMP/daemon.log")"
# Its refresh asked with the first answer's ETag (and got the new list).
grep -q '^/d.txt 200 "' "$TMP/http.log" || fail "the daemon's refresh was not conditional"
m=$(in_ns "$RCV" curl -s "http://127.0.0.1:$MPORT/metrics")
grep -q '^weir_feed_entries{feed="dweb"} 1$' <<<"$m" || fail "metrics: $(grep feed <<<"$m" | head -3)"
grep -q '^weir_feed_failing{feed="dfile"} 0$' <<<"$m" || fail "metrics: $(grep failing <<<"$m")"
grep -q '^weir_packets_total{result="feed_denied"} [1-9]' <<<"$m" || fail "no feed_denied in metrics"
grep -q '^weir_packets_total{result="feed_classed"} [0-9]' <<<"$m" ||
	fail "no feed_classed in metrics"
# A reload without dweb: it goes, its entries with it; dfile stays.
sed -i '/name: dweb/,/refresh: 10s/d' "$TMP/weir.yaml"
kill -HUP "$DPID"
for _ in $(seq 100); do [ "$(verdict 198.18.40.3)" = "not listed" ] && break; sleep 0.1; done
[ "$(verdict 198.18.40.3)" = "not listed" ] || fail "dweb stayed after the reload"
[ "$(verdict 198.18.90.1)" = denied ] || fail "dfile went with the reload"
[ "$(wrj list feed show | jq -r '[.feeds[].name] | sort | join(" ")')" = "dclass dfile" ] ||
	fail "store after reload: $(wrj list feed show)"
stop_daemons
end_case feeds-daemon

# ---- a geo feed: a country's and an ASN's networks from a MaxMind DB ----
begin_case
cat >"$TMP/geo.json" <<'EOF'
{"networks": [{"network": "198.18.40.0/25", "country": "DE"},
              {"network": "198.18.91.0/24", "country": "NL", "asn": 64496},
              {"network": "2001:db8:91::/48", "country": "DE"},
              {"network": "198.18.92.0/23", "country": "FR", "asn": 64497}]}
EOF
python3 tools/mkmmdb.py "$TMP/geo.json" "$TMP/geo.mmdb" >/dev/null ||
	fail "mkmmdb failed"
expect_fail "geo without country or asn" wr list feed add g1 geo "$TMP/geo.mmdb"
expect_fail "geo bad country" wr list feed add g1 geo "$TMP/geo.mmdb" country DEU
expect_fail "geo bad asn" wr list feed add g1 geo "$TMP/geo.mmdb" asn AS0
expect_fail "geo not an mmdb" wr list feed add g1 geo "$TMP/geo.json" country DE
expect_fail "geo no match" wr list feed add g1 geo "$TMP/geo.mmdb" country JP
expect_fail "country without geo" wr list feed add g1 file "$TMP/geo.json" country DE
expect_ok "geo add" wr list feed add g1 geo "$TMP/geo.mmdb" country de asn AS64497
[ "$(verdict 198.18.40.2)" = denied ] || fail "DE network: $(verdict 198.18.40.2)"
[ "$(verdict 198.18.40.200)" = "not listed" ] || fail "outside DE: $(verdict 198.18.40.200)"
[ "$(verdict 198.18.93.7)" = denied ] || fail "AS64497: $(verdict 198.18.93.7)"
[ "$(verdict 198.18.91.7)" = "not listed" ] || fail "NL: $(verdict 198.18.91.7)"
[ "$(verdict 2001:db8:91::7)" = denied ] || fail "DE IPv6: $(verdict 2001:db8:91::7)"
got=$(burst 198.18.40.2)
[ "$got" = 0 ] || fail "$got of $N arrived from a DE source"
# A new database (the sender's network moves to NL): picked up by a refresh.
sed -i 's|"198.18.40.0/25", "country": "DE"|"198.18.40.0/25", "country": "NL"|' "$TMP/geo.json"
python3 tools/mkmmdb.py "$TMP/geo.json" "$TMP/geo.mmdb" >/dev/null
touch -d '+1 min' "$TMP/geo.mmdb"
out=$(wr list feed refresh g1 2>&1) || fail "refresh: $out"
[ "$(verdict 198.18.40.2)" = "not listed" ] || fail "after the new database: $(verdict 198.18.40.2)"
[ "$(verdict 198.18.93.7)" = denied ] || fail "the ASN went: $(verdict 198.18.93.7)"
expect_ok "geo del" wr list feed del g1
end_case feeds-geo

# ---- detach all removes the store ----
begin_case
expect_ok "detach all" wr detach all
[ ! -e "$STORE" ] || fail "the store stayed"
end_case feeds-detach-all-clears

kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null
exit 0
