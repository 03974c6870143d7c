/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `weir auto`'s decisions: from the detector's onsets and ends
 * (auto/baseline.h) and the sampler's samples (auto/sampler.h) to the
 * rules it installs and removes. Pure logic over the caller's events,
 * samples and times; the caller (the daemon) commits the rules, so every
 * decision here is tested with time injected.
 *
 * An onset of class C at T (the reading where the departure showed; for
 * the host's pressure, C is every class):
 *  1. Gather. C's samples from T - gather_back_ns on are the attack
 *     sample; once it holds min_samples, or gather_ns passed, choose.
 *     C's samples in [T - before_ns, T - 2 s) are the before-sample
 *     (the 2 s: an attack's first packets come before its onset shows;
 *     it ends earlier where C was last calm earlier, see
 *     wr_detect_event.calm_ns): what C carried while nothing was wrong
 *     (only what weir passed, less what another auto fingerprint, live or
 *     gone within before_ns, matches: an earlier attack is not normal) (every
 *     class's, when C carried almost nothing: a rule must not match any
 *     of the host's normal traffic).
 *  2. Choose (auto/fingerprint.h): the most specific fingerprint that
 *     covers the attack and not the traffic before, as a drop rule; or,
 *     where none separates them, the fallback the chooser names (a limit
 *     per source or destination, tcp-state, cookies), said with its
 *     reason.
 *  3. One rule for one attack. A flood is an onset of its port class and
 *     of its destination's at once: a live rule that matches what C's
 *     choice matches in C's attack sample (opts.fp.cover of it) takes C
 *     on, and no second rule is made. Else mode advise reports the choice,
 *     and mode on installs it as a rule named auto-N, at most max_rules of
 *     them (the next onsets are reported, "no room").
 *  4. Re-check while C is attacked, every recheck_ns: the samples since
 *     the last check (dropped packets are sampled too), matched against
 *     the live rules. When they cover clearly less than the rule did when
 *     chosen, what they leave is chosen for again: while the rule still
 *     matches RECHECK_KEEP of the newest half of the samples, the first
 *     vector goes on beside a second, which gets a mitigation and a rule of
 *     its own (same classes, ending with them); else the vector changed,
 *     and the new rule replaces the old.
 *  5. End. When every class a mitigation took on has ended, it stays
 *     linger_ns more (an attack that pauses comes back to a rule still in
 *     place), then is removed.
 * Rules come after the allow list in the data path, so nothing it installs
 * drops an allowed source.
 */
#ifndef WEIR_USER_AUTO_ENGINE_H
#define WEIR_USER_AUTO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "auto/fingerprint.h"
#include "auto/baseline.h"
#include "auto/sampler.h"

/* Mitigations one engine tracks at most (installed, advised or lingering). */
#define WR_AUTO_MAX		64
/* Classes one mitigation may take on (its port class, its destinations ...). */
#define WR_AUTO_CLASSES		8
/* Room for a rule's words and for its line for a person. */
#define WR_AUTO_WORDS_LEN	512
#define WR_AUTO_DESC_LEN	384
/* A rule's name: auto-N. */
#define WR_AUTO_RULE_LEN	32
/* Samples one choice takes at most from each side. */
#define WR_AUTO_SAMPLE_MAX	8192

enum wr_auto_mode {
	WR_AUTO_OFF,
	WR_AUTO_ADVISE,		/* choose and report; install nothing */
	WR_AUTO_ON,		/* choose and install */
};

struct wr_auto_opts {
	int mode;		/* enum wr_auto_mode */
	uint32_t max_rules;	/* installed at once, 1..WR_AUTO_MAX (default 16) */
	uint64_t gather_ns;	/* longest wait for the attack sample (default 500 ms) */
	uint64_t gather_back_ns;	/* the attack sample starts this long before the onset */
	uint32_t min_samples;	/* choose as soon as the attack sample holds this many */
	uint64_t before_ns;	/* the before-sample: this long before the onset (default 30 s) */
	uint64_t recheck_ns;	/* how often a live rule is checked, on that long's samples (1 s) */
	uint64_t linger_ns;	/* kept this long after the attack ends (default 60 s) */
	struct wr_fp_opts fp;
};

enum wr_auto_state {
	WR_AUTO_GONE,		/* removed, or never used: its slot is free */
	WR_AUTO_GATHERING,	/* an onset: its attack sample being gathered */
	WR_AUTO_ACTIVE,		/* chosen: installed (on) or advised */
	WR_AUTO_LINGERING,	/* every class ended: removed at expires_ns */
};

struct wr_auto_mit {
	int state;		/* enum wr_auto_state */
	bool installed;		/* a rule (mode on), else advised only */
	char rule[WR_AUTO_RULE_LEN];	/* auto-N */
	char words[WR_AUTO_WORDS_LEN];	/* after `weir rule add auto-N` */
	char desc[WR_AUTO_DESC_LEN];	/* the fingerprint, for a person */
	struct wr_fp_choice choice;
	uint64_t keys[WR_AUTO_CLASSES];	/* the classes it took on */
	char names[WR_AUTO_CLASSES][WR_AUTO_NAME_LEN];
	bool ended[WR_AUTO_CLASSES];
	uint32_t nr_classes;
	uint64_t onset_ns;	/* the first class's onset */
	uint64_t calm_ns;	/* ... and where that class was last calm (wr_detect_event) */
	uint64_t chosen_ns;	/* installed or advised at */
	uint64_t checked_ns;	/* last re-checked at */
	uint64_t ended_ns;	/* the last class's end (LINGERING) */
	uint64_t expires_ns;	/* removed at (LINGERING) */
	uint32_t changes;	/* times the vector changed and it was chosen again */
};

enum wr_auto_act {
	WR_AUTO_INSTALL = 1,	/* commit rule with words */
	WR_AUTO_REPLACE,	/* the vector changed: rule's words are new */
	WR_AUTO_REMOVE,		/* delete rule */
	WR_AUTO_ADVICE,		/* advise mode, or no room: what would be installed */
};

struct wr_auto_action {
	int act;		/* enum wr_auto_act */
	char rule[WR_AUTO_RULE_LEN];
	char words[WR_AUTO_WORDS_LEN];
	char desc[WR_AUTO_DESC_LEN];
	char class_name[WR_AUTO_NAME_LEN];
	uint64_t onset_ns;
	uint64_t at_ns;		/* when it was decided */
	bool no_room;		/* ADVICE: max_rules were installed already */
	int vector;		/* wr_fp_vector of the choice */
};

struct wr_auto;

void wr_auto_opts_default(struct wr_auto_opts *o);
/* 0, -EINVAL with why naming the option, or -ENOMEM. */
int wr_auto_new(const struct wr_auto_opts *o, struct wr_auto **out, char *why, size_t len);
void wr_auto_free(struct wr_auto *a);
/*
 * One of the detector's events. The host's pressure is a class of its
 * own, "host", whose samples are every class's (key 0): its onset is
 * fingerprinted over all the host's traffic, and it ends with the pressure.
 */
void wr_auto_event(struct wr_auto *a, const struct wr_detect_event *ev);
/*
 * The work due at now_ns, over the sampler's samples: actions into out
 * (at most max; the rest come at the next step): their number, or -errno.
 */
int wr_auto_step(struct wr_auto *a, const struct wr_sampler *s, uint64_t now_ns,
		 struct wr_auto_action *out, size_t max);
/* The mitigations not gone, oldest first, at most max: how many there are. */
size_t wr_auto_list(const struct wr_auto *a, struct wr_auto_mit *out, size_t max);
/* A commit the caller could not make: that mitigation is advised only from now on. */
void wr_auto_not_installed(struct wr_auto *a, const char *rule);

#endif /* WEIR_USER_AUTO_ENGINE_H */
