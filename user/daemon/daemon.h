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

/*
 * Where the daemon keeps `weir auto`'s state (JSON, replaced whole by
 * rename) for `weir auto status`: /run/weir/auto.json for the default
 * bpffs root, a name after the root for another.
 */
void wr_auto_state_path(char *buf, size_t len);

#endif /* WEIR_DAEMON_H */
