// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pure parts of SYN cookies (include/weir_cookie.h) on the host:
 * reading a SYN's options as the kernel's tcp_parse_options would, the
 * timestamp that carries the options (the kernel's encoding), the
 * SYN-ACK's option layout, and the Internet checksum.
 */
#include <string.h>

#include "check.h"
#include "weir_cookie.h"

/* A 60-byte TCP header whose options are opts (n bytes), the rest EOL. */
static __u32 hdr_with(__u8 *h, const __u8 *opts, __u32 n)
{
	memset(h, 0, 64);
	memcpy(h + 20, opts, n);
	return 20 + ((n + 3) & ~3u);
}

TEST_CASE(syn_options_linux_client)
{
	static const __u8 o[] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0,
				  1, 3, 3, 7 };
	struct wr_synopts so;
	__u8 h[64];

	wr_syn_options(h, hdr_with(h, o, sizeof(o)), &so);
	CHECK_EQ(so.mss, 1460);
	CHECK_EQ(so.sack, 1);
	CHECK_EQ(so.saw_ts, 1);
	CHECK_EQ(so.tsval, 0x01020304);
	CHECK_EQ(so.saw_ws, 1);
	CHECK_EQ(so.wscale, 7);
}

/* A scale over 14 is read as 14 (RFC 7323); EOL ends the walk. */
TEST_CASE(syn_options_clamped_and_ended)
{
	static const __u8 o[] = { 3, 3, 20, 0, 2, 4, 0x05, 0xb4 };
	struct wr_synopts so;
	__u8 h[64];

	wr_syn_options(h, hdr_with(h, o, sizeof(o)), &so);
	CHECK_EQ(so.saw_ws, 1);
	CHECK_EQ(so.wscale, 14);
	CHECK_EQ(so.mss, 0);	/* after EOL: not read */
}

/* A length under 2, or past the header, ends the walk; what came before stands. */
TEST_CASE(syn_options_malformed)
{
	static const __u8 zero_len[] = { 2, 4, 0x02, 0x18, 8, 0, 1, 1 };
	static const __u8 too_long[] = { 4, 2, 8, 40, 0, 0, 0, 0 };
	static const __u8 bad_mss_len[] = { 2, 3, 0x05, 1, 1, 1, 1, 1 };
	struct wr_synopts so;
	__u8 h[64];

	wr_syn_options(h, hdr_with(h, zero_len, sizeof(zero_len)), &so);
	CHECK_EQ(so.mss, 536);
	CHECK_EQ(so.saw_ts, 0);
	wr_syn_options(h, hdr_with(h, too_long, sizeof(too_long)), &so);
	CHECK_EQ(so.sack, 1);
	CHECK_EQ(so.saw_ts, 0);
	wr_syn_options(h, hdr_with(h, bad_mss_len, sizeof(bad_mss_len)), &so);
	CHECK_EQ(so.mss, 0);
	/* Only NOPs to the end of a 60-byte header: the walk ends within it. */
	memset(h, 0, sizeof(h));
	memset(h + 20, 1, 40);
	wr_syn_options(h, 60, &so);
	CHECK_EQ(so.mss + so.sack + so.saw_ts + so.saw_ws, 0);
}

/*
 * The kernel's cookie_init_timestamp: the low 6 bits carry the client's
 * scale (0xf for none) and SACK; the value never runs ahead of the clock
 * and stays within 64 ms behind it.
 */
TEST_CASE(cookie_tsval_encoding)
{
	static const __u32 flags = WEIR_CK_TS | WEIR_CK_SACK | WEIR_CK_WSCALE;
	struct wr_synopts so;
	__u32 now, ts;

	memset(&so, 0, sizeof(so));
	so.saw_ts = so.saw_ws = so.sack = 1;
	so.wscale = 9;
	for (now = 1000; now < 1000 + 200; now++) {
		ts = wr_cookie_tsval(now, &so, flags);
		CHECK((ts & WR_TSMASK) == (9 | WR_TS_OPT_SACK), "now %u: options %#x", now,
		      ts & WR_TSMASK);
		CHECK((__s32)(now - ts) >= 0 && now - ts < 64, "now %u: tsval %u", now, ts);
	}
	/* Scaling off (tcp_window_scaling 0) or none asked: 0xf; SACK off: bit clear. */
	ts = wr_cookie_tsval(5000, &so, WEIR_CK_TS);
	CHECK_EQ(ts & WR_TSMASK, WR_TS_OPT_WSCALE_MASK);
	/* Around the wrap of the 32-bit clock. */
	ts = wr_cookie_tsval(3, &so, flags);
	CHECK((__s32)(3 - ts) >= 0 && (__u32)(3 - ts) < 64, "tsval %u at 3", ts);
}

/* The SYN-ACK's options: everything with a timestamp, MSS alone without. */
TEST_CASE(synack_option_layout)
{
	static const __u32 flags = WEIR_CK_TS | WEIR_CK_SACK | WEIR_CK_WSCALE;
	static const __u8 full[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x12, 0x34,
				       0xaa, 0xbb, 0xcc, 0xdd, 1, 3, 3, 7 };
	static const __u8 no_sack_ws[20] = { 2, 4, 0x05, 0xb4, 1, 1, 8, 10, 0, 0, 0x12, 0x34,
					     0xaa, 0xbb, 0xcc, 0xdd, 1, 1, 1, 1 };
	struct wr_synopts so;
	__u8 p[20];

	memset(&so, 0, sizeof(so));
	so.saw_ts = so.saw_ws = so.sack = 1;
	so.tsval = 0xaabbccdd;
	CHECK_EQ(wr_synack_tcplen(&so, flags), WR_SYNACK_TCPLEN);
	wr_synack_options(p, 1460, &so, flags, 0x1234, 7);
	CHECK(!memcmp(p, full, 20), "full layout differs");
	wr_synack_options(p, 1460, &so, WEIR_CK_TS, 0x1234, 7);
	CHECK(!memcmp(p, no_sack_ws, 20), "layout without SACK and scaling differs");
	/* No timestamp from the client, or none allowed: MSS alone. */
	CHECK_EQ(wr_synack_tcplen(&so, WEIR_CK_SACK | WEIR_CK_WSCALE), WR_SYNACK_TCPLEN_MIN);
	so.saw_ts = 0;
	CHECK_EQ(wr_synack_tcplen(&so, flags), WR_SYNACK_TCPLEN_MIN);
	memset(p, 0xee, sizeof(p));
	wr_synack_options(p, 1220, &so, flags, 0x1234, 7);
	CHECK(p[0] == 2 && p[1] == 4 && p[2] == 0x04 && p[3] == 0xc4 && p[4] == 0xee,
	      "MSS-only layout: %u %u %u %u %u", p[0], p[1], p[2], p[3], p[4]);
}

/* RFC 1071's example: the sum of 0001 f203 f4f5 f6f7 is ddf2 (folded). */
TEST_CASE(checksum_rfc1071)
{
	static const __u8 d[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	CHECK_EQ(wr_csum_fold(wr_csum_add(0, d, sizeof(d))), 0xddf2);
}

int main(void)
{
	return check_run_all();
}
