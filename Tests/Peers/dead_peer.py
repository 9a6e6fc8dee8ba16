#!/usr/bin/env python3
"""A SIP user agent server that plays a peer which vanishes, for the dead-peer tests.

It answers one INVITE and then misbehaves as told, printing one line per thing that
happened, each with time.monotonic() (CLOCK_MONOTONIC, the clock the test reads too):

  --mode rtp-stops  UDP. Answers sendrecv, sends PCMU RTP every 20 ms for --rtp-seconds,
                    then stops (the process and its SIP socket stay): "rtp-stopped T" with
                    the time the last packet was sent.
  --mode sendonly / --mode inactive
                    UDP. Answers with a=sendonly or a=inactive (RFC 3264 hold) and sends
                    no RTP. After --resume-after seconds it sends a re-INVITE with
                    a=sendrecv, still without RTP: "resumed T" once that is answered.
  --mode tcp-close  TCP. Answers over the connection the INVITE came on, then closes that
                    connection --close-after seconds after the ACK: "closed T". Keeps
                    listening and reports each request that arrives afterwards with the
                    number of the connection it came on: "request METHOD conn=N T".
                    With --vanish it closes its listening socket too: new connections
                    are refused, as for a peer that is gone. With --tls-cert and --tls-key
                    every connection is TLS (sips-less: ;transport=tls URIs).
  --mode tcp-call   TCP, the other way round: calls the engine at --engine-port over a
                    connection of its own (connection 1), ACKs the 200 and closes that
                    connection like tcp-close; its Contact is its listening port.

Every mode answers BYE with 200 and prints "bye conn=N T", and answers a re-INVITE from
the engine as RFC 3264 says ("reinvite DIRECTION T"); with --swallow-reinvite it answers
none (not even 100 Trying) and prints "swallowed T", as a peer that never answers it;
with --refuse-reinvite CODE it answers each with CODE and prints "refused CODE T".
Standard library only.
"""

import argparse
import re
import socket
import ssl
import struct
import sys
import threading
import time


def say(text):
    print(f"{text} {time.monotonic():.6f}", flush=True)


def header(message, name, compact=None):
    for line in message.split("\r\n")[1:]:
        if not line:
            break
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == name.lower() or (compact and key == compact):
            return value.strip()
    return None


def headers_named(message, name, compact=None):
    found = []
    for line in message.split("\r\n")[1:]:
        if not line:
            break
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == name.lower() or (compact and key == compact):
            found.append(line)
    return found


def body_of(message):
    return message.partition("\r\n\r\n")[2]


def sdp(rtp_port, direction, version):
    return "\r\n".join([
        "v=0", f"o=- 1 {version} IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
        f"m=audio {rtp_port} RTP/AVP 0", "a=rtpmap:0 PCMU/8000", f"a={direction}", "",
    ])


