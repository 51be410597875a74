# SPDX-License-Identifier: MIT
"""A small ttrpc client for the shim tests, with protobuf encoded by hand (python3-protobuf is not
assumed): the few fields the tests send and read, by number.

A message is encoded from a list of (field number, value): int for a varint, bool, str or bytes
for a length-delimited field, a list of pairs for an embedded message. decode() returns
{field number: [values]}, varints as int and length-delimited fields as bytes."""
import socket
import struct

REQUEST, RESPONSE = 1, 2
TASK = "containerd.task.v2.Task"

# gRPC status codes
OK, UNKNOWN, INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS = 0, 2, 3, 5, 6
PERMISSION_DENIED, FAILED_PRECONDITION, UNIMPLEMENTED, UNAVAILABLE = 7, 9, 12, 14


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode(fields):
    out = bytearray()
    for num, value in fields:
        if isinstance(value, bool) or isinstance(value, int):
            out += varint(num << 3) + varint(int(value))
            continue
        if isinstance(value, str):
            value = value.encode()
        elif isinstance(value, list):
            value = encode(value)
        out += varint(num << 3 | 2) + varint(len(value)) + value
    return bytes(out)


def read_varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def decode(buf):
    fields, i = {}, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(buf, i)
        elif wire == 2:
            n, i = read_varint(buf, i)
            value, i = bytes(buf[i:i + n]), i + n
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(num, []).append(value)
    return fields


def packed_varints(buf):
    """A packed repeated varint field's values (protobuf 3's repeated uint64)."""
    values, i = [], 0
    while i < len(buf):
        v, i = read_varint(buf, i)
        values.append(v)
    return values


def first(fields, num, default=None):
    return fields.get(num, [default])[0]


class Error(Exception):
    def __init__(self, code, message):
        super().__init__(f"status {code}: {message}")
        self.code = code
        self.message = message


class Client:
    """One connection; call() sends a request on a new stream and reads frames until its reply
    (replies to other streams, of calls sent with send(), are kept for recv())."""

    def __init__(self, path, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.stream = 1
        self.replies = {}

    def close(self):
        self.sock.close()

    def frame(self, stream, kind, payload, flags=0):
        self.sock.sendall(struct.pack(">IIBB", len(payload), stream, kind, flags) + payload)

    def send(self, method, payload=b"", service=TASK):
        stream = self.stream
        self.stream += 2
        self.frame(stream, REQUEST, encode([(1, service), (2, method), (3, payload)]))
        return stream

    def read_exactly(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("the shim closed the connection")
            buf += chunk
        return buf

    def recv(self, stream):
        while stream not in self.replies:
            length, sid, kind, _ = struct.unpack(">IIBB", self.read_exactly(10))
            assert kind == RESPONSE, kind
            self.replies[sid] = decode(self.read_exactly(length))
        resp = self.replies.pop(stream)
        status = decode(first(resp, 1, b""))
        code = first(status, 1, 0)
        if code != OK:
            raise Error(code, first(status, 2, b"").decode())
        return decode(first(resp, 2, b""))

    def call(self, method, payload=b"", service=TASK):
        return self.recv(self.send(method, payload, service))
