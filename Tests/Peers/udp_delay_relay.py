#!/usr/bin/env python3
"""A UDP delay relay for the call-quality tests: a long path between two media endpoints.

Binds every port of --ports (first-last) on --listen (an address the engines advertise in
SDP but do not bind, e.g. 127.0.0.2). A datagram that arrives on port P from --target:Q
(the engine's real address, e.g. 127.0.0.1) is sent --delay-ms later from the relay's own
port Q to --target:P. So an engine that sends from Q to the advertised P reaches the real P,
and the packet appears to come from the advertised Q, the address the receiver expects.
RTP and RTCP alike, both directions, in arrival order. Datagrams from elsewhere, or from a
port outside the range, are dropped and counted. Python 3 standard library only.

Prints, flushed:
    listening <first>-<last> delay=<ms>
    flow <from>-><to>              (the first datagram relayed from port <from> to port <to>)
    relayed <n> dropped <n>        (on SIGTERM or SIGINT, before exiting)
"""

import argparse
import heapq
import selectors
import signal
import socket
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", required=True, help="address to bind the ports on")
    parser.add_argument("--target", required=True, help="address the datagrams are delivered to")
    parser.add_argument("--ports", required=True, help="first-last: the engines' RTP port range")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay added to every datagram")
    args = parser.parse_args()
    first, last = (int(part) for part in args.ports.split("-"))
    delay = args.delay_ms / 1000

    selector = selectors.DefaultSelector()
    sockets = {}
    for port in range(first, last + 1):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((args.listen, port))
        sock.setblocking(False)
        sockets[port] = sock
        selector.register(sock, selectors.EVENT_READ, port)

    counts = {"relayed": 0, "dropped": 0}

    def finish(*_):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"relayed {counts['relayed']} dropped {counts['dropped']}", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    print(f"listening {first}-{last} delay={args.delay_ms:g}", flush=True)

    # (due time, arrival order, datagram, port to send from, port to send to)
    queue = []
    order = 0
    flows = set()
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else None
        for key, _ in selector.select(timeout):
            sock = key.fileobj
            while True:
                try:
                    data, (host, source) = sock.recvfrom(65535)
                except BlockingIOError:
                    break
                if host != args.target or source not in sockets:
                    counts["dropped"] += 1
                    continue
                order += 1
                heapq.heappush(queue, (time.monotonic() + delay, order, data, source, key.data))
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, data, source, destination = heapq.heappop(queue)
            try:
                sockets[source].sendto(data, (args.target, destination))
                counts["relayed"] += 1
                if (source, destination) not in flows:
                    flows.add((source, destination))
                    print(f"flow {source}->{destination}", flush=True)
            except OSError:
                counts["dropped"] += 1


if __name__ == "__main__":
    main()
