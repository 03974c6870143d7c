// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir capture` in the real BPF object, through bpf_prog_test_run_opts:
 * what lands in wr_capture_ring (header and bytes) for crafted frames, the
 * filters, the per-second budget on the test-controlled clock, one in N at
 * random, the lease,
 * and nothing at all while the switch is off. XDP and TC both.
 */
#include "bpf_harness.h"

#define PORT	47311

/* Nothing to balance across cases here. */
static void check_balance(void)
{
}

/* Records read from the ring by drain(). */
#define MAX_RECS 64
static struct rec {
	struct weir_capture_hdr h;
	__u8 data[WEIR_CAPTURE_SNAPLEN_MAX];
	size_t size;
} recs[MAX_RECS];
static int nrecs;

static int on_rec(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (nrecs < MAX_RECS && size <= sizeof(recs[0].h) + sizeof(recs[0].data)) {
		memcpy(&recs[nrecs], data, size);
		recs[nrecs].size = size;
	}
	nrecs++;
	return 0;
}

/* Everything in the ring now, into recs[]; how many. */
static int drain(void)
{
	struct ring_buffer *rb;

	nrecs = 0;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.wr_capture_ring), on_rec, NULL, NULL);
	if (!rb) {
		CHECK_FAIL("ring_buffer__new: %s", strerror(errno));
		return -1;
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return nrecs;
}

static struct weir_capture_stats cstats(void)
{
	struct weir_capture_stats s = {}, v[256];
	__u32 zero = 0;
	int i;

	if (ncpu > 256 || bpf_map__lookup_elem(skel->maps.wr_capture_stats, &zero, 4, v,
					       sizeof(v[0]) * ncpu, 0)) {
		CHECK_FAIL("reading wr_capture_stats");
		return s;
	}
	for (i = 0; i < ncpu; i++) {
		s.captured += v[i].captured;
		s.lost_budget += v[i].lost_budget;
		s.lost_ring += v[i].lost_ring;
	}
	return s;
}

/*
 * Start a capture as the CLI does: the control, then the switch. The cases
 * after the first two run at XDP, or at TC where XDP cannot capture (no
 * bpf_xdp_load_bytes: the object as a kernel before 5.18 gets it).
 */
static void capture_on(__u32 verdicts, __u16 slot, __u32 budget, __u32 snaplen, __u64 lease)
{
	struct weir_capture c = {
		.lease_ns = lease,
		.budget = budget,
		.snaplen = snaplen,
		.verdicts = verdicts,
		.rule_slot = slot,
		.pid = 1,
	};
	__u32 zero = 0;

	if (!skel->rodata->has_frags)
		use_tc = 1;
	if (bpf_map__update_elem(skel->maps.wr_capture, &zero, 4, &c, sizeof(c), 0))
		CHECK_FAIL("writing wr_capture: %s", strerror(errno));
	CFG_SET(capture, 1);
}

#define DROPPED	(1U << WEIR_CV_DROPPED)
#define PASSED	(1U << WEIR_CV_PASSED)
#define ANY	WEIR_CAPTURE_ANY_RULE

/* A rule on PORT: one packet per second per source, burst 1. */
static struct weir_rule *flood_rule(void)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);

	match_proto(r, WR_IPPROTO_UDP);
	r->match |= WEIR_M_DPORT;
	r->dport_lo = r->dport_hi = PORT;
	new_limit(r, WEIR_ALGO_GCRA, 1, 0, 1, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	return r;
}

