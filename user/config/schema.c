// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The schema of the config file: the kinds of values (how each is read from
 * the file's text and printed by `weir check -j`), the walks of a table of
 * keys (loading, defaults), and the tables themselves, one per mapping of
 * the file, in the order check -j prints them.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "config/config_int.h"

/* A duration in milliseconds: 500ms, 10s, 1m, 1h. */
static int parse_duration_ms(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	char digits[21];
	uint64_t v;
	size_t n = strspn(s, "0123456789"), i;

	if (!n || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (parse_u64(digits, 0, UINT32_MAX, &v))
		return -ERANGE;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(s + n, units[i].unit))
			continue;
		*out = v * units[i].ms;
		return 0;
	}
	return -EINVAL;
}

/* A fraction: 0.2, or a percentage: 20%. */
static int parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == '%' && !end[1])
		v /= 100;
	else if (*end)
		return -EINVAL;
	if (!(v >= 0 && v <= 1))
		return -ERANGE;
	*out = v;
	return 0;
}

/* What the kernel takes as a device name (dev_valid_name()). */
static bool valid_ifname(const char *s)
{
	size_t i, len = strlen(s);

	if (!len || len >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* HOST:PORT, HOST an IPv4 address or an IPv6 one in brackets, PORT 1-65535. */
static bool valid_listen(const char *s)
{
	char host[INET6_ADDRSTRLEN + 2];
	unsigned char addr[16];
	const char *port;
	uint64_t v;
	size_t len;

	if (s[0] == '[') {
		port = strstr(s, "]:");
		if (!port)
			return false;
		len = port - s - 1;
		if (len >= sizeof(host))
			return false;
		memcpy(host, s + 1, len);
		host[len] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return false;
		port += 2;
	} else {
		port = strrchr(s, ':');
		if (!port || (size_t)(port - s) >= sizeof(host))
			return false;
		len = port - s;
		memcpy(host, s, len);
		host[len] = '\0';
		if (inet_pton(AF_INET, host, addr) != 1)
			return false;
		port++;
	}
	return !parse_u64(port, 1, 65535, &v);
}

static void set_uint(void *f, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)f = v; break;
	case 2: *(uint16_t *)f = v; break;
	case 4: *(uint32_t *)f = v; break;
	default: *(uint64_t *)f = v; break;
	}
}

static uint64_t get_uint(const void *f, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)f;
	case 2: return *(const uint16_t *)f;
	case 4: return *(const uint32_t *)f;
	default: return *(const uint64_t *)f;
	}
}

/* A name under check -j: the file's, with - as _ ("deny-files": "deny_files"). */
const char *underscored(const char *name, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	return buf;
}


/* A whole number from min to max. */
static int parse_uint(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t v;

	if (parse_u64(s, k->min, k->max, &v))
		return -EINVAL;
	set_uint(f, k->size, v);
	return 0;
}

static void print_uint(const struct cfg_key *k, const void *f)
{
	print_u64(JSON(k), NULL, get_uint(f, k->size));
}

static void hint_range(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%llu to %llu", (unsigned long long)k->min,
		 (unsigned long long)k->max);
}

static const struct cfg_kind k_uint = { parse_uint, print_uint, hint_range };

/* A duration from min to max milliseconds. */
static int duration(const struct cfg_key *k, const char *s, uint64_t *ms)
{
	return parse_duration_ms(s, ms) || *ms < k->min || *ms > k->max ? -EINVAL : 0;
}

/*
 * A duration, kept in whole units of the kind's (milliseconds, or seconds:
 * 10s and 2000ms, not 1500ms).
 */
static int parse_dur(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t ms, unit = k->kind->unit;

	if (duration(k, s, &ms) || ms % unit)
		return -EINVAL;
	set_uint(f, k->size, ms / unit);
	return 0;
}

static const struct cfg_kind k_ms = { parse_dur, print_uint, .unit = 1 };
static const struct cfg_kind k_seconds = { parse_dur, print_uint, .unit = 1000 };

/* A duration, kept in seconds (a double). */
static int parse_ms_as_s(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t ms;

	if (duration(k, s, &ms))
		return -EINVAL;
	*(double *)f = ms / 1000.0;
	return 0;
}

