// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vstats: the verifier's headroom for each of weir's programs on the
 * running kernel. The object is opened as the loader opens it (the same
 * probes and switches; WEIR_FEATURES_OFF applies) and loaded with the
 * verifier's statistics log, without pinning anything, and for every
 * program this prints the instructions the verifier processed (of its
 * 1 000 000), the stack depth of each of its functions and the deepest
 * call chain's combined stack (of 512 bytes; frames rounded up to 32 bytes
 * as 6.1's verifier rounds them, bpf_loop callbacks counted as calls).
 *
 *   vstats [--json] [OBJECT]
 *
 * With OBJECT, that BPF object file instead of the built-in one, as it is
 * (no switches set): for comparing a change with the object before it.
 *
 * A program that does not load is printed with the verifier's last words,
 * and the exit status is 1. The benchmark report (tools/bench/report.sh)
 * and the kernel table (tools/kernels/test-kernels.sh) carry its output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "weir.h"
#include "weir.skel.h"
#include "../../user/lib/kernel_features.h"

#define LOG_SIZE	(1 << 20)
/* BPF_LOG_STATS: the summary lines only, never the instruction trace. */
#define LOG_STATS	4

struct prog_stats {
	const char *name;
	char *log;
	long insns;		/* processed, -1 unknown */
	char depth[128];	/* "288+32+192", per function */
	long deepest;		/* the deepest call chain's stack, or the verifier's refusal figure */
	struct bpf_program *prog;
};

#define MAX_FUNCS	32

/* Round a frame as 6.1's verifier does (newer ones round to 16 under the JIT). */
static long frame(long depth)
{
	return ((depth ? depth : 1) + 31) / 32 * 32;
}

/* The deepest chain from function f down its calls, frames rounded (depth-first). */
static long chain(int f, const long *depth, unsigned int calls[MAX_FUNCS], int nf, int level)
{
	long best = 0, c;
	int g;

	if (level > 8)
		return 0;
	for (g = 0; g < nf; g++)
		if (calls[f] & (1u << g) && (c = chain(g, depth, calls, nf, level + 1)) > best)
			best = c;
	return frame(depth[f]) + best;
}

/*
 * The verifier checks the deepest chain of calls (bpf_loop callbacks
 * counted) against 512 bytes but says the sum only when it refuses: work
 * it out from the loaded program, its functions (func_info) and the calls
 * in its instructions, with each function's depth from the log.
 */
static long deepest_chain(struct prog_stats *s)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nf, ni, i;
	struct bpf_func_info fi[MAX_FUNCS];
	unsigned int calls[MAX_FUNCS] = {}, funcs[MAX_FUNCS] = {}, direct[MAX_FUNCS] = {};
	long depth[MAX_FUNCS] = {};
	struct bpf_insn *insns;
	const char *c = s->depth;
	int fd = bpf_program__fd(s->prog), f;
	long d;

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	nf = info.nr_func_info;
	ni = info.xlated_prog_len / sizeof(struct bpf_insn);
	if (!nf || nf > MAX_FUNCS || !ni || info.func_info_rec_size != sizeof(fi[0]))
		return -1;
	insns = calloc(ni, sizeof(*insns));
	if (!insns)
		return -1;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = nf;
	info.func_info_rec_size = sizeof(fi[0]);
	info.func_info = (unsigned long)fi;
	info.xlated_prog_len = ni * sizeof(*insns);
	info.xlated_prog_insns = (unsigned long)insns;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		free(insns);
		return -1;
	}
	for (f = 0; f < (int)nf && *c; f++) {
		depth[f] = strtol(c, (char **)&c, 10);
		if (*c == '+')
			c++;
	}
	for (i = 0; i < ni; i++) {
		const struct bpf_insn *in = &insns[i];
		int call = in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL;
		int func = in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC;
		/* Under the JIT a call's target is in off (imm is its function's index). */
		__u32 target = i + (call && in->off ? in->off : in->imm) + 1;
		int from = 0, to = -1;

		if (!call && !func)
			continue;
		for (f = 0; f < (int)nf; f++) {
			if (fi[f].insn_off <= i)
				from = f;
			if (fi[f].insn_off == target)
				to = f;
		}
		if (to < 0)
			continue;
		calls[from] |= 1u << to;
		if (func)
			funcs[from] |= 1u << to;
		else
			direct[from] |= 1u << to;
	}
	free(insns);
	/*
	 * A bpf_loop the kernel inlined (6.0+) leaves its callback both
	 * loaded as a function and called directly, and grew the caller's
	 * frame by three slots after the stack check: take those back.
	 */
	for (f = 0; f < (int)nf; f++)
		if (funcs[f] & direct[f] && depth[f] >= 24)
			depth[f] -= 24;
	d = chain(0, depth, calls, nf, 0);
	return d;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The last non-empty lines of a log, joined with " / ", for a refusal. */
