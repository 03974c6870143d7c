/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The objects of the command line, one front end each over libweir: main.c's
 * table calls these with argc/argv after the object word.
 */
#ifndef WEIR_CMD_H
#define WEIR_CMD_H

#include "lib/libweir.h"

int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_status(int argc, char **argv);
int do_rule(int argc, char **argv);
int do_deny(int argc, char **argv);
int do_crowdsec(int argc, char **argv);
/* `weir geo DB country CC,... asn N,...` */
int do_geo(int argc, char **argv);
int do_allow(int argc, char **argv);
/* `weir list feed ...`: blocklist feeds */
int do_list(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_top(int argc, char **argv);
int do_disable(int argc, char **argv);
int do_enable(int argc, char **argv);
int do_set(int argc, char **argv);
int do_capture(int argc, char **argv);
int do_shed(int argc, char **argv);
int do_fleet(int argc, char **argv);
/* `weir auto status` */
int do_auto(int argc, char **argv);
/* auto's mode and mitigations, for `weir status` (auto.c). */
void wr_auto_status(void);
/* `weir stats`' view of auto's rules, the daemon's state file read once a listing. */
struct wr_auto_rules {
	void *doc;
	bool tried;
};
void wr_auto_rule_info(const char *rule, struct wr_auto_rules *st);
void wr_auto_rule_done(struct wr_auto_rules *st);
/* `weir check FILE` */
int do_check(int argc, char **argv);
/* `weir run --config FILE`: the daemon */
int do_run(int argc, char **argv);

/* The capture's switch and lease, for `weir status` (capture.c). */
void wr_capture_status(const struct wr_maps *m, const struct weir_config *cfg);

#endif /* WEIR_CMD_H */
