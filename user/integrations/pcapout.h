/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pcap output for `weir capture` (pcapout.c): libpcap behind a small API. */
#ifndef WEIR_PCAPOUT_H
#define WEIR_PCAPOUT_H

#include <stddef.h>

struct wr_pcap;
/* An Ethernet pcap writer on file ("-": stdout); NULL with err[] saying why. */
struct wr_pcap *wr_pcap_open(const char *file, int snaplen, char *err, size_t len);
/* One frame: caplen of its len bytes, judged at wall_ns (CLOCK_REALTIME). */
void wr_pcap_write(struct wr_pcap *w, long long wall_ns, const void *data, unsigned int caplen,
		   unsigned int len);
/* 0, or -1 if what was written could not be flushed. */
int wr_pcap_flush(struct wr_pcap *w);
void wr_pcap_close(struct wr_pcap *w);

#endif /* WEIR_PCAPOUT_H */
