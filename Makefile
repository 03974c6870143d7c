# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# weir: packet-level rate limiter and DoS front line.
#
#   make            build build/weir
#   make deps       install missing Debian packages (as root)
#   make test       everything under tests/ (installs deps first)
#   make demo       throwaway namespaces, one abusive source, live stats
#   make demo-fleet three hosts, one Redis: a fleet-wide limit, and Redis going away
#   make plot-shed  the shedding curve over an overload, drawn into docs/shed.png
#   make bench      weir against the floor, nftables and iptables: docs/BENCHMARKS.md
#   make deb        a Debian package (debian/) into build/deb/
#   make fuzz       every libFuzzer target for FUZZ_SECS each (default 300)
#   make soak       a 60 s spoofed-source flood against the daemon, and a SYN cookie going stale
#   make test-kernels  Debian's 6.1, 6.12 and 5.10 kernels in qemu: docs/KERNELS.md
#   make test-trixie   build, test and package in a fresh Debian 13 root (tests/trixie.sh)
#   V=1             show the commands
#   SANITIZE=1      ASan + UBSan in the userspace and test builds, into build-san

# SANITIZE=1: the binary, the tools and the tests built with AddressSanitizer
# and UndefinedBehaviorSanitizer (any report is fatal) into their own OUT, so
# build/ stays as it is; `make test SANITIZE=1` runs every suite against them.
# Alignment is not checked: the packet parser reads header fields at their
# offsets in the frame (2-byte aligned behind Ethernet), as BPF does.
ifeq ($(SANITIZE),1)
OUT ?= build-san
EXTRA_CFLAGS += -fsanitize=address,undefined -fno-sanitize=alignment \
		-fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif

OUT      ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
VERSION  := 0.1.0

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

COMMON_CFLAGS := -O2 -g -Wall -Wextra -Werror -Iinclude -I$(OUT)
USER_CFLAGS   := $(COMMON_CFLAGS) -Iuser -std=gnu11 -D_GNU_SOURCE -DWEIR_VERSION='"$(VERSION)"' \
		 -Wno-missing-field-initializers $(EXTRA_CFLAGS)
# libbpf linked statically (Debian's libbpf-dev ships the archive): the
# binary then runs where the distribution's libbpf is older (Ubuntu 22.04
# has 0.5) or missing; the rest are stable C libraries every distribution has.
# hiredis (fleet limits) statically too: its blocking API, the same in
# Debian 12's 0.14 and Debian 13's 1.2 (a read past the timeout is
# REDIS_ERR_IO with EAGAIN in both: tests/trixie.sh probes it).
# libxdp (sharing XDP with other programs through its dispatcher) statically
# and before libbpf: Debian's libxdp.so would pull the system's libbpf.so
# into the process beside the static one, two copies of libbpf in one
# binary; libxdp.a carries its dispatcher object built in. libpcap (`weir
# capture` writes pcap with it) dynamically: every distribution ships it.
USER_LDLIBS   := -l:libxdp.a -l:libbpf.a -l:libhiredis.a -lelf -lz -lcap -lyaml -lmicrohttpd -lmnl -lpthread \
		 -lcurl -ljson-c -lpcap -lmaxminddb \
		 -lm $(EXTRA_LDFLAGS)
BPF_CFLAGS    := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		 -Iinclude -Ibpf -I$(OUT)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
# Userspace: libweir (user/util/ and user/lib/: the owners of weir's kernel
# state, docs/ARCHITECTURE.md) as an archive, and its front ends (one
# directory each: cmd/, config/, daemon/, fleet/, integrations/) with main.c
# linked over it into build/weir. Tests and tools link the archive too.
LIB_SRCS  := $(wildcard user/util/*.c user/lib/*.c)
LIB_OBJS  := $(patsubst user/%.c,$(OUT)/user/%.o,$(LIB_SRCS))
LIBWEIR   := $(OUT)/libweir.a
USER_SRCS := $(wildcard user/*.c user/*/*.c)
FRONT_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(filter-out $(LIB_SRCS) user/main.c,$(USER_SRCS)))
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS))