static void print_dbl(const struct cfg_key *k, const void *f)
{
	print_double(JSON(k), NULL, *(const double *)f);
}

static const struct cfg_kind k_ms_as_s = { parse_ms_as_s, print_dbl };

/* A fraction from 0 to 1: 0.7, 70%. */
static int parse_frac(const struct cfg_key *k, const char *s, void *f)
{
	double v;

	(void)k;
	if (parse_fraction(s, &v))
		return -EINVAL;
	*(double *)f = v;
	return 0;
}

static const struct cfg_kind k_fraction = { parse_frac, print_dbl };

/* A share that leaves some: from 0 to below 1 (0.2, 20%). */
static int parse_share(const struct cfg_key *k, const char *s, void *f)
{
	double v;

	(void)k;
	if (parse_fraction(s, &v) || v >= 1)
		return -EINVAL;
	*(double *)f = v;
	return 0;
}

static const struct cfg_kind k_share = { parse_share, print_dbl };

/* One of max words; the field holds its index. */
static int parse_choice(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t i;

	for (i = 0; i < k->max; i++) {
		if (!strcmp(s, k->words[i])) {
			set_uint(f, k->size, i);
			return 0;
		}
	}
	return -EINVAL;
}

static void print_choice(const struct cfg_key *k, const void *f)
{
	print_str(JSON(k), NULL, k->words[get_uint(f, k->size) % k->max]);
}

/* "native, generic or tc" */
static void hint_choice(const struct cfg_key *k, char *buf, size_t len)
{
	size_t off = 0;
	uint64_t i;

	buf[0] = '\0';
	for (i = 0; i < k->max && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i == 0 ? "" : i + 1 < k->max ?
				", " : " or ", k->words[i]);
}

static const struct cfg_kind k_choice = { parse_choice, print_choice, hint_choice };

/* A switch: on, true, yes (or off, false, no), as YAML 1.1 writes them. */
int parse_switch(const struct cfg_key *k, const char *s, void *f)
{
	static const char *const off[] = { "off", "false", "no", "Off", "False", "No", "OFF",
					   "FALSE", "NO" };
	static const char *const on[] = { "on", "true", "yes", "On", "True", "Yes", "ON",
					  "TRUE", "YES" };
	size_t i;

	(void)k;
	for (i = 0; i < ARRAY_SIZE(off); i++) {
		if (!strcmp(s, off[i]) || !strcmp(s, on[i])) {
			*(bool *)f = !strcmp(s, on[i]);
			return 0;
		}
	}
	return -EINVAL;
}

static void print_switch(const struct cfg_key *k, const void *f)
{
	print_bool(JSON(k), NULL, *(const bool *)f);
}

static const struct cfg_kind k_switch = { parse_switch, print_switch };

static void print_string(const struct cfg_key *k, const void *f)
{
	print_str(JSON(k), NULL, f);
}

