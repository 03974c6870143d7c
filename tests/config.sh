#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The config file through `weir check`: the shipped example is valid; each
# kind of error is reported at the FILE:LINE:COLUMN written below by hand
# from each file (never taken from the parser's output); every error of a
# file is reported; -j parses; and a rule in the file is the rule the CLI
# makes of the same words.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
T=$(mktemp -d)
trap 'cleanup; rm -rf "$T"' EXIT

# check_in DIR ARGS...: weir ARGS, run in DIR so paths in errors are short.
check_in() {
	local dir=$1; shift
	(cd "$dir" && "$WEIR" "$@")
}

# expect_errors NAME FILE 'LOC|REASON' ...: `weir check FILE`, run in $T,
# exits 1, prints nothing on stdout and exactly these errors on stderr, in
# this order: each at LOC (FILE:LINE:COLUMN) with REASON in its text.
expect_errors() {
	local name=$1 file=$2; shift 2
	local out err rc want got i line
	begin_case
	out=$(check_in "$T" check "$file" 2>"$T/stderr")
	rc=$?
	err=$(cat "$T/stderr")
	[ "$rc" -eq 1 ] || fail "exit status $rc, want 1"
	[ -z "$out" ] || fail "stdout not empty: $out"
	want=$(for e in "$@"; do echo "${e%%|*}"; done)
	got=$(echo "$err" | cut -d: -f1-3)
	[ "$got" == "$want" ] || fail "errors at [$(echo $got)], want [$(echo $want)]: $err"
	i=1
	for e in "$@"; do
		line=$(echo "$err" | sed -n "${i}p")
		[[ "$line" == "${e%%|*}: "*"${e#*|}"* ]] ||
			fail "error $i is \"$line\", want \"${e%%|*}: ...${e#*|}...\""
		i=$((i + 1))
	done
	end_case "config-$name"
}

# preset reflection: a rule without limits (its default drops all it matches),
# with limits, and its bad input named where it stands.
cat >"$T/preset.yaml" <<'EOF'
rules:
  - name: reflect
    preset: reflection
  - name: reflect-limited
    preset: reflection
    limits:
      - { rate: 100pps, per: all }
EOF
begin_case
j=$(check_in "$T" -j check preset.yaml) || fail "check preset.yaml failed: $j"
[ "$(jq -c '[.rules[] | [.name, .preset, .unsolicited, (.limits | length), .proto]]' <<<"$j")" = \
  '[["reflect","reflection","drop",0,"udp"],["reflect-limited","reflection","limited",1,"udp"]]' ] ||
	fail "-j: $(jq -c .rules <<<"$j")"
end_case config-preset-reflection
cat >"$T/preset-bad.yaml" <<'EOF'
rules:
  - name: a
    preset: nosuch
  - name: b
    preset: reflection
    proto: tcp
EOF
expect_errors preset-bad preset-bad.yaml 'preset-bad.yaml:3:13|invalid preset (reflection) "nosuch"' \
	'preset-bad.yaml:4:5|preset reflection matches UDP'

# The shipped example, from the top of the tree and from elsewhere (its deny
# file is found next to it either way).
begin_case
out=$("$WEIR" check etc/weir.yaml 2>&1) || fail "check etc/weir.yaml failed: $out"
[ "$out" == "etc/weir.yaml: valid: 4 rules, 2 interfaces, 5 deny, 1 allow" ] ||
	fail "summary: $out"
out=$(check_in / check "$PWD/etc/weir.yaml" 2>&1) || fail "from /: $out"
j=$("$WEIR" -j check etc/weir.yaml) || fail "-j failed"
[ "$(echo "$j" | jq -r '.valid, (.errors | length), ([.rules[].name] | join(" ")),
	.deny_files[0], .tables.keys, .fail, .malformed, .metrics, .events.interval_s, .events.lines' |
	paste -sd' ')" == "true 0 ssh dns web ping etc/deny.txt 1048576 open drop 127.0.0.1:9464 10 20" ] ||
	fail "-j does not say what the example says: $j"
end_case config-example

