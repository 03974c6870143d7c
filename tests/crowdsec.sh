#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `weir crowdsec run` against the real CrowdSec local API (Debian's
# crowdsec): its LAPI alone (-no-cs), with a private config, database and
# credentials in a temporary directory, on the loopback of the receiver's
# namespace. Decisions added with cscli show up on the deny list with
# their duration as ttl and drop the source's datagrams on the veth;
# deleted ones go; other types are skipped; a wrong key, a dead API and
# bad arguments fail clearly and change nothing.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
. tests/ban_lib.sh
. tests/cs_lib.sh
TMP=$(mktemp -d)
CS=$TMP/cs
CS_PID=""
B_PID=""
stop_pid() { [ -n "$1" ] && { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }; return 0; }
trap 'stop_pid "$B_PID"; stop_pid "$CS_PID"; cleanup; rm -rf "$TMP"' EXIT
require_root crowdsec
if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null; then
	not_ok crowdsec-setup "crowdsec/cscli not installed (make test installs crowdsec)"
	exit 1
fi
if ! ban_net cs; then
	not_ok crowdsec-setup "cannot create the namespaces, the veth or attach"
	exit 1
fi
# The LAPI listens in the receiver's own namespace: no port is shared with anyone.
PORT=18411
URL=http://127.0.0.1:$PORT

if ! cs_start "$RCV" "$CS" $PORT >"$TMP/cs_start.err"; then
	not_ok crowdsec-setup "$(cat "$TMP/cs_start.err")"
	exit 1
fi
bouncer() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run url "$URL" "$@"; }

# ---- 1. bad input, a wrong key, a dead API: status 1, a clear error, nothing changed ----
echo "0000wrongkey0000" >"$TMP/badkey"
printf '\n' >"$TMP/emptykey"
expect_bad() {
	local name=$1 word=$2 before err rc; shift 2
	begin_case
	before=$(wrj deny list)
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, want 1: $*"
	[[ "$err" == *"$word"* ]] || fail "error does not say \"$word\": $err"
	[ "$before" == "$(wrj deny list)" ] || fail "the deny list changed"
	end_case "crowdsec-bad-$name"
}
expect_bad wrong-key "HTTP 403" bouncer key-file "$TMP/badkey" once
expect_bad dead-api "127.0.0.1:1" in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run \
	url http://127.0.0.1:1 key-file "$CS/key" once
expect_bad no-key-file "/nonexistent" bouncer key-file /nonexistent once
expect_bad empty-key "bouncer's key" bouncer key-file "$TMP/emptykey" once
expect_bad interval "invalid interval \"0s\"" bouncer key-file "$CS/key" interval 0s
expect_bad url "invalid url" in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run \
	url 127.0.0.1:$PORT key-file "$CS/key" once
expect_bad no-url "needs url" in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run key-file "$CS/key"
expect_bad twice '"url" given twice' bouncer url "$URL" key-file "$CS/key" once

# ---- 2. the stream: bans in, other types skipped, deletions out ----
begin_case
nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run url "$URL" \
	key-file "$CS/key" interval 1s >"$TMP/bouncer.out" 2>&1 &
B_PID=$!
cscli_ decisions add --ip 198.18.80.2 --duration 2m >/dev/null 2>&1 || fail "cscli decisions add --ip"
cscli_ decisions add --range 198.18.81.0/24 --duration 1h >/dev/null 2>&1 || fail "cscli decisions add --range"
cscli_ decisions add --ip 2001:db8:80::3 --duration 10m >/dev/null 2>&1 || fail "cscli decisions add v6"
cscli_ decisions add --ip 198.18.80.3 --duration 2m --type captcha >/dev/null 2>&1 ||
	fail "cscli decisions add captcha"
if ! wait_for 20 listed 198.18.80.2/32; then
	fail "198.18.80.2 not on the deny list: $(wrj deny list) $(tr '\n' ' ' <"$TMP/bouncer.out")"
else
	wait_for 10 listed 2001:db8:80::3/128 || fail "2001:db8:80::3 not listed: $(wrj deny list)"
	t=$(ttl_of deny 198.18.80.2/32)
	in_range "$t" 90 120 || fail "198.18.80.2 ttl \"$t\", want 90..120 (a 2m decision)"
	t=$(ttl_of deny 198.18.81.0/24)
	in_range "$t" 3500 3600 || fail "198.18.81.0/24 ttl \"$t\", want 3500..3600 (a 1h range)"
	t=$(ttl_of deny 2001:db8:80::3/128)
	in_range "$t" 500 600 || fail "2001:db8:80::3 ttl \"$t\", want 500..600"
	unlisted 198.18.80.3/32 || fail "a captcha decision became a deny entry"
	got=$(deliver 198.18.80.2 10)
	[ "$got" -eq 0 ] || fail "banned source: $got of 10 arrived"
	got=$(deliver 2001:db8:80::3 10)
	[ "$got" -eq 0 ] || fail "banned IPv6 source: $got of 10 arrived"
	got=$(deliver 198.18.80.3 10)
	[ "$got" -ge 9 ] || fail "captcha'd source: $got of 10 arrived (tolerance 1)"
	cscli_ decisions delete --ip 198.18.80.2 >/dev/null 2>&1 || fail "cscli decisions delete"
	wait_for 20 unlisted 198.18.80.2/32 || fail "198.18.80.2 still listed after its decision was deleted"
	got=$(deliver 198.18.80.2 10)
	[ "$got" -ge 9 ] || fail "after the deletion: $got of 10 arrived (tolerance 1)"
	listed 198.18.81.0/24 || fail "the range went with another decision"
