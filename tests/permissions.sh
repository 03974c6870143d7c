#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Permissions: what an unprivileged user can and cannot do to weir.
#   - pinned objects (and a bpffs weir mounts itself) are root's alone,
#     whatever the umask;
#   - the installed config is not writable by others, and a config (or
#     deny file) that others can write is not one the daemon obeys quietly;
#   - the metrics endpoint is read-only: no method, path or flood of
#     connections changes anything or wedges the daemon;
#   - the CLI without privileges (a plain user; root without CAP_BPF) fails
#     with a clear message, changes nothing and does not crash.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root permissions

TMP=$(mktemp -d)
chmod 755 "$TMP"
# cleanup (tests/lib.sh) also kills the daemons listed in DAEMONS.
trap 'cleanup; rm -rf "$TMP"' EXIT
# Every failure as a comment too, not only the first.
fail() { echo "# $*"; [ -z "$CASE_FAILED" ] && CASE_FAILED="$*"; return 0; }

for tool in jq curl setpriv; do
	if ! command -v $tool >/dev/null; then
		skip permissions "$tool is missing"
		exit 0
	fi
done
if ! id nobody >/dev/null 2>&1; then
	skip permissions "no user nobody"
	exit 0
fi
NOGROUP=$(id -gn nobody)
# nobody runs its own copy of the binary, in this suite's directory: the
# checkout may sit under a directory nobody cannot enter (a 0700 mktemp -d,
# /root), and then its exit status would be the shell's 126, not weir's.
NOBODY_WEIR=$TMP/weir
install -m 0755 "$WEIR" "$NOBODY_WEIR" || { not_ok permissions-setup "cannot copy $WEIR"; exit 1; }

NS=$(new_netns p) || { not_ok permissions-setup "no namespace"; exit 1; }
ROOT=$(new_root p)
in_ns "$NS" ip link add pp0 type veth peer name pp1
in_ns "$NS" ip link set pp0 up
in_ns "$NS" ip link set pp1 up
wr() { in_ns "$NS" "$WEIR" --bpffs "$ROOT" "$@"; }
wrj() { in_ns "$NS" "$WEIR" -j --bpffs "$ROOT" "$@"; }
# As nobody, with no capabilities at all.
as_nobody() { in_ns "$NS" setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all \
	--bounding-set=-all "$@"; }
# The whole observable state, to compare before and after.
snapshot() {
	{
		wrj status | jq -S 'del(.interfaces[]?.link_id, .interfaces[]?.prog_id, .generation)'
		wrj rule list | jq -S .
		wrj deny list | jq -S .
		wrj allow list | jq -S .
		wrj stats interval 0 | jq -S '.rules | map({name})'
		wrj shed status | jq -S 'del(.signals, .updated_ns, .expires_ns) | del(.. | .packets?, .bytes?)' 2>/dev/null
	} 2>&1
}
died() { [ "$1" -ge 128 ] || grep -qE 'Sanitizer|stack smashing|Segmentation|core dumped' "$2"; }

# The CLI without privileges (below), defined here so that a run with
# --fresh-bpffs does only that.
commands=(
	"status" "rule list" "rule add r2 limit 1pps" "rule del r1" "deny list"
	"deny add 198.18.10.0/24" "deny del 198.18.9.0/24" "allow add 198.18.11.0/24" "allow list"
	"stats interval 0" "top" "disable" "enable" "set fail closed" "set malformed pass"
	"shed status" "shed off" "shed set 0.5" "attach pp1" "detach pp0" "detach all"
	"run --config $TMP/metrics.yaml"
)
# unprivileged_cli NAME: every command as nobody against $ROOT.
unprivileged_cli() {
	local cmd rc msg before after
	begin_case
	before=$(snapshot)
	for cmd in "${commands[@]}"; do
		# shellcheck disable=SC2086
		as_nobody timeout 10 "$NOBODY_WEIR" --bpffs "$ROOT" $cmd >"$TMP/out" 2>&1
		rc=$?
		msg=$(head -1 "$TMP/out")
		if died "$rc" "$TMP/out"; then
			fail "nobody: '$cmd' died (exit $rc): $msg"
		elif [ "$rc" -eq 124 ]; then
			fail "nobody: '$cmd' did not finish in 10 s"
		elif [ "$rc" -eq 0 ] && [ "$cmd" == status ]; then
			fail "nobody: status exits 0 saying \"$msg\" while weir is loaded"
		elif [ "$rc" -eq 0 ]; then
			fail "nobody: '$cmd' succeeded: $msg"
		elif [ "$rc" -ne 1 ]; then
			fail "nobody: '$cmd' exited $rc, want 1: $msg"
		elif ! grep -qiE 'permission|not permitted|root|CAP_' "$TMP/out"; then
			fail "nobody: '$cmd': unclear error: $msg"
		fi
		echo "# nobody: $cmd -> $rc: $msg"
	done
	after=$(snapshot)
	[ "$before" == "$after" ] || fail "nobody: the state changed: $(diff <(echo "$before") <(echo "$after") | head -6 | tr "\n" " ")"
	# what needs no privilege still works: validating a readable config
	cp "$TMP/metrics.yaml" "$TMP/readable.yaml"
	chmod 644 "$TMP/readable.yaml"
	as_nobody "$NOBODY_WEIR" check "$TMP/readable.yaml" >/dev/null 2>&1 || fail "nobody: check failed"
	end_case "$1"
}