/* An interface name. */
static int parse_ifname(const struct cfg_key *k, const char *s, void *f)
{
	if (!valid_ifname(s) || strlen(s) >= k->size)
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_ifname = { parse_ifname, print_string };

/*
 * An option of `weir attach` (mode, tc-hook, dispatcher, priority), read
 * by libweir's own parser into the struct wr_attach_opts that is the
 * key's field, so the file and the command line take the same words.
 */
static int parse_attach(const struct cfg_key *k, const char *s, void *f)
{
	return wr_attach_opt(f, wr_attach_key(k->name), s);
}

static void print_attach(const struct cfg_key *k, const void *f)
{
	const struct wr_attach_opts *o = f;

	switch (wr_attach_key(k->name)) {
	case WR_AOPT_MODE:
		print_str(JSON(k), NULL, wr_mode_names[o->mode % ARRAY_SIZE(wr_mode_names)]);
		break;
	case WR_AOPT_TC_HOOK:
		print_str(JSON(k), NULL,
			  wr_tc_hook_names[o->tc_hook % ARRAY_SIZE(wr_tc_hook_names)]);
		break;
	case WR_AOPT_DISPATCHER:
		print_str(JSON(k), NULL,
			  wr_dispatcher_names[o->dispatcher % ARRAY_SIZE(wr_dispatcher_names)]);
		break;
	default:
		print_u64(JSON(k), NULL, o->priority);
	}
}

static void hint_attach(const struct cfg_key *k, char *buf, size_t len)
{
	wr_attach_hint(wr_attach_key(k->name), buf, len);
}

static const struct cfg_kind k_attach = { parse_attach, print_attach, hint_attach };

/* Where the metrics endpoint listens. */
static int parse_listen(const struct cfg_key *k, const char *s, void *f)
{
	if (strlen(s) >= k->size || !valid_listen(s))
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_listen = { parse_listen, print_string };

/* "invalid WHAT \"VALUE\" (what would be valid)" */
static void err_invalid(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
			const char *s)
{
	char hint[128] = "";

	if (k->hint)
		snprintf(hint, sizeof(hint), "%s", k->hint);
	else if (k->kind->hint)
		k->kind->hint(k, hint, sizeof(hint));
	err_at(ld, v->start_mark, "invalid %s \"%s\"%s%s%s", k->what ? k->what : k->name, s,
	       *hint ? " (" : "", hint, *hint ? ")" : "");
}

/* The text s as the value of k, into its field in base; false (reported) if it is none. */
bool parse_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
		 const char *s, void *base)
{
	if (!k->kind->parse(k, s, (char *)base + k->off))
		return true;
	err_invalid(ld, k, v, s);
	return false;
}

bool load_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
		void *base)
{
	const char *s = cfg_scalar(ld, v, k->name);

	return s && parse_value(ld, k, v, s, base);
}

static void load_key(struct load *ld, const struct cfg_key *k, const yaml_node_t *v, void *base)
{
	if (k->load)
		k->load(ld, v);
	else if (k->sub)
		load_section(ld, k->sub, v, base);
	else
		load_value(ld, k, v, base);
}

/* Mapping n by the keys of sec, their fields in base. */
void load_section(struct load *ld, const struct cfg_section *sec, const yaml_node_t *n,
		  void *base)
{
	yaml_node_t *keys[MAX_KEYS], *vals[MAX_KEYS];
	int i;

	if (!cfg_mapping(ld, n, sec->what, sec->keys, sec->nr, keys, vals))
		return;
	for (i = 0; i < sec->nr; i++) {
		if (vals[i])
			load_key(ld, &sec->keys[i], vals[i], base);
		else if (sec->keys[i].need)
			err_at(ld, n->start_mark, "%s", sec->keys[i].need);
	}
	if (sec->check)
		sec->check(ld, n, vals);
}

/* The defaults of sec's keys (and their sections'), into base. */
void section_defaults(const struct cfg_section *sec, void *base)
{
	int i;

	for (i = 0; i < sec->nr; i++) {
		const struct cfg_key *k = &sec->keys[i];

		if (k->sub)
			section_defaults(k->sub, base);
		if (k->defp)
			memcpy((char *)base + k->off, k->defp, k->size);
		if (k->def && k->kind->parse(k, k->def, (char *)base + k->off)) {
			fprintf(stderr, "weir: the default of %s, \"%s\", is no %s\n", k->name,
				k->def, k->name);
			abort();
		}
	}
}

/* Where a key is in its section's table. */
int key_index(const struct cfg_section *sec, const char *name)
{
	int i;

	for (i = 0; i < sec->nr; i++)
		if (!strcmp(sec->keys[i].name, name))
			return i;
	abort();
}

const struct cfg_key iface_keys[I_NR] = {
	[I_NAME] = { .name = "name", .kind = &k_ifname, FIELD_OF(struct wr_cfg_iface, name),
		     .what = "interface name", .need = "an interface needs a name" },
	/* The options of `weir attach`, by its parser: each key's field is their struct. */
	[I_MODE] = { .name = "mode", .kind = &k_attach, FIELD_OF(struct wr_cfg_iface, attach),
		     .def = "native" },
	[I_TC_HOOK] = { .name = "tc-hook", .kind = &k_attach, FIELD_OF(struct wr_cfg_iface, attach),
			.def = "auto" },
	[I_DISPATCHER] = { .name = "dispatcher", .kind = &k_attach,
			   FIELD_OF(struct wr_cfg_iface, attach), .def = "auto" },
	[I_PRIORITY] = { .name = "priority", .kind = &k_attach,
			 FIELD_OF(struct wr_cfg_iface, attach), .def = STR(WR_XDP_PRIO_DEFAULT) },
};
const struct cfg_section iface_section = SECTION("an interface", iface_keys);

