#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's own kernels in qemu guests, for weir's kernel tests.
#
#   tools/kernels/guest.sh fetch VERSION...       5.10, 6.1 or 6.12: the newest
#                                                 Debian package of that series,
#                                                 unpacked under build/kernels/
#   tools/kernels/guest.sh run VERSION SCRIPT [SECS]
#                                                 boot it, run SCRIPT (bash) in
#                                                 the guest, print what it
#                                                 printed, exit with its status
#
# Packages come from Debian's archive through a private apt configuration
# under build/kernels/apt (the system's sources and state are not touched)
# and are unpacked with dpkg-deb -x: nothing is installed. The guest runs
# under TCG (software emulation: this VM's /dev/kvm cannot boot a stock
# kernel), with this machine's root filesystem read-only over virtio-9p, so
# the binaries built here run unchanged; a scratch directory is shared
# read-write at /tmp/guest, and SCRIPT runs from there with the repository
# as its working directory. No network (-nic none): tests in the guest use
# veth between network namespaces. The guest powers off when SCRIPT ends;
# after SECS (default 900) it is killed and the run fails.
#
#   GUEST_ROOT  the directory the guest gets as its root filesystem instead
#               of this machine's / (tests/trixie.sh: a Debian 13 root with
#               weir built in it)
#   GUEST_REPO  the checkout's path within GUEST_ROOT, where SCRIPT runs
#               (default: this checkout's path)
#   GUEST_SMP   the guest's CPUs (default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
BUILD=${BUILD:-build}
K=$REPO/$BUILD/kernels
APT_O=(-o Dir::Etc::sourcelist="$K/apt/sources.list" -o Dir::Etc::sourceparts=-
       -o Dir::State::Lists="$K/apt/lists" -o Dir::Cache="$K/apt/cache"
       -o APT::Sandbox::User=root -qq)
# The modules the guest loads before anything else: 9p over virtio for the
# root filesystem, and what the tests ask the kernel for (no modprobe runs
# in the guest: the host's root has no modules of the guest's kernel).
MODULES="virtio virtio_ring virtio_pci virtio_pci_modern_dev virtio_pci_legacy_dev netfs fscache
	 9pnet 9pnet_virtio 9p veth sch_ingress cls_bpf"

die() { echo "guest.sh: $*" >&2; exit 1; }

series_regex() {
	case $1 in
	5.10) echo '^linux-image-5\.10\.0-[0-9]+-amd64-unsigned$' ;;
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64-unsigned$' ;;
	*) die "unknown kernel series \"$1\" (5.10, 6.1 or 6.12)" ;;
	esac
}

apt_setup() {
	mkdir -p "$K/apt/lists/partial" "$K/apt/cache/archives/partial" "$K/debs"
	cat >"$K/apt/sources.list" <<-EOF
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bullseye-security main
	EOF
	[ -n "$(ls "$K/apt/lists" 2>/dev/null | grep -v partial)" ] ||
		apt-get "${APT_O[@]}" update || die "cannot read Debian's package lists"
}

# kdir SERIES: the unpacked kernel of that series (its directory under $K)
kdir() {
	local d
	# (one of the two patterns matching nothing is no failure)
	d=$(ls -d "$K"/"$1".*-amd64 "$K"/"$1".*+deb*-amd64 2>/dev/null | sort -V | tail -1) || true
	[ -n "$d" ] && [ -d "$d/boot" ] || return 1
	echo "$d"
}