if [ "${1:-}" == --fresh-bpffs ]; then
	# In a mount namespace of our own with no bpffs at /sys/fs/bpf: weir
	# mounts it itself, mode 0700 (as systemd does), and nobody can look
	# under it at all, so every refusal comes from there.
	while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || break; done
	if mountpoint -q /sys/fs/bpf; then
		not_ok permissions-unprivileged-cli-nobody-fresh-bpffs "cannot unmount /sys/fs/bpf"
		exit 1
	fi
	printf 'rules:\n  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 100pps } ] }\nmetrics: off\n' \
		>"$TMP/metrics.yaml"
	chmod 600 "$TMP/metrics.yaml"
	wr attach pp0 >/dev/null && wr rule add r1 proto udp dport 53 limit 10pps >/dev/null &&
		wr deny add 198.18.9.0/24 >/dev/null ||
		{ not_ok permissions-unprivileged-cli-nobody-fresh-bpffs "setup failed"; exit 1; }
	m=$(stat -c '%a' /sys/fs/bpf)
	echo "# /sys/fs/bpf mounted by weir: mode $m"
	unprivileged_cli permissions-unprivileged-cli-nobody-fresh-bpffs
	wr detach all >/dev/null 2>&1
	exit 0
fi


# ---- pinned objects ----

begin_case
(umask 000 && wr attach pp0 >/dev/null && wr rule add r1 proto udp dport 53 limit 10pps >/dev/null &&
	wr deny add 198.18.9.0/24 >/dev/null) || fail "setup under umask 000"
mode=$(stat -c '%a %U' "$ROOT")
[ "$mode" == "700 root" ] || fail "$ROOT is $mode, want 700 root"
n=0
for p in "$ROOT"/*; do
	n=$((n + 1))
	m=$(stat -c '%a %U' "$p")
	case $m in
	"600 root" | "400 root") ;;
	*) fail "${p##*/} is $m (umask 000), want 600 root" ;;
	esac
done
echo "# $n pins under $ROOT, all 0600 root, the directory 0700 root"
[ "$n" -ge 10 ] || fail "only $n pins"
out=$(as_nobody ls "$ROOT" 2>&1) && fail "nobody can list $ROOT: $out"
if command -v bpftool >/dev/null; then
	out=$(as_nobody bpftool map show pinned "$ROOT/wr_config" 2>&1) && fail "nobody opened wr_config"
	out=$(as_nobody bpftool map update pinned "$ROOT/wr_config" key hex 00 00 00 00 \
		value hex $(printf '00 %.0s' $(seq 32)) 2>&1) && fail "nobody wrote wr_config"
fi
end_case permissions-pins-root-only