static void last_words(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *p = end;
	int lines = 0;

	while (p > log && lines < 3) {
		p--;
		if (*p == '\n' && p + 1 < end)
			lines++;
	}
	snprintf(out, len, "%s", p == log ? p : p + 1);
	for (char *c = out; *c; c++) {
		if (*c == '\n')
			*c = c[1] ? '/' : 0;
		else if (*c == '"' || *c == '\\')
			*c = '\'';
	}
}

static void parse(struct prog_stats *s)
{
	const char *p;

	s->insns = -1;
	s->deepest = 0;
	p = strstr(s->log, "processed ");
	if (p)
		s->insns = strtol(p + 10, NULL, 10);
	p = strstr(s->log, "stack depth ");
	if (p) {
		size_t n = strcspn(p + 12, " \n");
		const char *c;

		snprintf(s->depth, sizeof(s->depth), "%.*s", (int)n, p + 12);
		for (c = s->depth; *c;) {
			s->deepest += strtol(c, (char **)&c, 10);
			if (*c == '+')
				c++;
		}
	}
	p = strstr(s->log, "combined stack size of ");
	if (p && (p = strstr(p, " is ")))
		s->deepest = strtol(p + 4, NULL, 10);
}

int main(int argc, char **argv)
{
	struct prog_stats st[16];
	struct bpf_program *prog;
	struct bpf_map *m;
	struct weir *skel = NULL;
	struct bpf_object *obj;
	int json = argc > 1 && !strcmp(argv[1], "--json");
	const char *file = argc > 1 + json ? argv[1 + json] : NULL;
	int n = 0, i, err;
	char why[256];

	if (argc > 2 + json || (file && file[0] == '-')) {
		fprintf(stderr, "usage: vstats [--json] [OBJECT]\n");
		return 2;
	}
	libbpf_set_print(quiet);
	if (file) {
		LIBBPF_OPTS(bpf_object_open_opts, oo, .kconfig = wr_kconfig());

		obj = bpf_object__open_file(file, &oo);
		if (!obj) {
			fprintf(stderr, "vstats: cannot open %s: %s\n", file, strerror(errno));
			return 1;
		}
	} else {
		skel = wr_open_for_kernel(NULL, NULL, why, sizeof(why));
		if (!skel) {
			fprintf(stderr, "vstats: %s\n", why);
			return 1;
		}
		obj = skel->obj;
	}
	bpf_object__for_each_map(m, obj)
		bpf_map__set_pin_path(m, NULL);
	bpf_object__for_each_program(prog, obj) {
		if (n == (int)(sizeof(st) / sizeof(st[0])))
			break;
		/* The dispatcher's copy ("?xdp": only lib/xdpmulti.c loads it) too. */
		if (!strcmp(bpf_program__name(prog), "weir_xdpm"))
			bpf_program__set_autoload(prog, true);
		memset(&st[n], 0, sizeof(st[n]));
		st[n].name = bpf_program__name(prog);
		st[n].prog = prog;
		st[n].log = calloc(1, LOG_SIZE);
		if (!st[n].log)
			return 1;
		bpf_program__set_log_buf(prog, st[n].log, LOG_SIZE);
		bpf_program__set_log_level(prog, LOG_STATS);
		n++;
	}
	err = bpf_object__load(obj);
	for (i = 0; i < n; i++) {
		parse(&st[i]);
		if (!err)
			st[i].deepest = deepest_chain(&st[i]);
	}
	if (json)
		printf("{\"kernel\":\"%s\",\"loaded\":%s,\"programs\":[", wr_kernel_release(),
		       err ? "false" : "true");
	else
		printf("kernel %s\n%-20s %12s %8s  %s\n", wr_kernel_release(), "program",
		       "insns", "chain", "stack per function");
	for (i = 0; i < n; i++) {
		char words[256] = "";

		/* A program the verifier finished has its stack depths; one refused has not. */
		if (err && !st[i].depth[0] && st[i].log[0])
			last_words(st[i].log, words, sizeof(words));
		if (json)
			printf("%s{\"name\":\"%s\",\"insns\":%ld,\"stack\":%ld,\"depth\":\"%s\"%s%s%s}",
			       i ? "," : "", st[i].name, st[i].insns, st[i].deepest, st[i].depth,
			       words[0] ? ",\"refused\":\"" : "", words, words[0] ? "\"" : "");
		else
			printf("%-20s %12ld %8ld  %s%s%s\n", st[i].name, st[i].insns, st[i].deepest,
			       st[i].depth[0] ? st[i].depth : "-", words[0] ? "  refused: " : "",
			       words);
	}
	if (json)
		printf("]}\n");
	if (skel)
		weir__destroy(skel);
	else
		bpf_object__close(obj);
	return err ? 1 : 0;
}
