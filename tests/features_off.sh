#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The BPF data-path, limits and hostile-frame suites again, with the object
# opened as a kernel before 5.17 gets it: WEIR_FEATURES_OFF=bpf_loop,xdp_frags,syncookie
# (user/lib/kernel_features.h) makes this kernel look as if it had neither
# bpf_loop, multi-buffer XDP nor the raw SYN cookie helpers, so the rules are
# walked by the bounded loop, XDP loads without xdp.frags and the cookie code
# is switched off (bpf_cookie then checks the fallback, bpf_capture captures
# at TC and sees XDP's capture switched off). Case names get the
# prefix "pre5.17-".
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
require_root features_off
BUILD=${BUILD:-build}
rc=0
for t in bpf_datapath bpf_limits bpf_hostile bpf_cookie bpf_capture; do
	WEIR_FEATURES_OFF=bpf_loop,xdp_frags,syncookie "$BUILD/tests/$t" 2>&1 |
		sed -E 's/^(ok|not ok|skip) - /\1 - pre5.17-/'
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
exit $rc
