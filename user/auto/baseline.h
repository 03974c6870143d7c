/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `weir auto`'s baselines and onset detector: fed each traffic class's
 * monotonic packet and byte counters (as the data path sums them over the
 * CPUs, read every 100-250 ms), it says when a class departs from what it
 * normally carries, and when it is back. A class is an opaque 64-bit key
 * and a printable name: a (protocol, port) pair or a destination address
 * to the caller, the same thing here. Time is always the caller's
 * (CLOCK_MONOTONIC ns, as the readings were taken), so tests inject it.
 *
 * The baseline, per class and per dimension (packets/s and bytes/s):
 *  - Readings are differenced into rates; consecutive readings are summed
 *    into one-second rates (a run of readings covering at least 1 s).
 *  - M and S: the median of the last WR_DETECT_WINDOW one-second rates,
 *    and S = 1.4826 x their median absolute deviation (MAD) from M, which
 *    estimates the standard deviation of normal traffic while a few
 *    outliers (a burst, an attack's first second) move neither.
 *  - L, the level: an EWMA of the one-second rates with a half-life
 *    (default 30 s), so the baseline follows a ramp (a diurnal cycle) and
 *    forgets an old level. Each rate enters the EWMA clipped to M + m x S
 *    (m: the MAD multiplier, default 3) once the window holds
 *    WR_DETECT_MIN_SAMPLES rates: an outlier the band calls abnormal
 *    cannot pull the level up, so a flood that began during the warm-up or
 *    a spike too short to alarm leaves the baseline where it was.
 *  - U = L + m x S, the band's upper edge: the level plus the spread of
 *    normal traffic. The factor then applies to what normal traffic
 *    already reaches, not to its mean, so a noisy class is judged by its
 *    own noise.
 * The onset test runs on every reading's own rate (its interval only, not
 * the one-second sum), so an onset is reported at the first reading that
 * shows the departure: rate >= floor AND rate >= factor x U, in packets
 * or in bytes. The floor keeps an idle class (U near 0) quiet at its first
 * visitor; the factor over U keeps a busy one quiet at its bursts. A class
 * never seen has U = 0: any rate over the floor is an onset there.
 * While a class is in an onset it learns nothing (its window, level and
 * thresholds are frozen at the onset's), and it ends when both rates have
 * stayed under off_ratio x the onset threshold for hold_ns (hysteresis:
 * on at X, off under a lower Y, for a while), so an attack flapping
 * around the threshold is one onset.
 * The warm-up (default 30 s from the first reading the detector gets)
 * learns without alarming; protection starts at the first reading after
 * it. A class first seen after the warm-up was idle until then.
 * What it cannot see: a class attacked for its whole warm-up learns the
 * attack as normal, and an attack that ramps up slower than the level
 * follows (WR_DETECT_WINDOW seconds and more) is learnt too; static rules
 * and the host-pressure input are the answer there. And U is made of
 * one-second rates while the test reads each reading's: normal traffic
 * that bursts past factor x U within a reading (100-250 ms) alarms, so a
 * class that bursts so needs a larger factor.
 *
 * One thread calls a detector (the daemon's tick): it holds no lock.
 *
 * Storage: a fixed pool of max_classes classes, allocated at creation,
 * found through an array of pool indices sorted by key (binary search;
 * an insert or a forget moves at most max_classes 4-byte indices, and a
 * listing comes out in key order, the same for every run).
 */
#ifndef WEIR_USER_AUTO_BASELINE_H
#define WEIR_USER_AUTO_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A class name's room, the NUL included (e.g. "udp/53", "198.18.0.1", "2001:db8::1"). */
#define WR_DETECT_NAME_LEN 48
/* One-second rates the median and MAD are taken over: a minute of traffic. */
#define WR_DETECT_WINDOW 60
/* Rates in the window before the band clips what enters the level (a median of fewer is noise). */
#define WR_DETECT_MIN_SAMPLES 5
/* Most classes one detector may watch (the pool is allocated at creation: about 700 B each). */
#define WR_DETECT_MAX_CLASSES 65536

/* Rate dimensions: packets/s and bytes/s. */
enum wr_detect_dim {
	WR_DETECT_PKTS,
	WR_DETECT_BYTES,
	WR_DETECT_NR_DIMS,
};

struct wr_detect_opts {
	uint32_t max_classes;	/* classes watched at most, 1..WR_DETECT_MAX_CLASSES */
	uint64_t warmup_ns;	/* learning without alarm from the first reading */
	double factor;		/* onset at rate >= factor x U (> 1) */
	double off_ratio;	/* end under off_ratio x the onset threshold (0 < r < 1) */
	uint64_t hold_ns;	/* ... for this long */
	double floor_pps;	/* onset needs at least this many packets/s (> 0) */
	double floor_bps;	/* or this many bytes/s (> 0) */
	uint64_t half_life_ns;	/* the level's EWMA half-life */
	double mad_mult;	/* m: U = L + m x S, and the clip of what the level learns */
	double pressure_on;	/* host pressure (0..1) at which a host onset starts */
	double pressure_off;	/* ... and under which it ends, after pressure_hold_ns */
	uint64_t pressure_hold_ns;
};

/* What a poll reports. */
enum wr_detect_kind {
	WR_DETECT_ONSET = 1,	/* a class departed from its baseline */
	WR_DETECT_END,		/* ... and is back under the off threshold for hold_ns */
	WR_DETECT_PRESSURE_ON,	/* the host's pressure reached pressure_on */
	WR_DETECT_PRESSURE_OFF,	/* ... and stayed under pressure_off for pressure_hold_ns */
};

struct wr_detect_event {
	int kind;		/* enum wr_detect_kind */
	uint64_t key;		/* the class (0 for the host's pressure) */
	char name[WR_DETECT_NAME_LEN];	/* the class's name, "host" for pressure */
	/*
	 * ONSET: the departing reading's rates; END: the last reading's.
	 * Pressure: rate[0] is the pressure, threshold[0] the level crossed.
	 */
	double rate[WR_DETECT_NR_DIMS];
	double baseline[WR_DETECT_NR_DIMS];	/* L, the level (frozen at the onset) */
	double band[WR_DETECT_NR_DIMS];		/* U, the band's upper edge */
	double threshold[WR_DETECT_NR_DIMS];	/* the onset threshold, max(floor, factor x U) */
	/*
	 * ONSET: rate / U in the dimension that departed (0 when U is 0: a
	 * class with no baseline, where the floor alone decided); END: the
	 * highest over the onset.
	 */
	double factor;
	int dim;		/* the dimension that departed (enum wr_detect_dim) */
	/* ONSET: the reading where the departure was first visible; END: when it was decided. */
	uint64_t at_ns;
	uint64_t since_ns;	/* END: the onset's at_ns */
	/*
	 * ONSET: where the class was last known calm: the start of the last
	 * reading before the onset in which every dimension stayed under its
	 * off threshold (off_ratio x the onset threshold), so an attack
	 * began after it, however late its onset showed; 0 when the class
	 * had no such reading.
	 */
	uint64_t calm_ns;
};

/* Where a class stands. */
enum wr_detect_state {
	WR_DETECT_LEARNING,	/* the warm-up (the detector's, or an accepted class's): no onset */
	WR_DETECT_WATCHING,	/* learning, and an onset is possible */
	WR_DETECT_ATTACKED,	/* in an onset: not learning */
};

/* One class as `weir auto status` shows it. */
struct wr_detect_class {
	uint64_t key;
	char name[WR_DETECT_NAME_LEN];
	int state;		/* enum wr_detect_state */
	double rate[WR_DETECT_NR_DIMS];		/* the last reading's rates (0 before two) */
	double baseline[WR_DETECT_NR_DIMS];	/* L */
	double median[WR_DETECT_NR_DIMS];	/* M */
	double spread[WR_DETECT_NR_DIMS];	/* S */
	double band[WR_DETECT_NR_DIMS];		/* U */
	double threshold[WR_DETECT_NR_DIMS];	/* where an onset starts (ends: x off_ratio) */
	uint32_t samples;	/* one-second rates in the window */
	uint64_t last_ns;	/* the last reading */
	uint64_t onset_ns;	/* ATTACKED: the onset's reading */
};

struct wr_detector;

/* The defaults (the head comment and wr_detect_opts_default's table). */
void wr_detect_opts_default(struct wr_detect_opts *o);
/*
 * A detector with options o: 0, or -EINVAL with why naming the option
 * (nothing allocated), or -ENOMEM.
 */
int wr_detect_new(const struct wr_detect_opts *o, struct wr_detector **out, char *why,
		  size_t len);
void wr_detect_free(struct wr_detector *d);
/*
 * One reading of one class's counters at now_ns (nonzero, never before a
 * time the detector was given). 0; -EINVAL (zero or backwards time, NULL,
 * empty or too long name), -ENOSPC (max_classes classes already watched):
 * then nothing changed and wr_detect_error says why. A class's first
 * reading, and one whose counters went back (a reset), only set the
 * reference the next reading is differenced against; a reading within
 * 50 ms of the last is folded into the next.
 */
int wr_detect_feed(struct wr_detector *d, uint64_t key, const char *name, uint64_t packets,
		   uint64_t bytes, uint64_t now_ns);
/*
 * The host's pressure in [0, 1] (the shedding controller's signal) at
 * now_ns: a host onset at pressure_on, its end under pressure_off held for
 * pressure_hold_ns. 0 or -EINVAL.
 */
int wr_detect_pressure(struct wr_detector *d, double value, uint64_t now_ns);
/*
 * The events since the last poll, oldest first, at most max of them into
 * ev (the rest wait for the next poll): the number given, or -EINVAL. An
 * onset whose hold has run out by now_ns ends here if no reading did.
 */
int wr_detect_poll(struct wr_detector *d, uint64_t now_ns, struct wr_detect_event *ev,
		   size_t max);
/* Events dropped because nobody polled (the queue holds 2 x min(max_classes, 4096) + 16). */
uint64_t wr_detect_lost(const struct wr_detector *d);
/* Every class in key order, at most max into out: the number of classes watched. */
size_t wr_detect_list(const struct wr_detector *d, struct wr_detect_class *out, size_t max);
/*
 * Forget the classes whose counters have not moved for idle_ns by now_ns.
 * One in an onset is forgotten only if it got no reading for idle_ns (its
 * counters are gone), with an END event. The number forgotten, or -EINVAL.
 */
int wr_detect_forget(struct wr_detector *d, uint64_t now_ns, uint64_t idle_ns);
/*
 * Take what class key carries now as its normal: an onset it is in ends
 * (END event), and it learns afresh, without alarm for a warm-up from now.
 * For a lasting legitimate change the detector would otherwise call an
 * onset for ever (a class learns nothing in an onset): the caller decides,
 * e.g. when no fingerprint separated the "attack" from the class's
 * traffic before it. 0, -ENOENT (not watched) or -EINVAL.
 */
int wr_detect_accept(struct wr_detector *d, uint64_t key, uint64_t now_ns);
/* Why the last call failed (a sentence), "" if none did. */
const char *wr_detect_error(const struct wr_detector *d);

#endif /* WEIR_USER_AUTO_BASELINE_H */
