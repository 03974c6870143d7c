#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo: a throwaway pair of namespaces joined by veth, weir attached to
# the "server" side, three well-behaved clients and one abusive one sending
# UDP to port 5353. Live stats show the abusive source limited and the
# others untouched. Everything is removed afterwards, also on Ctrl-C.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
WEIR=$PWD/$BUILD/weir
SECS=${DEMO_SECS:-10}
TAG=wrdemo$$
SRV=$TAG-srv
CLI=$TAG-cli
ROOT=/sys/fs/bpf/$TAG

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo needs root (network namespaces, XDP)" >&2
	exit 1
fi
cleanup() {
	"$WEIR" --bpffs "$ROOT" detach all >/dev/null 2>&1
	ip netns pids "$SRV" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns pids "$CLI" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$SRV" 2>/dev/null
	ip netns del "$CLI" 2>/dev/null
	rm -f "/tmp/$TAG".*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
wr() { nsenter --net="/run/netns/$SRV" "$WEIR" --bpffs "$ROOT" "$@"; }

say "1. Two namespaces joined by veth: $CLI (clients) and $SRV (the protected host)"
ip netns add "$SRV"
ip netns add "$CLI"
ip link add demo-c netns "$CLI" type veth peer name demo-s netns "$SRV"
ip -n "$SRV" addr add 198.18.0.1/24 dev demo-s
for i in 2 3 4 66; do ip -n "$CLI" addr add 198.18.0.$i/24 dev demo-c; done
ip -n "$SRV" link set demo-s up
ip -n "$CLI" link set demo-c up
ip -n "$SRV" link set lo up
echo "clients 198.18.0.2, .3, .4 (polite, 50 pps each) and 198.18.0.66 (abusive, 2000 pps)"

say "2. Attach weir to the server's interface and limit each source to 100 pps"
wr() { nsenter --net="/run/netns/$SRV" "$WEIR" --bpffs "$ROOT" "$@"; }
printf '$ weir attach demo-s mode native\n'
wr attach demo-s mode native || exit 1
printf '$ weir rule add game proto udp dport 5353 limit 100pps burst 50 per src\n'
wr rule add game proto udp dport 5353 limit 100pps burst 50 per src || exit 1
wr status

say "3. Traffic for ${SECS}s; a receiver counts what arrives per source"
ip netns exec "$SRV" "$BUILD/wrsink" --listen 198.18.0.1 --port 5353 --duration $((SECS + 5)) \
	--idle 2 >"/tmp/$TAG.sink" &
sleep 0.3
start=$EPOCHREALTIME
ip netns exec "$CLI" "$BUILD/wrgen" --dst 198.18.0.1 --dport 5353 --src 198.18.0.2,198.18.0.3,198.18.0.4 \
	--rate 50 --duration "$SECS" >/dev/null &
polite=$!
ip netns exec "$CLI" "$BUILD/wrgen" --dst 198.18.0.1 --dport 5353 --src 198.18.0.66 \
	--rate 2000 --duration "$SECS" >/dev/null &
abusive=$!
# A snapshot every 2 s while the senders run, each labelled with the time
# since they started as read when it is taken (printing takes time too).
while kill -0 "$polite" 2>/dev/null || kill -0 "$abusive" 2>/dev/null; do
	sleep 2
	kill -0 "$polite" 2>/dev/null || kill -0 "$abusive" 2>/dev/null || break
	say "   t=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s  weir top"
	wr top 5
	wr -j stats | jq -r '.rules[] | "   rule \(.name): passed \(.passed_packets), dropped \(.dropped_packets)"'
done
wait

say "4. What the receiver got per source (100 pps x ${SECS}s + burst 50 is the cap)"
cat "/tmp/$TAG.sink"
say "5. weir stats"
wr stats
say "Cleaning up: detach all, delete the namespaces"
