#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install the Debian packages named on the command line that are missing
# (make deps). Waits for the dpkg/apt locks when another apt is running
# instead of failing, and never starts a service: policy-rc.d refuses every
# start while this runs.
#   tools/deps.sh PKG...                 install what is missing
#   tools/deps.sh --extract DIR PKG[,PKG...] BIN
#                                        unpack BIN from the first PKG the
#                                        archive has into DIR/bin, without
#                                        installing the package
set -euo pipefail
LOCK_WAIT=${LOCK_WAIT:-600}
APT_OPTS=(-o DPkg::Lock::Timeout="$LOCK_WAIT" -qq)

# apt-get update takes the lists lock without waiting: retry until it is free.
apt_update() {
	local end=$((SECONDS + LOCK_WAIT)) out
	while :; do
		if out=$(apt-get "${APT_OPTS[@]}" update 2>&1); then
			return 0
		fi
		if ! grep -q 'Could not get lock' <<<"$out" || [ $SECONDS -ge $end ]; then
			echo "$out" >&2
			return 1
		fi
		echo "deps: another apt holds the lock; waiting" >&2
		sleep 5
	done
}

# Once per run of make: an update is only needed when something is missing.
updated=""
ensure_update() {
	[ -n "$updated" ] && return 0
	apt_update
	updated=1
}

if [ "${1:-}" = "--extract" ]; then
	dir=$2 pkgs=$3 bin=$4
	[ -x "$dir/bin/$bin" ] && exit 0
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# PKG,PKG...: the first the archive has (Debian 13 ships promtool in a
	# package of its own, Debian 12 inside prometheus).
	pkg=""
	for try in 1 2; do
		for p in ${pkgs//,/ }; do
			if (cd "$tmp" && apt-get "${APT_OPTS[@]}" download "$p" 2>/dev/null); then
				pkg=$p
				break 2
			fi
		done
		[ "$try" = 1 ] && ensure_update
	done
	if [ -z "$pkg" ]; then
		echo "deps: none of $pkgs can be downloaded for $bin" >&2
		exit 1
	fi
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/x"
	mkdir -p "$dir/bin"
	# Commands in usr/bin; daemons (chronyd) in usr/sbin.
	src=$tmp/x/usr/bin/$bin
	[ -e "$src" ] || src=$tmp/x/usr/sbin/$bin
	install -m 0755 "$src" "$dir/bin/$bin"
	echo "deps: $bin from $pkg unpacked into $dir/bin (the package is not installed)"
	exit 0
fi

missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
ensure_update
# No package's service starts while we install (exit 101: action forbidden).
rc_made=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	rc_made=1
fi
trap '[ -n "$rc_made" ] && rm -f /usr/sbin/policy-rc.d' EXIT
# crowdsec's postinst registers the machine with CrowdSec's Central API on
# the internet unless its credentials file is already there and not empty
# (Debian's README.Debian): the tests run only its local API, so say so.
for p in "${missing[@]}"; do
	if [ "$p" = crowdsec ] && [ ! -s /etc/crowdsec/online_api_credentials.yaml ]; then
		mkdir -p /etc/crowdsec
		echo "# no Central API registration (installed by weir's tools/deps.sh)" \
			>/etc/crowdsec/online_api_credentials.yaml
	fi
done
DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y --no-install-recommends \
	"${missing[@]}" >/dev/null
