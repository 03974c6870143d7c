/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The daemon: `weir run --config FILE` (cmd/run.c reads the words). */
#ifndef WEIR_DAEMON_H
#define WEIR_DAEMON_H

#include <stddef.h>

/*
 * Apply the config at path, then stay in the foreground until SIGTERM or
 * SIGINT: reload on SIGHUP and when the file changes, log limited sources,
 * serve metrics, run the shedding controller and the fleet sync. 0 after a
 * clean stop, or -errno after saying why.
 */
int wr_daemon_run(const char *path);

/* The daemon's instance lock, named after the bpffs root: it holds the daemon's pid. */
void wr_daemon_lock_path(char *buf, size_t len);

/*
 * Where the daemon keeps `weir auto`'s state (ext "json": JSON, replaced
 * whole by rename) for `weir auto status`, and where `weir auto
 * on|advise|off` leaves the mode it asks for (ext "mode"): /run/weir/auto.EXT
 * for the default bpffs root, a name after the root for another.
 */
void wr_auto_path(char *buf, size_t len, const char *ext);

#endif /* WEIR_DAEMON_H */