static const struct cfg_key metrics_keys[] = {
	{ .name = "listen", .kind = &k_listen, FIELD(metrics_listen), .def = "127.0.0.1:9464",
	  .hint = "IPV4:PORT or [IPV6]:PORT, PORT 1-65535" },
};
const struct cfg_section metrics_section = SECTION("metrics", metrics_keys);

/* The signals of shedding, each a mapping of one key, by enum wr_signal_type. */
const struct cfg_signal cfg_signals[CFG_NR_SIGNALS] = {
	[WR_SIG_CPU] = { .name = "cpu", "{ cpu: true }", sig_cpu, print_sig_cpu },
	[WR_SIG_PSI] = { .name = "psi", "{ psi: cpu }", sig_psi, print_sig_arg },
	[WR_SIG_ACCEPTQ] = { .name = "accept-queue", "{ accept-queue: [PORT, ...] }",
			     sig_accept_queue, print_sig_ports },
	[WR_SIG_FILE] = { .name = "file", "{ file: PATH }", sig_file, print_sig_arg },
};

/* The curve's defaults are the shedding math's own. */
static const struct wr_curve curve_default = WR_CURVE_DEFAULT;
#define DURATION_HINT "a duration: 500ms, 28s, 2m; more than 0"

static const struct cfg_key curve_keys[] = {
	{ .name = "good", .kind = &k_fraction, FIELD(shed.curve.good),
	  .defp = &curve_default.good, .hint = "a utilization 0..1" },
	{ .name = "bad", .kind = &k_fraction, FIELD(shed.curve.bad),
	  .defp = &curve_default.bad, .hint = "a utilization 0..1" },
	{ .name = "delay", .kind = &k_ms_as_s, FIELD(shed.curve.delay_s), .json = "delay_s",
	  .min = 1, .max = CFG_MAX_INTERVAL * 1000ULL, .defp = &curve_default.delay_s,
	  .hint = DURATION_HINT },
	{ .name = "ramp", .kind = &k_ms_as_s, FIELD(shed.curve.ramp_s), .json = "ramp_s",
	  .min = 1, .max = CFG_MAX_INTERVAL * 1000ULL, .defp = &curve_default.ramp_s,
	  .hint = DURATION_HINT },
};
static const struct cfg_section curve_section = {
	"curve", curve_keys, ARRAY_SIZE(curve_keys), check_curve
};

static const struct cfg_key shed_keys[] = {
	{ .name = "interval", .kind = &k_ms, FIELD(shed.interval_ms), .json = "interval_ms",
	  .min = 10, .max = 60000, .def = "1s", .hint = "10ms to 1m: 250ms, 1s" },
	{ .name = "signals", .load = load_signals, .print = print_signals,
	  .need = "shedding needs signals: [ { cpu: true }, ... ]" },
	{ .name = "curve", .sub = &curve_section },
	{ .name = "default-class", .kind = &k_uint, FIELD(shed.default_class),
	  .max = WEIR_MAX_CLASS, .def = STR(WEIR_MAX_CLASS),
	  .hint = "0 critical .. " STR(WEIR_MAX_CLASS) },
};
const struct cfg_section shed_section = SECTION("shedding", shed_keys);

static const struct cfg_key capacity_keys[] = {
	{ .name = "rate", .load = load_capacity_rate, .print = print_capacity_rate },
	{ .name = "reserve", .kind = &k_share, FIELD(capacity.reserve), .def = "20%",
	  .hint = "20%, or 0.2; below 100%" },
};
const struct cfg_section capacity_section = {
	"capacity", capacity_keys, ARRAY_SIZE(capacity_keys), check_capacity
};

static const struct cfg_key tables_keys[] = {
	{ .name = "keys", .kind = &k_uint, FIELD(keys), .min = 1, .max = CFG_MAX_KEYS },
};
static const struct cfg_section tables_section = SECTION("tables", tables_keys);