fi
end_case crowdsec-stream-ban-and-delete

# ---- 3. the API goes away: the bouncer keeps going, the bans stay, SIGTERM ends it ----
begin_case
stop_pid "$CS_PID"
CS_PID=""
for _ in $(seq 20); do grep -q "127.0.0.1:$PORT" "$TMP/bouncer.out" && break; sleep 0.2; done
grep -q "127.0.0.1:$PORT" "$TMP/bouncer.out" || fail "the bouncer did not say the API is gone"
kill -0 "$B_PID" 2>/dev/null || fail "the bouncer exited when the API went away"
listed 198.18.81.0/24 || fail "the bans went with the API"
kill -TERM "$B_PID"
wait "$B_PID"
rc=$?
B_PID=""
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM"
listed 2001:db8:80::3/128 || fail "the bans went with the bouncer"
end_case crowdsec-api-gone

# ---- 4. once: every decision in force, one pull ----
begin_case
wr deny del 198.18.81.0/24 >/dev/null || fail "deny del"
nsenter --net="/run/netns/$RCV" crowdsec -c "$CS/config.yaml" -no-cs >>"$TMP/cs.out" 2>&1 &
CS_PID=$!
wait_for 30 sh -c "nsenter --net=/run/netns/$RCV curl -s -o /dev/null -m 2 $URL/v1/decisions/stream" ||
	fail "the local API did not come back"
out=$(in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" crowdsec run url "$URL" key-file "$CS/key" once 2>&1) ||
	fail "once: $out"
[ "$(jq -r .startup <<<"$out")" == true ] || fail "once: $out"
[ "$(jq -r .added <<<"$out")" -ge 2 ] || fail "once added $(jq -r .added <<<"$out"), want at least 2: $out"
t=$(ttl_of deny 198.18.81.0/24)
in_range "$t" 3000 3600 || fail "198.18.81.0/24 back with ttl \"$t\""
end_case crowdsec-once

# ---- 5. Country and AS decisions with geo-db: feeds of the database's networks ----
begin_case
cat >"$TMP/geo.json" <<'EOF'
{"networks": [{"network": "198.18.80.4/32", "country": "DE"},
              {"network": "198.18.84.0/24", "country": "DE"},
              {"network": "2001:db8:80::2/128", "country": "US", "asn": 64511}]}
EOF
python3 tools/mkmmdb.py "$TMP/geo.json" "$TMP/geo.mmdb" >/dev/null || fail "mkmmdb"
expect_bad_rc=$(in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run url "$URL" key-file "$CS/key" \
	geo-db relative.mmdb once 2>&1)
[ $? -eq 1 ] && grep -q 'invalid geo-db' <<<"$expect_bad_rc" || fail "relative geo-db: $expect_bad_rc"
feed_verdict() { wrj list feed test "$1" | jq -r .verdict; }
nsenter --net="/run/netns/$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run url "$URL" \
	key-file "$CS/key" interval 1s geo-db "$TMP/geo.mmdb" >"$TMP/bouncer-geo.out" 2>&1 &
B_PID=$!
cscli_ decisions add --scope Country --value DE --duration 1h >/dev/null 2>&1 ||
	fail "cscli decisions add Country"
cscli_ decisions add --scope AS --value 64511 --duration 15s >/dev/null 2>&1 ||
	fail "cscli decisions add AS"
cscli_ decisions add --scope Country --value JP --duration 1h >/dev/null 2>&1 ||
	fail "cscli decisions add Country JP"
deny_de() { [ "$(feed_verdict 198.18.84.9)" = denied ]; }
deny_as() { [ "$(feed_verdict 2001:db8:80::2)" = denied ]; }
not() { ! "$@"; }
if ! wait_for 20 deny_de; then
	fail "Country DE not in force: $(wrj list feed show) $(tr '\n' ' ' <"$TMP/bouncer-geo.out")"
else
	wait_for 10 deny_as || fail "AS 64511 not in force: $(wrj list feed show)"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -eq 0 ] || fail "a source in DE: $got of 10 arrived"
	got=$(deliver 198.18.80.3 10)
	[ "$got" -ge 9 ] || fail "a source in no banned country: $got of 10 arrived"
	left=$(wrj list feed show | jq -r '.feeds[] | select(.name == "crowdsec-country-de") |
		.expires - now | floor')
	in_range "$left" 3000 3600 || fail "crowdsec-country-de ends in \"$left\" s, want ~1h"
	# JP matches nothing in the database: said, not a feed.
	[ "$(wrj list feed show | jq '[.feeds[] | select(.name == "crowdsec-country-jp")] | length')" = 0 ] ||
		fail "a feed for a country with no network"
	grep -q "cannot enforce Country JP" "$TMP/bouncer-geo.out" || fail "JP not reported"
	# The AS decision ends by itself (15 s): its feed goes (bounded: 40 s).
	wait_for 40 not deny_as || fail "the AS feed outlived its decision: $(wrj list feed show)"
	cscli_ decisions delete --value DE >/dev/null 2>&1 || fail "cscli decisions delete DE"
	wait_for 20 not deny_de ||
		fail "Country DE stayed after its decision was deleted: $(wrj list feed show)"
	got=$(deliver 198.18.80.4 10)
	[ "$got" -ge 9 ] || fail "after the deletion: $got of 10 arrived"
fi
kill -TERM "$B_PID" 2>/dev/null
wait "$B_PID"
B_PID=""
end_case crowdsec-country-and-as

# ---- 6. answers weir's own server makes: cut, with junk, many decisions ----
# A stand-in for the LAPI serving a file per path (/NAME/v1/decisions/stream
# answers $TMP/NAME.json whole, with its length): an answer cut in the
# middle, or with something after its object, applies nothing and says so;
# hundreds of decisions (written in batches) keep the rules one at a time
# would: an operator's permanent entry stays, a decision weir cannot read
# is counted failed.
FPORT=18419
cat >"$TMP/fake.py" <<'PYEOF'
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = os.path.join(sys.argv[1], self.path.split("/")[1] + ".json")
        body = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), H).serve_forever()
