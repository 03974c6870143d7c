# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The attack harness's real clients (tools/attack/run.sh).

    clients.py SERVER DURATION OUT

For DURATION seconds (or until SIGTERM), against SERVER (an IPv4 address): DNS queries for
test.weir (dnsmasq answers 198.18.9.9) at DNS_RATE per second on one UDP
socket, each answered within DNS_TIMEOUT or failed; HTTP GETs of / on
HTTP_PORT and plain TCP connects to TCP_PORT, one every CLIENT_GAP seconds
each, CONN_TIMEOUT each. Every attempt is one line of OUT:
    KIND START_NS OK
with START_NS on CLOCK_MONOTONIC (comparable with wrattack's first_ns).
"""
import http.client
import os
import random
import signal
import socket
import struct
import sys
import threading
import time

DNS_RATE = 40  # queries per second
DNS_TIMEOUT = 1.0  # seconds an answer may take
HTTP_PORT = 8080  # python3 -m http.server on the receiver
TCP_PORT = 7001  # tools/wrserve on the receiver
CLIENT_GAP = 0.2  # seconds between two HTTP fetches, and two TCP connects
CONN_TIMEOUT = 1.0  # seconds a fetch or a connect may take
ANSWER = socket.inet_aton("198.18.9.9")  # dnsmasq's --address for test.weir

lock = threading.Lock()
lines = []
stopped = threading.Event()  # SIGTERM: every client stops at its next attempt


def record(kind, start, ok):
    with lock:
        lines.append("%s %d %d\n" % (kind, start, 1 if ok else 0))


def dns_query(qid):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in (b"test", b"weir"):
        q += bytes([len(label)]) + label
    return q + b"\x00" + struct.pack("!HH", 1, 1)


def dns(server, end):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.005)
    pending = {}  # id -> start
    qid = random.randrange(65536)
    nxt = time.monotonic_ns()
    gap = int(1e9 / DNS_RATE)
    while True:
        now = time.monotonic_ns()
        if now >= nxt and now < end and not stopped.is_set():
            qid = (qid + 1) % 65536
            try:
                s.sendto(dns_query(qid), (server, 53))
                pending[qid] = now
            except OSError:
                record("dns", now, False)
            nxt += gap
        try:
            data = s.recv(2048)
            if len(data) >= 12:
                rid, flags = struct.unpack("!HH", data[:4])
                start = pending.pop(rid, None)
                if start is not None:
                    ok = (flags & 0xF) == 0 and data.endswith(ANSWER)
                    record("dns", start, ok and time.monotonic_ns() - start <= DNS_TIMEOUT * 1e9)
        except socket.timeout:
            pass
        now = time.monotonic_ns()
        for rid, start in list(pending.items()):
            if now - start > DNS_TIMEOUT * 1e9:
                del pending[rid]
                record("dns", start, False)
        if (now >= end or stopped.is_set()) and not pending:
            break


def fetch(server, end):
    while time.monotonic_ns() < end and not stopped.is_set():
        start = time.monotonic_ns()
        ok = False
        try:
            c = http.client.HTTPConnection(server, HTTP_PORT, timeout=CONN_TIMEOUT)
            c.request("GET", "/")
            r = c.getresponse()
            ok = r.status == 200 and len(r.read()) > 0
            c.close()
        except (OSError, http.client.HTTPException):
            pass
        ok = ok and time.monotonic_ns() - start <= CONN_TIMEOUT * 1e9
        record("http", start, ok)
        stopped.wait(max(0, CLIENT_GAP - (time.monotonic_ns() - start) / 1e9))


def tcp(server, end):
    while time.monotonic_ns() < end and not stopped.is_set():
        start = time.monotonic_ns()
        ok = False
        try:
            s = socket.create_connection((server, TCP_PORT), timeout=CONN_TIMEOUT)
            s.close()
            ok = True
        except OSError:
            pass
        record("tcp", start, ok)
        stopped.wait(max(0, CLIENT_GAP - (time.monotonic_ns() - start) / 1e9))


def main():
    server, duration, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    end = time.monotonic_ns() + int(duration * 1e9)
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    ts = [threading.Thread(target=f, args=(server, end)) for f in (dns, fetch, tcp)]
    for t in ts:
        t.start()
    open(out + ".started", "w").close()
    for t in ts:
        while t.is_alive():
            t.join(0.1)
    with open(out + ".tmp", "w") as f:
        f.writelines(lines)
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
