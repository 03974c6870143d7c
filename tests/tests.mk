# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Test builds, included by the top-level Makefile.

TEST_OUT := $(OUT)/tests

$(TEST_OUT):
	$(Q)mkdir -p $@

# C suites, found by name: tests/*_unit.c and tests/unit.c test the pure
# headers on the host; tests/bpf_*.c drive the real BPF object through
# bpf_prog_test_run. Each prints one line per case (cases register
# themselves, tests/check.h) and tests/run.sh runs them in this order, unit
# suites first, from `make --no-print-directory -s print-c-suites`.
C_UNIT_SUITES := $(patsubst tests/%.c,%,$(sort $(wildcard tests/unit.c tests/*_unit.c)))
C_BPF_SUITES  := $(patsubst tests/%.c,%,$(sort $(wildcard tests/bpf_*.c)))
# tests/fleet_sim.c: the BPF object and the daemon's fleet sync (user/fleet/*.c
# and what it needs, main.c aside) against a real redis-server.
C_FLEET_SUITES := fleet_sim
# tests/unit_rules.c: the rule grammar through libweir, on the host (no BPF);
# tests/unit_geo.c: the MMDB expander (user/integrations/) over libmaxminddb.
C_LIB_SUITES  := unit_rules unit_geo
# tests/auto_*.c: `weir auto`'s detector and fingerprint chooser (user/auto/)
# on the host, over traces they write and read as pcap files.
C_AUTO_SUITES := $(patsubst tests/%.c,%,$(sort $(wildcard tests/auto_*.c)))
C_SUITES      := $(C_UNIT_SUITES) $(C_LIB_SUITES) $(C_AUTO_SUITES) $(C_BPF_SUITES) $(C_FLEET_SUITES)

$(addprefix $(TEST_OUT)/,$(C_UNIT_SUITES)): $(TEST_OUT)/%: tests/%.c include/*.h tests/check.h \
					   tests/packet.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ -lm

# Suites of the BPF object that also call libweir (its feed map and source set builders).
C_BPF_LIB_SUITES := bpf_feeds bpf_srcset
$(addprefix $(TEST_OUT)/,$(filter-out $(C_BPF_LIB_SUITES),$(C_BPF_SUITES))): $(TEST_OUT)/%: tests/%.c $(SKELS) include/*.h tests/check.h \
					  tests/packet.h tests/bpf_harness.h \
					  user/lib/kernel_features.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ $(USER_LDLIBS) -lm

FLEET_SIM_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(wildcard user/fleet/*.c user/config/*.c))
$(TEST_OUT)/fleet_sim: tests/fleet_sim.c $(FLEET_SIM_OBJS) $(LIBWEIR) $(SKELS) include/*.h tests/check.h \
		       tests/packet.h tests/bpf_harness.h user/fleet/fleet.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(FLEET_SIM_OBJS) $(LIBWEIR) -o $@ $(USER_LDLIBS) -lm

$(addprefix $(TEST_OUT)/,$(C_BPF_LIB_SUITES)): $(TEST_OUT)/%: tests/%.c $(LIBWEIR) $(SKELS) include/*.h \
					      tests/check.h tests/packet.h tests/bpf_harness.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(LIBWEIR) -o $@ $(USER_LDLIBS) -lm

$(TEST_OUT)/unit_rules: tests/unit_rules.c $(LIBWEIR) include/*.h tests/check.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(LIBWEIR) -o $@ $(USER_LDLIBS) -lm

INTEGRATIONS_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(wildcard user/integrations/*.c))
$(TEST_OUT)/unit_geo: tests/unit_geo.c $(INTEGRATIONS_OBJS) $(LIBWEIR) tests/check.h \
		      user/integrations/geo.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(INTEGRATIONS_OBJS) $(LIBWEIR) -o $@ $(USER_LDLIBS) -lm

AUTO_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(wildcard user/auto/*.c))
$(addprefix $(TEST_OUT)/,$(C_AUTO_SUITES)): $(TEST_OUT)/%: tests/%.c $(AUTO_OBJS) $(LIBWEIR) include/*.h \
					   tests/check.h tests/packet.h $(wildcard user/auto/*.h) | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(AUTO_OBJS) $(LIBWEIR) -o $@ $(USER_LDLIBS) -lm

.PHONY: print-c-suites
print-c-suites:
	@echo $(C_SUITES)

# The BPF compiler's flags, for tests/bpf_headers.sh (the object's own, so
# a header is checked as the build compiles it).
.PHONY: print-bpf-cflags
print-bpf-cflags:
	@echo $(BPF_CFLAGS)

# The metrics endpoint served from pinned maps, as the daemon serves it.
$(TEST_OUT)/metrics_serve: tests/metrics_serve.c $(OUT)/user/daemon/metrics.o $(LIBWEIR) | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(OUT)/user/daemon/metrics.o $(LIBWEIR) -o $@ $(USER_LDLIBS)

# Writes a known shedding state into the pinned wr_shed, for tests/metrics.sh.
$(TEST_OUT)/shed_poke: tests/shed_poke.c include/*.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LDLIBS)

# The window accuracy table (tools/windowacc.c) is the limiter math itself.
$(OUT)/windowacc: include/weir.h include/weir_limiter.h include/weir_parse.h

TEST_BINS := $(addprefix $(TEST_OUT)/,$(C_SUITES)) $(TEST_OUT)/metrics_serve \
	     $(TEST_OUT)/shed_poke $(OUT)/wrgen $(OUT)/wrsink $(OUT)/shedplot $(OUT)/windowacc \
	     $(OUT)/wrserve $(OUT)/wrconn

.PHONY: test test-build
test-build: all $(TEST_BINS)

test: test-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)PATH="$(CURDIR)/$(DEPS_BIN):$$PATH" BUILD=$(OUT) tests/run.sh

# Debian 13 (trixie) from here: a fresh root (mmdebstrap, kept in
# $(OUT)/trixie/ until its package list changes) in which `make deps`, `make`,
# the C suites, tests/cli.sh and tests/config.sh, `make deb` and the
# package's install run as on a new Debian 13 host (tests/trixie.sh).
.PHONY: test-trixie
test-trixie:
	$(Q)tools/deps.sh mmdebstrap
	$(Q)BUILD=$(OUT) tests/run.sh tests/trixie.sh

# ---- fuzzing: libFuzzer targets built by clang with ASan and UBSan ----
# tests/fuzz/fuzz_*.c, each linked with the userspace objects (main.c aside)
# rebuilt for coverage. Alignment is not checked: the parser reads header
# fields at their offsets in the frame, as BPF does, which x86 allows.
# UBSan reports are recoverable here only so that tests/fuzz/ubsan.supp can
# hold known findings back while fuzzing; tests/fuzz.sh makes every other
# report fatal (halt_on_error) and replays regressions with no suppressions.
# tests/fuzz.sh runs each target for FUZZ_SECS from tests/fuzz/corpus/ and
# replays tests/fuzz/regressions/; a short run of it is part of make test.
FUZZ_OUT      := $(OUT)/fuzz
FUZZ_TARGETS  := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS     := $(addprefix $(FUZZ_OUT)/,$(FUZZ_TARGETS))
FUZZ_CFLAGS   := $(filter-out -Werror -O2 -fno-sanitize-recover=undefined,$(USER_CFLAGS)) -O1 -Iuser -Itests \
		 -fsanitize=address,undefined -fno-sanitize=alignment -fno-omit-frame-pointer
# libweir and the config reader, rebuilt for coverage: an archive, as the
# binary links it.
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ_OUT)/user/%.o,$(LIB_SRCS) $(wildcard user/config/*.c))
FUZZ_LIB      := $(FUZZ_OUT)/libweir-fuzz.a
FUZZ_SECS     ?= 300

$(FUZZ_OUT)/user:
	$(Q)mkdir -p $@

$(FUZZ_OUT)/user/%.o: user/%.c $(SKELS) | $(FUZZ_OUT)/user
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The packet target needs only the shared headers.
$(FUZZ_OUT)/fuzz_packet: tests/fuzz/fuzz_packet.c include/*.h | $(FUZZ_OUT)/user
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) | $(FUZZ_OUT)/user
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ $(USER_LDLIBS)

.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_LIB)
-include $(wildcard $(FUZZ_OUT)/user/*.d $(FUZZ_OUT)/user/*/*.d)

test-build: $(FUZZ_BINS)

.PHONY: fuzz
fuzz: test-deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)BUILD=$(OUT) FUZZ_SECS=$(FUZZ_SECS) tests/fuzz.sh

# ---- soak: a spoofed-source flood at the generator's maximum ----
# SOAK_SECS of it (60 here; tests/run.sh runs a short one inside make test),
# and beside it a SYN cookie left to go stale (about 125 s, whatever SOAK_SECS).
SOAK_SECS ?= 60
.PHONY: soak
soak: test-deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_OUT)/bpf_cookie
	$(Q)BUILD=$(OUT) SOAK_SECS=$(SOAK_SECS) tests/soak.sh
