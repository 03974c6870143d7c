#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian package (make deb), built once from a copy of the tree, then:
# lintian finds no error; it holds every file it should, with its mode and
# owner, its conffiles and a Depends for each shared library the binary
# needs; apt installs it into a fresh root of the build's release (mmdebstrap, variant
# important: what a new server has), fetching its Depends from the archive;
# there `weir version` and `weir check /etc/weir/weir.yaml` work, the
# unit is disabled and verifies; weir attached in a namespace of this
# suite stays attached, with its rule, through an upgrade (and an edited
# conffile stays edited) and is taken off the interface when the package is
# removed; a purge leaves nothing behind. Debian's unrelated `sluice`
# installs beside it, and the archive's upgrade and dist-upgrade leave it
# alone. prerm's other paths: replaced by a package (remove in-favour) it
# detaches; deconfigured for a package that Breaks it, it keeps enforcing. The package goes into that throwaway root only:
# nothing on this machine is installed or changed, so a make-installed
# weir in /usr/local is left alone (the last case checks).
#
# The copy gets a stand-in fail2ban action when the tree has none yet, so
# that the Makefile's install of etc/fail2ban/action.d/weir.conf is
# tested either way.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root deb
for t in git dpkg-buildpackage dh lintian mmdebstrap unshare chroot jq; do
	if ! command -v "$t" >/dev/null; then
		skip deb "$t is missing (make test-deps installs it)"
		exit 0
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/$TAG-deb.XXXXXX")
SRC=$T/src
R=$T/root
# Every mount of the root's (proc, sysfs, a bpffs) is made in a private mount
# namespace of the command that needs it and goes with it, so removing $T
# never reaches into a mounted filesystem.
deb_cleanup() {
	cleanup
	rm -rf "$T"
}
trap deb_cleanup EXIT

VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
# The package is built for this machine's release and tried in a fresh root
# of the same release (a Debian 13 build needs Debian 13's libraries).
SUITE=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
# Its unit directory, by debian/rules' rule: /usr/lib/systemd/system with
# Debian 13's debhelper, /lib/systemd/system with Debian 12's.
if dpkg --compare-versions "$(dpkg-query -W -f='${Version}' debhelper 2>/dev/null)" ge 13.13; then
	UNITDIR=/usr/lib/systemd/system
else
	UNITDIR=/lib/systemd/system
fi
ARCH=$(dpkg --print-architecture)
F2B=etc/fail2ban/action.d/weir.conf

# in_root CMD...: CMD chrooted into the fresh root, with its own /proc.
in_root() {
	unshare -m --propagation private sh -c \
		'r=$1; shift; mount -t proc proc "$r/proc" && exec chroot "$r" "$@"' sh "$R" "$@"
}

# What the test machine has of weir, before and after: the package must
# change none of it.
host_state() {
	dpkg-query -W -f='${Package} ${Status}\n' weir 2>&1
	for f in /usr/local/sbin/weir /usr/sbin/weir /etc/weir /etc/weir/weir.yaml \
		 /etc/systemd/system/weir.service /lib/systemd/system/weir.service \
		 /usr/lib/systemd/system/weir.service "/$F2B"; do
		if [ -e "$f" ]; then
			echo "$f $(stat -c '%a %Y' "$f") $([ -f "$f" ] && md5sum <"$f")"
		else
			echo "$f absent"
		fi
	done
}
HOST_BEFORE=$(host_state)

# ---- debian/control against the Makefile ----

# Every package the Makefile's build needs (BUILD_PKGS) is a Build-Depends,
# but for gcc and make, which build-essential brings to every Debian build.
begin_case
pkgs=$(make --no-print-directory -s -f Makefile -f <(printf 'deb-pkgs:\n\t@echo $(BUILD_PKGS)\n') deb-pkgs)
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed -e 's/^Build-Depends://' -e '/^[A-Z]/d' |
	tr ',' '\n' | sed -e 's/(.*)//' -e 's/ //g' | grep .)
[ "$(wc -w <<<"$pkgs")" -ge 8 ] || fail "BUILD_PKGS read from the Makefile: \"$pkgs\""
for p in $pkgs; do
	case $p in gcc | make) continue ;; esac
	grep -qx -- "$p" <<<"$bdeps" || fail "$p (BUILD_PKGS) is not in debian/control's Build-Depends"