# check -j prints every section of the file from the tables that read it: each
# top-level key of the annotated example (taken from the file itself, so
# the list cannot drift) is in the output, and values are what the file says.
begin_case
ex=etc/weir.yaml
j=$("$WEIR" -j check "$ex") || fail "-j check $ex failed"
top=$(awk '/^[a-z-]+:/ { sub(/:.*/, ""); print }' "$ex")
[ "$(echo "$top" | grep -c .)" -ge 12 ] || fail "only $(echo "$top" | grep -c .) top-level keys in $ex"
for k in $top; do
	echo "$j" | jq -e --arg k "${k//-/_}" 'has($k) and .[$k] != null' >/dev/null ||
		fail "-j check prints no \"${k//-/_}\" for $k in $ex"
done
# val SECTION KEY: the value of KEY in SECTION (a block or a { flow } mapping)
val() {
	awk -v sec="$1" -v key="$2" '
		/^[a-z-]+:/ { on = ($1 == sec ":") }
		on { line = $0; sub(/#.*/, "", line)
		     if (match(line, "(^ +|[{,] *)" key ": *[^,} ]+")) {
			v = substr(line, RSTART, RLENGTH); sub(".*" key ": *", "", v); print v; exit } }' "$ex"
}
# 1s, 250ms, 2m as milliseconds
ms() { case $1 in *ms) echo "${1%ms}" ;; *s) echo $((${1%s} * 1000)) ;; *m) echo $((${1%m} * 60000)) ;; esac; }
want=$(printf '%s ' "$(ms "$(val shedding interval)")" "$(val shedding default-class)" \
	"$(($(ms "$(val shedding delay)") / 1000))" "$(val capacity rate)" \
	"$(awk -v r="$(val capacity reserve)" 'BEGIN { sub(/%/, "", r); print r / 100 }')" \
	"$(($(ms "$(val events interval)") / 1000))" "$(val events lines)" "$(val tables keys)")
got=$(echo "$j" | jq -r '.shedding.interval_ms, .shedding.default_class, .shedding.curve.delay_s,
	.capacity.rate[0], .capacity.reserve, .events.interval_s, .events.lines, .tables.keys' |
	paste -sd' ')
[ "$got " == "$want" ] || fail "-j check says \"$got\", $ex says \"$want\""
[ "$(echo "$j" | jq '.shedding.signals | length')" == \
	"$(awk '/^shedding:/ { on = 1; next } /^[a-z]/ { on = 0 } on && /^ +- \{/' "$ex" | grep -c .)" ] ||
	fail "-j check's signals are not the file's: $(echo "$j" | jq -c .shedding.signals)"
# Without the sections: null, and the defaults when a section says nothing of them.
printf 'shedding: { signals: [ { cpu: true } ] }\n' >"$T/shed-defaults.yaml"
j=$(check_in "$T" -j check shed-defaults.yaml)
[ "$(echo "$j" | jq -c '[.shedding.interval_ms, .shedding.curve, .shedding.default_class, .capacity]')" == \
	'[1000,{"good":0.7,"bad":0.8,"delay_s":28,"ramp_s":120},3,null]' ] ||
	fail "shedding defaults: $(echo "$j" | jq -c '[.shedding, .capacity]')"
end_case config-json-every-section

begin_case
: >"$T/empty.yaml"
printf '# nothing but a comment\n\n' >"$T/comment.yaml"
for f in empty comment; do
	out=$(check_in "$T" check $f.yaml 2>&1) || fail "$f.yaml refused: $out"
	[ "$out" == "$f.yaml: valid: 0 rules, 0 interfaces, 0 deny, 0 allow" ] || fail "$f: $out"
done
printf -- '- a\n- b\n' >"$T/list.yaml"
out=$(check_in "$T" check list.yaml 2>&1) && fail "a list at the top level is valid"
[[ "$out" == "list.yaml:1:1: the top level must be a mapping"* ]] || fail "top level: $out"
end_case config-empty

