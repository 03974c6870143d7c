#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Country and ASN sets from MaxMind DB files (`weir geo`, user/integrations/geo.c).
# The databases are written here by tools/mkmmdb.py, IPv6 and IPv4 ones with
# 24-, 28- and 32-bit records, and read back first by libmaxminddb's own
# mmdblookup, so the writer is checked by the reference reader before weir
# is checked against it. Expansions are compared with what was written as
# sets of addresses (weir may merge sibling prefixes). Bad tokens and files
# that are not MMDBs fail with status 1 and a clear error, never a crash
# (the sanitizer build, BUILD=build-san, runs the same cases).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
T=$(mktemp -d)
trap 'cleanup; rm -rf "$T"' EXIT

if ! command -v mmdblookup >/dev/null || ! command -v python3 >/dev/null; then
	not_ok geo "mmdblookup or python3 is missing (make test-deps installs mmdb-bin and python3)"
	exit 1
fi

# The small database: nested networks (a more specific one overrides its
# parent), a network with only registered_country, one with only an ASN,
# one as ip-location-db's databases have it (a top-level country_code only),
# IPv6 beside IPv4. Addresses from the documentation and benchmark ranges.
cat >"$T/small.json" <<'EOF'
{"networks": [
 {"network": "198.18.0.0/24", "country": "DE", "registered_country": "DE", "asn": 64496},
 {"network": "198.18.1.0/24", "country": "DE", "asn": 64497},
 {"network": "198.18.4.0/22", "country": "NL", "registered_country": "DE", "asn": 64496},
 {"network": "198.18.5.0/24", "country": "FR"},
 {"network": "198.18.128.0/17", "country": "DE"},
 {"network": "198.18.200.0/25", "country": "JP", "asn": 64499},
 {"network": "198.19.0.0/16", "registered_country": "DE"},
 {"network": "192.0.2.0/24", "asn": 64498},
 {"network": "203.0.113.7/32", "country": "NL"},
 {"network": "198.51.100.0/24", "data": {"country_code": "NL"}},
 {"network": "2001:db8::/32", "country": "DE", "asn": 64498},
 {"network": "2001:db8:1::/48", "country": "NL"},
 {"network": "2001:db8:ffff:ffff::/64", "registered_country": "NL"},
 {"network": "3fff::/20", "country": "JP", "asn": 64496}
]}
EOF
# What each query must expand to (as addresses: 198.18.0.0/23 is the same as its two /24s).
want_de="198.18.0.0/24 198.18.1.0/24 198.18.128.0/17 -198.18.200.0/25 198.19.0.0/16
	 2001:db8::/32 -2001:db8:1::/48 -2001:db8:ffff:ffff::/64"
want_nl="198.18.4.0/22 -198.18.5.0/24 203.0.113.7/32 198.51.100.0/24 2001:db8:1::/48 2001:db8:ffff:ffff::/64"
want_asn64496="198.18.0.0/24 198.18.4.0/22 -198.18.5.0/24 3fff::/20"
want_asn64498="192.0.2.0/24 2001:db8::/32 -2001:db8:1::/48 -2001:db8:ffff:ffff::/64"

# same_set WANT FILE: the prefixes in FILE (one a line) cover exactly the
# addresses of WANT (space-separated; "-P" takes P out), none twice, none an
# IPv4 alias in IPv6 (::ffff:0:0/96, 2001::/32, 2002::/16). Prints why not.
same_set() {
	python3 - "$1" "$2" <<'EOF'
import ipaddress, sys
want, path = sys.argv[1].split(), sys.argv[2]
got = [ipaddress.ip_network(l.strip()) for l in open(path) if l.strip()]
def ranges(nets):
    return sorted((int(n.network_address) + (0 if n.version == 4 else 1 << 128),
                   int(n.broadcast_address) + (0 if n.version == 4 else 1 << 128)) for n in nets)
for a, b in zip(ranges(got), ranges(got)[1:]):
    if b[0] <= a[1]:
        sys.exit(f"overlapping prefixes reported: {a} {b}")
aliases = [ipaddress.ip_network(a) for a in ("::ffff:0:0/96", "2001::/32", "2002::/16")]
for n in got:
    if n.version == 6 and any(n.subnet_of(a) or a.subnet_of(n) for a in aliases):
        sys.exit(f"an IPv4 alias reported: {n}")
plus = [ipaddress.ip_network(w) for w in want if not w.startswith("-")]
minus = [ipaddress.ip_network(w[1:]) for w in want if w.startswith("-")]
exp = []
for p in plus:
    parts = [p]
    for m in minus:
        parts = [x for q in parts for x in (q.address_exclude(m) if m.version == q.version and m.subnet_of(q) else [q])]
    exp += parts
def collapse(nets):
    return sorted(ipaddress.collapse_addresses([n for n in nets if n.version == 4])) + \
           sorted(ipaddress.collapse_addresses([n for n in nets if n.version == 6]))
if collapse(got) != collapse(exp):
    sys.exit("got " + " ".join(map(str, collapse(got))) + "; want " + " ".join(map(str, collapse(exp))))
EOF
}