PYEOF
nsenter --net="/run/netns/$RCV" python3 "$TMP/fake.py" "$TMP" $FPORT >"$TMP/fake.out" 2>&1 &
F_PID=$!
trap 'stop_pid "$B_PID"; stop_pid "$CS_PID"; stop_pid "$F_PID"; cleanup; rm -rf "$TMP"' EXIT
dec() { printf '{"duration":"%s","id":1,"origin":"cscli","scenario":"manual","scope":"Ip","type":"ban","value":"%s"}' "$2" "$1"; }
{
	printf '{"deleted":[%s],"new":[' "$(dec 198.18.90.9 -1s)"
	for i in $(seq 0 299); do printf '%s,' "$(dec "198.18.91.$((i % 256))" 1h)"; done
	printf '%s,7]}\n' "$(dec 198.18.90.1 2h)"
} >"$TMP/many.json"
head -c 5000 "$TMP/many.json" >"$TMP/cut.json"
{ cat "$TMP/many.json"; echo '{}'; } >"$TMP/junk.json"
wait_for 20 sh -c "nsenter --net=/run/netns/$RCV curl -s -o /dev/null -m 2 http://127.0.0.1:$FPORT/many/x" ||
	fail "the stand-in server did not answer: $(cat "$TMP/fake.out")"

begin_case
for name in cut junk; do
	err=$(in_ns "$RCV" "$WEIR" --bpffs "$ROOT" crowdsec run url "http://127.0.0.1:$FPORT/$name" \
		key-file "$CS/key" once 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 1 ] || fail "$name: exit status $rc, want 1: $err"
	[[ "$err" == *"not a JSON object"*"nothing applied"* ]] || fail "$name: error does not say why: $err"
	unlisted 198.18.91.0/32 || fail "$name: a decision of an answer that is not whole became a deny entry"
done
end_case crowdsec-answer-not-whole

begin_case
wr deny add 198.18.91.5 >/dev/null || fail "deny add 198.18.91.5 (permanent)"
out=$(in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" crowdsec run url "http://127.0.0.1:$FPORT/many" \
	key-file "$CS/key" once 2>"$TMP/many.err") || fail "many: $out $(cat "$TMP/many.err")"
# 300 decisions on 256 addresses: every one added (the permanent one kept as it is), 1 failed.
[ "$(jq -r .added <<<"$out")" = 301 ] || fail "many: added $(jq -r .added <<<"$out"), want 301: $out"
[ "$(jq -r .failed <<<"$out")" = 1 ] || fail "many: failed $(jq -r .failed <<<"$out"), want 1: $out"
grep -q "cannot read" "$TMP/many.err" || fail "many: the unreadable decision was not reported: $(cat "$TMP/many.err")"
[ "$(wrj deny list | jq '[.[][] | select(.cidr | startswith("198.18.91."))] | length')" = 256 ] ||
	fail "many: not 256 entries in 198.18.91.0/24: $(wrj deny list)"
t=$(ttl_of deny 198.18.91.7/32)
in_range "$t" 3500 3600 || fail "many: 198.18.91.7 ttl \"$t\", want 3500..3600"
t=$(ttl_of deny 198.18.90.1/32)
in_range "$t" 7100 7200 || fail "many: 198.18.90.1 ttl \"$t\", want 7100..7200"
[ "$(ttl_of deny 198.18.91.5/32)" = null ] || fail "many: the permanent entry changed: ttl $(ttl_of deny 198.18.91.5/32)"
end_case crowdsec-many-decisions
stop_pid "$F_PID"
F_PID=""

exit 0
