#!/usr/bin/python3
"""A fake kubelet for the tests: a real gRPC server (Debian's python3-grpcio) serving the
pod-resources API's PodResourcesLister/List (v1) on a Unix socket, with protobuf encoded by hand
(no generated code, no .proto). Usage: fake_kubelet.py SOCKET CONFIG.json

CONFIG is read again at every call, so a test can change the answer:
  {"pods": [{"namespace": "ml", "name": "train-0",
             "containers": [{"name": "trainer",
                             "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-…"]}]}]}]}
  {"error": {"code": "UNAVAILABLE", "message": "…"}}   (answers that gRPC status instead)
Each call appends a line to CONFIG.calls; CONFIG.ready appears once the server listens.
Every message also carries fields a real kubelet sends and gpuclk skips (cpu_ids, memory,
topology), and a few unknown ones of other wire types."""
import json
import signal
import struct
import sys
import threading
from concurrent import futures

import grpc


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number, wire):
    return varint(number << 3 | wire)


def field(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return key(number, 2) + varint(len(payload)) + payload


def unknown():
    # varint 99, fixed64 98, fixed32 97: fields of a newer kubelet.
    return key(99, 0) + varint(123456) + key(98, 1) + struct.pack("<q", 7) + key(97, 5) + struct.pack("<i", 3)


def encode(pods):
    out = b""
    for p in pods:
        body = field(1, p["name"]) + field(2, p["namespace"])
        for c in p.get("containers", []):
            cb = field(1, c["name"])
            for d in c.get("devices", []):
                db = field(1, d["resource"])
                for i in d.get("ids", []):
                    db += field(2, i)
                # topology { nodes { id: 0 } }
                db += field(3, field(1, key(1, 0) + varint(0)))
                cb += field(2, db)
            # cpu_ids (packed int64), memory { memory_type: "memory" }
            cb += field(3, varint(2) + varint(3)) + field(4, field(1, "memory")) + unknown()
            body += field(3, cb)
        out += field(1, body + unknown())
    return out + unknown()


def main():
    socket_path, config = sys.argv[1], sys.argv[2]
    lock = threading.Lock()

    def list_pods(request, context):
        with lock:
            with open(config + ".calls", "a") as f:
                f.write("List\n")
            with open(config) as f:
                answer = json.load(f)
        if "error" in answer:
            context.abort(getattr(grpc.StatusCode, answer["error"]["code"]),
                          answer["error"]["message"])
        return answer.get("pods", [])

    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(
            list_pods,
            request_deserializer=lambda data: data,  # ListPodResourcesRequest{}: nothing to read
            response_serializer=encode),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + socket_path)
    server.start()
    open(config + ".ready", "w").close()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(0)


if __name__ == "__main__":
    main()
