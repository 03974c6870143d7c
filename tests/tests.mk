# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Test builds, included by the top-level Makefile.

TEST_OUT := $(OUT)/tests

$(TEST_OUT):
	$(Q)mkdir -p $@

# Host unit tests of the pure headers (limiter math, parser, matcher).
$(TEST_OUT)/unit: tests/unit.c include/*.h tests/check.h tests/packet.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ -lm

# Host unit tests of the shedding curve (sluice_shed.h), in simulated time.
$(TEST_OUT)/shed_unit: tests/shed_unit.c include/*.h tests/check.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ -lm

# The real BPF object through bpf_prog_test_run_opts.
$(TEST_OUT)/bpf_datapath: tests/bpf_datapath.c $(SKELS) include/*.h tests/check.h \
			  tests/packet.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ $(USER_LDLIBS) -lm

# Shedding by class and reserved capacity in the real BPF object.
$(TEST_OUT)/bpf_shed: tests/bpf_shed.c $(SKELS) include/*.h tests/check.h tests/packet.h \
		      | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ $(USER_LDLIBS) -lm

# The metrics endpoint served from pinned maps, as the daemon serves it.
METRICS_SERVE_OBJS := $(addprefix $(OUT)/user/,metrics.o loader.o output.o args.o)
$(TEST_OUT)/metrics_serve: tests/metrics_serve.c $(METRICS_SERVE_OBJS) | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Iuser $< $(METRICS_SERVE_OBJS) -o $@ $(USER_LDLIBS)

# Writes a known shedding state into the pinned sl_shed, for tests/metrics.sh.
$(TEST_OUT)/shed_poke: tests/shed_poke.c include/*.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LDLIBS)

# Host unit tests of the window algorithms against an exact sliding log, in injected time.
$(TEST_OUT)/windows_unit: tests/windows_unit.c include/*.h tests/check.h | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ -lm

# Windows, several windows on one key and connection limits in the real BPF object.
$(TEST_OUT)/bpf_limits: tests/bpf_limits.c $(SKELS) include/*.h tests/check.h tests/packet.h \
			| $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< -o $@ $(USER_LDLIBS)

# The window accuracy table (tools/windowacc.c) is the limiter math itself.
$(OUT)/windowacc: include/sluice.h include/sluice_limiter.h include/sluice_parse.h

TEST_BINS := $(TEST_OUT)/unit $(TEST_OUT)/shed_unit $(TEST_OUT)/bpf_datapath \
	     $(TEST_OUT)/bpf_shed $(TEST_OUT)/metrics_serve $(TEST_OUT)/shed_poke \
	     $(OUT)/slgen $(OUT)/slsink $(OUT)/shedplot \
	     $(TEST_OUT)/windows_unit $(TEST_OUT)/bpf_limits $(OUT)/windowacc \
	     $(OUT)/slserve $(OUT)/slconn

.PHONY: test test-build
test-build: all $(TEST_BINS)

test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)tests/run.sh