done
grep -qx 'debhelper-compat' <<<"$bdeps" || fail "Build-Depends has no debhelper-compat"
echo "# Build-Depends: $(tr '\n' ' ' <<<"$bdeps")"
end_case deb-build-depends

# ---- the build ----

begin_case
mkdir -p "$SRC"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$SRC"
else
	tar --exclude='./build*' -cf - . | tar -xf - -C "$SRC"
fi
if [ -e "$F2B" ]; then
	echo "# fail2ban action: the tree's $F2B"
else
	mkdir -p "$SRC/$(dirname "$F2B")"
	printf '# Stands in for the fail2ban action in tests/deb.sh.\n[Definition]\n' >"$SRC/$F2B"
	echo "# fail2ban action: a stand-in (the tree has no $F2B yet)"
fi
before=$(cd "$SRC" && find . | sort)
if make -C "$SRC" --no-print-directory deb >"$T/make.log" 2>&1; then
	sed -n 's/^\([EWIO]: .*\)/# make deb: \1/p' "$T/make.log"
else
	fail "make deb: $(tail -5 "$T/make.log" | tr '\n' ' ')"
fi
DEBDIR=$SRC/build/deb
DEB=$DEBDIR/weir_${VERSION}-1_$ARCH.deb
[ -f "$DEB" ] || fail "no $(basename "$DEB") in build/deb: $(ls "$DEBDIR" 2>&1 | tr '\n' ' ')"
[ -e "$DEBDIR/src" ] && fail "make deb left its build copy in build/deb/src"
after=$(cd "$SRC" && find . -path ./build -prune -o -print | sort)
[ "$before" == "$after" ] ||
	fail "make deb changed the tree outside build/: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
end_case deb-build

if [ ! -f "$DEB" ]; then
	for c in lintian contents install beside-debian-sluice archive-upgrade-keeps-weir unit \
		upgrade-keeps-state remove-detaches purge replaced-detaches deconfigure-keeps; do
		not_ok "deb-$c" "no package was built"
	done
	exit 1
fi

# ---- lintian ----

