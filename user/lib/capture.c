// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A capture session: the one reader of the data path's samples
 * (bpf/capture.h copies judged packets into wr_capture_ring at a bounded
 * rate while wr_config.capture is set). `weir capture` prints or writes
 * them; `weir auto` reads them to learn and fingerprint its classes. Both
 * take the capture the same way, here.
 *
 * The switch and the lease. wr_config.capture tells the data path to look
 * at wr_capture at all; it is set under the root lock when a session
 * starts and cleared when it stops. wr_capture.lease_ns is renewed every
 * WEIR_CAPTURE_RENEW_NS, WEIR_CAPTURE_LEASE_NS ahead: a reader killed by
 * SIGKILL cannot clear the switch, so the data path stops copying when the
 * lease runs out and clears the switch itself at the next packet. A new
 * session takes over a stale lease (its process gone) and refuses a live
 * one (-EBUSY), naming its holder.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir.skel.h"
#include "lib/kernel_features.h"

/* The process that holds the lease is alive. */
static bool pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static int zero_stats(const struct wr_maps *m)
{
	int ncpu = libbpf_num_possible_cpus();
	struct weir_capture_stats *z;
	__u32 zero = 0;
	int err = 0;

	if (ncpu <= 0)
		return -EINVAL;
	z = calloc(ncpu, sizeof(*z));
	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(m->capture_stats, &zero, z, BPF_ANY))
		err = -errno;
	free(z);
	return err;
}

/* Another session's lease holds and its process lives: say so. */
static int busy(const struct wr_capture_sess *s)
{
	if (s->ctl->lease_ns <= wr_mono_ns() || !pid_alive(s->ctl->pid) ||
	    s->ctl->pid == (__u32)getpid())
		return 0;
	pr_err("a capture is already running (pid %u)", s->ctl->pid);
	return -EBUSY;
}

/* Set or clear wr_config.capture under the root lock. */
static int set_switch(const struct wr_capture_sess *s, __u32 on)
{
	struct weir_config cfg;
	int lock, err;

	lock = wr_lock_root();
	if (lock < 0)
		return lock;
	err = wr_config_read(s->m, &cfg);
	if (!err && cfg.capture != on) {
		cfg.capture = on;
		err = wr_config_write(s->m, &cfg);
	}
	wr_unlock(lock);
	if (err)
		pr_err("cannot %s the capture switch: %s", on ? "set" : "clear", strerror(-err));
	return err;
}

int wr_capture_kernel_ok(void)
{
	struct wr_features f;
	int links[256], n, i;

	wr_features_probe(&f);
	if (f.has[WR_FEAT_XDP_FRAGS])
		return 0;
	n = wr_list_links(links, ARRAY_SIZE(links));
	for (i = 0; i < n; i++) {
		if (wr_link_mode(links[i]) == WR_MODE_TC)
			continue;
		pr_err("capture at XDP needs bpf_xdp_load_bytes, which this kernel (%s) lacks "
		       "(Linux 5.18 or later); capture in tc mode (attach DEV mode tc) instead",
		       wr_kernel_release());
		return -EOPNOTSUPP;
	}
	return 0;
}

static __u32 pow2_floor(__u32 n);

static int on_sample(void *ctx, void *data, size_t size)
{
	const struct weir_capture_hdr *h = data;
	struct wr_capture_sess *s = ctx;

	/* Left by an earlier session: not this one's. */
	if (s->draining)
		return 0;
	if (size < sizeof(*h) || h->caplen > size - sizeof(*h)) {
		s->malformed++;
		return 0;
	}
	return s->fn(s->ctx, h, (const __u8 *)data + sizeof(*h));
}

int wr_capture_open(struct wr_capture_sess *s, const struct wr_maps *m, wr_capture_fn fn,
		    void *ctx)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->m = m;
	s->fn = fn;
	s->ctx = ctx;
	s->ctl_len = (size_t)sysconf(_SC_PAGESIZE);
	s->ctl = mmap(NULL, s->ctl_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->capture, 0);
	if (s->ctl == MAP_FAILED) {
		s->ctl = NULL;
		err = -errno;
		pr_err("cannot map the capture's control: %s", strerror(-err));
		return err;
	}
	/* Refused before the caller opens its output; wr_capture_start checks again. */
	err = busy(s);
	if (err)
		goto fail;
	s->rb = ring_buffer__new(m->capture_ring, on_sample, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot read the capture ring: %s", strerror(-err));
		goto fail;
	}
	/* What an earlier session left unread is not this one's. */
	s->draining = true;
	ring_buffer__consume(s->rb);
	s->draining = false;
	return 0;
