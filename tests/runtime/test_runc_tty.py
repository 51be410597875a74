# SPDX-License-Identifier: MIT
"""The foreground terminal, as runc does it: `zygote-runc spec` writes `process.terminal: true`,
and a foreground `run` or `exec -t` with a terminal and no --console-socket makes the pty itself
(the container's devpts; the process's controlling terminal), copies its own stdio to and from the
master, puts its own terminal in raw mode (output processing kept) when stdin is one, resizes the
pty on SIGWINCH and hands the exit status back. Driven through a real pty (the test holds its
master, zygote-runc runs on its slave), and compared with Debian's runc where it is installed."""
import fcntl
import json
import os
import select
import struct
import subprocess
import termios
import time
import uuid

import pytest

RUNC = "/usr/sbin/runc"
pytestmark = pytest.mark.timeout(120)


def cid():
    return "tty-" + uuid.uuid4().hex[:12]


class Pty:
    """A program on the slave of a new pty (its session's controlling terminal), the test on the
    master: what it writes, when it says what, its exit status."""

    def __init__(self, argv, rows=33, cols=111, stdin=None, cwd=None):
        self.master, slave = os.openpty()
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=stdin if stdin is not None else slave, stdout=slave, stderr=slave,
                                     start_new_session=True, cwd=cwd,
                                     preexec_fn=lambda: fcntl.ioctl(1, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.out = b""

    def read_until(self, marker, timeout=30):
        """Reads until marker (bytes) is in the output; all of it so far."""
        deadline = time.monotonic() + timeout
        while marker not in self.out:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} in {self.out!r}"
            if not select.select([self.master], [], [], left)[0]:
                continue
            try:
                d = os.read(self.master, 4096)
            except OSError:
                d = b""
            assert d, f"the pty closed before {marker!r}: {self.out!r}"
            self.out += d
        return self.out

    def write(self, data):
        os.write(self.master, data)

    def termios(self):
        return termios.tcgetattr(self.master)

    def resize(self, rows, cols):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def finish(self, timeout=30):
        """The rest of the output and the exit status."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                raise AssertionError(f"still running: {self.out!r}")
            if not select.select([self.master], [], [], left)[0]:
                continue
            try:
                d = os.read(self.master, 4096)
            except OSError:  # EIO: no one holds the slave any more
                d = b""
            if not d:
                break
            self.out += d
        status = self.proc.wait(timeout=timeout)
        os.close(self.master)
        return self.out, status


def terminal_bundle(bundle, *args):
    bundle.config["process"]["terminal"] = True
    bundle.set_args(*args)


def run_argv(binary, root, name, bundle):
    return [binary, "--root", root, "run", "--bundle", bundle.path, name]


def test_spec_writes_a_terminal_as_runc(runc_bin, tmp_path):
    for rootless in (False, True):
        d = tmp_path / f"b{int(rootless)}"
        d.mkdir()
        subprocess.run([runc_bin, "spec", "--bundle", str(d)] + (["--rootless"] if rootless else []), check=True)
        assert json.loads((d / "config.json").read_text())["process"]["terminal"] is True


# what the container says of its terminal: its name, size, owner and mode, whether stdin is one
REPORT = "tty; stty size; stat -c '%u %g %a' $(tty); test -t 0 && echo stdin-is-a-tty"


def test_run_makes_the_terminal(runc, bundle, tmp_path):
    terminal_bundle(bundle, "sh", "-c", REPORT + "; exit 7")
    p = Pty(run_argv(runc.binary, runc.root, cid(), bundle))
    out, status = p.finish()
    assert status == 7, out
    # the container's own devpts, its size the runtime's terminal's, the owner and mode of the
    # config's devpts options; "\n" reaches the user as "\r\n" once (the pty -onlcr, the runtime's
    # terminal keeps its output processing)
    assert out == b"/dev/pts/0\r\n33 111\r\n0 5 620\r\nstdin-is-a-tty\r\n", out


def test_same_as_runc(runc, bundle, tmp_path):
    """The same bytes and status as runc's, but for the size: runc 1.1 sizes the pty after the
    process started (busybox's `stty size` there races it and may see none), zygote-runc before."""
    if not os.access(RUNC, os.X_OK):
        pytest.skip(f"no {RUNC} (Debian's runc package): nothing to compare with")
    terminal_bundle(bundle, "sh", "-c", "tty; stat -c '%u %g %a' $(tty); test -t 0 && echo stdin-is-a-tty; exit 7")
    seen = []
    for binary in (runc.binary, RUNC):
        root = str(tmp_path / f"root-{len(seen)}")
        name = cid()
        try:
            seen.append(Pty(run_argv(binary, root, name, bundle)).finish())
        finally:
            subprocess.run([binary, "--root", root, "delete", "--force", name], capture_output=True)
    assert seen[0] == seen[1], seen
    assert seen[0] == (b"/dev/pts/0\r\n0 5 620\r\nstdin-is-a-tty\r\n", 7), seen


def test_raw_mode_input_and_restore(runc, bundle):
    """stdin goes to the container through the runtime's terminal in raw mode (no echo, no line
    editing of the runtime's: the container's pty does that), and the terminal is restored."""
    terminal_bundle(bundle, "sh", "-c", "echo ready; read line; echo got:$line; exit 3")
    p = Pty(run_argv(runc.binary, runc.root, cid(), bundle))
    p.read_until(b"ready\r\n")
    during = p.termios()
    assert not during[3] & (termios.ICANON | termios.ECHO | termios.ISIG), during
    assert during[1] & termios.OPOST, during
    p.write(b"hello\r")
    out, status = p.finish()
    assert status == 3, out
    # the container's pty echoes (its ICRNL made the CR a newline), then the line it read
    assert out.endswith(b"hello\r\ngot:hello\r\n"), out


def test_raw_mode_restored_after(runc, bundle):
    terminal_bundle(bundle, "sh", "-c", "exit 0")
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    r = subprocess.run(run_argv(runc.binary, runc.root, cid(), bundle), stdin=slave, stdout=slave, stderr=slave,
                       timeout=60)
    after = termios.tcgetattr(slave)
    os.close(slave)
    os.close(master)
    assert r.returncode == 0
    assert after == before


def test_sigwinch_resizes(runc, bundle):
    terminal_bundle(bundle, "sh", "-c", "stty size; read x; stty size")
    p = Pty(run_argv(runc.binary, runc.root, cid(), bundle), rows=33, cols=111)
    p.read_until(b"33 111\r\n")
    # the kernel sends SIGWINCH to the runtime (the pty's foreground group) before the ioctl
    # returns: it resizes the container's pty before it passes on the newline written after
    p.resize(40, 120)
    p.write(b"\r")
    out, status = p.finish()
    assert status == 0, out
    assert out.endswith(b"40 120\r\n"), out


def test_stdin_not_a_tty(runc, bundle):
    """runc's tty.bats "stdin not a tty": stdin from /dev/null, the terminal found on stdout and
    stderr; no raw mode (stdin is no terminal), the container still has its pty."""
    terminal_bundle(bundle, "sh", "-c", "tty; stty size")
    with open(os.devnull) as null:
        p = Pty(run_argv(runc.binary, runc.root, cid(), bundle), stdin=null)
        out, status = p.finish()
    assert status == 0, out
    assert out == b"/dev/pts/0\r\n33 111\r\n", out


def test_no_terminal_anywhere(runc, bundle, tmp_path):
    """Every stdio a file and no controlling terminal: the pty is still made and its output
    copied to stdout (runc 1.1 refuses: open /dev/tty; docs/CONTAINERS.md's differences)."""
    terminal_bundle(bundle, "sh", "-c", "tty; exit 4")
    out = tmp_path / "out"
    with open(out, "w") as f, open(os.devnull) as null:
        r = subprocess.run(run_argv(runc.binary, runc.root, cid(), bundle), stdin=null, stdout=f, stderr=f,
                           start_new_session=True, timeout=60)
    assert r.returncode == 4, out.read_text()
    assert out.read_text() == "/dev/pts/0\n"


def test_exec_t_makes_the_terminal(runc, bundle):
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    p = Pty([runc.binary, "--root", runc.root, "exec", "-t", name, "sh", "-c", REPORT + "; exit 5"], rows=21,
            cols=77)
    out, status = p.finish()
    assert status == 5, out
    lines = out.split(b"\r\n")
    assert lines[0].startswith(b"/dev/pts/") and lines[1:4] == [b"21 77", b"0 5 620", b"stdin-is-a-tty"], out
    # detached, with no runtime left to copy the terminal: refused, as runc refuses it
    r = runc("exec", "-t", "-d", name, "true")
    assert r.returncode != 0 and "console socket" in r.stderr
    assert runc("delete", "--force", name).returncode == 0


def test_detached_run_with_a_terminal_is_refused(runc, bundle):
    terminal_bundle(bundle, "true")
    r = runc("run", "--detach", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "console socket" in r.stderr
    r = runc("create", "--bundle", bundle.path, cid())
    assert r.returncode != 0 and "console socket" in r.stderr


def test_run_terminal_owned_by_the_user(runc, bundle):
    """runc's tty.bats "runc run [tty owner] ({u,g}id != 0)": the terminal is process.user's, its
    group the devpts mount's gid=5."""
    bundle.config["process"]["user"] = {"uid": 1000, "gid": 100}
    terminal_bundle(bundle, "sh", "-c", "stat -c '%u %g' $(tty)")
    out, status = Pty(run_argv(runc.binary, runc.root, cid(), bundle)).finish()
    assert status == 0, out
    assert out == b"1000 5\r\n", out


def test_exec_terminal_owned_by_the_user(runc, bundle):
    """runc's tty.bats "runc exec [tty owner] ({u,g}id != 0)": the exec'd process's terminal is its
    user's (--user), not the container's init's; a root process's stays root's."""
    bundle.set_args("sleep", "1000")
    name = cid()
    r = runc("run", "--detach", "--bundle", bundle.path, name)
    assert r.returncode == 0, r.stderr
    for user, want in (("1000:100", b"1000 5\r\n"), ("0:0", b"0 5\r\n")):
        p = Pty([runc.binary, "--root", runc.root, "exec", "-t", "--user", user, name, "sh", "-c",
                 "stat -c '%u %g' $(tty)"])
        out, status = p.finish()
        assert (status, out) == (0, want), user
    assert runc("delete", "--force", name).returncode == 0
