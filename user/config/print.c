// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a loaded config file says, as `weir check -j` prints it: the walk of
 * the schema's tables, and the keys that print their own way.
 */
#include "config/config_int.h"

static void print_key(const struct cfg_key *k, const void *base)
{
	if (k->print) {
		k->print(k, base);
	} else if (k->sub) {
		open_object(JSON(k));
		print_section(k->sub, base);
		close_object();
	} else {
		k->kind->print(k, (const char *)base + k->off);
	}
}

/* What sec's keys hold in base, as check -j prints them. */
void print_section(const struct cfg_section *sec, const void *base)
{
	int i;

	for (i = 0; i < sec->nr; i++)
		print_key(&sec->keys[i], base);
}

void print_ifaces(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->nr_ifaces; i++) {
		open_object(NULL);
		print_section(&iface_section, &cfg->ifaces[i]);
		close_object();
	}
	close_array();
}

void print_lists(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->nr_feeds; i++) {
		open_object(NULL);
		print_section(&feed_section, &cfg->feeds[i]);
		close_object();
	}
	close_array();
}

void print_deny_files(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->nr_deny_files; i++)
		print_str(NULL, NULL, cfg->deny_files[i]);
	close_array();
}

/* Where the endpoint listens, or null when it is off. */
void print_metrics(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (cfg->metrics)
		print_str(JSON(k), NULL, cfg->metrics_listen);
	else
		print_null(JSON(k), NULL);
}

void print_sig_cpu(const char *json, const struct wr_cfg_signal *sig)
{
	(void)sig;
	print_bool(json, NULL, true);
}

void print_sig_arg(const char *json, const struct wr_cfg_signal *sig)
{
	print_str(json, NULL, sig->arg);
}

void print_sig_ports(const char *json, const struct wr_cfg_signal *sig)
{
	int i;

	open_array(json);
	for (i = 0; i < sig->nr_ports; i++)
		print_u64(NULL, NULL, sig->ports[i]);
	close_array();
}

/* [ { "cpu": true }, { "accept_queue": [ 53, 443 ] } ] */
void print_signals(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_shed *sh = &((const struct wr_cfg *)base)->shed;
	char json[32];
	int i;

	open_array(JSON(k));
	for (i = 0; i < sh->nr_signals; i++) {
		const struct cfg_signal *t =
			&cfg_signals[sh->signals[i].type % ARRAY_SIZE(cfg_signals)];

		open_object(NULL);
		t->print(underscored(t->name, json, sizeof(json)), &sh->signals[i]);
		close_object();
	}
	close_array();
}

/* The controller's settings, or null without a shedding section. */
void print_shedding(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (!cfg->shed.on) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&shed_section, base);
	close_object();
}

void print_capacity_rate(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_capacity *cap = &((const struct wr_cfg *)base)->capacity;
	char buf[48];
	int cost;

	open_array(JSON(k));
	for (cost = WEIR_COST_PKT; cost <= WEIR_COST_BYTE; cost++) {
		if (!cap->rate[cost])
			continue;
		format_rate(cap->rate[cost], cost, buf, sizeof(buf));
		print_str(NULL, NULL, buf);
	}
	close_array();
}

/* The capacity and its reserve, or null without a capacity section. */
void print_capacity(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_capacity *cap = &((const struct wr_cfg *)base)->capacity;

	if (!cap->rate[0] && !cap->rate[1]) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&capacity_section, base);
	close_object();
}

void print_rules(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	__u32 i;

	open_array(JSON(k));
	for (i = 0; i < cfg->rules->nr_rules; i++)
		wr_rule_print(cfg->rules, i);
	close_array();
}

void print_fleet_redis(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->fleet.nr_nodes; i++)
		print_str(NULL, NULL, cfg->fleet.nodes[i]);
	close_array();
}

/* The fleet's settings, or null without a fleet section. */
void print_fleet(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (!cfg->fleet.on) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&fleet_section, base);
	close_object();
}

void cfg_print(const struct wr_cfg *cfg)
{
	print_section(&top_section, cfg);
}
