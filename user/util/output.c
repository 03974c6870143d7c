// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Output: one path for text and JSON. Every print_* call takes the JSON key
 * and the text format; which one is used depends on -j. The JSON writer
 * streams, tracking only whether a comma is due at each nesting level.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/util.h"

#define MAX_DEPTH 16

static int depth;
static bool need_comma[MAX_DEPTH];
static char closer[MAX_DEPTH];	/* what closes each open level */
static bool started;

static void indent(void)
{
	if (!opts.pretty)
		return;
	putchar('\n');
	for (int i = 0; i < depth; i++)
		fputs("  ", stdout);
}

static void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* Comma, indentation and "key": before a value. */
static void json_key(const char *key)
{
	if (need_comma[depth])
		putchar(',');
	need_comma[depth] = true;
	if (depth > 0)
		indent();
	if (key) {
		json_escape(stdout, key);
		fputs(opts.pretty ? ": " : ":", stdout);
	}
}

static void json_open(const char *key, char c)
{
	json_key(key);
	putchar(c);
	if (depth < MAX_DEPTH - 1)
		depth++;
	need_comma[depth] = false;
	closer[depth] = c == '{' ? '}' : ']';
}

static void json_close(char c)
{
	bool had = need_comma[depth];

	if (depth > 0)
		depth--;
	if (had)
		indent();
	putchar(c);
}

void out_begin(void)
{
	if (!opts.json || started)
		return;
	started = true;
	depth = 0;
	need_comma[0] = false;
	json_open(NULL, '{');
}

void out_end(void)
{
	if (!opts.json || !started)
		return;
	json_close('}');
	putchar('\n');
	started = false;
}

void open_object(const char *key)
{
	if (opts.json)
		json_open(key, '{');
}

void close_object(void)
{
	if (opts.json)
		json_close('}');
}

void open_array(const char *key)
{
	if (opts.json)
		json_open(key, '[');
}

void close_array(void)
{
	if (opts.json)
		json_close(']');
}

void print_str(const char *key, const char *fmt, const char *v)
{
	if (opts.json) {
		json_key(key);
		json_escape(stdout, v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void print_u64(const char *key, const char *fmt, uint64_t v)
{
	if (opts.json) {
		json_key(key);
		printf("%llu", (unsigned long long)v);
	} else if (fmt) {
		printf(fmt, (unsigned long long)v);
	}
}

void print_s64(const char *key, const char *fmt, int64_t v)
{
	if (opts.json) {
		json_key(key);
		printf("%lld", (long long)v);
	} else if (fmt) {
		printf(fmt, (long long)v);
	}
}

void print_bool(const char *key, const char *fmt, bool v)
{
	if (opts.json) {
		json_key(key);
		fputs(v ? "true" : "false", stdout);
	} else if (fmt) {
		printf(fmt, v ? "yes" : "no");
	}
}

void print_double(const char *key, const char *fmt, double v)
{
	if (opts.json) {
		json_key(key);
		printf("%.6g", v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void print_null(const char *key, const char *text)
{
	if (opts.json) {
		json_key(key);
		fputs("null", stdout);
	} else if (text) {
		fputs(text, stdout);
	}
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (opts.json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (opts.json) {
		char buf[1024];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		/* Close whatever was open, then say what went wrong. */
		if (started) {
			while (depth > 1)
				json_close(closer[depth]);
			json_key("error");
			json_escape(stdout, buf);
			out_end();
		} else {
			fputs("{\"error\":", stdout);
			json_escape(stdout, buf);
			fputs("}\n", stdout);
		}
	} else {
		vlog("weir: ", fmt, ap);
	}
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("weir: warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (opts.json)
		return;
	va_start(ap, fmt);
	vlog("weir: ", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!opts.debug)
		return;
	va_start(ap, fmt);
	vlog("weir: debug: ", fmt, ap);
	va_end(ap);
}
