/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pcap output for `sluice capture` (pcapout.c): libpcap behind a small API. */
#ifndef SLUICE_PCAPOUT_H
#define SLUICE_PCAPOUT_H

#include <stddef.h>

struct sl_pcap;
/* An Ethernet pcap writer on file ("-": stdout); NULL with err[] saying why. */
struct sl_pcap *sl_pcap_open(const char *file, int snaplen, char *err, size_t len);
/* One frame: caplen of its len bytes, judged at wall_ns (CLOCK_REALTIME). */
void sl_pcap_write(struct sl_pcap *w, long long wall_ns, const void *data, unsigned int caplen,
		   unsigned int len);
/* 0, or -1 if what was written could not be flushed. */
int sl_pcap_flush(struct sl_pcap *w);
void sl_pcap_close(struct sl_pcap *w);

#endif /* SLUICE_PCAPOUT_H */
