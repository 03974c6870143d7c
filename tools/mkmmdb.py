#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write a small MaxMind DB (MMDB) file, for weir's tests of `weir geo`.

A plain writer of the format (https://maxmind.github.io/MaxMind-DB/, binary
format 2.0): a binary search tree over the address bits, 16 zero bytes, the
data section, then the metadata after its marker. It writes IPv6 databases
(IPv4 networks at ::/96, and ::ffff:0:0/96, 2001::/32 and 2002::/16 aliased
to that subtree as MaxMind's own writer aliases them) or IPv4 ones, with
24-, 28- or 32-bit records. libmaxminddb's mmdblookup reads what it writes
(tests/geo.sh checks).

    tools/mkmmdb.py [--record-size 24|28|32] [--ip-version 4|6] IN.json OUT.mmdb
    tools/mkmmdb.py [...] --generate N OUT.mmdb

IN.json: {"networks": [{"network": "198.51.100.0/24", "country": "DE",
"registered_country": "NL", "asn": 64496}, ...]} (each key but network
optional; or "data": any JSON object as the record itself). "ip_version" and
"record_size" in the file are used unless given on the line. A network
inside another takes precedence over it, whatever their order. --generate N:
N IPv4 /24 networks, the i-th at 1.0.0.0 + i*512 (never adjacent, so never
merged), country i%5 of DE NL FR US JP and ASN 64496 + i%10.

--corrupt loop: one record of the tree points back at the root (a tree a
reader must refuse, not follow forever); --corrupt data: the root's right
record points past the end of the data section.
"""
import argparse
import ipaddress
import json
import struct
import sys
import time

# The marker before the metadata map (spec: "Database Metadata").
META_MARKER = b"\xab\xcd\xefMaxMind.com"
# Data field types (spec: "Output Data Section"); above 7 they are "extended".
T_POINTER, T_STRING, T_DOUBLE, T_BYTES, T_U16, T_U32, T_MAP = 1, 2, 3, 4, 5, 6, 7
T_I32, T_U64, T_U128, T_ARRAY, T_BOOL = 8, 9, 10, 11, 14
# Countries and the first ASN of --generate.
GEN_COUNTRIES = ["DE", "NL", "FR", "US", "JP"]
GEN_ASN = 64496
# A record value meaning "not in the tree" before numbering.
EMPTY = -1


def ctrl(typ, size):
    """A field's control byte(s): type in the top 3 bits, size in the low 5."""
    if size < 29:
        sb, extra = size, b""
    elif size < 29 + 256:
        sb, extra = 29, bytes([size - 29])
    elif size < 285 + 65536:
        sb, extra = 30, (size - 285).to_bytes(2, "big")
    else:
        sb, extra = 31, (size - 65821).to_bytes(3, "big")
    if typ <= 7:
        return bytes([(typ << 5) | sb]) + extra
    return bytes([sb, typ - 7]) + extra


def uint(typ, v, width):
    if v < 0 or v >= 1 << (8 * width):
        raise ValueError(f"{v} does not fit {width} bytes")
    b = v.to_bytes(width, "big").lstrip(b"\0")
    return ctrl(typ, len(b)) + b


def enc(v, typ=None):
    """One value in the data section's encoding; ints are uint32 (uint64 when larger)."""
    if typ is not None:
        return uint(typ, v, {T_U16: 2, T_U32: 4, T_U64: 8}[typ])
    if isinstance(v, bool):
        return ctrl(T_BOOL, int(v))
    if isinstance(v, int):
        return uint(T_U32, v, 4) if v < 1 << 32 else uint(T_U64, v, 8)
    if isinstance(v, float):
        return ctrl(T_DOUBLE, 8) + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return ctrl(T_STRING, len(b)) + b
    if isinstance(v, dict):
        return ctrl(T_MAP, len(v)) + b"".join(enc(k) + enc(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ctrl(T_ARRAY, len(v)) + b"".join(enc(x) for x in v)
    raise ValueError(f"cannot encode {v!r}")


class Tree:
    """A binary trie: nodes as two lists of records (EMPTY, a node id, or -2 - data index)."""

    def __init__(self):
        self.left, self.right = [EMPTY], [EMPTY]

    def new(self, lv, rv):
        self.left.append(lv)
        self.right.append(rv)
        return len(self.left) - 1

    def set(self, start, bits, plen, value):
        """Point the record at the first plen bits of bits (an int, MSB first) below start."""
        node = start
        for d in range(plen):
            side = self.right if (bits >> (self.width - 1 - d)) & 1 else self.left
            if d == plen - 1:
                side[node] = value
                return
            nxt = side[node]
            if nxt < 0:
                # Empty or data: a new node whose halves both keep what was there.
                nxt = self.new(nxt, nxt)
                side[node] = nxt
            node = nxt
        raise ValueError("a /0 network")


def build(nets, ip_version):
    """The tree and the data section's records from [(network, record dict)]."""
    tree = Tree()
    tree.width = 128 if ip_version == 6 else 32
    datas, index = [], {}

    def data_ref(rec):
        b = enc(rec)
        if b not in index:
            index[b] = len(datas)
            datas.append(b)
        return -2 - index[b]

    v4root = 0
    if ip_version == 6:
        # ::/96: 96 zero bits, a node at the end that IPv4 networks hang under.
        node = 0
        for _ in range(96):
            if tree.left[node] < 0:
                tree.left[node] = tree.new(EMPTY, EMPTY)
            node = tree.left[node]
        v4root = node
    # Shorter networks first, so a network inside another splits it.
    for net, rec in sorted(nets, key=lambda x: x[0].prefixlen):
        ref = data_ref(rec)
        if net.version == 4:
            tree.set(v4root, int(net.network_address) << (tree.width - 32), net.prefixlen, ref)
        else:
            tree.set(0, int(net.network_address), net.prefixlen, ref)
    if ip_version == 6:
        for alias in ("::ffff:0:0/96", "2001::/32", "2002::/16"):
            a = ipaddress.ip_network(alias)
            tree.set(0, int(a.network_address), a.prefixlen, v4root)
    return tree, datas


def write(path, tree, datas, ip_version, record_size, corrupt=None):
    n = len(tree.left)
    offs, off = [], 0
    for b in datas:
        offs.append(off)
        off += len(b)

    def val(r):
        if r == EMPTY:
            return n
        if r >= 0:
            return r
        return n + 16 + offs[-2 - r]

    if corrupt == "loop":
        # The deepest node's left record points back at the root.
        tree.left[n - 1] = 0
    patch = None
    if corrupt == "data":
        # The root's right record (::/1 or 128.0.0.0/1) points past the data section's end.
        patch = n + 16 + off + 1000
    limit = 1 << record_size
    out = bytearray()
    for i, (lr, rr) in enumerate(zip(tree.left, tree.right)):
        lv, rv = val(lr), val(rr)
        if i == 0 and patch is not None:
            rv = patch
        if lv >= limit or rv >= limit:
            sys.exit(f"mkmmdb: a record ({max(lv, rv)}) does not fit {record_size} bits")
        if record_size == 24:
            out += lv.to_bytes(3, "big") + rv.to_bytes(3, "big")
        elif record_size == 28:
            # The middle byte: the left record's top 4 bits, then the right's.
            out += (lv & 0xFFFFFF).to_bytes(3, "big")
            out.append(((lv >> 24) << 4) | (rv >> 24))
            out += (rv & 0xFFFFFF).to_bytes(3, "big")
        else:
            out += lv.to_bytes(4, "big") + rv.to_bytes(4, "big")
    out += bytes(16)
    for b in datas:
        out += b
    meta = (
        enc("binary_format_major_version") + enc(2, T_U16)
        + enc("binary_format_minor_version") + enc(0, T_U16)
        + enc("build_epoch") + enc(int(time.time()), T_U64)
        + enc("database_type") + enc("weir-test")
        + enc("description") + enc({"en": "weir test database (tools/mkmmdb.py)"})
        + enc("ip_version") + enc(ip_version, T_U16)
        + enc("languages") + enc(["en"])
        + enc("node_count") + enc(n, T_U32)
        + enc("record_size") + enc(record_size, T_U16)
    )
    out += META_MARKER + ctrl(T_MAP, 9) + meta
    with open(path, "wb") as f:
        f.write(out)
    return n


def record_of(e):
    if "data" in e:
        return e["data"]
    rec = {}
    if "country" in e:
        rec["country"] = {"iso_code": e["country"]}
    if "registered_country" in e:
        rec["registered_country"] = {"iso_code": e["registered_country"]}
    if "asn" in e:
        rec["autonomous_system_number"] = e["asn"]
    return rec


def main():
    ap = argparse.ArgumentParser(description="Write a MaxMind DB file.")
    ap.add_argument("--record-size", type=int, choices=(24, 28, 32))
    ap.add_argument("--ip-version", type=int, choices=(4, 6))
    ap.add_argument("--generate", type=int, metavar="N")
    ap.add_argument("--corrupt", choices=("loop", "data"))
    ap.add_argument("files", nargs="+", metavar="[IN.json] OUT.mmdb")
    a = ap.parse_args()
    spec = {}
    if a.generate is not None:
        if len(a.files) != 1:
            ap.error("--generate takes OUT.mmdb only")
        nets = []
        for i in range(a.generate):
            rec = {"country": {"iso_code": GEN_COUNTRIES[i % len(GEN_COUNTRIES)]},
                   "autonomous_system_number": GEN_ASN + i % 10}
            nets.append((ipaddress.ip_network(((1 << 24) + i * 512, 24)), rec))
    else:
        if len(a.files) != 2:
            ap.error("IN.json and OUT.mmdb")
        with open(a.files[0]) as f:
            spec = json.load(f)
        nets = [(ipaddress.ip_network(e["network"]), record_of(e)) for e in spec["networks"]]
    ipv = a.ip_version or spec.get("ip_version", 6)
    rs = a.record_size or spec.get("record_size", 28)
    if ipv == 4 and any(n.version == 6 for n, _ in nets):
        sys.exit("mkmmdb: an IPv6 network in an IPv4 database")
    tree, datas = build(nets, ipv)
    n = write(a.files[-1], tree, datas, ipv, rs, a.corrupt)
    print(f"mkmmdb: {a.files[-1]}: {len(nets)} networks, {n} nodes, {len(datas)} records, "
          f"IPv{ipv}, {rs}-bit records", file=sys.stderr)


if __name__ == "__main__":
    main()