# A bpffs weir mounts itself (the root's parent is not one) is mode 0700.
begin_case
mkdir -p "$TMP/mnt"
out=$(unshare -m --propagation private sh -c '
	umask 000
	"$1" --bpffs "$2/mnt/weir" rule add r1 limit 10pps >/dev/null || exit 1
	stat -c "%a %U" "$2/mnt/weir"
	for p in "$2/mnt/weir"/*; do stat -c "%a %U %n" "$p"; done
	"$1" --bpffs "$2/mnt/weir" detach all >/dev/null' sh "$WEIR" "$TMP" 2>&1)
echo "$out" | head -1 | sed 's/^/# mounted root: /'
# bpffs sets the sticky bit on its root itself
case $(echo "$out" | head -1) in
"700 root" | "1700 root") ;;
*) fail "the bpffs weir mounted: $(echo "$out" | head -1)" ;;
esac
bad=$(echo "$out" | tail -n +2 | grep -vE '^(600|400) root ')
[ -z "$bad" ] || fail "pins: $bad"
end_case permissions-own-bpffs-mount-root-only

# ---- the config ----

begin_case
DEST=$TMP/dest
if make --no-print-directory -s install OUT="$BUILD" DESTDIR="$DEST" PREFIX=/usr/local >"$TMP/install.log" 2>&1; then
	for f in etc/weir etc/weir/weir.yaml etc/weir/deny.txt usr/local/sbin/weir \
		 etc/systemd/system/weir.service; do
		m=$(stat -c '%a' "$DEST/$f" 2>/dev/null) || { fail "$f not installed"; continue; }
		echo "# /$f $m"
		(( (8#$m & 8#022) == 0 )) || fail "/$f is $m: writable by group or others"
	done
	for f in etc/weir/weir.yaml etc/weir/deny.txt; do
		m=$(stat -c '%a' "$DEST/$f")
		(( (8#$m & 8#077) == 0 )) || fail "/$f is $m: readable by others (it names what is denied)"
	done
	out=$(as_nobody cat "$DEST/etc/weir/weir.yaml" 2>&1) && fail "nobody reads the installed config"
else
	fail "make install: $(tail -3 "$TMP/install.log" | tr '\n' ' ')"
fi
end_case permissions-installed-config

# A config file others can write, or one in a directory others can write to,
# or a deny file others can write: whoever writes it decides what weir
# enforces (the daemon reloads on every change). Refused, or at least said.
run_daemon() { start_daemon "$NS" "$@"; }
begin_case
R2=$(new_root cfgperm)
i=0
for what in file-0666 file-owned-by-nobody dir-0777 deny-file-0666; do
	i=$((i + 1))
	d=$TMP/cfg$i
	mkdir -p "$d"
	chmod 755 "$d"
	printf 'rules:\n  - { name: r, proto: udp, dport: 53, limits: [ { rate: 10pps } ] }\n' >"$d/weir.yaml"
	printf 'deny-files: [ deny.txt ]\nmetrics: off\n' >>"$d/weir.yaml"
	echo 198.18.66.0/24 >"$d/deny.txt"
	chmod 600 "$d/weir.yaml" "$d/deny.txt"
	case $what in
	file-0666) chmod 666 "$d/weir.yaml" ;;
	file-owned-by-nobody) chown nobody "$d/weir.yaml" ;;
	dir-0777) chmod 777 "$d" ;;
	deny-file-0666) chmod 666 "$d/deny.txt" ;;
	esac
	said() { grep -v 'running on' "$TMP/cfgperm.log" | grep -iE 'writ|owner|owned|permission'; }
	if run_daemon "$R2" "$d/weir.yaml" "$TMP/cfgperm.log"; then
		said >/dev/null || fail "$what: the daemon runs on it and says nothing about who can write it"
		kill -TERM "$DPID"
		wait "$DPID" 2>/dev/null
	else
		said >/dev/null ||
			fail "$what: the daemon refused without saying why: $(tail -2 "$TMP/cfgperm.log" | tr '\n' ' ')"
	fi
	said | head -2 | sed "s/^/# $what: /"
	in_ns "$NS" "$WEIR" --bpffs "$R2" detach all >/dev/null 2>&1
done
end_case permissions-config-writable-by-others

# ---- the metrics endpoint ----

begin_case
R3=$(new_root metrics)
cat >"$TMP/metrics.yaml" <<'EOF'
rules:
  - { name: dns, proto: udp, dport: 53, limits: [ { rate: 100pps }, { rate: 1kpps, per: all } ] }
deny: [ 198.18.66.0/24 ]
metrics: { listen: "127.0.0.1:9464" }
EOF
chmod 600 "$TMP/metrics.yaml"
URL=http://127.0.0.1:9464
scrape() { in_ns "$NS" curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"; }
if run_daemon "$R3" "$TMP/metrics.yaml" "$TMP/metrics.log"; then
	ROOT_SAVE=$ROOT
	ROOT=$R3
	before=$(snapshot)
	[ "$(scrape "$URL/metrics")" == 200 ] || fail "GET /metrics"
	n=0
	for method in GET HEAD POST PUT DELETE PATCH OPTIONS TRACE CONNECT PROPFIND; do
		for path in / /metrics /metrics/ /metrics?enabled=0 /metrics/../metrics /enable /disable \
			    /rule/del/dns /config /debug /%2e%2e/etc/passwd /metrics%00; do
			code=$(scrape -X "$method" --path-as-is --data 'enabled=0&fail=closed' "$URL$path")
			n=$((n + 1))
			# what reads as /metrics may be read (%00 ends the decoded path)
			case $method in
			GET | HEAD)
				[[ $path == /metrics || $path == "/metrics?enabled=0" ||
				   $path == /metrics%00 ]] && continue ;;
			esac
			[[ $code == 4* || $code == 000 ]] || fail "$method $path: $code"
		done
	done
	# A request line of 100 kB, and bytes that are not HTTP.
	long=$(head -c 100000 /dev/zero | tr '\0' a)
	code=$(scrape "$URL/$long")
	[[ $code == 4* || $code == 000 ]] || fail "100 kB URL: $code"
	in_ns "$NS" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464; head -c 65536 /dev/urandom >&3; exec 3>&-' \
		2>/dev/null
	# Every connection the endpoint takes held open, idle: the daemon goes on
	# reloading and enforcing; the endpoint answers again once they close.
	in_ns "$NS" bash -c 'for i in $(seq 40); do exec {fd}<>/dev/tcp/127.0.0.1/9464 || break; done
		sleep 4' 2>/dev/null &
	hold=$!
	sleep 0.5
	kill -HUP "$DPID"
	for _ in $(seq 60); do grep -q '^weir: reloaded ' "$TMP/metrics.log" && break; sleep 0.05; done
	grep -q '^weir: reloaded ' "$TMP/metrics.log" || fail "no reload while the endpoint was saturated"
	wait "$hold"
	code=000
	for _ in $(seq 30); do code=$(scrape "$URL/metrics"); [ "$code" == 200 ] && break; sleep 0.5; done
	[ "$code" == 200 ] || fail "the endpoint did not answer again: $code"
	echo "# $n requests of 10 methods to 12 paths, a 100 kB URL, 64 kB of noise, 40 idle connections"
	after=$(snapshot)
	[ "$before" == "$after" ] || fail "the state changed: $(diff <(echo "$before") <(echo "$after") | head -5 | tr '\n' ' ')"
	kill -0 "$DPID" 2>/dev/null || fail "the daemon died"
	# Not reachable but on loopback.
	addr=198.18.0.1
	in_ns "$NS" ip addr add $addr/24 dev pp0
	[ "$(scrape "http://$addr:9464/metrics")" == 000 ] || fail "the endpoint answers on $addr"
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	ROOT=$ROOT_SAVE
else
	fail "the daemon did not start: $(tail -3 "$TMP/metrics.log" | tr '\n' ' ')"
fi
in_ns "$NS" "$WEIR" --bpffs "$R3" detach all >/dev/null 2>&1
end_case permissions-metrics-no-control

# ---- the CLI without privileges ----

# Every command as nobody (no capabilities): exit 1, a clear message,
# nothing changed, no crash. (uid 0 without CAP_BPF is not "unprivileged"
# here: the pins are files, root's, and the kernel lets their owner use them
# without CAP_BPF since Linux 6.5; docs/SECURITY.md says so.)
unprivileged_cli permissions-unprivileged-cli-nobody

# The same where nothing mounted a bpffs before weir (a fresh machine).
unshare -m --propagation private "$0" --fresh-bpffs
rc=$?
[ "$rc" -eq 0 ] || not_ok permissions-fresh-bpffs "the run in a private mount namespace exited $rc"
