#!/usr/bin/env python3
"""A TCP relay for the dead-flow tests: a stand-in for a NAT or firewall in front of a registrar.

Forwards every connection accepted on 127.0.0.1 to --target. On the command "blackhole" (a
line on the control port) it silently drops every connection open at that moment: the
sockets stay open on both sides, whatever arrives is read and thrown away, nothing is
forwarded in either direction and no FIN or RST is ever sent. Connections accepted later
are forwarded as usual. Python 3 standard library only.

Prints, flushed, one line per event:
    listening relay=<port> control=<port>
    accepted <n> from <ip>:<port>
    upstream-closed <n> / client-closed <n>
    blackholed <count> open connection(s)
    dropped <n> <bytes> bytes from client|upstream
    crlf <n> <bytes> bytes from client|upstream   (forwarded keep-alive ping or pong)
    swallowed <n> <bytes> bytes from upstream     (a pong dropped, with --swallow-pongs)
Control commands (one per line, each answered with one line):
    blackhole     -> "blackholed <count>"
    connections   -> "connections <accepted so far>"
"""

import argparse
import selectors
import socket
import sys


def say(text):
    print(text, flush=True)


class Flow:
    def __init__(self, number, client, upstream):
        self.number = number
        self.client = client
        self.upstream = upstream
        self.dead = False

    def peer(self, sock):
        return self.upstream if sock is self.client else self.client

    def side(self, sock):
        return "client" if sock is self.client else "upstream"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True, help="host:port to forward to")
    parser.add_argument("--port", type=int, default=0, help="port to accept on (0: any free one)")
    parser.add_argument("--swallow-pongs", action="store_true",
                        help="drop blank-line packets from upstream: a registrar without RFC 5626 pongs")
    args = parser.parse_args()
    target_host, target_port = args.target.rsplit(":", 1)
    target = (target_host, int(target_port))

    selector = selectors.DefaultSelector()
    listener = socket.create_server(("127.0.0.1", args.port))
    control = socket.create_server(("127.0.0.1", 0))
    for sock in (listener, control):
        sock.setblocking(False)
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(control, selectors.EVENT_READ, "control-accept")
    say(f"listening relay={listener.getsockname()[1]} control={control.getsockname()[1]}")

    flows = {}  # socket -> Flow
    accepted = 0
    control_buffers = {}

    def close_flow(flow, why):
        for sock in (flow.client, flow.upstream):
            if sock in flows:
                selector.unregister(sock)
                del flows[sock]
            sock.close()
        say(f"{why} {flow.number}")

    while True:
        for key, _ in selector.select():
            sock, kind = key.fileobj, key.data
            if kind == "accept":
                client, address = listener.accept()
                accepted += 1
                try:
                    upstream = socket.create_connection(target, timeout=5)
                except OSError as error:
                    say(f"upstream-failed {accepted} {error}")
                    client.close()
                    continue
                client.setblocking(False)
                upstream.setblocking(False)
                flow = Flow(accepted, client, upstream)
                for end in (client, upstream):
                    flows[end] = flow
                    selector.register(end, selectors.EVENT_READ, "flow")
                say(f"accepted {accepted} from {address[0]}:{address[1]}")
            elif kind == "control-accept":
                connection, _ = control.accept()
                connection.setblocking(True)
                control_buffers[connection] = b""
                selector.register(connection, selectors.EVENT_READ, "control")
            elif kind == "control":
                data = sock.recv(4096)
                if not data:
                    selector.unregister(sock)
                    del control_buffers[sock]
                    sock.close()
                    continue
                control_buffers[sock] += data
                while b"\n" in control_buffers[sock]:
                    line, control_buffers[sock] = control_buffers[sock].split(b"\n", 1)
                    command = line.strip().decode()
                    if command == "blackhole":
                        live = {flow for flow in flows.values() if not flow.dead}
                        for flow in live:
                            flow.dead = True
                        say(f"blackholed {len(live)} open connection(s)")
                        answer = f"blackholed {len(live)}"
                    elif command == "connections":
                        answer = f"connections {accepted}"
                    else:
                        answer = f"unknown {command}"
                    sock.sendall((answer + "\n").encode())
            else:
                flow = flows.get(sock)
                if flow is None:
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    # One end closed. A dead flow's other end is not told: only the
                    # socket of the end that closed is closed here.
                    if flow.dead:
                        selector.unregister(sock)
                        del flows[sock]
                        sock.close()
                        say(f"{flow.side(sock)}-closed-dead {flow.number}")
                    else:
                        close_flow(flow, f"{flow.side(sock)}-closed")
                    continue
                if flow.dead:
                    say(f"dropped {flow.number} {len(data)} bytes from {flow.side(sock)}")
                    continue
                if not data.strip(b"\r\n"):
                    # Blank lines only: an RFC 5626 keep-alive ping (CRLF CRLF) or pong (CRLF).
                    if args.swallow_pongs and sock is flow.upstream:
                        say(f"swallowed {flow.number} {len(data)} bytes from upstream")
                        continue
                    say(f"crlf {flow.number} {len(data)} bytes from {flow.side(sock)}")
                try:
                    flow.peer(sock).sendall(data)
                except OSError:
                    close_flow(flow, "send-failed")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