static const struct cfg_key events_keys[] = {
	{ .name = "interval", .kind = &k_seconds, FIELD(event_interval_s), .json = "interval_s",
	  .min = 1000, .max = CFG_MAX_INTERVAL * 1000ULL, .def = "10s",
	  .hint = "whole seconds from 1s to 24h: 10s, 1m, 2000ms" },
	{ .name = "lines", .kind = &k_uint, FIELD(event_lines), .max = CFG_MAX_LINES,
	  .def = "20" },
};
static const struct cfg_section events_section = SECTION("events", events_keys);

static const struct cfg_key tcp_state_keys[] = {
	{ .name = "on", .kind = &k_uint, FIELD(tcp_state.on_pps), .json = "on_pps", .min = 1,
	  .max = 100000000, .def = "1000", .hint = "out-of-state segments a second, 1 .. 100000000" },
	{ .name = "off", .kind = &k_uint, FIELD(tcp_state.off_pps), .json = "off_pps",
	  .max = 100000000, .def = "100", .hint = "out-of-state segments a second, under on" },
	{ .name = "hold", .kind = &k_seconds, FIELD(tcp_state.hold_s), .json = "hold_s",
	  .min = 1000, .max = 3600 * 1000ULL, .def = "30s",
	  .hint = "whole seconds from 1s to 1h: 30s, 2m" },
};
static const struct cfg_section tcp_state_section = {
	"tcp-state", tcp_state_keys, ARRAY_SIZE(tcp_state_keys), check_tcp_state
};

/* A factor above 1, at most max: 4, 2.5. */
static int parse_factor(const struct cfg_key *k, const char *s, void *f)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 1 && v <= k->max))
		return -EINVAL;
	*(double *)f = v;
	return 0;
}

static const struct cfg_kind k_factor = { parse_factor, print_dbl };

static const char *const auto_modes[] = { "off", "advise", "on" };
/* The defaults are the detector's and the chooser's own (auto/baseline.c, auto/fingerprint.h). */
static const struct cfg_key auto_keys[] = {
	{ .name = "mode", .kind = &k_choice, FIELD(au.mode), .words = auto_modes,
	  .max = ARRAY_SIZE(auto_modes), .def = "off" },
	/* 64: the most mitigations one engine tracks (WR_AUTO_MAX) */
	{ .name = "max-rules", .kind = &k_uint, FIELD(au.max_rules), .min = 1, .max = 64,
	  .def = "16" },
	{ .name = "linger", .kind = &k_seconds, FIELD(au.linger_s), .json = "linger_s",
	  .min = 1000, .max = 3600 * 1000ULL, .def = "60s",
	  .hint = "whole seconds from 1s to 1h: 60s, 5m" },
	/* 100: fewer samples a second cannot tell an attack from its class */
	{ .name = "budget", .kind = &k_uint, FIELD(au.budget), .min = 100,
	  .max = WEIR_CAPTURE_BUDGET_MAX, .def = "2000",
	  .hint = "samples a second, 100 to " STR(WEIR_CAPTURE_BUDGET_MAX) },
	{ .name = "warmup", .kind = &k_seconds, FIELD(au.warmup_s), .json = "warmup_s",
	  .min = 1000, .max = 3600 * 1000ULL, .def = "30s",
	  .hint = "whole seconds from 1s to 1h: 30s, 2m" },
	/* 1000: the detector's largest factor */
	{ .name = "factor", .kind = &k_factor, FIELD(au.factor), .max = 1000, .def = "4",
	  .hint = "a number above 1, at most 1000: 4, 2.5" },
	{ .name = "floor-pps", .kind = &k_uint, FIELD(au.floor_pps), .min = 1,
	  .max = 1000000000, .def = "1000", .hint = "packets a second, 1 to 1000000000" },
	{ .name = "floor-bps", .kind = &k_uint, FIELD(au.floor_bps), .min = 1,
	  .max = 1000000000000ULL, .def = "1000000", .hint = "bytes a second, 1 to 10^12" },
	{ .name = "hold", .kind = &k_ms, FIELD(au.hold_ms), .json = "hold_ms", .min = 200,
	  .max = 600000, .def = "5s", .hint = "200ms to 10m: 5s, 1m" },
	{ .name = "cover", .kind = &k_fraction, FIELD(au.cover), .def = "0.99",
	  .hint = "a share of the attack above 0.5: 0.99, 99%" },
	{ .name = "false-max", .kind = &k_fraction, FIELD(au.false_max), .def = "0.001",
	  .hint = "a share of the traffic before the attack, below cover: 0.001, 0.1%" },
};
const struct cfg_section auto_section = {
	"auto", auto_keys, ARRAY_SIZE(auto_keys), check_auto
};