static void udp_frame(struct frame *f, __u32 src, __u16 dport)
{
	struct frame l;

	l4_udp(&l, dport, 32);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

/* A dropped frame lands in the ring with its header and every byte. */
static void dropped_record(int tc)
{
	struct weir_rule *r;
	struct frame f;
	__u32 uid, slot;

	use_tc = tc;
	if (!tc && !skel->rodata->has_frags) {
		CHECK_SKIP("no bpf_xdp_load_bytes (xdp_frags off): capture at XDP is refused");
		return;
	}
	r = flood_rule();
	uid = r->uid;
	slot = r->slot;
	commit();
	capture_on(DROPPED, ANY, 100, WEIR_CAPTURE_SNAPLEN_MAX, T0 + 10 * SEC);
	udp_frame(&f, SRC_A, PORT);
	CHECK(xmit(&f) == 1, "the first frame is the burst: passed");
	CHECK(xmit(&f) == 0, "the second is dropped");
	CHECK(drain() == 1, "%d records, want 1 (the dropped frame only)", nrecs);
	if (nrecs != 1)
		return;
	CHECK(recs[0].h.rule_uid == uid, "rule uid %u, want %u", recs[0].h.rule_uid, uid);
	CHECK(recs[0].h.rule_slot == slot, "rule slot %u, want %u", recs[0].h.rule_slot, slot);
	CHECK(recs[0].h.verdict == WEIR_CV_DROPPED, "verdict %u", recs[0].h.verdict);
	CHECK(recs[0].h.reason == WEIR_CR_RULE, "reason %u", recs[0].h.reason);
	CHECK(recs[0].h.flags == 0, "flags %u", recs[0].h.flags);
	CHECK(recs[0].h.len == f.n && recs[0].h.caplen == f.n, "len %u caplen %u, want %zu",
	      recs[0].h.len, recs[0].h.caplen, f.n);
	CHECK(recs[0].size == sizeof(recs[0].h) + f.n, "record of %zu bytes", recs[0].size);
	CHECK(!memcmp(recs[0].data, f.b, f.n), "the bytes differ from the frame");
	/* test_run runs on the loopback device of the test's namespace. */
	CHECK(recs[0].h.ifindex == 1, "ifindex %u, want 1", recs[0].h.ifindex);
	CHECK(recs[0].h.ts > 0, "no timestamp");
	CHECK(cstats().captured == 1, "captured %llu", (unsigned long long)cstats().captured);
}

HARNESS_CASE(xdp_dropped_record)
{
	dropped_record(0);
}

HARNESS_CASE(tc_dropped_record)
{
	dropped_record(1);
}

/* Switch off: nothing is copied or counted, whatever wr_capture says. */
HARNESS_CASE(off_copies_nothing)
{
	struct frame f;
	int i;

	flood_rule();
	commit();
	capture_on(DROPPED | PASSED, ANY, 100, 64, T0 + 10 * SEC);
	CFG_SET(capture, 0);
	udp_frame(&f, SRC_A, PORT);
	for (i = 0; i < 5; i++)
		xmit(&f);
	CHECK(drain() == 0, "%d records with the switch off", nrecs);
	CHECK(cstats().captured == 0 && cstats().lost_budget == 0, "counted with the switch off");
}

/* Verdict and rule filters: only what was asked for, and it spends no budget. */
HARNESS_CASE(filters)
{
	struct weir_rule *a, *b;
	struct frame fa, fb;
	__u16 slot_b;
	int i;

	a = flood_rule();
	b = flood_rule();
	b->dport_lo = b->dport_hi = PORT + 1;
	slot_b = b->slot;
	(void)a;
	commit();
	udp_frame(&fa, SRC_A, PORT);
	udp_frame(&fb, SRC_A, PORT + 1);

	/* Passed only: the burst of each, never a drop. */
	capture_on(PASSED, ANY, 100, 64, T0 + 10 * SEC);
	for (i = 0; i < 3; i++) {
		xmit(&fa);
		xmit(&fb);
	}
	CHECK(drain() == 2, "%d records, want the 2 passed", nrecs);
	for (i = 0; i < nrecs && i < MAX_RECS; i++)
		CHECK(recs[i].h.verdict == WEIR_CV_PASSED, "record %d: verdict %u", i,
		      recs[i].h.verdict);

	/* Dropped of rule b only. */
	capture_on(DROPPED, slot_b, 100, 64, T0 + 10 * SEC);
	for (i = 0; i < 3; i++) {
		xmit(&fa);
		xmit(&fb);
	}
	CHECK(drain() == 3, "%d records, want rule b's 3 drops", nrecs);
	for (i = 0; i < nrecs && i < MAX_RECS; i++)
		CHECK(recs[i].h.rule_slot == slot_b && recs[i].h.verdict == WEIR_CV_DROPPED &&
			      recs[i].data[14 + 20 + 3] == ((PORT + 1) & 0xff),
		      "record %d: slot %u verdict %u", i, recs[i].h.rule_slot, recs[i].h.verdict);
	CHECK(cstats().lost_budget == 0, "filtered packets spent the budget");
}

/* The budget: at most budget records a second of the data path's clock. */
HARNESS_CASE(budget_per_second)
{
	struct weir_capture_stats s;
	struct frame f;
	int i;

	flood_rule();
	commit();
	capture_on(DROPPED, ANY, 3, 64, T0 + 10 * SEC);
	udp_frame(&f, SRC_A, PORT);
	xmit(&f);	/* the burst */
	for (i = 0; i < 10; i++)
		xmit(&f);
	CHECK(drain() == 3, "%d records in one second, budget 3", nrecs);
	s = cstats();
	CHECK(s.captured == 3 && s.lost_budget == 7, "captured %llu lost_budget %llu, want 3 and 7",
	      (unsigned long long)s.captured, (unsigned long long)s.lost_budget);
	/* The next second has a budget of its own (the limit refuses again by then). */
	set_now(T0 + SEC + SEC / 2);
	xmit(&f);	/* refilled: passed, not captured */
	for (i = 0; i < 10; i++)
		xmit(&f);
	CHECK(drain() == 3, "%d records in the next second", nrecs);
	/* Snaplen: 64 of each frame, the whole length said. */
	CHECK(nrecs >= 1 && recs[0].h.caplen == 64 && recs[0].h.len == f.n,
	      "caplen %u len %u, want 64 and %zu", recs[0].h.caplen, recs[0].h.len, f.n);
}

/*
 * One in N at random, before the budget: 8000 refused packets at one in 8
 * give about 1000 records (binomial: a standard deviation of 30; the
 * bound, 850 to 1150, is 5 of them), the budget never reached, and one in
 * 1 is every packet again.
 */
HARNESS_CASE(one_in_n)
{
	struct weir_capture c;
	struct frame f;
	__u32 zero = 0;
	int i, n;

	flood_rule();
	commit();
	capture_on(DROPPED, ANY, WEIR_CAPTURE_BUDGET_MAX, 64, T0 + 10 * SEC);
	if (bpf_map__lookup_elem(skel->maps.wr_capture, &zero, 4, &c, sizeof(c), 0))
		CHECK_FAIL("reading wr_capture: %s", strerror(errno));
	c.one_in = 8;
	if (bpf_map__update_elem(skel->maps.wr_capture, &zero, 4, &c, sizeof(c), 0))
		CHECK_FAIL("writing wr_capture: %s", strerror(errno));
	udp_frame(&f, SRC_A, PORT);
	xmit(&f);	/* the burst: passed */
	for (i = 0; i < 8000; i++)
		xmit(&f);
	n = drain();
	CHECK(n >= 850 && n <= 1150, "%d records of 8000 at one in 8", n);
	CHECK(cstats().lost_budget == 0, "lost_budget %llu",
	      (unsigned long long)cstats().lost_budget);
	CHECK(cstats().captured == (__u64)n, "captured %llu, %d records",
	      (unsigned long long)cstats().captured, n);
	c.one_in = 1;
	if (bpf_map__update_elem(skel->maps.wr_capture, &zero, 4, &c, sizeof(c), 0))
		CHECK_FAIL("writing wr_capture: %s", strerror(errno));
	for (i = 0; i < 50; i++)
		xmit(&f);
	CHECK(drain() == 50, "%d records of 50 at one in 1", nrecs);
}

/* A lease that ran out: nothing copied, and the data path clears the switch. */
HARNESS_CASE(lease_expired)
{
	struct frame f;

	flood_rule();
	commit();
	capture_on(DROPPED | PASSED, ANY, 100, 64, T0 - 1);
	udp_frame(&f, SRC_A, PORT);
	xmit(&f);
	CHECK(drain() == 0, "%d records past the lease", nrecs);
	CHECK(cfg_get().capture == 0, "the switch is still on past the lease");
}

/* Other reasons: the deny list, and the kill switch's would-drop. */
HARNESS_CASE(reasons)
{
	struct frame f;

	flood_rule();
	commit();
	capture_on(DROPPED | PASSED, ANY, 100, 64, T0 + 10 * SEC);
	list_put4(skel->maps.wr_deny4, SRC_B, 32, 0);
	CFG_SET(lists, WEIR_L_DENY4);
	udp_frame(&f, SRC_B, PORT);
	CHECK(xmit(&f) == 0, "denied source passed");
	CHECK(drain() == 1 && recs[0].h.reason == WEIR_CR_DENY &&
		      recs[0].h.verdict == WEIR_CV_DROPPED && recs[0].h.rule_uid == 0 &&
		      recs[0].h.rule_slot == ANY,
	      "deny: %d records, reason %u", nrecs, recs[0].h.reason);
	CFG_SET(disabled, 1);
	udp_frame(&f, SRC_A, PORT);
	xmit(&f);
	CHECK(xmit(&f) == 1, "the kill switch dropped");
	CHECK(drain() == 2 && recs[1].h.verdict == WEIR_CV_PASSED &&
		      recs[1].h.reason == WEIR_CR_RULE && recs[1].h.flags == WEIR_CF_WOULD_DROP,
	      "would-drop: %d records, verdict %u reason %u flags %u", nrecs, recs[1].h.verdict,
	      recs[1].h.reason, recs[1].h.flags);
}

/* A TCP segment of no connection, dropped by tcp-state: captured with that reason and its rule. */
HARNESS_CASE(tcp_state_reason)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);
	struct frame f, l;
	__u32 uid, slot;

	/* At TC where XDP cannot copy (no bpf_xdp_load_bytes). */
	use_tc = !skel->rodata->has_frags;
	match_proto(r, WR_IPPROTO_TCP);
	r->flags |= WEIR_RF_TCP_STATE;
	uid = r->uid;
	slot = r->slot;
	commit();
	capture_on(DROPPED, ANY, 100, 64, T0 + 10 * SEC);
	/* An ACK to port 9 of a test address: nothing listens there. */
	l4_tcp(&l, 9, WEIR_TCP_ACK, 5);
	frame4(&f, SRC_A, WR_IPPROTO_TCP, &l);
	CHECK(xmit(&f) == 0, "an ACK of no connection passed");
	CHECK(drain() == 1, "%d records, want 1", nrecs);
	if (nrecs != 1)
		return;
	CHECK(recs[0].h.reason == WEIR_CR_TCP_STATE, "reason %u, want tcp-state",
	      recs[0].h.reason);
	CHECK(recs[0].h.verdict == WEIR_CV_DROPPED, "verdict %u", recs[0].h.verdict);
	CHECK(recs[0].h.rule_uid == uid && recs[0].h.rule_slot == slot,
	      "rule uid %u slot %u, want %u %u", recs[0].h.rule_uid, recs[0].h.rule_slot, uid,
	      slot);
}

int main(void)
{
	int err;

	err = harness_start("bpf_capture");
	if (err)
		return err > 0;
	teardown();
	return check_run_all();
}
