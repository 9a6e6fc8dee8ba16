#!/usr/bin/env python3
"""Small UDP probes for the namespace test bed (Tests/PJSUATestSupport/Topology.swift).

  netprobe.py serve ADDR PORT
      answer every datagram with "seen IP:PORT" (its source as this host sees it) and
      print "from IP:PORT" per datagram; prints "serving" once bound.
  netprobe.py send LOCALPORT HOST:PORT [HOST:PORT ...]
      from one socket bound to LOCALPORT (0: any), send a datagram to each target and print
      each reply ("reply HOST:PORT seen IP:PORT"); exit 1 if any target stays silent (1 s).
  netprobe.py sip-options HOST PORT SECONDS
      send SIP OPTIONS every 50 ms until a 200 arrives (exit 0) or SECONDS pass (exit 1);
      HOST may be an IPv6 address.
  netprobe.py aaaa SERVER NAME SECONDS
  netprobe.py a SERVER NAME SECONDS
      ask the DNS server at SERVER (an IPv6 address, port 53) for NAME's AAAA (or A) records every
      50 ms until an answer arrives; print each address (exit 0), or exit 1 after SECONDS.
"""
import socket
import struct
import sys
import time


def serve(address, port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((address, int(port)))
    print("serving", flush=True)
    while True:
        data, source = sock.recvfrom(2048)
        print("from %s:%d" % source, flush=True)
        sock.sendto(b"seen %s:%d" % (source[0].encode(), source[1]), source)


def send(local_port, targets):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", int(local_port)))
    sock.settimeout(1.0)
    status = 0
    for target in targets:
        host, port = target.rsplit(":", 1)
        sock.sendto(b"probe", (host, int(port)))
        try:
            data, _ = sock.recvfrom(2048)
            print("reply %s %s" % (target, data.decode()), flush=True)
        except socket.timeout:
            print("silent %s" % target, flush=True)
            status = 1
    return status


def sip_options(host, port, seconds):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.connect((host, int(port)))
    sock.settimeout(0.05)
    address, local = sock.getsockname()[:2]
    if family == socket.AF_INET6:
        address = "[%s]" % address
        host = "[%s]" % host
    deadline = time.monotonic() + float(seconds)
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        message = "\r\n".join([
            "OPTIONS sip:%s:%s SIP/2.0" % (host, port),
            "Via: SIP/2.0/UDP %s:%d;rport;branch=z9hG4bK-netprobe-%d-%d" % (address, local, local, attempt),
            "Max-Forwards: 70",
            "From: <sip:probe@%s>;tag=probe%d" % (host, attempt),
            "To: <sip:%s:%s>" % (host, port),
            "Call-ID: netprobe-%d-%d" % (local, attempt),
            "CSeq: 1 OPTIONS",
            "Content-Length: 0", "", ""])
        try:
            sock.send(message.encode())
            data = sock.recv(4096)
            if data.split(b" ")[1:2] == [b"200"]:
                return 0
        except OSError:
            time.sleep(0.05)
    return 1


def lookup(server, name, seconds, qtype=28):
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.settimeout(0.05)
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"
    deadline = time.monotonic() + float(seconds)
    ident = 0
    while time.monotonic() < deadline:
        ident += 1
        query = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + question + struct.pack(">HH", qtype, 1)
        try:
            sock.sendto(query, (server, 53))
            reply = sock.recv(4096)
        except OSError:
            time.sleep(0.05)
            continue
        count = struct.unpack(">H", reply[6:8])[0]
        if reply[3] & 15 != 0 or count == 0:
            time.sleep(0.05)
            continue
        # The answers follow the question; each record's name is a pointer (2 bytes).
        offset = 12 + len(question) + 4
        for _ in range(count):
            rtype, _, _, length = struct.unpack(">HHIH", reply[offset + 2:offset + 12])
            data = reply[offset + 12:offset + 12 + length]
            if rtype == 28 == qtype:
                print(socket.inet_ntop(socket.AF_INET6, data), flush=True)
            elif rtype == 1 == qtype:
                print(socket.inet_ntop(socket.AF_INET, data), flush=True)
            offset += 12 + length
        return 0
    return 1


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif command == "send":
        sys.exit(send(sys.argv[2], sys.argv[3:]))
    elif command == "sip-options":
        sys.exit(sip_options(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif command == "aaaa":
        sys.exit(lookup(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif command == "a":
        sys.exit(lookup(sys.argv[2], sys.argv[3], sys.argv[4], qtype=1))
    else:
        sys.exit(64)