class Peer:
    def __init__(self, args):
        self.args = args
        self.tag = "deadpeer"
        self.transport = "TCP" if args.mode in ("tcp-close", "tcp-call") else "UDP"
        self.tls = None
        if args.tls_cert:
            self.transport = "TLS"
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(args.tls_cert, args.tls_key)
        parameter = {"TCP": ";transport=tcp", "TLS": ";transport=tls"}.get(self.transport, "")
        self.contact = f"<sip:peer@127.0.0.1:{args.port}{parameter}>"
        self.dialog = None  # what a request of ours in the dialog needs
        self.engine_rtp = None
        self.rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rtp.bind(("127.0.0.1", 0))
        self.rtp_port = self.rtp.getsockname()[1]
        self.sdp_version = 1
        self.lock = threading.Lock()

    # Responses ---------------------------------------------------------------------------

    def response(self, request, code, reason, body=""):
        lines = [f"SIP/2.0 {code} {reason}"]
        lines += headers_named(request, "Via", "v")
        to = header(request, "To", "t")
        if code > 100 and ";tag=" not in to:
            to += f";tag={self.tag}"
        lines += [
            f"From: {header(request, 'From', 'f')}", f"To: {to}",
            f"Call-ID: {header(request, 'Call-ID', 'i')}", f"CSeq: {header(request, 'CSeq')}",
            f"Contact: {self.contact}",
        ]
        if body:
            lines.append("Content-Type: application/sdp")
        lines += [f"Content-Length: {len(body.encode())}", "", body]
        return "\r\n".join(lines)

    def handle(self, message, send, conn):
        first = message.split("\r\n", 1)[0]
        if first.startswith("SIP/2.0"):
            self.handle_response(message, send)
            return
        method = first.split(" ", 1)[0]
        if self.transport != "UDP" and conn > 1:
            say(f"request {method} conn={conn}")
        if method == "INVITE":
            offer = body_of(message)
            port = re.search(r"m=audio (\d+)", offer)
            if port:
                self.engine_rtp = ("127.0.0.1", int(port.group(1)))
            if self.dialog is None:
                self.dialog = {
                    "remote": header(message, "From", "f"),
                    "local": header(message, "To", "t") + f";tag={self.tag}",
                    "call_id": header(message, "Call-ID", "i"),
                    "target": re.search(r"<([^>]+)>", header(message, "Contact", "m")).group(1),
                    "cseq": 100,
                }
                direction = {"sendonly": "sendonly", "inactive": "inactive"}.get(self.args.mode, "sendrecv")
            elif self.args.mode in ("sendonly", "inactive") and not self.resumed:
                direction = self.args.mode
            elif self.args.swallow_reinvite:
                say("swallowed")
                return
            elif self.args.refuse_reinvite:
                say(f"refused {self.args.refuse_reinvite}")
                send(self.response(message, self.args.refuse_reinvite, "Not Acceptable Here"))
                return
            else:
                # A re-INVITE from the engine: the RFC 3264 §6.1 answer to its direction
                # (a hold offer, sendonly, is answered recvonly).
                offered = re.search(r"a=(sendrecv|sendonly|recvonly|inactive)", offer)
                offered = offered.group(1) if offered else "sendrecv"
                direction = {"sendonly": "recvonly", "recvonly": "sendonly"}.get(offered, offered)
                say(f"reinvite {offered}")
            send(self.response(message, 200, "OK", sdp(self.rtp_port, direction, self.sdp_version)))
        elif method == "ACK":
            if not self.acked:
                self.acked = True
                say("ack")
                self.after_ack()
        elif method == "BYE":
            say(f"bye conn={conn}")
            send(self.response(message, 200, "OK"))
        else:
            send(self.response(message, 200, "OK"))

    def handle_response(self, message, send):
        cseq = header(message, "CSeq") or ""
        code = int(message.split(" ", 2)[1])
        if "INVITE" in cseq and code >= 200:
            to = header(message, "To", "t")
            d = self.dialog
            if d.get("outgoing") and code == 200:
                d["target"] = re.search(r"<([^>]+)>", header(message, "Contact", "m")).group(1)
            ack = "\r\n".join([
                f"ACK {d['target']} SIP/2.0",
                f"Via: SIP/2.0/{self.transport} 127.0.0.1:{self.args.port};branch=z9hG4bK-ack-{d['cseq']}",
                "Max-Forwards: 70", f"From: {d['local']}", f"To: {to}", f"Call-ID: {d['call_id']}",
                f"CSeq: {cseq.split()[0]} ACK", "Content-Length: 0", "", "",
            ])
            send(ack)
            if d.get("outgoing"):
                if code == 200 and not self.acked:
                    self.acked = True
                    say("ack")
                    self.after_ack()
            elif code == 200:
                self.resumed = True
                say("resumed")

    # Modes -------------------------------------------------------------------------------

    def after_ack(self):
        mode = self.args.mode
        if mode == "rtp-stops":
            threading.Thread(target=self.send_rtp, daemon=True).start()
        elif mode in ("sendonly", "inactive"):
            threading.Timer(self.args.resume_after, self.resume).start()
        elif mode in ("tcp-close", "tcp-call"):
            threading.Timer(self.args.close_after, self.close_first).start()

    def send_rtp(self):
        seq, ts, ssrc = 1, 0, 0x5EED
        payload = b"\xff" * 160
        end = time.monotonic() + self.args.rtp_seconds
        next_at = time.monotonic()
        last = None
        while time.monotonic() < end:
            packet = struct.pack("!BBHII", 0x80, 0, seq & 0xFFFF, ts & 0xFFFFFFFF, ssrc) + payload
            self.rtp.sendto(packet, self.engine_rtp)
            last = time.monotonic()
            seq += 1
            ts += 160
            next_at += 0.02
            time.sleep(max(0.0, next_at - time.monotonic()))
        # The time of the last packet, not of this line.
        print(f"rtp-stopped {last:.6f}", flush=True)

    def resume(self):
        d = self.dialog
        d["cseq"] += 1
        self.sdp_version += 1
        body = sdp(self.rtp_port, "sendrecv", self.sdp_version)
        request = "\r\n".join([
            f"INVITE {d['target']} SIP/2.0",
            f"Via: SIP/2.0/UDP 127.0.0.1:{self.args.port};branch=z9hG4bK-reinvite-{d['cseq']}",
            "Max-Forwards: 70", f"From: {d['local']}", f"To: {d['remote']}", f"Call-ID: {d['call_id']}",
            f"CSeq: {d['cseq']} INVITE", f"Contact: {self.contact}", "Content-Type: application/sdp",
            f"Content-Length: {len(body.encode())}", "", body,
        ])
        host, port = re.search(r"sip:[^@]*@?([\d.]+):(\d+)", d["target"]).groups()
        self.udp.sendto(request.encode(), (host, int(port)))

    def close_first(self):
        with self.lock:
            first = self.connections.get(1)
            if self.args.vanish:
                # Gone for good: nothing listens any more, new connections are refused.
                # (shutdown wakes the accept blocked in run(); close alone would not.)
                try:
                    self.listener.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.listener.close()
        if first is not None:
            first.shutdown(socket.SHUT_RDWR)
            first.close()
            say("closed")

    # Transports --------------------------------------------------------------------------

    def run(self):
        self.acked = False
        self.resumed = False
        if self.transport == "UDP":
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(("127.0.0.1", self.args.port))
            say("listening")
            while True:
                data, source = self.udp.recvfrom(65535)
                self.handle(data.decode(errors="replace"), lambda text, s=source: self.udp.sendto(text.encode(), s), 1)
        else:
            self.connections = {}
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.args.port))
            listener.listen(8)
            self.listener = listener
            count = 0
            if self.args.mode == "tcp-call":
                count = 1
                self.call_engine()
            say("listening")
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    # Closed by --vanish: stay alive (the test stops the process), accept nothing.
                    while True:
                        time.sleep(1)
                count += 1
                with self.lock:
                    self.connections[count] = connection
                say(f"connection {count}")
                threading.Thread(target=self.serve, args=(connection, count), daemon=True).start()

    def call_engine(self):
        connection = socket.create_connection(("127.0.0.1", self.args.engine_port))
        with self.lock:
            self.connections[1] = connection
        self.dialog = {
            "outgoing": True, "local": f"<sip:peer@127.0.0.1:{self.args.port}>;tag={self.tag}",
            "remote": f"<sip:engine@127.0.0.1:{self.args.engine_port}>",
            "call_id": f"deadpeer-{self.args.port}@127.0.0.1",
            "target": f"sip:engine@127.0.0.1:{self.args.engine_port};transport=tcp", "cseq": 1,
        }
        d = self.dialog
        body = sdp(self.rtp_port, "sendrecv", self.sdp_version)
        request = "\r\n".join([
            f"INVITE {d['target']} SIP/2.0",
            f"Via: SIP/2.0/TCP 127.0.0.1:{self.args.port};branch=z9hG4bK-invite-{self.args.port}",
            "Max-Forwards: 70", f"From: {d['local']}", f"To: {d['remote']}", f"Call-ID: {d['call_id']}",
            "CSeq: 1 INVITE", f"Contact: {self.contact}", "Content-Type: application/sdp",
            f"Content-Length: {len(body.encode())}", "", body,
        ])
        connection.sendall(request.encode())
        say("connection 1")
        threading.Thread(target=self.serve, args=(connection, 1), daemon=True).start()

    def serve(self, connection, number):
        if self.tls is not None:
            try:
                connection = self.tls.wrap_socket(connection, server_side=True)
            except (OSError, ssl.SSLError) as error:
                say(f"tls-failed conn={number} {error}")
                return
            with self.lock:
                self.connections[number] = connection
        buffer = b""
        send = lambda text: connection.sendall(text.encode())
        while True:
            try:
                chunk = connection.recv(65535)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while True:
                buffer = buffer.lstrip(b"\r\n")  # keep-alive CRLFs
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    break
                head = buffer[:end].decode(errors="replace")
                match = re.search(r"(?im)^(?:content-length|l)\s*:\s*(\d+)", head)
                length = int(match.group(1)) if match else 0
                if len(buffer) < end + 4 + length:
                    break
                message = buffer[: end + 4 + length].decode(errors="replace")
                buffer = buffer[end + 4 + length:]
                try:
                    self.handle(message, send, number)
                except OSError:
                    return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--mode", required=True, choices=["rtp-stops", "sendonly", "inactive", "tcp-close", "tcp-call"])
    parser.add_argument("--engine-port", type=int, default=0)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rtp-seconds", type=float, default=1.0)
    parser.add_argument("--resume-after", type=float, default=5.0)
    parser.add_argument("--close-after", type=float, default=0.5)
    parser.add_argument("--vanish", action="store_true")
    parser.add_argument("--swallow-reinvite", action="store_true")
    parser.add_argument("--refuse-reinvite", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    Peer(parser.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
