#!/usr/bin/env python3
"""Local users who misuse the service, for tests/faults/socket_abuse_test.sh. Opens N
connections, does what MODE says, holds them for SECONDS, then closes them all; prints how many
connections were accepted and how many were refused with an error line.
  streams   each asks for a stream every 0.1 s of every GPU's samples and never reads
  idle      each connects and sends nothing
  slow-http each sends an HTTP request to 127.0.0.1:PORT one header line every 2 s
usage: socket_clients.py MODE N SECONDS (SOCKET | PORT)"""
import resource
import socket
import sys
import time


def main():
    mode, count, seconds, target = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    conns = []
    for _ in range(count):
        if mode == "slow-http":
            s = socket.create_connection(("127.0.0.1", int(target)))
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
        else:
            s = socket.socket(socket.AF_UNIX)
            s.connect(target)
            if mode == "streams":
                s.sendall(b'{"v":1,"request":"stream","interval_seconds":0.1,"samples":"all"}\n')
        conns.append(s)
    # A refused connection gets one error line and is closed: look without blocking, again
    # until the count has held for 2 s (a loaded service accepts 1000 connections slowly; the
    # ones past its cap are refused only once it reaches them), at most 20 s.
    refused_at = set()
    held, last, deadline = 0, -1, time.time() + 20
    while mode != "slow-http" and held < 4 and time.time() < deadline:
        time.sleep(0.5)
        for i, s in enumerate(conns):
            if i in refused_at:
                continue
            s.setblocking(False)
            try:
                data = s.recv(4096, socket.MSG_PEEK)
                if data.startswith(b'{"code"') or b'"ok":false' in data:
                    refused_at.add(i)
            except BlockingIOError:
                pass
            s.setblocking(True)
        held = held + 1 if len(refused_at) == last else 0
        last = len(refused_at)
    refused = len(refused_at)
    print(f"opened {len(conns)} refused {refused}", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(min(2.0, max(0.0, end - time.time())))
        if mode == "slow-http":
            for s in conns:
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()