# Debian packages, each for a reason (docs/building.md lists the same):
#   build: the BPF compiler, libbpf and bpftool (vmlinux.h, skeletons) and
#          the libraries the binary links (libcurl and json-c: the CrowdSec
#          bouncer's HTTP and JSON, libmaxminddb: `weir geo`'s country and
#          ASN sets)
#   test:  iproute2 (ip, ss), jq (JSON output), curl (metrics endpoint),
#          valgrind (tests/memcheck.sh), libclang-rt-dev (libFuzzer for
#          tests/fuzz.sh), libcap2-bin (capsh decodes the daemon's
#          capabilities), the benchmark's competitors for
#          tests/bench_smoke.sh, and qemu-system-x86 and cpio, which boot
#          Debian 12's own kernel for tests/kernels.sh, and groff-base
#          (tests/docs.sh renders the man pages), and redis-server, the
#          fleet's store (tests/fleet.sh starts its own, in namespaces),
#          fail2ban and crowdsec, the ban tools tests/fail2ban.sh and
#          tests/crowdsec.sh run with private configs (tools/deps.sh keeps
#          crowdsec from registering with CrowdSec's Central API),
#          and what builds and checks the Debian package for tests/deb.sh:
#          debhelper, dpkg-dev, fakeroot, lintian, and mmdebstrap (a fresh
#          Debian 12 root to install it into)
#          xdp-tools (xdp-filter and xdp-loader share interfaces with weir
#          through libxdp's dispatcher in tests/xdpmulti.sh), and tcpdump,
#          which reads back what `weir capture` wrote (tests/capture.sh), and
#          dnsmasq-base and bind9-dnsutils, the real DNS server and client of
#          tests/reflect.sh (dnsmasq is tests/attack.sh's DNS server too),
#          and python3: its http.server is the web server of tests/tcpstate.sh
#          and tests/attack.sh, and a client there holds a connection open,
#          and mmdb-bin, whose mmdblookup reads back the databases
#          tools/mkmmdb.py writes for tests/geo.sh
# promtool (Prometheus's metrics linter) is unpacked from Debian's
# promtool package (Debian 13) or prometheus (Debian 12, where it is part of
# the server's package) into $(OUT)/deps/bin without installing either: the
# server would start on :9090. chronyd, tests/reflect.sh's NTP server and
# client, is unpacked from Debian's chrony the same way: installed, the
# package would replace the host's time daemon (it conflicts with
# systemd-timesyncd) and run at boot. libclang-rt-dev is the runtime of the
# release's own clang (14 on Debian 12, 19 on Debian 13).
BUILD_PKGS := clang gcc make libbpf-dev bpftool libelf-dev libcap-dev libyaml-dev libmnl-dev \
	      libmicrohttpd-dev libhiredis-dev libcurl4-openssl-dev libjson-c-dev libxdp-dev libpcap-dev \
	      libmaxminddb-dev
TEST_PKGS  := iproute2 jq curl valgrind redis-server libclang-rt-dev libcap2-bin nftables iptables ethtool \
	      qemu-system-x86 cpio groff-base fail2ban crowdsec debhelper dpkg-dev fakeroot lintian \
	      mmdebstrap xdp-tools tcpdump dnsmasq-base bind9-dnsutils python3 mmdb-bin
DEPS_PKGS  := $(BUILD_PKGS)
DEPS_BIN   := $(OUT)/deps/bin

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.PHONY: all deps test-deps test demo demo-fleet plot-shed clean install fuzz soak

PREFIX ?= /usr/local
# Where the systemd unit goes: /etc/systemd/system for a local install; the
# Debian package puts it in its release's unit directory (debian/rules).
SYSTEMDUNITDIR ?= /etc/systemd/system
FAIL2BAN_ACTION := etc/fail2ban/action.d/weir.conf
# The binary, the example config (kept if one is there), the systemd unit
# (its ExecStart naming the binary under PREFIX), the man pages weir(8) and
# weir.yaml(5), the bash completion and, when the tree has it, the fail2ban
# action. DESTDIR: a staging root, as `make deb` uses it.
install: $(OUT)/weir
	install -D -m 0755 $(OUT)/weir $(DESTDIR)$(PREFIX)/sbin/weir
	install -d -m 0700 $(DESTDIR)/etc/weir
	[ -e $(DESTDIR)/etc/weir/weir.yaml ] || \
		install -m 0600 etc/weir.yaml $(DESTDIR)/etc/weir/weir.yaml
	[ -e $(DESTDIR)/etc/weir/deny.txt ] || \
		install -m 0600 etc/deny.txt $(DESTDIR)/etc/weir/deny.txt
	install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/sbin/weir|$(PREFIX)/sbin/weir|g' etc/weir.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/weir.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/weir.service
	install -D -m 0644 docs/man/weir.8 $(DESTDIR)$(PREFIX)/share/man/man8/weir.8
	install -D -m 0644 docs/man/weir.yaml.5 $(DESTDIR)$(PREFIX)/share/man/man5/weir.yaml.5
	install -D -m 0644 etc/bash-completion/weir \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/weir
	if [ -e $(FAIL2BAN_ACTION) ]; then \
		install -D -m 0644 $(FAIL2BAN_ACTION) $(DESTDIR)/$(FAIL2BAN_ACTION); fi

