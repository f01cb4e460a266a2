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
    conns, refused = [], 0
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
    # A refused connection gets one error line and is closed: look without blocking.
    time.sleep(0.5)
    for s in conns:
        if mode == "slow-http":
            continue
        s.setblocking(False)
        try:
            data = s.recv(4096, socket.MSG_PEEK)
            if data.startswith(b'{"code"') or b'"ok":false' in data:
                refused += 1
        except BlockingIOError:
            pass
        s.setblocking(True)
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
