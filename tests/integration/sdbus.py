# SPDX-License-Identifier: MIT
"""A fake systemd manager on its private D-Bus socket (what zygoted's scope.c talks to at
/run/systemd/private): the D-Bus wire format (little-endian, the SASL EXTERNAL handshake of a
direct connection, no bus daemon), and the calls zygoted makes for a task's scope:
GetUnitByControlGroup, Properties.GetAll of the unit it names, GetUnit of the slice of the unit's
detached tasks, SetUnitProperties of it, StartTransientUnit (with auxiliary units: the slice), and
the job's JobRemoved signal. Units are given by the test (their cgroup, slice and properties);
every StartTransientUnit is recorded, with its properties, and answered "done" without moving
anything; a slice made as an auxiliary unit is kept (self.slices), as systemd keeps a slice while
a scope is in it, until the test drops it (drop_slice: the manager stopped it).
"""
import os
import socket
import struct
import threading

ALIGN = {"y": 1, "b": 4, "n": 2, "q": 2, "i": 4, "u": 4, "x": 8, "t": 8, "d": 8, "h": 4, "s": 4, "o": 4, "g": 1,
         "a": 4, "(": 8, "{": 8, "v": 1}
FIXED = {"y": "B", "b": "I", "n": "h", "q": "H", "i": "i", "u": "I", "x": "q", "t": "Q", "d": "d", "h": "I"}
CALL, RETURN, ERROR, SIGNAL = 1, 2, 3, 4
MANAGER = "org.freedesktop.systemd1.Manager"
ROOT = "/org/freedesktop/systemd1"


def type_end(sig, i):
    """The index past the complete type that starts at sig[i]."""
    c = sig[i]
    if c == "a":
        return type_end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        i += 1
        while sig[i] != close:
            i = type_end(sig, i)
        return i + 1
    return i + 1


def split(sig):
    out, i = [], 0
    while i < len(sig):
        j = type_end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def pad(self, n):
        self.buf += bytes(-len(self.buf) % n)

    def write(self, sig, value):
        c = sig[0]
        self.pad(ALIGN[c])
        if c in FIXED:
            self.buf += struct.pack("<" + FIXED[c], int(value))
        elif c in "so":
            b = value.encode()
            self.buf += struct.pack("<I", len(b)) + b + b"\0"
        elif c == "g":
            b = value.encode()
            self.buf += struct.pack("<B", len(b)) + b + b"\0"
        elif c == "v":
            vsig, v = value
            self.write("g", vsig)
            self.write(vsig, v)
        elif c == "a":
            at = len(self.buf)
            self.buf += bytes(4)
            elem = sig[1:]
            self.pad(ALIGN[elem[0]])
            start = len(self.buf)
            items = value.items() if isinstance(value, dict) else value
            for v in items:
                self.write(elem, v)
            struct.pack_into("<I", self.buf, at, len(self.buf) - start)
        elif c in "({":
            for sub, v in zip(split(sig[1:-1]), value):
                self.write(sub, v)
        else:
            raise ValueError(f"type {sig}")

    def write_all(self, sig, values):
        for sub, v in zip(split(sig), values):
            self.write(sub, v)


class Reader:
    def __init__(self, buf, pos=0):
        self.buf, self.pos = buf, pos

    def pad(self, n):
        self.pos += -self.pos % n

    def read(self, sig):
        c = sig[0]
        self.pad(ALIGN[c])
        if c in FIXED:
            f = "<" + FIXED[c]
            v, = struct.unpack_from(f, self.buf, self.pos)
            self.pos += struct.calcsize(f)
            return bool(v) if c == "b" else v
        if c in "so":
            n, = struct.unpack_from("<I", self.buf, self.pos)
            v = bytes(self.buf[self.pos + 4:self.pos + 4 + n]).decode()
            self.pos += 4 + n + 1
            return v
        if c == "g":
            n = self.buf[self.pos]
            v = bytes(self.buf[self.pos + 1:self.pos + 1 + n]).decode()
            self.pos += 1 + n + 1
            return v
        if c == "v":
            vsig = self.read("g")
            return (vsig, self.read(vsig))
        if c == "a":
            n, = struct.unpack_from("<I", self.buf, self.pos)
            self.pos += 4
            elem = sig[1:]
            self.pad(ALIGN[elem[0]])
            end = self.pos + n
            if elem == "y":
                v = bytes(self.buf[self.pos:end])
                self.pos = end
                return v
            out = []
            while self.pos < end:
                out.append(self.read(elem))
            return out
        if c in "({":
            return tuple(self.read(sub) for sub in split(sig[1:-1]))
        raise ValueError(f"type {sig}")

    def read_all(self, sig):
        return [self.read(sub) for sub in split(sig)]


