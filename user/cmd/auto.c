// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto status`: what the daemon's `weir auto` watches and what it
 * installed or advised, from the state file the daemon replaces each tick
 * (daemon/auto.c, wr_auto_state_path). The file is JSON, read here with
 * libyaml (JSON's flow style is YAML), so that text and -j come out of the
 * one printing path. The daemon's pid in it says whether the state is live.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>
#include "daemon/daemon.h"
#include "cmd/cmd.h"

static void usage_auto(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir auto status\n"
		"       weir auto on|advise|off\n"
		"  What `weir auto` does in the daemon (`weir run` with an auto: section,\n"
		"  mode advise or on): the busiest traffic classes with their rates and\n"
		"  baselines, and each mitigation: its rule (auto-N), fingerprint, onset,\n"
		"  whether it was installed or only advised, and its expiry; with a\n"
		"  fleet: section, the rules other hosts found (auto-fN, by whom).\n"
		"  on, advise, off: the running daemon switches auto to that mode until\n"
		"  its next reload, when the config's auto: { mode } applies again\n"
		"  (docs/auto.md).\n");
}

/* A loaded state file. */
struct st {
	yaml_document_t doc;
	yaml_node_t *top;
};

/* The value of key in mapping n, or NULL. */
static yaml_node_t *get(struct st *s, yaml_node_t *n, const char *key)
{
	yaml_node_pair_t *p;

	if (!n || n->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&s->doc, p->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(&s->doc, p->value);
	}
	return NULL;
}

static const char *str(struct st *s, yaml_node_t *n, const char *key)
{
	yaml_node_t *v = get(s, n, key);

	return v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
}

static double num(struct st *s, yaml_node_t *n, const char *key)
{
	return strtod(str(s, n, key), NULL);
}

/* Element i of sequence n, or NULL. */
static yaml_node_t *item(struct st *s, yaml_node_t *n, size_t i)
{
	if (!n || n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.start + i >= n->data.sequence.items.top)
		return NULL;
	return yaml_document_get_node(&s->doc, n->data.sequence.items.start[i]);
}