begin_case
out=$(lintian --pedantic -I -E --show-overrides "$DEBDIR"/*.changes 2>&1)
rc=$?
errors=$(grep -c '^E: ' <<<"$out")
echo "$out" | grep -E '^[WIPO]: ' | sed 's/^/# lintian: /'
[ "$errors" -eq 0 ] || fail "lintian: $errors errors: $(grep -m3 '^E: ' <<<"$out" | tr '\n' ' ')"
[ "$rc" -eq 0 ] || fail "lintian exited $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"
# The overrides shipped and matched: each one says why (debian/weir.lintian-overrides).
n=$(grep -c '^O: weir: ' <<<"$out")
[ "$n" -eq 4 ] || fail "lintian used $n overrides, want 4 (perms of /etc/weir, no ITP)"
end_case deb-lintian

# ---- the package's files, modes, conffiles and fields ----

begin_case
list=$(dpkg-deb -c "$DEB" | awk '{ print $1, $2, $6 }')
while read -r mode path; do
	grep -qxF -- "$mode root/root $path" <<<"$list" ||
		fail "no $path ($mode root/root) in the package: $(grep -F " $path" <<<"$list")"
done <<EOF
-rwxr-xr-x ./usr/sbin/weir
drwx------ ./etc/weir/
-rw------- ./etc/weir/weir.yaml
-rw------- ./etc/weir/deny.txt
-rw-r--r-- ./$F2B
-rw-r--r-- .$UNITDIR/weir.service
-rw-r--r-- ./usr/share/man/man8/weir.8.gz
-rw-r--r-- ./usr/share/man/man5/weir.yaml.5.gz
-rw-r--r-- ./usr/share/bash-completion/completions/weir
-rw-r--r-- ./usr/share/doc/weir/copyright
-rw-r--r-- ./usr/share/doc/weir/changelog.Debian.gz
EOF
bad=$(awk '$2 != "root/root"' <<<"$list")
[ -z "$bad" ] || fail "not owned by root: $bad"
bad=$(awk '$1 ~ /^.....w|^........w/' <<<"$list")
[ -z "$bad" ] || fail "writable by group or others: $bad"
echo "# $(grep -c . <<<"$list") entries in $(basename "$DEB")"

conffiles=$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles | sort | tr '\n' ' ')
[ "$conffiles" == "/$F2B /etc/weir/deny.txt /etc/weir/weir.yaml " ] ||
	fail "conffiles: $conffiles"
[ "$(dpkg-deb -f "$DEB" Architecture)" == "$ARCH" ] || fail "Architecture $(dpkg-deb -f "$DEB" Architecture)"
[ "$(dpkg-deb -f "$DEB" Version)" == "$VERSION-1" ] ||
	fail "Version $(dpkg-deb -f "$DEB" Version), the Makefile says $VERSION (debian/changelog)"

# Each file the package ships from the tree is the tree's, byte for byte.
X=$T/x
dpkg-deb -x "$DEB" "$X"
cmp -s "$SRC/etc/weir.yaml" "$X/etc/weir/weir.yaml" || fail "/etc/weir/weir.yaml differs from etc/weir.yaml"
cmp -s "$SRC/$F2B" "$X/$F2B" || fail "/$F2B differs from the tree's"
cmp -s "$SRC/etc/bash-completion/weir" "$X/usr/share/bash-completion/completions/weir" ||
	fail "the completion differs from etc/bash-completion/weir"
zcat "$X/usr/share/man/man8/weir.8.gz" | cmp -s - "$SRC/docs/man/weir.8" || fail "weir.8 differs"
zcat "$X/usr/share/man/man5/weir.yaml.5.gz" | cmp -s - "$SRC/docs/man/weir.yaml.5" || fail "weir.yaml.5 differs"
# The unit runs the packaged binary, never /usr/local's.
UNIT=$X$UNITDIR/weir.service
grep -q '/usr/local' "$UNIT" && fail "the unit names /usr/local: $(grep -m1 /usr/local "$UNIT")"
grep -qx 'ExecStart=/usr/sbin/weir run --config /etc/weir/weir.yaml' "$UNIT" ||
	fail "ExecStart: $(grep ExecStart= "$UNIT")"

# A Depends for every shared library the binary needs, by the package that
# has the library here (Debian's shlibs, computed by dh_shlibdeps).
depends=$(dpkg-deb -f "$DEB" Depends)
echo "# Depends: $depends"
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
needed=$(readelf -d "$X/usr/sbin/weir" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ "$(grep -c . <<<"$needed")" -ge 5 ] || fail "the binary needs only: $needed"
for lib in $needed; do
	pkg=$(dpkg -S "*/$MULTIARCH/$lib" 2>/dev/null | head -1 | cut -d: -f1)
	[ -n "$pkg" ] || { fail "no package here has $lib"; continue; }
	[[ ", $depends" == *", $pkg "* || ", $depends," == *", $pkg,"* ]] ||
		fail "$lib is in $pkg, which Depends lacks"
done
end_case deb-contents

# ---- into a fresh Debian 12 root ----

begin_case
if mmdebstrap --quiet --variant=important --skip=cleanup/apt/lists --mode=root "$SUITE" "$R" \
	>"$T/mmdebstrap.log" 2>&1; then
	cp "$DEB" "$R/tmp/"
	echo "# fresh root: $(in_root dpkg-query -W -f='.\n' | grep -c .) packages"
	if ! in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "/tmp/$(basename "$DEB")" \
		>"$T/apt.log" 2>&1; then
		fail "apt-get install in the fresh root: $(tail -3 "$T/apt.log" | tr '\n' ' ')"
	fi
	echo "# apt installed: $(grep -oE '^Setting up [^ ]+' "$T/apt.log" | cut -d' ' -f3 | tr '\n' ' ')"
else
	fail "mmdebstrap $SUITE: $(tail -3 "$T/mmdebstrap.log" | tr '\n' ' ')"
fi
[ "$(in_root dpkg-query -W -f='${Status} ${Version}' weir 2>&1)" == "install ok installed $VERSION-1" ] ||
	fail "weir in the root: $(in_root dpkg-query -W -f='${Status} ${Version}' weir 2>&1)"
out=$(in_root weir version 2>&1) || fail "weir version: $out"
[[ "$out" == "weir $VERSION "* ]] || fail "weir version says \"$out\""
out=$(in_root weir check /etc/weir/weir.yaml 2>&1) || fail "weir check /etc/weir/weir.yaml: $out"
[ "$(in_root weir -j check /etc/weir/weir.yaml 2>&1 | jq -r '.valid, (.rules | length > 0)' | tr '\n' ' ')" == "true true " ] ||
	fail "weir -j check: not valid, or no rules"
# A bad file still fails as it should, from the package's binary.
printf 'rules: [ { name: x, limits: [ { rate: 10xpps } ] } ]\n' >"$R/tmp/bad.yaml"
expect_fail "check of a bad config" in_root weir check /tmp/bad.yaml
got=$(in_root bash -c '. /usr/share/bash-completion/completions/weir &&
	COMP_WORDS=(weir rule ""); COMP_CWORD=2; _weir; echo "${COMPREPLY[*]}"' 2>&1)
[ "$got" == "add del list" ] || fail "the installed completion offers \"$got\" after 'weir rule'"
# man-db is not in the important set (it is in standard): the pages are
# looked up once it is there, as on most installs.
if in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q install man-db >"$T/apt-man.log" 2>&1; then
	got=$(in_root man -w 8 weir 2>&1)
	[ "$got" == /usr/share/man/man8/weir.8.gz ] || fail "man -w 8 weir: $got"
	got=$(in_root man -w 5 weir.yaml 2>&1)
	[ "$got" == /usr/share/man/man5/weir.yaml.5.gz ] || fail "man -w 5 weir.yaml: $got"
else
	fail "apt-get install man-db in the fresh root: $(tail -2 "$T/apt-man.log" | tr '\n' ' ')"
fi
m=$(stat -c '%a' "$R/etc/weir" "$R/etc/weir/weir.yaml" "$R/etc/weir/deny.txt" 2>&1 | tr '\n' ' ')
[ "$m" == "700 600 600 " ] || fail "modes of /etc/weir, its config and deny file: $m"
end_case deb-install

# weir shares no file with Debian's unrelated package `sluice` (a pipe rate
# limiter whose name this project once had): apt installs that one from the
# archive beside it, each answers for itself, and no path is owned by both.
begin_case
if in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q install sluice >"$T/apt-sluice.log" 2>&1; then
	arch_ver=$(in_root dpkg-query -W -f='${Version}' sluice 2>&1)
	[[ "$(in_root dpkg-query -W -f='${Status}' weir 2>&1)" == "install ok installed" ]] ||
		fail "weir after installing Debian's sluice: $(in_root dpkg-query -W -f='${Status}' weir 2>&1)"
	out=$(in_root weir version 2>&1) || fail "weir version beside sluice: $out"
	[[ "$out" == "weir $VERSION "* ]] || fail "weir version beside sluice says \"$out\""
	out=$(in_root sluice -V 2>&1) || fail "sluice -V: $out"
	[[ "$out" == "sluice: ${arch_ver%%-*}"* ]] || fail "Debian's sluice -V says \"$out\" (package $arch_ver)"
	echo "# beside Debian's sluice $arch_ver: \"$out\""
	both=$(comm -12 <(in_root dpkg -L weir | sort) <(in_root dpkg -L sluice | sort) |
		while read -r f; do [ -d "$R$f" ] || echo "$f"; done)
	[ -z "$both" ] || fail "files of both weir and sluice: $(tr '\n' ' ' <<<"$both")"
else
	fail "apt-get install sluice beside weir: $(tail -3 "$T/apt-sluice.log" | tr '\n' ' ')"
fi
end_case deb-beside-debian-sluice

# With the root's Debian 12 archive enabled (its apt lists are kept), an
# upgrade, even a dist-upgrade, leaves the installed weir as it is: no
# package of the archive is newer under its name or takes it over.
begin_case
[ -n "$(find "$R/var/lib/apt/lists" -name '*_Packages*' 2>/dev/null)" ] ||
	fail "the root has no archive lists to upgrade from"
for verb in upgrade dist-upgrade; do
	out=$(in_root apt-get -s -q "$verb" 2>&1) || fail "apt-get -s $verb: $(tail -2 <<<"$out" | tr '\n' ' ')"
	touched=$(grep -E '^(Inst|Remv|Conf|Purg) weir ' <<<"$out")
	[ -z "$touched" ] || fail "apt-get -s $verb would touch weir: $touched"
	echo "# apt-get -s $verb: $(grep -cE '^Inst ' <<<"$out") packages to install, weir not among them"
done
got=$(in_root apt-cache policy weir 2>&1 | sed -n 's/^ *Candidate: //p')
[ "$got" == "$VERSION-1" ] || fail "apt's candidate for weir is \"$got\", not the installed $VERSION-1"
end_case deb-archive-upgrade-keeps-weir

if [ ! -x "$R/usr/sbin/weir" ]; then
	for c in unit upgrade-keeps-state remove-detaches purge replaced-detaches deconfigure-keeps; do
		not_ok "deb-$c" "weir is not installed in the fresh root"
	done
	exit 1
fi

# The unit, as the root's own systemd sees it: installed disabled (nothing
# starts it on install or boot), and valid: its commands exist there and its
# Documentation= pages open.
begin_case
got=$(systemctl --root="$R" is-enabled weir.service 2>&1)
[ "$got" == disabled ] || fail "systemctl is-enabled: $got"
links=$(find "$R/etc/systemd/system" -name 'weir*' 2>/dev/null)
[ -z "$links" ] || fail "the package enabled its unit: $links"
out=$(in_root systemd-analyze verify $UNITDIR/weir.service 2>&1) ||
	fail "systemd-analyze verify: $(tr '\n' ' ' <<<"$out")"
[ -n "$out" ] && echo "$out" | sed 's/^/# systemd-analyze: /'
end_case deb-unit

# An upgrade keeps what weir enforces and the admin's edits; removing the
# package takes weir off the interfaces. In a namespace of this suite,
# with a bpffs of the root's own (mounted at the default root's parent in a
# private mount namespace, where the package's prerm looks), the package's
# weir attaches with a rule; the deny file is edited; the package is
# installed over itself (prerm and postinst run as for an upgrade), then
# removed.
begin_case
NS=$(new_netns deb) || fail "namespace"
in_ns "$NS" ip link add "$TAG-d0" type veth peer name "$TAG-d1" &&
	in_ns "$NS" ip link set "$TAG-d0" up && in_ns "$NS" ip link set "$TAG-d1" up ||
	fail "veth in $NS"
nsenter --net="/run/netns/$NS" unshare -m --propagation private sh -c '
	r=$1 dev=$2 deb=$3
	xdp() { ip -d link show "$dev" | grep -c prog/xdp; }
	mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
		mount -t bpf bpf "$r/sys/fs/bpf" || { echo "mount: failed"; exit 1; }
	chroot "$r" weir attach "$dev" mode generic && chroot "$r" weir rule add debtest proto udp limit 10pps ||
		{ echo "attach: failed"; exit 1; }
	echo "attached: $(xdp)"
	echo "rules: $(chroot "$r" weir -j rule list | grep -o "\"debtest\"")"
	echo 198.18.77.0/24 >>"$r/etc/weir/deny.txt"
	chroot "$r" env DEBIAN_FRONTEND=noninteractive dpkg -i "/tmp/$deb" </dev/null >/dev/null || echo "dpkg -i: failed"
	echo "upgraded: $(xdp)"
	echo "upgraded rules: $(chroot "$r" weir -j rule list | grep -o "\"debtest\"")"
	echo "deny edit: $(grep -c 198.18.77.0/24 "$r/etc/weir/deny.txt")"
	chroot "$r" env DEBIAN_FRONTEND=noninteractive dpkg -r weir </dev/null >/dev/null || echo "dpkg -r: failed"
	echo "removed: $(xdp)"
	echo "pinned: $(ls -A "$r/sys/fs/bpf" | grep -c weir)"
