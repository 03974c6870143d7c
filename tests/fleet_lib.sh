# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A fleet in namespaces, for tests/fleet.sh and the benchmark's fleet stage
# (tools/bench/fleetbench.sh): a client namespace C, a Redis namespace R and
# three hosts H[1..3], each host linked to both:
#
#   C --cI/hIc--> H[I] (weir, XDP on hIc) --hIr/rI--> R (redis-server)
#
# Source this after tests/lib.sh, with TMP, SLGEN and TAG set; then call
# fleet_up (returns non-zero, saying why on stderr, if something failed).
# Addresses: C 198.18.6I.1, H[I] 198.18.6I.2 towards C and 198.18.5I.2
# towards R at 198.18.5I.1; the one source every host sees, 198.18.70.1.

RATE=${RATE:-200}
WRATE=${WRATE:-$RATE}
BURST=${BURST:-100}
INTERVAL_MS=${INTERVAL_MS:-100}
REDIS_PID=""
EXTRA_PIDS=()
ROOTS_H=()
H=()

# Kill every Redis this file started (the caller's EXIT trap runs it).
fleet_down() {
	local p
	[ -n "$REDIS_PID" ] && kill -CONT "$REDIS_PID" 2>/dev/null && kill "$REDIS_PID" 2>/dev/null
	for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	return 0
}

fleet_up() {
	local i l
	C=$(new_netns cli) && R=$(new_netns red) || { echo "no namespaces" >&2; return 1; }
	for i in 1 2 3; do
		H[i]=$(new_netns "h$i") || { echo "no namespace h$i" >&2; return 1; }
		if ! ip link add "c$i" netns "$C" type veth peer name "h${i}c" netns "${H[i]}" ||
		   ! ip link add "r$i" netns "$R" type veth peer name "h${i}r" netns "${H[i]}"; then
			echo "cannot create veth" >&2
			return 1
		fi
		ip -n "$C" addr add "198.18.6$i.1/24" dev "c$i"
		ip -n "${H[i]}" addr add "198.18.6$i.2/24" dev "h${i}c"
		ip -n "$R" addr add "198.18.5$i.1/24" dev "r$i"
		ip -n "${H[i]}" addr add "198.18.5$i.2/24" dev "h${i}r"
		for l in "c$i:$C" "r$i:$R" "h${i}c:${H[i]}" "h${i}r:${H[i]}"; do
			ip -n "${l#*:}" link set "${l%%:*}" up
		done
	done
	# The one source every host sees.
	ip -n "$C" addr add 198.18.70.1/32 dev lo
	redis_start || { echo "redis-server did not start: $(tail -3 "$TMP/redis.log")" >&2; return 1; }
}

# redis_start [ARGS...]: a fresh redis-server in R, no persistence.
redis_start() {
	# nsenter execs redis-server: $! is Redis itself, for SIGSTOP and kill.
	nsenter --net="/run/netns/$R" redis-server --bind 0.0.0.0 --port 6379 --protected-mode no --save '' \
		--appendonly no --dir "$TMP" --daemonize no --logfile "$TMP/redis.log" "$@" &
	REDIS_PID=$!
	for _ in $(seq 200); do
		in_ns "$R" redis-cli -h 198.18.51.1 ${REDIS_PASS:+-a "$REDIS_PASS" --no-auth-warning} \
			ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	return 1
}
redis_stop() {
	[ -n "$REDIS_PID" ] || return 0
	kill -CONT "$REDIS_PID" 2>/dev/null
	kill "$REDIS_PID" 2>/dev/null
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=""
}
rcli() { in_ns "$R" redis-cli -h 198.18.51.1 "$@"; }