fail:
	wr_capture_close(s);
	return err;
}

/*
 * Take the capture under the root lock, so that two starting at once
 * cannot both: the control, then the lease, then the switch.
 */
int wr_capture_start(struct wr_capture_sess *s, const struct wr_capture_opts *o)
{
	struct weir_config cfg;
	int lock, err;

	lock = wr_lock_root();
	if (lock < 0)
		return lock;
	err = busy(s);
	if (err)
		goto out;
	err = zero_stats(s->m);
	if (err) {
		pr_err("cannot reset the capture's counters: %s", strerror(-err));
		goto out;
	}
	s->ctl->lease_ns = 0;
	s->ctl->window = 0;
	s->ctl->budget = o->budget;
	s->ctl->snaplen = o->snaplen;
	s->ctl->verdicts = o->verdicts;
	s->ctl->rule_slot = o->rule_slot;
	s->ctl->one_in = pow2_floor(o->one_in);
	s->ctl->pid = getpid();
	__atomic_store_n(&s->ctl->lease_ns, wr_mono_ns() + WEIR_CAPTURE_LEASE_NS, __ATOMIC_RELEASE);
	err = wr_config_read(s->m, &cfg);
	if (!err) {
		cfg.capture = 1;
		err = wr_config_write(s->m, &cfg);
	}
	if (err)
		pr_err("cannot set the capture switch: %s", strerror(-err));
	else
		s->started = true;
	s->next_renew = wr_mono_ns() + WEIR_CAPTURE_RENEW_NS;
out:
	wr_unlock(lock);
	return err;
}

int wr_capture_poll(struct wr_capture_sess *s, int timeout_ms)
{
	struct weir_config cfg;
	__u64 now;
	int err;

	err = ring_buffer__poll(s->rb, timeout_ms);
	if (err < 0 && err != -EINTR) {
		pr_err("cannot read the capture ring: %s", strerror(-err));
		return err;
	}
	if (!s->started)
		return 0;
	now = wr_mono_ns();
	if (now < s->next_renew)
		return 0;
	s->next_renew = now + WEIR_CAPTURE_RENEW_NS;
	/* Taken over by another session (after ours looked dead): ours has ended. */
	if (s->ctl->pid != (__u32)getpid()) {
		pr_err("the capture was taken over by pid %u", s->ctl->pid);
		s->started = false;
		return -EBUSY;
	}
	__atomic_store_n(&s->ctl->lease_ns, now + WEIR_CAPTURE_LEASE_NS, __ATOMIC_RELEASE);
	/* The data path may have cleared it while the lease was being renewed. */
	if (!wr_config_read(s->m, &cfg) && !cfg.capture)
		return set_switch(s, 1);
	return 0;
}

/* n rounded down to a power of two (the data path draws with a mask); 0 and 1: every one. */
static __u32 pow2_floor(__u32 n)
{
	__u32 p = 1;

	while (n >= 2 * p && p < (1U << 31))
		p *= 2;
	return n ? p : 0;
}

void wr_capture_one_in(struct wr_capture_sess *s, __u32 n)
{
	if (s->started && s->ctl->pid == (__u32)getpid())
		__atomic_store_n(&s->ctl->one_in, pow2_floor(n), __ATOMIC_RELAXED);
}

int wr_capture_stop(struct wr_capture_sess *s)
{
	int err = 0, i;

	if (!s->started)
		return 0;
	s->started = false;
	/* Ours still (a takeover would have changed the pid): end it. */
	if (s->ctl->pid == (__u32)getpid()) {
		__atomic_store_n(&s->ctl->lease_ns, 0, __ATOMIC_RELEASE);
		err = set_switch(s, 0) ? -EIO : 0;
		s->ctl->pid = 0;
	}
	/* What was copied before the switch went off. */
	for (i = 0; i < 4 && ring_buffer__consume(s->rb) > 0; i++)
		;
	return err;
}

void wr_capture_close(struct wr_capture_sess *s)
{
	wr_capture_stop(s);
	ring_buffer__free(s->rb);
	s->rb = NULL;
	if (s->ctl)
		munmap(s->ctl, s->ctl_len);
	s->ctl = NULL;
}

int wr_capture_stats_read(const struct wr_maps *m, struct weir_capture_stats *st)
{
	return wr_percpu_sum(m->capture_stats, 0, (__u64 *)st, sizeof(*st) / sizeof(__u64));
}