all: $(OUT)/weir $(OUT)/wrgen $(OUT)/wrsink $(OUT)/wrlisten $(OUT)/wrattack

$(OUT) $(OUT)/user:
	$(Q)mkdir -p $@

# vmlinux.h from the running kernel's BTF.
$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# Kept: the skeleton embeds it, and tools read it; deleted as an
# intermediate, a second make would rebuild everything once.
.SECONDARY: $(BPF_OBJS)

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

$(OUT)/user/%.o: user/%.c $(SKELS) | $(OUT)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

# The fleet's Redis scripts (user/fleet/*.lua) as NUL-terminated C arrays
# for SCRIPT LOAD, one header each in $(OUT)/fleet/ (included as
# "fleet/NAME.lua.h"): od and sed rather than xxd -i, which comes with vim
# and need not be on a build host; the SPDX line is dropped, so Redis gets
# the script alone, byte for byte as the file has it after that line.
FLEET_LUA := $(patsubst user/fleet/%.lua,$(OUT)/fleet/%.lua.h,$(wildcard user/fleet/*.lua))

$(OUT)/fleet/%.lua.h: user/fleet/%.lua
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo '/* Generated from $< by the Makefile: do not edit. */'; \
	  echo 'static const char $*_lua[] = {'; \
	  sed '1{/^-- SPDX-License-Identifier:/d;}' $< | od -An -v -tx1 | \
	  sed -e 's/ \([0-9a-f][0-9a-f]\)/ 0x\1,/g' -e 's/^ /\t/'; \
	  printf '\t0\n};\n'; } > $@

$(filter $(OUT)/user/fleet/%,$(FRONT_OBJS)): $(FLEET_LUA)

$(LIBWEIR): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/weir: $(OUT)/user/main.o $(FRONT_OBJS) $(LIBWEIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(USER_LDLIBS) -o $@

# Traffic tools for the tests and the demo: a paced generator and a counting sink.
$(OUT)/%: tools/%.c tools/toolutil.h | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ -lm

deps:
	$(Q)tools/deps.sh $(DEPS_PKGS)

test-deps:
	$(Q)tools/deps.sh $(BUILD_PKGS) $(TEST_PKGS)
	$(Q)tools/deps.sh --extract $(OUT)/deps promtool,prometheus promtool
	$(Q)tools/deps.sh --extract $(OUT)/deps chrony chronyd

# Debian's 6.1, 6.12 and 5.10 kernels in qemu guests: load, traffic and the
# BPF suites in each, the table into docs/KERNELS.md (tools/kernels/).
.PHONY: test-kernels
test-kernels: test-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)BUILD=$(OUT) tools/kernels/test-kernels.sh

demo-fleet: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory deps DEPS_PKGS="redis-server jq"
	$(Q)tools/demo-fleet.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory deps DEPS_PKGS=iproute2
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

# The shedding curve over a good / overloaded / good utilization trace,
# drawn with gnuplot (gnuplot-nox is installed if there is no gnuplot).
plot-shed: $(OUT)/shed.dat
	$(Q)command -v gnuplot >/dev/null || $(MAKE) --no-print-directory deps DEPS_PKGS=gnuplot-nox
	$(call msg,PLOT,docs/shed.png)
	$(Q)gnuplot -e "data='$<'; out='docs/shed.png'" tools/shedplot.gp

$(OUT)/shed.dat: $(OUT)/shedplot
	$(call msg,GEN,$@)
	$(Q)$< > $@

$(OUT)/shedplot: tools/shedplot.c include/weir.h include/weir_shed.h | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ -lm

# ---- make deb: a Debian package, by debhelper (debian/) ----
# dpkg-buildpackage builds in a copy of the tree ($(DEB_DIR)/src: the files
# git knows or would add, or every file outside the build directories when
# the tree is not a git checkout) and writes the packages, .buildinfo and
# .changes beside it, into $(DEB_DIR); the tree itself is left as it was.
# lintian then checks them and fails the target on any error.
DEB_PKGS := build-essential debhelper dpkg-dev fakeroot lintian
DEB_DIR  := $(OUT)/deb
.PHONY: deb
deb:
	$(Q)tools/deps.sh $(BUILD_PKGS) $(DEB_PKGS)
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	$(Q)if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			tar --null --ignore-failed-read -T - -cf -; \
	else \
		tar --exclude=./$(OUT) --exclude='./build*' -cf - .; \
	fi | tar -xf - -C $(DEB_DIR)/src
	$(Q)cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc -Jauto >../build.log 2>&1 || \
		{ tail -40 ../build.log; echo "deb: dpkg-buildpackage failed, see $(DEB_DIR)/build.log" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR)/src
	$(Q)lintian --fail-on error $(DEB_DIR)/*.changes
	$(Q)ls $(DEB_DIR)/*.deb

# ---- make bench: weir against the floor, nftables and iptables (tools/bench/) ----
# Runs every stage once (under 10 minutes, and about 12 more for the attack
# stage's harness) and writes docs/BENCHMARKS.md and docs/bench-*.png;
# BENCH_ARGS goes to tools/bench/bench.sh (--help). The attack stage's service
# and clients need dnsmasq-base, python3, tcpdump and jq (tools/attack/run.sh).
BENCH_PKGS := nftables iptables gnuplot-nox ethtool redis-server dnsmasq-base python3 tcpdump jq
BENCH_BPF  := $(patsubst tools/bench/%.bpf.c,$(OUT)/bench/%.bpf.o,$(wildcard tools/bench/*.bpf.c))
BENCH_BINS := $(OUT)/bench/progcost $(OUT)/bench/wrflood $(OUT)/bench/wrrr $(OUT)/bench/vstats \
	      $(OUT)/bench/fleetkeys $(OUT)/bench/feedbench
.PHONY: bench bench-build bench-deps

$(OUT)/bench:
	$(Q)mkdir -p $@

$(OUT)/bench/%.bpf.o: tools/bench/%.bpf.c $(OUT)/vmlinux.h | $(OUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/bench/%.skel.h: $(OUT)/bench/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

# Cost per packet through bpf_prog_test_run, next to a trivial program.
$(OUT)/bench/progcost: tools/bench/progcost.c $(SKELS) $(OUT)/bench/prims.skel.h \
			$(OUT)/bench/trivial.skel.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -I$(OUT)/bench $< -o $@ $(USER_LDLIBS)

# Blocklist feeds: load time, memory and per-packet cost (libweir's builder).
$(OUT)/bench/feedbench: tools/bench/feedbench.c $(LIBWEIR) $(SKELS) $(OUT)/bench/trivial.skel.h \
			user/lib/kernel_features.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -I$(OUT)/bench $< $(LIBWEIR) -o $@ $(USER_LDLIBS)

# The verifier's headroom per program on the running kernel.
$(OUT)/bench/vstats: tools/bench/vstats.c $(SKELS) user/lib/kernel_features.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LDLIBS)

$(OUT)/bench/wrflood: tools/bench/wrflood.c tools/toolutil.h $(OUT)/bench/wrflood.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -I$(OUT)/bench $< -o $@ $(USER_LDLIBS)

# Hot keys of a fleet limit without traffic, for the fleet stage.
$(OUT)/bench/fleetkeys: tools/bench/fleetkeys.c tools/toolutil.h include/*.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LDLIBS)

$(OUT)/bench/wrrr: tools/bench/wrrr.c tools/toolutil.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ -lm

bench-build: all $(BENCH_BINS) $(BENCH_BPF) $(OUT)/wrserve $(OUT)/wrconn

bench-deps:
	$(Q)$(MAKE) --no-print-directory deps DEPS_PKGS="$(BENCH_PKGS)"

bench: deps bench-deps
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)BUILD=$(OUT) tools/bench/bench.sh $(BENCH_ARGS)

# make test runs a few seconds of it (tests/bench_smoke.sh), so it cannot rot.
test-build: $(BENCH_BINS) $(BENCH_BPF)

include tests/tests.mk

clean:
	$(Q)rm -rf $(OUT)

-include $(wildcard $(OUT)/*.d $(OUT)/user/*.d $(OUT)/user/*/*.d $(OUT)/bench/*.d)
