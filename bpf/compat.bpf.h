/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What vmlinux.h lacks: UAPI macros and small helpers the data path uses. */
#ifndef WEIR_COMPAT_BPF_H
#define WEIR_COMPAT_BPF_H

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
/* Not decided here: the next program or filter on the hook decides. */
#define TC_ACT_UNSPEC	(-1)
#define EEXIST		17

#ifndef READ_ONCE
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

#endif /* WEIR_COMPAT_BPF_H */
