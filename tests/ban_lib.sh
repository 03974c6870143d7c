# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the deny-list suites share (tests/ttl.sh, tests/fail2ban.sh,
# tests/crowdsec.sh): a receiver and a sender namespace joined by a veth,
# weir attached on the receiver's end, and a count of what arrives.
# Source after tests/lib.sh; needs $TMP.
#   ban_net NAME   RCV, SND, ROOT; receiver 198.18.80.1 / 2001:db8:80::1,
#                  senders 198.18.80.2-4 / 2001:db8:80::2-3
#   deliver SRC N  N UDP datagrams from SRC to the receiver; prints how many
#                  arrived (the sink's count for SRC)
#   wr, wrj ARGS   weir on the receiver's root (wrj: with -j)
#   ttl_of LIST CIDR   the deny or allow entry's ttl in seconds ("null":
#                  permanent; "" if absent); listed / unlisted CIDR: on the
#                  deny list or not
#   wait_for SECS CMD...   until CMD succeeds, polling every 0.2 s (bounded)
#   in_range V LO HI   V is a whole number within [LO, HI]
SLGEN=${SLGEN:-$PWD/${BUILD:-build}/wrgen}
SLSINK=${SLSINK:-$PWD/${BUILD:-build}/wrsink}
BAN_PORT=9411
BAN_SRCS4="198.18.80.2 198.18.80.3 198.18.80.4"
BAN_SRCS6="2001:db8:80::2 2001:db8:80::3"

ban_net() {
	local name=$1 a mac_r mac_s
	RCV=$(new_netns "$name-r") && SND=$(new_netns "$name-s") || return 1
	ROOT=$(new_root "$name")
	ip link add "$TAG-$name" netns "$SND" type veth peer name "$TAG-${name}r" netns "$RCV" ||
		return 1
	BAN_DEV=$TAG-${name}r
	ip -n "$RCV" addr add 198.18.80.1/24 dev "$BAN_DEV"
	ip -n "$RCV" addr add 2001:db8:80::1/64 dev "$BAN_DEV" nodad
	for a in $BAN_SRCS4; do ip -n "$SND" addr add "$a/24" dev "$TAG-$name"; done
	for a in $BAN_SRCS6; do ip -n "$SND" addr add "$a/64" dev "$TAG-$name" nodad; done
	ip -n "$RCV" link set "$BAN_DEV" up
	ip -n "$SND" link set "$TAG-$name" up
	# Permanent neighbours: no datagram waits in (or is lost from) an ARP/ND queue.
	mac_r=$(ip -n "$RCV" -j link show "$BAN_DEV" | jq -r '.[0].address')
	mac_s=$(ip -n "$SND" -j link show "$TAG-$name" | jq -r '.[0].address')
	ip -n "$SND" neigh replace 198.18.80.1 lladdr "$mac_r" dev "$TAG-$name" nud permanent
	ip -n "$SND" neigh replace 2001:db8:80::1 lladdr "$mac_r" dev "$TAG-$name" nud permanent
	for a in $BAN_SRCS4 $BAN_SRCS6; do
		ip -n "$RCV" neigh replace "$a" lladdr "$mac_s" dev "$BAN_DEV" nud permanent
	done
	in_ns "$RCV" "$WEIR" --bpffs "$ROOT" attach "$BAN_DEV" mode generic >/dev/null
}

wr() { in_ns "$RCV" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" "$@"; }
ttl_of() { wrj "$1" list | jq -r --arg c "$2" '.[][] | select(.cidr == $c) | .ttl'; }
listed() { [ -n "$(ttl_of deny "$1")" ]; }
unlisted() { [ -z "$(ttl_of deny "$1")" ]; }
wait_for() {
	local n=$(($1 * 5)); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
in_range() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

deliver() {
	local src=$1 n=$2 ready=$TMP/ban-ready dst=198.18.80.1 sink
	[[ $src == *:* ]] && dst=2001:db8:80::1
	rm -f "$ready"
	ip netns exec "$RCV" "$SLSINK" --listen :: --port $BAN_PORT --duration 20 --idle 1 \
		--json --ready-file "$ready" >"$TMP/ban-sink.json" &
	sink=$!
	for _ in $(seq 100); do [ -e "$ready" ] && break; sleep 0.05; done
	ip netns exec "$SND" "$SLGEN" --dst "$dst" --dport $BAN_PORT --src "$src" --rate 200 \
		--count "$n" --duration 10 --json >/dev/null
	# The sink stops 1 s after the last datagram, or 20 s after binding if none came.
	sleep 0.2
	kill -TERM "$sink" 2>/dev/null
	wait "$sink"
	jq -r --arg s "$src" '[.sources[]? | select(.src == $s or .src == ("::ffff:" + $s)) |
		.packets] | add // 0' "$TMP/ban-sink.json"
}

# The global counter NAME (denied, passed, ...) of weir stats.
ban_counter() {
	in_ns "$RCV" "$WEIR" -j --bpffs "$ROOT" stats interval 0 | jq -r --arg n "$1" '.global[$n]'
}