fetch() {
	local s pkg deb ver
	apt_setup
	for s in "$@"; do
		if kdir "$s" >/dev/null; then
			echo "guest.sh: $s: $(basename "$(kdir "$s")") already unpacked"
			continue
		fi
		pkg=$(apt-cache "${APT_O[@]}" pkgnames linux-image- | grep -E "$(series_regex "$s")" |
			sort -V | tail -1)
		[ -n "$pkg" ] || die "no Debian package for kernel $s"
		(cd "$K/debs" && apt-get "${APT_O[@]}" download "$pkg") || die "cannot download $pkg"
		deb=$(ls "$K/debs/${pkg}"_*.deb | tail -1)
		ver=${pkg#linux-image-}
		ver=${ver%-unsigned}
		mkdir -p "$K/$ver"
		dpkg-deb -x "$deb" "$K/$ver"
		echo "guest.sh: $s: $pkg unpacked into $K/$ver"
	done
}

# initrd DIR: the initramfs for the kernel unpacked in DIR (built once)
initrd() {
	local d=$1 ver out t m f
	ver=$(basename "$d")
	out=$d/initrd.cpio.gz
	[ -s "$out" ] && [ "$out" -nt tools/kernels/guestinit.c ] && { echo "$out"; return 0; }
	command -v cpio >/dev/null || die "cpio is missing (make kernel-deps installs it)"
	t=$(mktemp -d)
	mkdir -p "$t/modules" "$t/proc" "$t/sys" "$t/dev" "$t/newroot"
	gcc -static -O2 -Wall -Werror -o "$t/init" tools/kernels/guestinit.c ||
		die "cannot build the guest's init"
	for m in $MODULES; do
		f=$(find "$d/lib/modules/$ver" \( -name "$m.ko" -o -name "$m.ko.xz" \) | head -1)
		[ -n "$f" ] || continue		# built in, or not in this kernel
		case $f in
		*.xz) xz -dc "$f" >"$t/modules/$m.ko" ;;
		*) cp "$f" "$t/modules/$m.ko" ;;
		esac
	done
	(cd "$t" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
	rm -rf "$t"
	echo "$out"
}

run() {
	local s=$1 script=$2 secs=${3:-900} d scratch log rc
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 is missing (make kernel-deps installs qemu-system-x86)"
	d=$(kdir "$s") || die "kernel $s is not unpacked: run 'tools/kernels/guest.sh fetch $s'"
	[ -r "$script" ] || die "no script $script"
	# The guest mounts tmpfs of its own on /tmp, /run and /var/tmp; a
	# checkout under one is kept at its path (guestinit.c, weir.repo=).
	local root=${GUEST_ROOT:-/} repo=${GUEST_REPO:-$REPO}
	case $repo in
	*[[:space:]]*) die "the checkout's path \"$repo\" has white space, which the guest's command line cannot carry" ;;
	esac
	[ -d "$root/${repo#/}" ] || die "no checkout at $repo under the guest's root $root"
	scratch=$(mktemp -d "$K/scratch.XXXXXX")
	# The guest runs the script from the repository, as here.
	{ echo "cd '$repo' || exit 125"; cat "$script"; } >"$scratch/run.sh"
	if [ "$root" = / ]; then
		echo "$d" >"$scratch/kdir"
	else
		# The kernel's config for the guest's /boot, where its own root
		# cannot reach the unpacked package: a copy in the scratch share.
		mkdir -p "$scratch/kernel/boot"
		cp "$d"/boot/config-* "$scratch/kernel/boot/"
		echo /tmp/guest/kernel >"$scratch/kdir"
	fi
	log=$scratch/console.log
	rc=0
	timeout --kill-after=10 "$secs" qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp "${GUEST_SMP:-2}" \
		-nographic -no-reboot -nic none \
		-kernel "$d/boot/vmlinuz-$(basename "$d")" -initrd "$(initrd "$d")" \
		-append "console=ttyS0 panic=-1 quiet loglevel=3 weir.repo=$repo" \
		-virtfs "local,path=$root,mount_tag=root,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$scratch,mount_tag=scratch,security_model=none,multidevs=remap" \
		</dev/null >"$log" 2>&1 || rc=$?
	tr -d '\r' <"$log" | grep '^guestinit: cannot' >&2 || true
	tr -d '\r' <"$log" | sed -n '/guestinit: running/,$p' | grep -v '^guestinit: running'
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "guest.sh: the $s guest did not finish within $secs s" >&2
		rm -rf "$scratch"
		return 124
	fi
	if [ ! -s "$scratch/rc" ]; then
		echo "guest.sh: the $s guest stopped without running the script:" >&2
		tr -d '\r' <"$log" | tail -15 >&2
		rm -rf "$scratch"
		return 1
	fi
	rc=$(cat "$scratch/rc")
	rm -rf "$scratch"
	return "$rc"
}

case ${1:-} in
fetch) shift; [ $# -gt 0 ] || die "fetch which kernels?"; fetch "$@" ;;
run) shift; [ $# -ge 2 ] || die "usage: guest.sh run VERSION SCRIPT [SECS]"; run "$@" ;;
kdir) shift; kdir "${1:-}" ;;
*) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