' sh "$R" "$TAG-d0" "$(basename "$DEB")" >"$T/remove.log" 2>&1
sed 's/^/# /' "$T/remove.log"
grep -qx 'attached: 1' "$T/remove.log" || fail "the package's weir did not attach"
grep -qx 'rules: "debtest"' "$T/remove.log" || fail "no rule debtest before the upgrade"
grep -qx 'upgraded: 1' "$T/remove.log" || fail "the upgrade took weir off the interface"
grep -qx 'upgraded rules: "debtest"' "$T/remove.log" || fail "the upgrade lost the rule"
grep -qx 'deny edit: 1' "$T/remove.log" || fail "the upgrade lost the edit of /etc/weir/deny.txt"
grep -q 'failed' "$T/remove.log" && fail "$(grep -m1 failed "$T/remove.log")"
end_case deb-upgrade-keeps-state

begin_case
grep -qx 'removed: 0' "$T/remove.log" || fail "XDP still attached after dpkg -r"
grep -qx 'pinned: 0' "$T/remove.log" || fail "something still pinned after dpkg -r"
# Removed, not purged: the conffiles stay, the rest is gone.
[ "$(in_root dpkg-query -W -f='${Status}' weir 2>&1)" == "deinstall ok config-files" ] ||
	fail "after dpkg -r: $(in_root dpkg-query -W -f='${Status}' weir 2>&1)"