def plain(value):
    """A value as JSON would hold it: variants unwrapped, bytes as lists of ints."""
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Message:
    def __init__(self, kind, serial, fields, sig, body, flags=0):
        self.kind, self.serial, self.fields, self.sig, self.body, self.flags = kind, serial, fields, sig, body, flags


def encode(kind, serial, fields, sig="", body=(), flags=0):
    b = Writer()
    if sig:
        fields = dict(fields)
        fields[8] = ("g", sig)
        b.write_all(sig, body)
    h = Writer()
    h.write_all("yyyyuua(yv)", [ord("l"), kind, flags, 1, len(b.buf), serial, sorted(fields.items())])
    h.pad(8)
    return bytes(h.buf + b.buf)


def unit_path(name):
    out = []
    for ch in name:
        out.append(ch if ch.isalnum() else f"_{ord(ch):02x}")
    return ROOT + "/unit/" + "".join(out)


class FakeSystemd:
    """Listens at DIR/private (or DIR/NAME: bus, the system bus, which answers Hello as its daemon
    would). units: {name: {"cgroup": path, "slice": name, "props": {name: (sig, value)}}}."""

    def __init__(self, directory, units, name="private", bus=False):
        self.path = os.path.join(directory, name)
        self.bus = bus
        self.units = units
        self.started = []          # (unit name, {property: plain value}) of every StartTransientUnit
        self.lookups = []          # cgroup paths asked with GetUnitByControlGroup
        self.slices = {}           # {slice: {property: plain value}} made as auxiliary units, then set
        self.slice_sets = []       # (slice, {property: plain value}) of every SetUnitProperties
        self.hide_slices = 0       # so many GetUnit calls that say a slice is not there (a race)
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.conns = []
        self.serial = 1000
        self.jobs = 0
        self.closing = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self):
        self.closing = True
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for c in list(self.conns):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(10)

    # -- the connection --
    def _accept(self):
        while not self.closing:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            rest = self._auth(c)
            if rest is not None:
                self._messages(c, rest)
        except (OSError, ValueError, struct.error):
            pass
        finally:
            c.close()

    def _auth(self, c):
        """The server's side of SASL EXTERNAL; returns what came after BEGIN."""
        buf = b""
        while True:
            while b"\r\n" not in buf:
                more = c.recv(4096)
                if not more:
                    return None
                buf += more
            line, buf = buf.split(b"\r\n", 1)
            line = line.lstrip(b"\0")
            ok = b"OK " + b"0123456789abcdef" * 2 + b"\r\n"
            if line == b"AUTH EXTERNAL":
                c.sendall(b"DATA\r\n")  # no initial response: asked for (sd-bus sends an empty one)
            elif line.startswith(b"AUTH EXTERNAL ") or line.startswith(b"DATA"):
                c.sendall(ok)
            elif line.startswith(b"AUTH"):
                c.sendall(b"REJECTED EXTERNAL\r\n")
            elif line == b"NEGOTIATE_UNIX_FD":
                c.sendall(b"AGREE_UNIX_FD\r\n")
            elif line == b"BEGIN":
                return buf
            else:
                c.sendall(b"ERROR\r\n")

    def _messages(self, c, buf):
        while True:
            while len(buf) < 16:
                more = c.recv(65536)
                if not more:
                    return
                buf += more
            if buf[0:1] != b"l":
                raise ValueError("big-endian message")
            body_len, serial, fields_len = struct.unpack_from("<III", buf, 4)
            header_len = 16 + fields_len + (-(16 + fields_len) % 8)
            while len(buf) < header_len + body_len:
                more = c.recv(65536)
                if not more:
                    return
                buf += more
            r = Reader(buf, 12)
            fields = dict(r.read("a(yv)"))
            sig = fields.get(8, ("g", ""))[1]
            body = Reader(buf[header_len:header_len + body_len]).read_all(sig) if sig else []
            m = Message(buf[1], serial, fields, sig, body, buf[2])
            buf = buf[header_len + body_len:]
            if m.kind == CALL:
                for out in self._call(m):
                    c.sendall(out)

    def _next(self):
        self.serial += 1
        return self.serial

    def _reply(self, m, sig="", body=()):
        return encode(RETURN, self._next(), {5: ("u", m.serial)}, sig, body)

    def _error(self, m, name, text):
        return encode(ERROR, self._next(), {4: ("s", name), 5: ("u", m.serial)}, "s", [text])

    # -- the calls --
    def _call(self, m):
        path = m.fields.get(1, ("o", ""))[1]
        iface = m.fields.get(2, ("s", ""))[1]
        member = m.fields.get(3, ("s", ""))[1]
        if self.bus and iface == "org.freedesktop.DBus" and member == "Hello":
            return [self._reply(m, "s", [":1.42"])]
        if iface == MANAGER and member == "GetUnitByControlGroup":
            cgroup = m.body[0]
            with self.lock:
                self.lookups.append(cgroup)
            name = self.unit_of(cgroup)
            if name is None:
                return [self._error(m, "org.freedesktop.systemd1.NoSuchUnit",
                                    f"Control group '{cgroup}' is not valid or not managed by this instance")]
            return [self._reply(m, "o", [unit_path(name)])]
        if iface == "org.freedesktop.DBus.Properties" and member == "GetAll":
            for name, u in self.units.items():
                if unit_path(name) == path:
                    props = {"Id": ("s", name), "ControlGroup": ("s", u["cgroup"]), "MemoryCurrent": ("t", 4096),
                             "ExecMainPID": ("u", 1)}
                    if u["slice"] is not None:  # None: a manager that does not say it
                        props["Slice"] = ("s", u["slice"])
                    props.update(u.get("props", {}))
                    return [self._reply(m, "a{sv}", [props])]
            return [self._error(m, "org.freedesktop.DBus.Error.UnknownObject", f"no object {path}")]
        if iface == MANAGER and member == "GetUnit":
            with self.lock:
                known = m.body[0] in self.units or (m.body[0] in self.slices and not self.hide_slices)
                if m.body[0] in self.slices and self.hide_slices:
                    self.hide_slices -= 1
            if not known:
                return [self._error(m, "org.freedesktop.systemd1.NoSuchUnit", f"Unit {m.body[0]} not loaded.")]
            return [self._reply(m, "o", [unit_path(m.body[0])])]
        if iface == MANAGER and member == "SetUnitProperties":
            name, _, props = m.body
            with self.lock:
                if name not in self.slices:
                    return [self._error(m, "org.freedesktop.systemd1.NoSuchUnit", f"Unit {name} not loaded.")]
                values = {k: plain(v[1]) for k, v in props}
                self.slice_sets.append((name, values))
                self.slices[name].update(values)
            return [self._reply(m)]
        if iface == MANAGER and member == "StartTransientUnit":
            name, _, props, aux = m.body
            with self.lock:
                for aux_name, _ in aux:
                    if aux_name in self.slices or aux_name in self.units:
                        return [self._error(m, "org.freedesktop.systemd1.UnitExists",
                                            f"Unit {aux_name} was already loaded or has a fragment file.")]
                for aux_name, aux_props in aux:
                    self.slices[aux_name] = {k: plain(v[1]) for k, v in aux_props}
                self.started.append((name, {k: plain(v[1]) for k, v in props}))
                self.jobs += 1
                job = self.jobs
            job_path = f"{ROOT}/job/{job}"
            signal = encode(SIGNAL, self._next(), {1: ("o", ROOT), 2: ("s", MANAGER), 3: ("s", "JobRemoved")},
                            "uoss", [job, job_path, name, "done"])
            return [self._reply(m, "o", [job_path]), signal]
        return [self._error(m, "org.freedesktop.DBus.Error.UnknownMethod", f"{iface}.{member}")]

    def unit_of(self, cgroup):
        """As systemd does: the unit whose cgroup is the longest prefix of the path (a cgroup below
        a unit's, delegated to it, is that unit's)."""
        p = cgroup.rstrip("/") or "/"
        while True:
            for name, u in self.units.items():
                if u["cgroup"] == p:
                    return name
            if p == "/":
                return None
            p = p.rsplit("/", 1)[0] or "/"

    def drop_slice(self, name):
        """The manager stopped the slice (its last scope gone, StopWhenUnneeded) and let it go."""
        with self.lock:
            del self.slices[name]

    def scopes(self):
        with self.lock:
            return list(self.started)