begin_case
out=$("$WEIR" check "$T/nonexistent.yaml" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc for a missing file"
[[ "$out" == *"cannot read $T/nonexistent.yaml: No such file or directory"* ]] || fail "$out"
expect_fail "no argument" "$WEIR" check
end_case config-unreadable

cat >"$T/syntax.yaml" <<'EOF'
# a comment
interfaces: []
fail: open: closed
EOF
expect_errors syntax syntax.yaml 'syntax.yaml:3:11|syntax error: mapping values are not allowed'

printf 'rules:\n\t- name: dns\n' >"$T/tab.yaml"
expect_errors syntax-tab tab.yaml 'tab.yaml:2:1|syntax error: found character that cannot start'

cat >"$T/two.yaml" <<'EOF'
fail: open
---
fail: closed
EOF
expect_errors two-documents two.yaml 'two.yaml:3:1|one YAML document'

cat >"$T/unknown-top.yaml" <<'EOF'
rules: []
colour: blue
EOF
expect_errors unknown-key-top unknown-top.yaml 'unknown-top.yaml:2:1|unknown key "colour"'

# A whole family denied, inline or in a deny file: never from a config.
printf 'deny: [ "198.18.0.0/15", "0.0.0.0/0" ]\ndeny-files: [ all6.txt ]\nrules:\n  - { name: a, limits: [ { rate: 10pps } ] }\n' >"$T/denyall.yaml"
printf '# everything\n::/0\n' >"$T/all6.txt"
expect_errors deny-whole-family denyall.yaml \
	'denyall.yaml:1:26|deny 0.0.0.0/0 would drop every IPv4 packet' \
	'all6.txt:2:1|deny ::/0 would drop every IPv6 packet'
# A byte limit whose burst is under one full-size packet could never pass one.
printf 'rules:\n  - { name: a, limits: [ { rate: 1mbit, burst: 100 } ] }\n' >"$T/smallburst.yaml"
expect_errors byte-burst-under-a-packet smallburst.yaml \
	'smallburst.yaml:2:34|burst 100 is smaller than one full-size packet'

# The further match fields: each bad value at its place, naming its keyword.
cat >"$T/fields.yaml" <<'EOF'
rules:
  - { name: a, proto: udp, ttl: 9-3, limits: [ { rate: 10pps } ] }
  - { name: b, proto: udp, payload: [ "1501=1" ], limits: [ { rate: 10pps } ] }
  - { name: c, proto: udp, payload: "0=1 4=1 8=1 12=1 16=1", limits: [ { rate: 10pps } ] }
  - { name: d, proto: udp, payload: [ "4/0xff" ], limits: [ { rate: 10pps } ] }
  - { name: e, dst: [ 198.18.0.0/33 ], limits: [ { rate: 10pps } ] }
  - { name: f, family: ipv4, dst: "2001:db8::1", limits: [ { rate: 10pps } ] }
  - { name: g, sport: 90-80, proto: tcp, limits: [ { rate: 10pps } ] }
  - { name: h, frag: sometimes, limits: [ { rate: 10pps } ] }
EOF
expect_errors fields fields.yaml \
	'fields.yaml:2:33|empty ttl range "9-3"' \
	'fields.yaml:3:39|payload offset 1501' \
	'fields.yaml:4:55|payload takes at most 4 terms' \
	'fields.yaml:5:39|payload term "4/0xff" needs =VALUE' \
	'fields.yaml:6:23|invalid dst "198.18.0.0/33"' \
	'fields.yaml:7:5|dst prefix 1 is IPv6 but the rule is ipv4' \
	'fields.yaml:8:23|empty sport range "90-80"' \
	'fields.yaml:9:22|invalid frag "sometimes"'

cat >"$T/unknown-rule.yaml" <<'EOF'
rules:
  - name: dns
    proto: udp
    dprot: 53
    limits:
      - rate: 10pps
EOF
expect_errors unknown-key-rule unknown-rule.yaml 'unknown-rule.yaml:4:5|unknown key "dprot" in a rule'

cat >"$T/unknown-limit.yaml" <<'EOF'
rules:
  - name: dns
    limits:
      - { rate: 10pps, brust: 5 }
EOF
expect_errors unknown-key-limit unknown-limit.yaml \
	'unknown-limit.yaml:4:24|unknown key "brust" in a limit'

cat >"$T/dup-key.yaml" <<'EOF'
fail: open
malformed: drop
fail: closed
EOF
expect_errors duplicate-key dup-key.yaml 'dup-key.yaml:3:1|duplicate key "fail"'

cat >"$T/type-map.yaml" <<'EOF'
rules:
  - name: dns
    proto: { udp: 1 }
    limits: [ { rate: 10pps } ]
EOF
expect_errors wrong-type-mapping type-map.yaml \
	'type-map.yaml:3:12|proto must be a single value, not a mapping'

cat >"$T/type-str.yaml" <<'EOF'
deny: 203.0.113.0/24
tables: [ 1 ]
EOF
expect_errors wrong-type-list type-str.yaml \
	'type-str.yaml:1:7|deny must be a list, not "203.0.113.0/24"' \
	'type-str.yaml:2:9|tables must be a mapping, not a list'

cat >"$T/cidr-deny.yaml" <<'EOF'
deny:
  - 203.0.113.0/24
  - 203.0.113.0/33
allow: [ 2001:db8::1/64 ]
EOF
expect_errors bad-cidr-deny cidr-deny.yaml \
	'cidr-deny.yaml:3:5|invalid CIDR "203.0.113.0/33"' \
	'cidr-deny.yaml:4:10|invalid CIDR "2001:db8::1/64"'

cat >"$T/cidr-src.yaml" <<'EOF'
rules:
  - name: web
    src: 198.18.0.1/15
    limits: [ { rate: 1kpps } ]
EOF
expect_errors bad-cidr-rule-src cidr-src.yaml 'cidr-src.yaml:3:10|invalid CIDR "198.18.0.1/15"'

cat >"$T/rate.yaml" <<'EOF'
rules:
  - name: dns
    limits:
      - rate: 10xpps
EOF
expect_errors bad-rate rate.yaml 'rate.yaml:4:15|invalid rate "10xpps"'

cat >"$T/burst.yaml" <<'EOF'
rules:
  - name: dns
    limits:
      - rate: 10pps
        burst: 0
EOF
expect_errors bad-burst burst.yaml 'burst.yaml:5:16|invalid burst "0"'

# Each key of a limit is judged in its own limit: a burst against the
# limit's own rate (so a burst the CLI takes is valid here too), and an
# option of a connection limit as one.
printf 'rules:\n  - { name: a, limits: [ { rate: 1mpps, burst: 1000000000000 } ] }\n' >"$T/bigburst.yaml"
begin_case
out=$(check_in "$T" check bigburst.yaml 2>&1) || fail "a burst that limit 1mpps takes is refused: $out"
end_case config-burst-judged-by-its-own-rate
cat >"$T/conns-options.yaml" <<'EOF'
rules:
  - name: c
    proto: tcp
    limits: [ { conns: 5, burst: 3, algo: fixed-window } ]
EOF
expect_errors conns-options conns-options.yaml \
	'conns-options.yaml:4:27|"burst" must follow a limit RATE' \
	'conns-options.yaml:4:43|invalid algo (token-bucket, fixed-window, sliding-window) "fixed-window"'

cat >"$T/dup-rule.yaml" <<'EOF'
rules:
  - name: dns
    limits: [ { rate: 10pps } ]
  - name: dns
    limits: [ { rate: 20pps } ]
EOF
expect_errors duplicate-rule dup-rule.yaml \
	'dup-rule.yaml:4:11|duplicate rule name "dns" (first at line 2)'

# 257 rules, one per line after "rules:", each on a port of its own: the
# 257th is on line 258.
{
	echo "rules:"
	for i in $(seq 1 257); do
		echo "  - { name: r$i, proto: tcp, dport: $((10000 + i)), limits: [ { rate: 1pps } ] }"
	done
} >"$T/many.yaml"
expect_errors too-many-rules many.yaml 'many.yaml:258:5|too many rules (at most 256)'
head -n 257 "$T/many.yaml" >"$T/256.yaml"
begin_case
out=$(check_in "$T" check 256.yaml 2>&1) || fail "256 rules refused: $out"
end_case config-256-rules
# At most 64 rules may meet one packet (the data path's rule index): 64
# rules without a port are accepted; a 65th for TCP is refused, saying
# how many rules would meet which packets; 65 on one port too, naming it.
{
	echo "rules:"
	for i in $(seq 1 64); do echo "  - { name: r$i, limits: [ { rate: 1pps } ] }"; done
} >"$T/64.yaml"
begin_case
out=$(check_in "$T" check 64.yaml 2>&1) || fail "64 port-less rules refused: $out"
end_case config-64-rules-meet-every-packet
{
	cat "$T/64.yaml"
	echo "  - { name: r65, proto: tcp, limits: [ { rate: 1pps } ] }"
} >"$T/65-tcp.yaml"
expect_errors rules-over-one-cell 65-tcp.yaml \
	'65-tcp.yaml:2:3|65 rules may match every TCP packet, and the data path judges a packet by at most 64'
{
	echo "rules:"
	for i in $(seq 1 65); do echo "  - { name: r$i, proto: udp, dport: 53, limits: [ { rate: 1pps } ] }"; done
	for i in $(seq 66 200); do echo "  - { name: r$i, proto: udp, dport: $((20000 + i)), limits: [ { rate: 1pps } ] }"; done
} >"$T/65-port.yaml"
expect_errors rules-over-one-port 65-port.yaml \
	'65-port.yaml:2:3|rules may match one UDP packet to port 53, and the data path judges a packet by at most 64'


cat >"$T/limits.yaml" <<'EOF'
rules:
  - name: many
    limits:
      - { rate: 1pps }
      - { rate: 2pps }
      - { rate: 3pps }
      - { rate: 4pps }
      - { rate: 5pps }
  - name: none
    limits: []
  - name: flags
    proto: udp
    tcp-flags: syn
    limits: [ { burst: 5 } ]
  - name: flags2
    proto: udp
    tcp-flags: syn
    limits: [ { rate: 1pps, per: "src/24 limit" } ]
  - name: flags3
    proto: udp
    tcp-flags: syn
    limits: [ { rate: 1pps } ]
EOF
expect_errors rule-limits limits.yaml \
	'limits.yaml:8:9|too many limits (at most 4 per rule)' \
	'limits.yaml:10:13|a rule needs at least one limit' \
	'limits.yaml:14:15|a limit needs a rate' \
	'limits.yaml:18:42|invalid per key "limit"' \
	'limits.yaml:19:5|tcp-flags needs proto tcp'

cat >"$T/mode.yaml" <<'EOF'
interfaces:
  - name: veth0
    mode: turbo
  - name: veth1
    mode: tc
  - name: veth1
EOF
expect_errors bad-mode mode.yaml \
	'mode.yaml:3:11|invalid mode "turbo" (native, generic or tc)' \
	'mode.yaml:6:11|duplicate interface "veth1" (first at line 4)'

# tc-hook, as `weir attach` takes it (the same parser): applied, and printed
# by check -j with its default; a bad value, or one on an XDP mode, refused
# at the key.
cat >"$T/tchook.yaml" <<'EOF'
interfaces:
  - name: veth0
    mode: tc
    tc-hook: clsact
  - name: veth1
    mode: tc
  - name: veth2
EOF
begin_case
j=$(check_in "$T" -j check tchook.yaml) || fail "refused: $j"
[ "$(echo "$j" | jq -r '[.interfaces[] | "\(.name):\(.mode):\(.tc_hook)"] | join(" ")')" == \
	"veth0:tc:clsact veth1:tc:auto veth2:native:auto" ] || fail "interfaces: $j"
end_case config-tc-hook
cat >"$T/tchook2.yaml" <<'EOF'
interfaces:
  - name: veth0
    mode: tc
    tc-hook: tcp
  - name: veth1
    tc-hook: tcx
EOF
expect_errors bad-tc-hook tchook2.yaml \
	'tchook2.yaml:4:14|invalid tc-hook "tcp" (auto, tcx or clsact)' \
	'tchook2.yaml:6:14|tc-hook applies to mode tc, not to XDP (mode native)'

# A deny file next to the config, found from another directory.
mkdir -p "$T/sub"
cat >"$T/sub/deny.txt" <<'EOF'
# blocked
203.0.113.0/24

not-a-cidr   # typo
  198.51.100.0/24
EOF
cat >"$T/sub/denyfile.yaml" <<'EOF'
deny-files: [ deny.txt ]
EOF
expect_errors bad-deny-file-line sub/denyfile.yaml 'sub/deny.txt:4:1|invalid CIDR "not-a-cidr"'

cat >"$T/nofile.yaml" <<'EOF'
deny-files:
  - /nonexistent/weir-deny.txt
EOF
expect_errors missing-deny-file nofile.yaml \
	'nofile.yaml:2:5|cannot read deny file /nonexistent/weir-deny.txt: No such file'

cat >"$T/listen.yaml" <<'EOF'
metrics:
  listen: "localhost:9464"
EOF
expect_errors bad-metrics-listen listen.yaml 'listen.yaml:2:11|invalid listen "localhost:9464"'
cat >"$T/listen2.yaml" <<'EOF'
metrics: { listen: "127.0.0.1:70000" }
EOF
expect_errors bad-metrics-port listen2.yaml 'listen2.yaml:1:20|invalid listen "127.0.0.1:70000"'

begin_case
printf 'metrics: { listen: "[::1]:9464" }\n' >"$T/v6.yaml"
[ "$(check_in "$T" -j check v6.yaml | jq -r .metrics)" == "[::1]:9464" ] || fail "[::1]:9464"
printf 'metrics: off\n' >"$T/off.yaml"
[ "$(check_in "$T" -j check off.yaml | jq -r .metrics)" == "null" ] || fail "metrics: off"
printf 'metrics: false\n' >"$T/false.yaml"
[ "$(check_in "$T" -j check false.yaml | jq -r .metrics)" == "null" ] || fail "metrics: false"
printf 'events: { interval: 1m, lines: 0 }\n' >"$T/events.yaml"
[ "$(check_in "$T" -j check events.yaml | jq -c .events)" == '{"interval_s":60,"lines":0}' ] ||
	fail "events"
end_case config-metrics-events

cat >"$T/values.yaml" <<'EOF'
tables: { keys: 0 }
fail: sometimes
malformed: [ drop ]
events: { interval: 1500ms, lines: -1 }
EOF
expect_errors bad-values values.yaml \
	'values.yaml:1:17|invalid keys "0"' \
	'values.yaml:2:7|invalid fail "sometimes" (open or closed)' \
	'values.yaml:3:12|malformed must be a single value, not a list' \
	'values.yaml:4:21|invalid interval "1500ms"' \
	'values.yaml:4:36|invalid lines "-1"'

# The limit keys: a bad one is named with its place, as on the CLI.
cat >"$T/keys.yaml" <<'EOF'
rules:
  - name: k
    limits:
      - { rate: 5pps, per: flow/24 }
      - { rate: 5pps, per: dst/33 }
EOF
expect_errors keys keys.yaml \
	'keys.yaml:4:28|invalid per flow key' \
	'keys.yaml:5:28|invalid IPv4 per dst prefix "dst/33"'

# Several errors in one file: all of them, in the file's order.
cat >"$T/several.yaml" <<'EOF'
interfaces:
  - name: eth0
    mode: fast
rules:
  - name: a
    proto: udpp
    dport: 99999
    limits:
      - { rate: 5pps, per: src/40 }
  - name: a
    limits: [ { rate: 1pps } ]
deny: [ 198.18.0.0/16, 198.18.0.1/16 ]
fail: shut
EOF
expect_errors several several.yaml \
	'several.yaml:3:11|invalid mode "fast"' \
	'several.yaml:6:12|invalid proto "udpp"' \
	'several.yaml:7:12|invalid dport "99999"' \
	'several.yaml:9:28|invalid IPv4 key prefix "src/40"' \
	'several.yaml:10:11|duplicate rule name "a"' \
	'several.yaml:12:24|invalid CIDR "198.18.0.1/16"' \
	'several.yaml:13:7|invalid fail "shut"'

# -j: one JSON object on stdout, errors listed with their places.
begin_case
j=$(check_in "$T" -j check several.yaml 2>"$T/stderr")
rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc, want 1"
[ ! -s "$T/stderr" ] || fail "stderr not empty under -j: $(cat "$T/stderr")"
echo "$j" | jq -e . >/dev/null 2>&1 || fail "does not parse: $j"
[ "$(echo "$j" | jq -r '.valid, (.errors | length)' | paste -sd' ')" == "false 7" ] ||
	fail "valid/errors: $j"
[ "$(echo "$j" | jq -r '.errors[0] | "\(.file):\(.line):\(.column): \(.reason)"')" == \
	'several.yaml:3:11: invalid mode "fast" (native, generic or tc)' ] || fail "errors[0]: $j"
[ "$(echo "$j" | jq -r '[.errors[] | "\(.line):\(.column)"] | join(" ")')" == \
	"3:11 6:12 7:12 9:28 10:11 12:24 13:7" ] || fail "places: $j"
j=$(check_in "$T" -j check sub/denyfile.yaml)
[ "$(echo "$j" | jq -r '.errors[0] | "\(.file):\(.line):\(.column)"')" == "sub/deny.txt:4:1" ] ||
	fail "deny file error: $j"
j=$("$WEIR" -j check "$T/nonexistent.yaml")
[ "$(echo "$j" | jq -r '.valid')" == "false" ] || fail "missing file: $j"
[[ "$(echo "$j" | jq -r '.error')" == "cannot read "* ]] || fail "missing file: $j"
end_case config-json

# What the file says is what the CLI says: the same words through `rule add`
# give the same rules as the config file does.
cat >"$T/agree.yaml" <<'EOF'
rules:
  - name: web
    family: ipv4
    proto: tcp
    dport: "80-443"
    src: 198.18.0.0/15
    tcp-flags: syn
    class: 1
    action: dry-run
    limits:
      - { rate: 100pps, burst: 20, per: "src/24 src6/64" }
      - { rate: 5kpps, burst: 5000, per: all }
  - name: dns6
    family: ipv6
    proto: udp
    dport: 53
    limits:
      - { rate: 8mbit, burst: 20000, per: [ src/32, src6/48 ] }
  - name: ping
    proto: icmp
    icmp-type: 8
    class: 3
    spare: verified
    limits: [ { rate: 10pps } ]
  - name: blk
    proto: udp
    dport: 19
    action: block
  - name: flags
    proto: tcp
    tcp-flags: "fin,syn/fin,syn,rst"
    limits: [ { rate: 64kbyte, burst: 64kbyte, per: all } ]
  - name: amp
    proto: udp
    sport: 123
    dst: [ 198.18.0.0/24, "2001:db8::/64" ]
    len: 468-490
    ttl: "30-64"
    frag: none
    dscp: 0
    payload: [ "0/0xff000000=0x17000000", "4=0x00030000" ]
    limits: [ { rate: 100pps, per: all } ]
  - name: carpet
    proto: udp
    dst: 198.18.7.0/24
    limits:
      - { rate: 200pps, per: "dst/24 dst6/64" }
      - { rate: 10pps, per: flow }
EOF
agree_words=(
	"web family ipv4 proto tcp dport 80-443 src 198.18.0.0/15 tcp-flags syn class 1 action dry-run limit 100pps burst 20 per src/24 src6/64 limit 5kpps burst 5000 per all"
	"dns6 family ipv6 proto udp dport 53 limit 8mbit burst 20000 per src/32 src6/48"
	"ping proto icmp icmp-type 8 class 3 spare verified limit 10pps"
	"blk proto udp dport 19 action block"
	"flags proto tcp tcp-flags fin,syn/fin,syn,rst limit 64kbyte burst 64kbyte per all"
	"amp proto udp sport 123 dst 198.18.0.0/24 2001:db8::/64 len 468-490 ttl 30-64 frag none dscp 0 payload 0/0xff000000=0x17000000 4=0x00030000 limit 100pps per all"
	"carpet proto udp dst 198.18.7.0/24 limit 200pps per dst/24 dst6/64 limit 10pps per flow"
)
if [ "$(id -u)" -ne 0 ]; then
	skip config-cli-agree "needs root (rule add loads weir)"
else
	begin_case
	new_root config >/dev/null	# not in $(...): cleanup must see it in ROOTS
	ROOT=${ROOTS[-1]}
	for r in "${agree_words[@]}"; do
		# shellcheck disable=SC2086
		"$WEIR" --bpffs "$ROOT" rule add $r >/dev/null 2>&1 || fail "cannot add: $r"
	done
	from_cli=$("$WEIR" -j --bpffs "$ROOT" rule list | jq -S '.rules | map(del(.uid))')
	from_file=$("$WEIR" -j check "$T/agree.yaml" | jq -S '.rules | map(del(.uid))')
	[ "$(echo "$from_file" | jq length)" == "7" ] || fail "the file gave no 7 rules: $from_file"
	[ "$from_cli" == "$from_file" ] ||
		fail "file and CLI differ: $(diff <(echo "$from_cli") <(echo "$from_file") | head -20)"
	end_case config-cli-agree
fi