[ -e "$R/usr/sbin/weir" ] && fail "/usr/sbin/weir is still there after dpkg -r"
[ -e "$R/etc/weir/weir.yaml" ] || fail "dpkg -r removed the conffile /etc/weir/weir.yaml"
end_case deb-remove-detaches

begin_case
files=$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
out=$(in_root env DEBIAN_FRONTEND=noninteractive dpkg --purge weir 2>&1) || fail "dpkg --purge: $out"
st=$(in_root dpkg-query -W -f='${Status}' weir 2>&1)
[ -z "$st" ] || [[ "$st" == *"not-installed"* || "$st" == *"no packages found"* ]] || fail "after purge: $st"
lst=$(in_root dpkg -L weir 2>/dev/null)
[ -z "$lst" ] || fail "dpkg -L still lists: $(head -3 <<<"$lst" | tr '\n' ' ')"
for f in $files /etc/weir; do
	[ -e "$R$f" ] && fail "$f is still there after purge"
done
# Besides the logs and the .deb in /tmp: man-db's cache of formatted pages
# (/var/cache/man/cat*), which man-db owns and prunes itself.
left=$(find "$R" -xdev -name '*weir*' ! -path "$R/tmp/*" ! -path "$R/var/log/*" \
	! -path "$R/var/cache/man/cat*" 2>/dev/null)
