/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the shared core decides about a packet (weir_core), before each
 * entry maps it to its own return code: XDP_* in weir_xdp, TC_ACT_* in
 * weir_tc.
 */
#ifndef WEIR_VERDICT_H
#define WEIR_VERDICT_H

#define WR_VERDICT_PASS	0
#define WR_VERDICT_DROP	1
#define WR_VERDICT_WOULD_DROP	2
/* A SYN to answer with a cookie (weir_cookie_syn); not yet counted as passed or dropped. */
#define WR_VERDICT_COOKIE	3
/* An ACK whose cookie to check (weir_cookie_ack); not yet counted either. */
#define WR_VERDICT_ACK		4

#endif /* WEIR_VERDICT_H */
