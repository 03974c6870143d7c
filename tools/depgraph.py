#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The userspace's dependency graph, by directory and by file.

    tools/depgraph.py             print both graphs and any circle
    tools/depgraph.py --check     also exit 1 on an upward edge or a circle

Two graphs over user/:
  includes   file -> the user/ headers it includes (#include "dir/x.h")
  calls      file -> the files whose external functions it calls: a function
             is the file's if the file defines it at top level (not static),
             and another file calls it if the name appears there as a call.
Directories are layered, lowest first (LAYERS): an edge from a file to one
in a higher layer is upward, and the check refuses it. Within lib/, the
files' calls are layered too (LIB_LAYERS), so the owners form no circle
either; lib/'s headers (libweir.h and the few beside it) declare them.
tests/layout.sh runs the check; docs/ARCHITECTURE.md shows the layers.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
USER = os.path.join(ROOT, "user")

# Lowest first; a file may use its own layer and those below.
LAYERS = ["util", "lib", "config", "fleet", "integrations", "auto", "daemon", "cmd", "."]
# lib/ itself, lowest first; files not named here are refused by --check.
LIB_LAYERS = [
    ["pins", "tcpdiag", "match_fields", "rule_actions", "limit_keys", "penalty", "reflect"],
    ["loader", "state", "egress"],
    ["maps", "conns"],
    ["lists", "feeds", "srcset", "cookie", "rules", "shed", "ifstats"],
    ["session"],
    ["xdpmulti"],
    ["links"],
    ["ruleset", "snapshot", "capture"],
]


def sources():
    out = []
    for d, _, files in os.walk(USER):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), USER))
    return sorted(out)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"'(\\.|[^'\\\n])'", "' '", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def layer_of(path):
    d = os.path.dirname(path) or "."
    return LAYERS.index(d) if d in LAYERS else None


def lib_layer(path):
    if os.path.dirname(path) != "lib":
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    for i, names in enumerate(LIB_LAYERS):
        if stem in names:
            return i
    return None


def graphs():
    files = sources()
    texts = {f: open(os.path.join(USER, f)).read() for f in files}
    inc = {}
    for f in files:
        inc[f] = sorted(set(h for h in re.findall(r'^#include "([^"]+)"', texts[f], re.M)
                            if os.path.exists(os.path.join(USER, h))))
    defs = {}
    for f in files:
        if not f.endswith(".c"):
            continue
        code = strip_comments(texts[f])
        for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*?\b(\w+)\(", code, re.M):
            name = m.group(1)
            if name not in ("if", "while", "for", "switch", "return", "sizeof"):
                defs.setdefault(name, f)
    calls = {}
    for f in files:
        if not f.endswith(".c"):
            continue
        code = strip_comments(texts[f])
        used = set()
        for name in set(re.findall(r"\b(\w+)\s*\(", code)):
            g = defs.get(name)
            if g and g != f:
                used.add(g)
        calls[f] = sorted(used)
    return inc, calls


def circles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def upward(src, dst, calls):
    a, b = layer_of(src), layer_of(dst)
    if a is None or b is None:
        return "outside the layers"
    if b > a:
        return "upward"
    la, lb = lib_layer(src), lib_layer(dst)
    # lib/'s headers declare what its files own; its layers are of calls.
    if calls and os.path.dirname(src) == "lib" and os.path.dirname(dst) == "lib":
        if la is None or lb is None:
            return "a lib/ file not in LIB_LAYERS"
        if lb > la:
            return "upward within lib/"
    return None


def main():
    check = "--check" in sys.argv[1:]
    inc, calls = graphs()
    bad = []
    for name, g in (("includes", inc), ("calls", calls)):
        print("# %s" % name)
        for f in sorted(g):
            if g[f]:
                print("%-28s -> %s" % (f, " ".join(g[f])))
            for t in g[f]:
                # A .c's own header, and a header's .c, sit in one place.
                if os.path.splitext(t)[0] == os.path.splitext(f)[0]:
                    continue
                why = upward(f, t, name == "calls")
                if why:
                    bad.append("%s: %s -> %s (%s)" % (name, f, t, why))
        # For calls, a file and its header are one node; headers include
        # each other through guards, so their circles are of files.
        node = (lambda p: os.path.splitext(p)[0]) if name == "calls" else (lambda p: p)
        merged = {}
        for f, ts in g.items():
            merged.setdefault(node(f), set()).update(node(t) for t in ts if node(t) != node(f))
        for c in circles({k: sorted(v) for k, v in merged.items()}):
            bad.append("%s: a circle: %s" % (name, " ".join(c)))
        dirs = {}
        for f, ts in g.items():
            for t in ts:
                a, b = os.path.dirname(f) or ".", os.path.dirname(t) or "."
                if a != b:
                    dirs.setdefault(a, set()).add(b)
        print("# %s by directory" % name)
        for d in LAYERS:
            if d in dirs:
                print("%-14s -> %s" % (d, " ".join(sorted(dirs[d], key=LAYERS.index))))
        print()
    for b in bad:
        print("not layered: " + b)
    if not bad:
        print("layered: no upward edge, no circle")
    return 1 if check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