# config I SCOPE [EXTRA-FLEET-KEYS]: host I's config file. Rule api (UDP
# 9000) has the token bucket; fixed and swin (9001, 9002) the same count
# per second, WRATE, as a fixed and a sliding window, when the interval
# is at most half a second (a fleet window spans two intervals at least).
config() {
	local i=$1 scope=$2 extra=${3:-} wins=""
	[ "$INTERVAL_MS" -le 500 ] && wins="
  - name: fixed
    proto: udp
    dport: 9001
    limits:
      - { rate: ${WRATE}/s, algo: fixed-window, per: src, scope: $scope }
  - name: swin
    proto: udp
    dport: 9002
    limits:
      - { rate: ${WRATE}/s, algo: sliding-window, per: src, scope: $scope }"
	cat >"$TMP/h$i.yaml" <<EOF
interfaces: [ { name: h${i}c, mode: native } ]
metrics: { listen: "127.0.0.1:1946$i" }
rules:
  - name: api
    proto: udp
    dport: 9000
    limits:
      - { rate: ${RATE}pps, burst: $BURST, per: src, scope: $scope }$wins
fleet:
  name: t$TAG
  host: host$i
  redis: [ "198.18.5$i.1:6379" ]
  interval: ${INTERVAL_MS}ms
  stale-after: ${STALE_MS:-600}ms
  $extra
EOF
}
start_host() {
	local i=$1
	ROOTS_H[i]=$(new_root "h$i")
	start_daemon "${H[i]}" "${ROOTS_H[i]}" "$TMP/h$i.yaml" "$TMP/h$i.log"
}
wrh() { local i=$1; shift; in_ns "${H[i]}" "$WEIR" --bpffs "${ROOTS_H[i]}" "$@"; }
# passed and dropped packets of rule api (or FLEET_RULE) on host I
passed() { wrh "$1" -j stats interval 0 | jq ".rules[] | select(.name == \"${FLEET_RULE:-api}\") | .passed_packets"; }
dropped() { wrh "$1" -j stats interval 0 | jq ".rules[] | select(.name == \"${FLEET_RULE:-api}\") | .dropped_packets"; }
# ... summed over the hosts in FLEET_HOSTS (default 1 2 3)
total_passed() { local i n=0; for i in ${FLEET_HOSTS:-1 2 3}; do n=$((n + $(passed $i))); done; echo $n; }
total_seen() {
	local i n=0
	for i in ${FLEET_HOSTS:-1 2 3}; do n=$((n + $(passed $i) + $(dropped $i))); done
	echo $n
}

# send SECS PPS-PER-HOST [HOSTS]: the one source (or the sources in
# FLEET_SRC, each at PPS) to each host at once, to UDP port 9000 (or
# FLEET_DPORT); waits.
send() {
	local secs=$1 pps=$2 hosts=${3:-${FLEET_HOSTS:-1 2 3}} i pids=()
	for i in $hosts; do
		in_ns "$C" "$SLGEN" --dst "198.18.6$i.2" --dport "${FLEET_DPORT:-9000}" --src "${FLEET_SRC:-198.18.70.1}" \
			--rate "$pps" \
			--duration "$secs" --spin-us 0 --json >"$TMP/gen-$i.json" 2>>"$TMP/gen.err" &
		pids+=($!)
	done
	wait "${pids[@]}"
}
sent() {
	local i n=0
	for i in ${1:-${FLEET_HOSTS:-1 2 3}}; do n=$((n + $(jq -r '.total_sent' "$TMP/gen-$i.json"))); done
	echo "$n"
}
gen_secs() { jq -r '.sources[0] | (.last_ns - .first_ns) / 1e9' "$TMP/gen-1.json"; }
# wait_status I JQ VALUE TRIES: wait (bounded: TRIES x 0.1 s) until host
# I's `fleet status -j` gives VALUE for JQ; the caller checks it after.
wait_status() {
	for _ in $(seq "$4"); do
		[ "$(wrh "$1" -j fleet status | jq "$2")" == "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
# nodes_up I N: wait (bounded) until host I's sync has N Redis servers up.
nodes_up() {
	for _ in $(seq 100); do
		[ "$(wrh "$1" -j fleet status | jq '[.nodes[]? | select(.up)] | length')" == "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# The most the fleet may admit in T seconds once the key is hot (docs/fleet.md):
# burst + rate x T, plus one sync's lag on every host, N x rate x
# (interval + round trip, taken as one more interval here), plus 5% and 5
# packets for the machine's noise. From a standing start each of the other
# N - 1 hosts may add its own first burst (FIRST=1).
# bound T [LAG_MS]: the same with the sync's lag on every host taken as the
# interval plus LAG_MS (default: one more interval) instead.
bound() { awk -v t="$1" -v r=$RATE -v b=$BURST -v iv=$INTERVAL_MS -v lag="${2:-$INTERVAL_MS}" \
	-v first="${FIRST:-0}" \
	'BEGIN { printf "%d", (b + r * t + 3 * r * (iv + lag) / 1000 + first * 2 * b) * 1.05 + 5 }'; }
now_s() { date +%s.%N; }
# bg_send SECS PPS [HOSTS]: send in the background ($! is its pid); when it
# ends, its end time is in $TMP/send-end. covered A B: the seconds of [A, B]
# before that end, for floors that count only what the flood covered (on a
# loaded machine the reads around a window can run past the flood's end).
bg_send() { rm -f "$TMP/send-end"; ( send "$@"; now_s >"$TMP/send-end" ) & }
covered() {
	awk -v a="$1" -v b="$2" -v e="$(cat "$TMP/send-end" 2>/dev/null)" \
		'BEGIN { if (e != "" && e < b) b = e; printf "%.3f", b - a }'
}
# The middle of a read that started at $1 and ends now.
mid_s() { awk -v x="$1" -v y="$(now_s)" 'BEGIN { printf "%.6f", (x + y) / 2 }'; }
