# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What a capture of an attack holds, as one JSON line (tests/attack.sh).

    pcapsum.py FILE

FILE is a classic pcap file of Ethernet frames (tcpdump -w on a veth) or
bare IPv4 packets (LINKTYPE_RAW: wrattack --pcap). Only IPv4 is read. The
summary: packets; distinct sources and destinations; protocols; the most
common source and destination ports and how many distinct destination
ports; the UDP/ICMP payload lengths' range (first fragments and whole
datagrams only); the payloads' common prefix (hex, at most PREFIX_MAX
bytes); the fragment offsets (bytes) and how many first fragments had MF;
TCP flags and ICMP types seen; and "runs": consecutive packets grouped by
their payload's first 4 bytes (hex), where there are at most RUN_KEYS such
keys and RUNS_MAX runs (a vector change shows as two runs).
"""
import json
import struct
import sys
from collections import Counter

LINKTYPE_ETHERNET = 1  # pcap link types
LINKTYPE_RAW = 101
ETH_HLEN = 14  # Ethernet header, no VLAN tag
ETH_P_IP = 0x0800
PREFIX_MAX = 16  # bytes of common payload prefix reported
RUN_KEYS = 4  # most distinct run keys before runs are not reported
RUNS_MAX = 8  # most runs reported (more: null)
TOP = 3  # most common ports reported


def packets(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    link = struct.unpack(end + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8 : off + 12])[0]
        frame = data[off + 16 : off + 16 + incl]
        off += 16 + incl
        if link == LINKTYPE_ETHERNET:
            if len(frame) < ETH_HLEN or struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
                continue
            frame = frame[ETH_HLEN:]
        elif link != LINKTYPE_RAW:
            continue
        if len(frame) >= 20 and frame[0] >> 4 == 4:
            yield frame


def main():
    n = 0
    srcs, dsts, protos = set(), set(), Counter()
    sports, dports = Counter(), Counter()
    lens, offsets, flags, types = [], set(), set(), set()
    mf_first = 0
    prefix = None
    keys = []
    for ip in packets(sys.argv[1]):
        n += 1
        ihl = (ip[0] & 0xF) * 4
        proto = ip[9]
        frag = struct.unpack("!H", ip[6:8])[0]
        offset = (frag & 0x1FFF) * 8
        srcs.add(ip[12:16])
        dsts.add(ip[16:20])
        protos[proto] += 1
        if frag & 0x2000 or offset:
            offsets.add(offset)
            if not offset and frag & 0x2000:
                mf_first += 1
        if offset:
            continue
        l4 = ip[ihl:]
        payload = b""
        if proto in (6, 17) and len(l4) >= 4:
            sp, dp = struct.unpack("!HH", l4[:4])
            sports[sp] += 1
            dports[dp] += 1
        if proto == 17 and len(l4) >= 8:
            payload = l4[8:]
            if not frag & 0x2000:
                lens.append(len(payload))
        elif proto == 6 and len(l4) >= 14:
            flags.add(l4[13])
        elif proto == 1 and len(l4) >= 8:
            types.add(l4[0])
            payload = l4[8:]
            lens.append(len(payload))
        if payload:
            p = payload[:PREFIX_MAX]
            if prefix is None:
                prefix = p
            else:
                i = 0
                while i < min(len(prefix), len(p)) and prefix[i] == p[i]:
                    i += 1
                prefix = prefix[:i]
            keys.append(payload[:4].hex())
    runs = None
    if keys and len(set(keys)) <= RUN_KEYS:
        runs = []
        for k in keys:
            if runs and runs[-1][0] == k:
                runs[-1][1] += 1
            else:
                runs.append([k, 1])
        if len(runs) > RUNS_MAX:
            runs = None
    print(json.dumps({
        "packets": n,
        "sources": len(srcs),
        "destinations": len(dsts),
        "protocols": {str(k): v for k, v in protos.items()},
        "sport_top": sports.most_common(TOP),
        "dport_top": dports.most_common(TOP),
        "dports": len(dports),
        "len_min": min(lens) if lens else None,
        "len_max": max(lens) if lens else None,
        "prefix": prefix.hex() if prefix is not None else "",
        "frag_offsets": sorted(offsets),
        "mf_first": mf_first,
        "tcp_flags": sorted(flags),
        "icmp_types": sorted(types),
        "runs": runs,
    }))


if __name__ == "__main__":
    main()