/* The state file of a live daemon: 0, or -ENOENT when no daemon runs auto. */
static int load(struct st *s)
{
	char path[PATH_MAX];
	yaml_parser_t parser;
	FILE *f;
	long pid;
	int ok;

	wr_auto_path(path, sizeof(path), "json");
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	ok = yaml_parser_load(&parser, &s->doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (!ok)
		return -EINVAL;
	s->top = yaml_document_get_root_node(&s->doc);
	pid = (long)num(s, s->top, "pid");
	/* A daemon that was killed left its file: it is no state of anything. */
	if (!s->top || pid <= 0 || (kill((pid_t)pid, 0) && errno != EPERM) ||
	    !strcmp(str(s, s->top, "mode"), "off")) {
		yaml_document_delete(&s->doc);
		return -ENOENT;
	}
	return 0;
}

/* A wall-clock time as HH:MM:SS, local time. */
static const char *clock_text(double t, char *buf, size_t len)
{
	time_t sec = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&sec, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%H:%M:%S", &tm);
	return buf;
}

static void print_classes(struct st *s)
{
	yaml_node_t *cl = get(s, s->top, "classes"), *c;
	size_t i;

	open_array("classes");
	print_text("classes (the busiest):%s\n", item(s, cl, 0) ? "" : " none yet");
	for (i = 0; (c = item(s, cl, i)); i++) {
		open_object(NULL);
		print_str("class", "  %-24s", str(s, c, "class"));
		print_str("state", " %-9s", str(s, c, "state"));
		print_double("pps", " %.0f pps", num(s, c, "pps"));
		print_double("bps", " %.0f B/s", num(s, c, "bps"));
		print_double("baseline_pps", " (baseline %.0f pps", num(s, c, "baseline_pps"));
		print_double("baseline_bps", " %.0f B/s", num(s, c, "baseline_bps"));
		print_double("threshold_pps", ", onset at %.0f pps)\n", num(s, c, "threshold_pps"));
		close_object();
	}
	close_array();
}

static void print_mits(struct st *s, double now)
{
	yaml_node_t *ml = get(s, s->top, "mitigations"), *m, *names, *nm;
	char a[16], b[16];
	size_t i, j;

	open_array("mitigations");
	print_text("mitigations:%s\n", item(s, ml, 0) ? "" : " none");
	for (i = 0; (m = item(s, ml, i)); i++) {
		bool installed = !strcmp(str(s, m, "installed"), "true");
		double exp = num(s, m, "expires");

		open_object(NULL);
		print_str("rule", "  %s", str(s, m, "rule"));
		print_str("state", " %s", str(s, m, "state"));
		print_bool("installed", installed ? ", installed" : ", advised only", installed);
		names = get(s, m, "classes");
		open_array("classes");
		print_text(" for");
		for (j = 0; (nm = item(s, names, j)); j++)
			print_str(NULL, j ? ", %s" : " %s", nm->type == YAML_SCALAR_NODE ?
				  (const char *)nm->data.scalar.value : "");
		close_array();
		print_str("vector", " (%s)", str(s, m, "vector"));
		print_str("fingerprint", "\n    fingerprint: %s\n", str(s, m, "fingerprint"));
		print_str("words", installed ? "    rule: %s\n" : "    would add: %s\n",
			  str(s, m, "words"));
		print_double("onset", NULL, num(s, m, "onset"));
		print_double("chosen", NULL, num(s, m, "chosen"));
		print_text("    onset %s, %s %s", clock_text(num(s, m, "onset"), a, sizeof(a)),
			   installed ? "installed" : "advised",
			   clock_text(num(s, m, "chosen"), b, sizeof(b)));
		print_double("onset_to_chosen_s", " (%.1f s after)",
			     num(s, m, "onset_to_chosen_s"));
		print_u64("changes", ", vector changes %llu", (__u64)num(s, m, "changes"));
		print_double("expires", NULL, exp);
		if (exp > 0)
			print_text(", removed in %.0f s", exp > now ? exp - now : 0);
		print_text("\n");
		close_object();
	}
	close_array();
}

/* The rules other hosts of the fleet found (daemon/auto_fleet.c), and how many this host shares. */
static void print_fleet(struct st *s, double now)
{
	yaml_node_t *fl = get(s, s->top, "fleet"), *m;
	char a[16];
	size_t i;

	print_u64("published", "fleet: %llu of this host's rules published", (__u64)num(s, s->top,
		  "published"));
	print_text(", from other hosts:%s\n", item(s, fl, 0) ? "" : " none");
	open_array("fleet");
	for (i = 0; (m = item(s, fl, i)); i++) {
		bool installed = !strcmp(str(s, m, "installed"), "true");
		double exp = num(s, m, "expires");

		open_object(NULL);
		print_str("rule", "  %s", str(s, m, "rule"));
		print_bool("installed", installed ? " installed" : " advised only", installed);
		print_str("host", ", found by %s", str(s, m, "host"));
		print_double("received", NULL, num(s, m, "received"));
		print_text(", received %s", clock_text(num(s, m, "received"), a, sizeof(a)));
		print_double("expires", NULL, exp);
		print_text(", expires in %.0f s unless refreshed", exp > now ? exp - now : 0);
		print_str("words", installed ? "\n    rule: %s\n" : "\n    would add: %s\n",
			  str(s, m, "words"));
		close_object();
	}
	close_array();
}

static int cmd_status(int argc, char **argv, void *ctx)
{
	struct timespec ts;
	struct st s;
	double pressure;
	int err;

	(void)argv;
	(void)ctx;
	if (argc) {
		pr_err("auto status takes no arguments (\"%s\")", argv[0]);
		usage_auto();
		return -EINVAL;
	}
	err = load(&s);
	if (err == -EINVAL)
		pr_err("cannot read the state of auto: the daemon's file is not valid");
	if (err == -ENOENT) {
		out_begin();
		print_bool("running", "auto is not running (`weir run` with auto: { mode: advise } "
			   "or { mode: on } in its config starts it)\n", false);
		print_str("mode", NULL, "off");
		out_end();
		return 0;
	}
	if (err)
		return err;
	clock_gettime(CLOCK_REALTIME, &ts);
	out_begin();
	print_bool("running", NULL, true);
	print_str("mode", "auto: %s", str(&s, s.top, "mode"));
	print_u64("pid", " (daemon pid %llu)", (__u64)num(&s, s.top, "pid"));
	print_bool("sampling", !strcmp(str(&s, s.top, "sampling"), "true") ? ", sampling" :
		   ", NOT sampling (another capture holds the ring)",
		   !strcmp(str(&s, s.top, "sampling"), "true"));
	print_u64("samples", ", %llu samples", (__u64)num(&s, s.top, "samples"));
	print_u64("nr_classes", ", %llu classes watched\n", (__u64)num(&s, s.top, "nr_classes"));
	print_u64("warmup_s", "  warm-up %llu s", (__u64)num(&s, s.top, "warmup_s"));
	print_u64("max_rules", ", at most %llu rules", (__u64)num(&s, s.top, "max_rules"));
	print_u64("linger_s", ", kept %llu s after an attack\n", (__u64)num(&s, s.top, "linger_s"));
	pressure = num(&s, s.top, "pressure");
	if (pressure >= 0)
		print_double("pressure", "  host pressure %.2f (the shedding controller's u)\n",
			     pressure);
	else
		print_null("pressure", "  host pressure: none (no shedding controller runs)\n");
	print_double("updated", NULL, num(&s, s.top, "updated"));
	print_classes(&s);
	print_mits(&s, ts.tv_sec + ts.tv_nsec / 1e9);
	print_fleet(&s, ts.tv_sec + ts.tv_nsec / 1e9);
	out_end();
	yaml_document_delete(&s.doc);
	return 0;
}

void wr_auto_status(void)
{
	yaml_node_t *ml, *m;
	__u64 n = 0, inst = 0;
	struct st s;

	if (load(&s)) {
		open_object("auto");
		print_str("mode", "auto: %s\n", "off");
		close_object();
		return;
	}
	ml = get(&s, s.top, "mitigations");
	for (; (m = item(&s, ml, n)); n++)
		inst += !strcmp(str(&s, m, "installed"), "true");
	open_object("auto");
	print_str("mode", "auto: %s", str(&s, s.top, "mode"));
	print_u64("mitigations", ", %llu mitigation", n);
	print_text("%s", n == 1 ? "" : "s");
	print_u64("installed", " (%llu installed; weir auto status)\n", inst);
	close_object();
	yaml_document_delete(&s.doc);
}

/* The running daemon's pid, from its instance lock (held while it runs): 0 if none. */
static pid_t daemon_pid(void)
{
	char path[PATH_MAX], buf[32] = "";
	ssize_t r;
	long pid;
	int fd;

	wr_daemon_lock_path(path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* Taken: no daemon holds it. */
	if (!flock(fd, LOCK_SH | LOCK_NB)) {
		close(fd);
		return 0;
	}
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 && (!kill((pid_t)pid, 0) || errno == EPERM) ? (pid_t)pid : 0;
}

/* Polls of the state file after asking, and the wait between them: 5 s at most. */
#define MODE_POLLS	50
#define MODE_POLL_US	100000

/* `weir auto on|advise|off`: the mode into the daemon's mode file, and SIGUSR1. */
static int set_mode(int argc, char **argv, const char *mode)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	bool done = false;
	pid_t pid;
	FILE *f;
	int i, err;

	(void)argv;
	if (argc) {
		pr_err("auto %s takes no arguments (\"%s\")", mode, argv[0]);
		usage_auto();
		return -EINVAL;
	}
	pid = daemon_pid();
	if (!pid) {
		pr_err("no weir daemon runs on %s: `weir run` with auto: in its config starts auto",
		       opts.root);
		return -ESRCH;
	}
	wr_auto_path(path, sizeof(path), "mode");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	err = wr_mkdir_p("/run/weir");
	f = err ? NULL : fopen(tmp, "we");
	if (!f || fprintf(f, "%s\n", mode) < 0 || fclose(f) || rename(tmp, path)) {
		err = err ? err : -errno;
		pr_err("cannot write %s: %s", path, strerror(-err));
		return err;
	}
	if (kill(pid, SIGUSR1)) {
		err = -errno;
		pr_err("cannot signal the daemon (pid %d): %s", (int)pid, strerror(-err));
		return err;
	}
	/* Bounded: the daemon writes its state at once when it switches. */
	for (i = 0; i < MODE_POLLS && !done; i++) {
		struct st s;

		if (!load(&s)) {
			done = !strcmp(str(&s, s.top, "mode"), mode);
			yaml_document_delete(&s.doc);
		} else {
			done = !strcmp(mode, "off");
		}
		if (!done)
			usleep(MODE_POLL_US);
	}
	if (!done) {
		pr_err("the daemon (pid %d) did not switch auto to %s; see its log", (int)pid,
		       mode);
		return -ETIMEDOUT;
	}
	out_begin();
	print_str("mode", "auto: %s", mode);
	print_u64("pid", " (daemon pid %llu", (__u64)pid);
	print_text(", until its next reload)\n");
	out_end();
	return 0;
}

static int cmd_on(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return set_mode(argc, argv, "on");
}

static int cmd_advise(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return set_mode(argc, argv, "advise");
}

static int cmd_off(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return set_mode(argc, argv, "off");
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_auto();
}

static const struct wr_cmd auto_cmds[] = {
	{ "status", cmd_status },
	{ "show", cmd_status },
	{ "on", cmd_on, true },
	{ "advise", cmd_advise, true },
	{ "off", cmd_off, true },
};

int do_auto(int argc, char **argv)
{
	return wr_cmd_select(auto_cmds, ARRAY_SIZE(auto_cmds), "auto", argc, argv, NULL,
			     usage_ctx);
}

/*
 * What the daemon's state file says of auto rule `rule` (an installed
 * auto-N, or an auto-fN received from the fleet), for `weir stats`:
 * printed under its row as an object "auto". Nothing when auto does not
 * run or has no such rule. st caches the file for one listing: *loaded
 * says whether it was read; wr_auto_rule_done() frees it.
 */
void wr_auto_rule_info(const char *rule, struct wr_auto_rules *st)
{
	struct st *s = (struct st *)st->doc;
	yaml_node_t *m;
	char a[16];
	size_t i;

	if (!st->tried) {
		st->tried = true;
		s = calloc(1, sizeof(*s));
		if (s && load(s)) {
			free(s);
			s = NULL;
		}
		st->doc = s;
	}
	if (!s)
		return;
	for (i = 0; (m = item(s, get(s, s->top, "mitigations"), i)); i++) {
		if (strcmp(str(s, m, "rule"), rule) || strcmp(str(s, m, "installed"), "true"))
			continue;
		open_object("auto");
		print_str("vector", "                      auto: %s", str(s, m, "vector"));
		print_double("onset", NULL, num(s, m, "onset"));
		print_text(", onset %s", clock_text(num(s, m, "onset"), a, sizeof(a)));
		print_double("expires", NULL, num(s, m, "expires"));
		if (num(s, m, "expires") > 0)
			print_text(", removed at %s", clock_text(num(s, m, "expires"), a,
								  sizeof(a)));
		print_str("fingerprint", "\n                      fingerprint: %s\n",
			  str(s, m, "fingerprint"));
		close_object();
		return;
	}
	for (i = 0; (m = item(s, get(s, s->top, "fleet"), i)); i++) {
		if (strcmp(str(s, m, "rule"), rule))
			continue;
		open_object("auto");
		print_str("host", "                      auto: from the fleet's host %s",
			  str(s, m, "host"));
		print_double("expires", NULL, num(s, m, "expires"));
		print_text(", removed at %s", clock_text(num(s, m, "expires"), a, sizeof(a)));
		print_str("fingerprint", "\n                      fingerprint: %s\n",
			  str(s, m, "words"));
		close_object();
		return;
	}
}

void wr_auto_rule_done(struct wr_auto_rules *st)
{
	struct st *s = (struct st *)st->doc;

	if (s) {
		yaml_document_delete(&s->doc);
		free(s);
	}
	st->doc = NULL;
	st->tried = false;
}