# geo DB ARGS...: weir geo, stdout to $T/out, stderr to $T/err; its status.
geo() { "$WEIR" geo "$@" >"$T/out" 2>"$T/err"; }

# lookup DB IP PATH...: what mmdblookup finds there, the value alone (or "none").
lookup() {
	local db=$1 ip=$2 out; shift 2
	# Not found, or a path the record lacks, is an error to mmdblookup: "none" here.
	out=$(mmdblookup --file "$db" --ip "$ip" "$@" 2>&1)
	out=$(grep -oE '"[^"]*" <utf8_string>|[0-9]+ <uint32>' <<<"$out" | head -1 | sed -E 's/"//g; s/ <.*//')
	echo "${out:-none}"
}

# Every record size, both IP versions; mmdblookup reads each back.
begin_case
n=0
for rs in 24 28 32; do
	for v in 6 4; do
		db=$T/small-v$v-$rs.mmdb
		if [ "$v" = 4 ]; then
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
d["networks"]=[e for e in d["networks"] if ":" not in e["network"]]; json.dump(d, sys.stdout)' \
				"$T/small.json" >"$T/small4.json"
			src=$T/small4.json
		else
			src=$T/small.json
		fi
		python3 tools/mkmmdb.py --ip-version "$v" --record-size "$rs" "$src" "$db" 2>"$T/mk" ||
			{ fail "mkmmdb IPv$v $rs-bit: $(cat "$T/mk")"; continue; }
		checks="198.18.0.9:country:DE 198.18.5.200:country:FR 198.18.6.1:country:NL
			198.18.200.1:country:JP 198.18.200.129:country:DE 198.19.3.4:registered_country:DE
			192.0.2.1:autonomous_system_number:64498 198.18.2.1:country:none
			203.0.113.7:country:NL 203.0.113.8:country:none 198.51.100.9:country_code:NL"
		[ "$v" = 6 ] && checks="$checks ::ffff:198.18.5.1:country:FR 2002:c612:0401:::country:NL
			2001:0:c612:c801:::country:JP 2001:db8:1::5:country:NL 2001:db8:2::1:country:DE
			2001:db8::1:autonomous_system_number:64498 3fff:0fff::1:country:JP 3fff:1000::1:country:none"
		for c in $checks; do
			ip=${c%:*:*}; rest=${c##"$ip":}; key=${rest%%:*}; want=${rest#*:}
			n=$((n + 1))
			if [ "$key" = autonomous_system_number ] || [ "$key" = country_code ]; then
				got=$(lookup "$db" "$ip" "$key")
			else
				got=$(lookup "$db" "$ip" "$key" iso_code)
			fi
			[ "$got" = "$want" ] || fail "IPv$v $rs-bit: mmdblookup $ip $key: $got, want $want"
		done
	done
done
echo "# $n mmdblookup checks over 6 databases"
[ "$n" -ge 60 ] || fail "only $n lookups made"
end_case geo-mkmmdb-read-by-mmdblookup

# country/asn expansions, against every database.
for rs in 24 28 32; do
	for v in 6 4; do
		db=$T/small-v$v-$rs.mmdb
		[ -f "$db" ] || continue
		begin_case
		for q in "country DE:$want_de" "country nl:$want_nl" "asn 64496:$want_asn64496" \
			 "asn AS64498:$want_asn64498" "country NL asn 64496:$want_nl $want_asn64496"; do
			words=${q%%:*}; want=${q#*:}
			# The IPv4 database holds the IPv4 networks only.
			[ "$v" = 4 ] && want=$(tr ' \t' '\n\n' <<<"$want" | grep -v ':' | tr '\n' ' ')
			# shellcheck disable=SC2086
			geo "$db" $words || { fail "$words: $(cat "$T/err")"; continue; }
			why=$(same_set "$want" "$T/out" 2>&1) || fail "$words: $why"
			grep -qx "$(grep -c . "$T/out") prefix\(es\)\?" "$T/err" ||
				fail "$words: stderr does not end with the count: $(cat "$T/err")"
		done
		end_case "geo-expand-ipv$v-$rs-bit"
	done
done

# Merging: DE's two adjacent /24s come back as one /23; nothing under ::ffff.
begin_case
geo "$T/small-v6-28.mmdb" country DE || fail "$(cat "$T/err")"
grep -qx '198.18.0.0/23' "$T/out" || fail "198.18.0.0/24 and 198.18.1.0/24 not merged: $(head -3 "$T/out" | tr '\n' ' ')"
grep -qx '198.18.128.0/18' "$T/out" || fail "198.18.128.0/18 (DE around the JP /25) missing"
grep -qE '^(::ffff:|2002:|2001::|2001:0:)' "$T/out" && fail "an alias of IPv4 reported: $(grep -E '^(::ffff:|2002:)' "$T/out" | head -1)"
end_case geo-merged-siblings-no-aliases

# Every network of the database at once: each IPv4 address exactly once.
begin_case
geo "$T/small-v6-24.mmdb" country DE,NL,FR,JP asn 64498 || fail "$(cat "$T/err")"
why=$(same_set "198.18.0.0/23 198.18.4.0/22 198.18.128.0/17 198.19.0.0/16 192.0.2.0/24 203.0.113.7/32
	198.51.100.0/24 2001:db8::/32 3fff::/20" "$T/out" 2>&1) || fail "$why"
[ "$(grep -c '\.' "$T/out")" -ge 5 ] || fail "only $(grep -c '\.' "$T/out") IPv4 prefixes"
end_case geo-ipv4-once

# registered_country counts where a network has no country; country wins where it has
# both; a top-level country_code where there is neither.
begin_case
geo "$T/small-v6-28.mmdb" country DE || fail "$(cat "$T/err")"
grep -qx '198.19.0.0/16' "$T/out" || fail "198.19.0.0/16 (registered_country DE only) missing"
grep -q '^198\.18\.4\.' "$T/out" && fail "198.18.4.0/22 (country NL, registered DE) reported for DE"
geo "$T/small-v6-28.mmdb" country NL || fail "$(cat "$T/err")"
grep -qx '2001:db8:ffff:ffff::/64' "$T/out" || fail "2001:db8:ffff:ffff::/64 (registered NL) missing"
grep -qx '198.51.100.0/24' "$T/out" || fail "198.51.100.0/24 (country_code NL) missing"
end_case geo-registered-country

begin_case
geo "$T/small-v6-28.mmdb" country ZZ || fail "unknown country failed: $(cat "$T/err")"
[ -s "$T/out" ] && fail "unknown country printed: $(head -2 "$T/out")"
grep -qx '0 prefixes' "$T/err" || fail "no count: $(cat "$T/err")"
geo "$T/small-v6-28.mmdb" asn 4294967295 || fail "unknown ASN failed: $(cat "$T/err")"
[ -s "$T/out" ] && fail "unknown ASN printed: $(head -2 "$T/out")"
"$WEIR" -j geo "$T/small-v6-28.mmdb" country ZZ 2>/dev/null | jq -e '. == []' >/dev/null ||
	fail "-j of nothing is not []"
end_case geo-unknown-is-empty

begin_case
"$WEIR" geo "$T/small-v6-32.mmdb" country DE asn 64499 -j >"$T/json" 2>/dev/null || fail "-j failed"
geo "$T/small-v6-32.mmdb" country DE asn 64499
[ "$(jq -r '.[]' "$T/json" 2>&1)" = "$(cat "$T/out")" ] || fail "-j differs from the text output"
[ "$(jq 'length' "$T/json")" -ge 5 ] || fail "-j array: $(head -c 200 "$T/json")"
out=$("$WEIR" -j geo "$T/nothere.mmdb" country DE 2>/dev/null)
jq -e '.error | test("nothere")' <<<"$out" >/dev/null || fail "-j error not {\"error\"}: $out"
end_case geo-json

# bad WORD ARGS...: status 1, WORD named in the error.
bad() {
	local word=$1 out; shift
	expect_fail "geo $*" "$WEIR" geo "$@"
	out=$("$WEIR" geo "$@" 2>&1 >/dev/null)
	[[ "$out" == *"$word"* ]] || fail "geo $*: the error does not name \"$word\": $out"
}
begin_case
db=$T/small-v6-28.mmdb
for tok in D DEU de1 D1 "D E" "DÜ"; do bad "\"$tok\"" "$db" country "$tok"; done
bad "\"DEU\"" "$db" country "DE,DEU"
bad "empty country" "$db" country ""
bad "empty country" "$db" country "DE,,NL"
bad "empty country" "$db" country "DE,"
for tok in AS ASx 4294967296 0 -1 64496x " 1" 1.5; do bad "\"$tok\"" "$db" asn "$tok"; done
bad "empty ASN" "$db" asn ""
bad "country" "$db" country
bad "asn" "$db" asn
bad "country" "$db" country DE country NL
bad "frobnicate" "$db" country DE frobnicate
bad "country or asn" "$db"
bad "database" country DE
end_case geo-bad-tokens

# Files that are not MMDBs, or not whole ones: a clear error, status 1, no crash.
begin_case
echo "198.18.0.0/24 DE" >"$T/text.mmdb"
: >"$T/empty.mmdb"
sz=$(stat -c %s "$T/small-v6-28.mmdb")
head -c $((sz / 2)) "$T/small-v6-28.mmdb" >"$T/half.mmdb"
head -c $((sz - 20)) "$T/small-v6-28.mmdb" >"$T/cut-meta.mmdb"
python3 tools/mkmmdb.py --corrupt loop "$T/small.json" "$T/loop.mmdb" 2>/dev/null
python3 tools/mkmmdb.py --corrupt data "$T/small.json" "$T/outside.mmdb" 2>/dev/null
# One /32 in an IPv4 tree, the last node's left record (the /32's) turned into the root:
# a node below the address's last bit.
echo '{"ip_version": 4, "networks": [{"network": "198.18.0.2/32", "country": "DE"}]}' >"$T/deep.json"
python3 tools/mkmmdb.py --corrupt loop "$T/deep.json" "$T/deep.mmdb" 2>/dev/null
for c in "text.mmdb:is not a MaxMind DB file" "empty.mmdb:not a MaxMind DB file" \
	 "half.mmdb:is not a MaxMind DB file" "cut-meta.mmdb:MaxMind DB" "loop.mmdb:corrupt search tree" \
	 "outside.mmdb:outside the data section" "deep.mmdb:deeper than the address" \
	 "missing.mmdb:No such file" ".:is a directory"; do
	f=$T/${c%%:*}; want=${c#*:}
	expect_fail "$f" "$WEIR" geo "$f" country DE
	out=$("$WEIR" geo "$f" country DE 2>&1 >/dev/null)
	[[ "$out" == *"$want"* ]] || fail "${c%%:*}: \"$want\" not in: $out"
	[[ "$out" == *"${c%%:*}"* || "${c%%:*}" == . ]] || fail "${c%%:*}: the file is not named: $out"
done
end_case geo-not-an-mmdb

# A large database: 200000 networks, a fifth of them in each country.
begin_case
python3 tools/mkmmdb.py --generate 200000 "$T/big.mmdb" 2>"$T/mk" || fail "mkmmdb: $(cat "$T/mk")"
[ "$(lookup "$T/big.mmdb" 1.0.2.9 country iso_code)" = NL ] || fail "mmdblookup of the large database"
t0=$(date +%s%N)
geo "$T/big.mmdb" country DE,NL,FR,US,JP || fail "$(cat "$T/err")"
t1=$(date +%s%N)
[ "$(grep -c . "$T/out")" -eq 200000 ] || fail "all five countries: $(grep -c . "$T/out") prefixes, want 200000"
echo "# 200000 networks expanded in $(((t1 - t0) / 1000000)) ms ($(grep -o '[0-9]* nodes' "$T/mk"))"
geo "$T/big.mmdb" country DE || fail "$(cat "$T/err")"
[ "$(grep -c . "$T/out")" -eq 40000 ] || fail "DE: $(grep -c . "$T/out") prefixes, want 40000"
[ "$(head -1 "$T/out")" = 1.0.0.0/24 ] || fail "DE's first: $(head -1 "$T/out")"
grep -qx '1.0.2.0/24' "$T/out" && fail "1.0.2.0/24 (NL) among DE's"
geo "$T/big.mmdb" asn 64496 || fail "$(cat "$T/err")"
[ "$(grep -c . "$T/out")" -eq 20000 ] || fail "asn 64496: $(grep -c . "$T/out") prefixes, want 20000"
end_case geo-large

# A database a Debian package ships, where one is installed (bookworm has none).
begin_case
real=
for f in /usr/share/GeoIP/dbip-country-lite.mmdb /usr/share/GeoIP/dbip-country.mmdb \
	 /usr/share/GeoIP/GeoLite2-Country.mmdb /var/lib/GeoIP/GeoLite2-Country.mmdb; do
	[ -f "$f" ] && { real=$f; break; }
done
if [ -z "$real" ]; then
	skip geo-packaged-mmdb "no packaged country MMDB installed (e.g. Debian's dbip-country-lite)"
else
	geo "$real" country DE || fail "$(cat "$T/err")"
	n=$(grep -c . "$T/out")
	echo "# $real: DE is $n prefixes"
	[ "$n" -ge 100 ] || fail "DE: only $n prefixes"
	for p in $(awk 'NR % 97 == 1' "$T/out" | head -20); do
		ip=${p%/*}
		c=$(lookup "$real" "$ip" country iso_code)
		[ "$c" = none ] && c=$(lookup "$real" "$ip" registered_country iso_code)
		[ "$c" = none ] && c=$(lookup "$real" "$ip" country_code)
		[ "$c" = DE ] || fail "$p: mmdblookup says $c"
	done
	end_case geo-packaged-mmdb
fi