[ -z "$left" ] || fail "left after purge: $(tr '\n' ' ' <<<"$left")"
echo "# $(grep -c . <<<"$files") files, all gone"
end_case deb-purge

# prerm's other paths, each from a fresh install attached in the suite's
# namespace (pkg_ns below: the root's own bpffs, as in the upgrade case).
# Two stand-in packages made here: weir-successor Conflicts with and
# Replaces weir (dpkg removes weir for it: prerm "remove in-favour"), and
# weir-breaker Breaks weir (dpkg --auto-deconfigure: prerm "deconfigure").
stub_deb() {
	local name=$1 rel=$2 d=$T/$1
	mkdir -p "$d/DEBIAN"
	printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: weir tests <tests@example.invalid>\n%s: weir\nDescription: stand-in for tests/deb.sh\n' \
		"$name" "$rel" >"$d/DEBIAN/control"
	[ "$rel" == Conflicts ] && echo 'Replaces: weir' >>"$d/DEBIAN/control"
	dpkg-deb --root-owner-group -b "$d" "$R/tmp/$name.deb" >/dev/null
}
# pkg_ns SCRIPT LOG: SCRIPT run by sh with $r (the root), $dev (the veth,
# up in $NS), $deb (the package) and the helpers below, in $NS with the
# root's proc, sysfs and a bpffs of its own mounted for it alone.
pkg_ns() {
	nsenter --net="/run/netns/$NS" unshare -m --propagation private sh -c '
		r=$1 dev=$2 deb=$3
		xdp() { ip -d link show "$dev" | grep -c prog/xdp; }
		pins() { ls -A "$r/sys/fs/bpf" | grep -c weir; }
		dpkg_r() { chroot "$r" env DEBIAN_FRONTEND=noninteractive dpkg "$@" </dev/null >/dev/null; }
		status() { chroot "$r" dpkg-query -W -f="\${Status}" "$1" 2>&1; }
		rules() { chroot "$r" weir -j rule list 2>&1 | grep -o "\"debtest\""; }
		mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
			mount -t bpf bpf "$r/sys/fs/bpf" || { echo "mount: failed"; exit 1; }
		dpkg_r -i "/tmp/$deb" || { echo "install: failed"; exit 1; }
		chroot "$r" weir attach "$dev" mode generic &&
			chroot "$r" weir rule add debtest proto udp limit 10pps || { echo "attach: failed"; exit 1; }
		echo "attached: $(xdp) $(pins)"
		'"$1" sh "$R" "$TAG-d0" "$(basename "$DEB")" >"$2" 2>&1
	sed 's/^/# /' "$2"
	grep -q 'failed' "$2" && fail "$(grep -m1 failed "$2")"
	grep -qx 'attached: 1 [1-9]*' "$2" || fail "the package's weir did not attach: $(head -1 "$2")"
}

