// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pcap output for `weir capture`, through libpcap's own writer. A file of
 * its own: libpcap's <pcap/bpf.h> and the kernel's <linux/bpf.h> both
 * define struct bpf_insn, so no file includes both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <pcap/pcap.h>
#include "integrations/pcapout.h"

struct wr_pcap {
	pcap_t *p;
	pcap_dumper_t *d;
};

struct wr_pcap *wr_pcap_open(const char *file, int snaplen, char *err, size_t len)
{
	struct wr_pcap *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	/* Ethernet: XDP and TC ingress both see the frame from its MAC header. */
	w->p = pcap_open_dead(DLT_EN10MB, snaplen);
	if (!w->p) {
		snprintf(err, len, "cannot start a pcap writer");
		free(w);
		return NULL;
	}
	/* "-" is stdout, as libpcap has it. */
	w->d = pcap_dump_open(w->p, file);
	if (!w->d) {
		snprintf(err, len, "%s", pcap_geterr(w->p));
		pcap_close(w->p);
		free(w);
		return NULL;
	}
	return w;
}

void wr_pcap_write(struct wr_pcap *w, long long wall_ns, const void *data, unsigned int caplen,
		   unsigned int len)
{
	struct pcap_pkthdr h = {};

	h.ts.tv_sec = wall_ns / 1000000000LL;
	h.ts.tv_usec = (wall_ns % 1000000000LL) / 1000;
	h.caplen = caplen;
	h.len = len;
	pcap_dump((u_char *)w->d, &h, data);
}

int wr_pcap_flush(struct wr_pcap *w)
{
	return pcap_dump_flush(w->d);
}

void wr_pcap_close(struct wr_pcap *w)
{
	if (!w)
		return;
	pcap_dump_close(w->d);
	pcap_close(w->p);
	free(w);
}
