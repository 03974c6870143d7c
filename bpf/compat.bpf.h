/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What vmlinux.h lacks: UAPI macros and small helpers the data path uses. */
#ifndef WEIR_COMPAT_BPF_H
#define WEIR_COMPAT_BPF_H

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#define EEXIST		17

#ifndef READ_ONCE
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

/* Verdicts of the shared core, mapped to XDP_* / TC_ACT_* by each entry. */
#define WR_VERDICT_PASS	0
#define WR_VERDICT_DROP	1
#define WR_VERDICT_WOULD_DROP	2
/* A SYN to answer with a cookie (weir_cookie_syn); not yet counted as passed or dropped. */
#define WR_VERDICT_COOKIE	3
/* An ACK whose cookie to check (weir_cookie_ack); not yet counted either. */
#define WR_VERDICT_ACK		4

#endif /* WEIR_COMPAT_BPF_H */
