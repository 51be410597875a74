# SPDX-License-Identifier: MIT
"""containerd-shim-zygote-v2 as containerd runs it, for the tests: `start` in a bundle directory,
the ttrpc client on the address it prints, `delete`, and a fake publish binary that records
every event it is given (topic, namespace and the encoded google.protobuf.Any)."""
import os
import select
import shutil
import subprocess
import uuid

import ttrpcwire as w

NAMESPACE = "zyg-shim-test"


def fake_publisher(directory):
    """A script in directory that containerd's `publish` command line reaches: each event is
    appended to directory/events as "TOPIC NAMESPACE HEX-OF-STDIN"."""
    path = os.path.join(directory, "publish")
    with open(path, "w") as f:
        f.write("""#!/bin/sh
# BIN --address ADDR publish --topic TOPIC --namespace NS, the event on stdin
[ "$1" = --address ] && [ "$3" = publish ] && [ "$4" = --topic ] && [ "$6" = --namespace ] || exit 2
printf '%s %s %s\\n' "$5" "$7" "$(od -An -v -tx1 | tr -d ' \\n')" >> "$(dirname "$0")/events"
""")
    os.chmod(path, 0o755)
    return path


def events(directory):
    """[(topic, namespace, type_url, {field: [values]} of the event)] so far."""
    out = []
    path = os.path.join(directory, "events")
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            topic, ns, data = (line.split() + [""])[:3]
            any_ = w.decode(bytes.fromhex(data))
            out.append((topic, ns, w.first(any_, 1, b"").decode(), w.decode(w.first(any_, 2, b""))))
    return out


class Shim:
    """One shim: started in bundle with `start`; client() connects to it; stop() shuts it down
    (and kills it if it stays) and checks that its socket is gone."""

    def __init__(self, binary, bundle, cid=None, env=None, publish="", address="/run/zyg-test/containerd.sock",
                 wrapper=()):
        self.binary = binary
        self.bundle = bundle
        self.id = cid or "zs-" + uuid.uuid4().hex[:12]
        self.env = dict(os.environ, **(env or {}))
        self.publish = publish
        self.address = address
        self.wrapper = list(wrapper)
        self.path = None
        self.pid = None

    def argv(self, action, *extra):
        return [*self.wrapper, self.binary, "-namespace", NAMESPACE, "-address", self.address, "-publish-binary",
                self.publish, "-id", self.id, *extra, action]

    def start(self, timeout=60):
        r = subprocess.run(self.argv("start"), cwd=self.bundle, env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("unix://"), r.stdout
        self.path = r.stdout.strip()[len("unix://"):]
        c = self.client()
        self.pid = w.first(c.call("Connect", w.encode([(1, self.id)])), 1)
        c.close()
        return r.stdout.strip()

    def delete(self, timeout=60):
        return subprocess.run(self.argv("delete", "-bundle", self.bundle), cwd=self.bundle, env=self.env,
                              capture_output=True, timeout=timeout)

    def client(self):
        return w.Client(self.path)

    def wait_gone(self, timeout=30):
        """Whether the shim's process exited within timeout (watched on its pidfd)."""
        try:
            fd = os.pidfd_open(self.pid)
        except ProcessLookupError:
            return True
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        finally:
            os.close(fd)

    def stop(self):
        if self.pid is None:
            return
        try:
            c = self.client()
            c.call("Shutdown", w.encode([(1, self.id), (2, True)]))
            c.close()
        except (OSError, EOFError, w.Error):
            pass
        if not self.wait_gone():
            os.kill(self.pid, 9)
            raise AssertionError(f"the shim {self.pid} stayed after Shutdown")
        self.pid = None


def find_shim(build_dir):
    path = os.path.join(build_dir, "containerd-shim-zygote-v2")
    return path if os.access(path, os.X_OK) else None


def copy_shim(build_dir, directory):
    """A copy of the shim that every uid may run (the build tree may be private)."""
    dst = os.path.join(directory, "containerd-shim-zygote-v2")
    shutil.copyfile(os.path.join(build_dir, "containerd-shim-zygote-v2"), dst)
    os.chmod(dst, 0o755)
    return dst


class FakeEvents:
    """containerd's ttrpc events service, as far as the shim uses it: a socket that answers every
    Forward call with success and records (service, method, namespace, topic, type_url, event)."""

    def __init__(self, directory):
        import socket
        import threading
        self.path = os.path.join(directory, "events.ttrpc")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.received = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        import threading
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        import struct

        def exactly(n):
            buf = b""
            while len(buf) < n:
                chunk = conn.recv(n - len(buf))
                if not chunk:
                    raise EOFError
                buf += chunk
            return buf
        try:
            while True:
                length, stream, kind, _ = struct.unpack(">IIBB", exactly(10))
                req = w.decode(exactly(length))
                env = w.decode(w.first(w.decode(w.first(req, 3, b"")), 1, b""))
                any_ = w.decode(w.first(env, 4, b""))
                with self.lock:
                    self.received.append((w.first(req, 1).decode(), w.first(req, 2).decode(),
                                          w.first(env, 2, b"").decode(), w.first(env, 3, b"").decode(),
                                          w.first(any_, 1, b"").decode(), w.decode(w.first(any_, 2, b""))))
                resp = w.encode([(1, [(1, 0)])])
                conn.sendall(struct.pack(">IIBB", len(resp), stream, w.RESPONSE, 0) + resp)
        except (EOFError, OSError):
            conn.close()

    def close(self):
        self.sock.close()