# Replaced by another package: weir's own prerm takes it off the interface
# before its binary goes, so nothing is left enforcing with no tool to
# change it.
begin_case
stub_deb weir-successor Conflicts
pkg_ns '
	dpkg_r -i /tmp/weir-successor.deb || echo "dpkg -i weir-successor: failed"
	echo "weir: $(status weir)"
	echo "successor: $(status weir-successor)"
	echo "after: $(xdp) $(pins)"
	dpkg_r --purge weir-successor weir || echo "purge: failed"
' "$T/replaced.log"
grep -qx 'successor: install ok installed' "$T/replaced.log" || fail "weir-successor was not installed"
grep -qE '^weir: ([a-z]+ ok config-files|unknown ok not-installed|.*no packages found.*)$' "$T/replaced.log" ||
	fail "dpkg did not remove weir for its successor: $(grep '^weir:' "$T/replaced.log")"
grep -qx 'after: 0 0' "$T/replaced.log" ||
	fail "weir's programs outlived its replacement (xdp, pins): $(grep '^after:' "$T/replaced.log")"
end_case deb-replaced-detaches

# Deconfigured for a package that Breaks it: the binary stays, so
# enforcement stays (nothing is orphaned) and weir still manages it; once
# the breaker is gone weir configures again, and a removal then detaches.
begin_case
stub_deb weir-breaker Breaks
pkg_ns '
	# dpkg then tries to configure weir again, which the Breaks refuses:
	# its exit status says so, and is not what this case is about.
	chroot "$r" env DEBIAN_FRONTEND=noninteractive dpkg --auto-deconfigure -i /tmp/weir-breaker.deb \
		</dev/null >/dev/null 2>&1
	echo "breaker: $(status weir-breaker)"
	echo "weir: $(status weir)"
	echo "deconfigured: $(xdp) $(pins) $(rules)"
	dpkg_r --purge weir-breaker || echo "purge weir-breaker: failed"
	dpkg_r --configure weir || echo "dpkg --configure weir: failed"
	echo "configured: $(status weir) $(xdp) $(rules)"
	dpkg_r --purge weir || echo "purge weir: failed"
	echo "removed: $(xdp) $(pins)"
' "$T/deconf.log"
grep -qx 'breaker: install ok installed' "$T/deconf.log" ||
	fail "weir-breaker was not installed: $(grep '^breaker:' "$T/deconf.log")"
grep -qx 'weir: install ok half-configured' "$T/deconf.log" ||
	fail "weir-breaker did not deconfigure weir: $(grep '^weir:' "$T/deconf.log")"
grep -qE '^deconfigured: 1 [1-9][0-9]* "debtest"$' "$T/deconf.log" ||
	fail "deconfiguring weir changed what it enforces: $(grep '^deconfigured:' "$T/deconf.log")"
grep -qx 'configured: install ok installed 1 "debtest"' "$T/deconf.log" ||
	fail "after the breaker went: $(grep '^configured:' "$T/deconf.log")"
grep -qx 'removed: 0 0' "$T/deconf.log" || fail "after removal: $(grep '^removed:' "$T/deconf.log")"
end_case deb-deconfigure-keeps

begin_case
HOST_AFTER=$(host_state)
[ "$HOST_BEFORE" == "$HOST_AFTER" ] ||
	fail "this machine's weir changed: $(diff <(echo "$HOST_BEFORE") <(echo "$HOST_AFTER") | grep '^[<>]' | tr '\n' ' ')"
end_case deb-host-untouched
