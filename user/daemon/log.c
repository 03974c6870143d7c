// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The daemon's log: a line on stderr, "weir: ...", which systemd's journal
 * keeps. At the bottom of daemon/: every file of it logs through here.
 */
#include <stdarg.h>
#include <stdio.h>
#include "daemon/daemon_int.h"

void dlog(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("weir: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