/* A name of the fleet, or of this host in it: letters, digits, _ - . */
static int parse_fleet_name(const struct cfg_key *k, const char *s, void *f)
{
	if (!s[0] || strlen(s) >= k->size ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(s))
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_fleet_name = { parse_fleet_name, print_string };

/* A path, kept as written (the fleet thread opens it). */
static int parse_path(const struct cfg_key *k, const char *s, void *f)
{
	if (!s[0] || strlen(s) >= k->size)
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_path = { parse_path, print_string };

static const char *const fleet_modes[] = { "single", "sharded", "cluster" };
static const char *const fleet_fallbacks[] = { "safe", "local", "hold" };
static const struct cfg_key fleet_keys[] = {
	{ .name = "name", .kind = &k_fleet_name, FIELD(fleet.name),
	  .hint = "1-31 of A-Z a-z 0-9 _ - .", .need = "a fleet needs a name" },
	{ .name = "host", .kind = &k_fleet_name, FIELD(fleet.host),
	  .hint = "1-63 of A-Z a-z 0-9 _ - .; default the hostname" },
	{ .name = "redis", .load = load_fleet_redis, .print = print_fleet_redis,
	  .need = "a fleet needs redis: [ HOST:PORT, ... ]" },
	{ .name = "mode", .kind = &k_choice, FIELD(fleet.mode), .words = fleet_modes,
	  .max = ARRAY_SIZE(fleet_modes), .def = "single" },
	{ .name = "interval", .kind = &k_ms, FIELD(fleet.interval_ms), .json = "interval_ms",
	  .min = 20, .max = 10000, .def = "250ms", .hint = "20ms to 10s: 50ms, 250ms, 1s" },
	{ .name = "stale-after", .kind = &k_ms, FIELD(fleet.stale_ms), .json = "stale_after_ms",
	  .min = 40, .max = 600000, .def = "2s", .hint = "40ms to 10m, more than interval" },
	{ .name = "fallback", .kind = &k_choice, FIELD(fleet.fallback), .words = fleet_fallbacks,
	  .max = ARRAY_SIZE(fleet_fallbacks), .def = "safe" },
	{ .name = "auth-file", .kind = &k_path, FIELD(fleet.auth_file) },
};
const struct cfg_section fleet_section = {
	"fleet", fleet_keys, ARRAY_SIZE(fleet_keys), check_fleet
};

/*
 * A feed's action: deny, allow, match (rules' `src: feed:NAME` only), or limit-class N (one value, as the CLI's
 * `action limit-class N`); the field holds enum weir_feed_action's value.
 */
static int parse_feed_action(const struct cfg_key *k, const char *s, void *f)
{
	int a = !strcmp(s, "deny")  ? WEIR_FA_DENY :
		!strcmp(s, "allow") ? WEIR_FA_ALLOW :
		!strcmp(s, "match") ? WEIR_FA_MATCH : wr_feed_class_parse(s);

	(void)k;
	if (a < 0)
		return a;
	*(int *)f = a;
	return 0;
}

static void print_feed_action(const struct cfg_key *k, const void *f)
{
	int a = *(const int *)f;

	print_str(JSON(k), NULL, wr_feed_class_name(a) ? wr_feed_class_name(a) :
				 a == WEIR_FA_ALLOW ? "allow" : a == WEIR_FA_MATCH ? "match" : "deny");
}

static const struct cfg_kind k_feed_action = { parse_feed_action, print_feed_action };

const struct cfg_key feed_keys[FD_NR] = {
	[FD_NAME] = { .name = "name", .kind = &k_fleet_name, FIELD_OF(struct wr_cfg_feed, name),
		      .hint = "1-31 of A-Z a-z 0-9 _ - .", .need = "a feed needs a name" },
	[FD_URL] = { .name = "url", .kind = &k_path, FIELD_OF(struct wr_cfg_feed, url),
		     .hint = "an http:// or https:// URL" },
	[FD_FILE] = { .name = "file", .kind = &k_path, FIELD_OF(struct wr_cfg_feed, file),
		      .hint = "a path (relative: from the config's directory)" },
	[FD_GEO] = { .name = "geo", .kind = &k_path, FIELD_OF(struct wr_cfg_feed, geo),
		     .hint = "a MaxMind DB file (relative: from the config's directory)" },
	[FD_COUNTRY] = { .name = "country", .kind = &k_path, FIELD_OF(struct wr_cfg_feed, country),
			 .hint = "ISO 3166-1 alpha-2 codes: DE,NL" },
	[FD_ASN] = { .name = "asn", .kind = &k_path, FIELD_OF(struct wr_cfg_feed, asn),
		     .hint = "AS numbers: 64496,AS64497" },
	[FD_REFRESH] = { .name = "refresh", .kind = &k_seconds,
			 FIELD_OF(struct wr_cfg_feed, refresh_s), .json = "refresh_s",
			 .min = 10000, .max = 7 * 86400 * 1000ULL, .def = "1h",
			 .hint = "whole seconds from 10s to 7d: 30m, 1h, 1d" },
	[FD_ACTION] = { .name = "action", .kind = &k_feed_action,
			FIELD_OF(struct wr_cfg_feed, action), .def = "deny",
			.hint = "deny, allow or limit-class N, N 0 (critical) to 3 (shed first)" },
};
const struct cfg_section feed_section = SECTION("a feed", feed_keys);

static const char *const fail_words[] = { "open", "closed" };
static const char *const malformed_words[] = { "drop", "pass" };
static const char *const first_stage_words[] = { "on", "off" };

/* The top level of the file, in the order check -j prints it. */
static const struct cfg_key top_keys[] = {
	{ .name = "interfaces", .load = load_ifaces, .print = print_ifaces },
	{ .name = "rules", .load = load_rules, .print = print_rules },
	/* deny and allow print how many prefixes they hold, deny files' included */
	{ .name = "deny", .load = load_deny, .kind = &k_uint, FIELD(nr_deny) },
	{ .name = "allow", .load = load_allow, .kind = &k_uint, FIELD(nr_allow) },
	{ .name = "deny-files", .load = load_deny_files, .print = print_deny_files },
	{ .name = "lists", .load = load_lists, .print = print_lists },
	{ .name = "geo-db", .kind = &k_path, FIELD(geo_db), .json = "geo_db",
	  .hint = "a MaxMind DB file for rules' src country: and asn: (relative: from the "
		  "config's directory)" },
	{ .name = "tables", .sub = &tables_section },
	{ .name = "fail", .kind = &k_choice, FIELD(fail_closed), .words = fail_words,
	  .max = ARRAY_SIZE(fail_words), .def = "open" },
	{ .name = "malformed", .kind = &k_choice, FIELD(malformed_pass),
	  .words = malformed_words, .max = ARRAY_SIZE(malformed_words), .def = "drop" },
	{ .name = "first-stage", .kind = &k_choice, FIELD(first_stage_off),
	  .words = first_stage_words, .max = ARRAY_SIZE(first_stage_words), .def = "on" },
	{ .name = "metrics", .load = load_metrics, .print = print_metrics, .sub = &metrics_section,
	  .kind = &k_switch, FIELD(metrics), .def = "on" },
	{ .name = "events", .sub = &events_section },
	{ .name = "tcp-state", .sub = &tcp_state_section },
	{ .name = "auto", .sub = &auto_section },
	{ .name = "shedding", .load = load_shedding, .print = print_shedding,
	  .sub = &shed_section },
	{ .name = "capacity", .print = print_capacity, .sub = &capacity_section },
	{ .name = "fleet", .load = load_fleet, .print = print_fleet, .sub = &fleet_section },
};
const struct cfg_section top_section = {
	"the top level", top_keys, ARRAY_SIZE(top_keys), check_top
};
