#!/usr/bin/env python3
"""Key-to-frame latency of the TUI in a real pseudo-terminal.

Starts the release binary in a pty (120x36) on TREE, waits for the first frame
to settle, then sends keys one at a time and times each from the write of the
key's bytes to the first byte of the frame that answers it. Between keys it
waits until the terminal has been quiet for 50 ms, so each key meets an idle
app.

    bench/tui_keys.py BIN TREE     (bench/tui_keys.sh runs it)

Budget: under 16 ms per key.
"""
import os
import pty
import select
import signal
import statistics
import struct
import sys
import fcntl
import termios
import time

BIN, TREE = sys.argv[1], sys.argv[2]

# Keys a user presses a lot: typing and deleting in the input, mode cycling,
# moving focus to the tree and walking it.
KEYS = [
    ("type a", b"a"),
    ("backspace", b"\x7f"),
    ("ctrl+t mode", b"\x14"),
]
TREE_KEYS = [("tree j", b"j"), ("tree k", b"k")]


def drain(fd, quiet):
    """Reads until nothing arrives for `quiet` seconds."""
    while True:
        ready, _, _ = select.select([fd], [], [], quiet)
        if not ready:
            return
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def first_byte(fd, timeout=2.0):
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return None
    os.read(fd, 65536)
    return time.perf_counter()


def time_key(fd, samples, name, data, settle):
    """Sends one key to a quiet app and records how long its frame took."""
    drain(fd, settle)
    t0 = time.perf_counter()
    os.write(fd, data)
    t1 = first_byte(fd)
    if t1 is not None:
        samples.setdefault(name, []).append((t1 - t0) * 1000)


def measure(fd, rounds, settle):
    samples = {}
    for _ in range(rounds):
        # Input focused: type, delete, cycle the mode.
        for name, data in KEYS:
            time_key(fd, samples, name, data, settle)
        # One Tab moves the focus from the input to the tree.
        time_key(fd, samples, "tab focus", b"\t", settle)
        for name, data in TREE_KEYS:
            time_key(fd, samples, name, data, settle)
        # Back to the input: Tab twice more.
        os.write(fd, b"\t\t")
    return samples


def report(title, samples):
    print(title)
    every = []
    for name, values in samples.items():
        values.sort()
        every.extend(values)
        p95 = values[int(len(values) * 0.95) - 1]
        print(f"  {name:<12} n={len(values):3}  median {statistics.median(values):5.2f} ms"
              f"  p95 {p95:5.2f} ms  max {values[-1]:5.2f} ms")
    every.sort()
    p95 = every[int(len(every) * 0.95) - 1]
    print(f"  {'all keys':<12} n={len(every):3}  median {statistics.median(every):5.2f} ms"
          f"  p95 {p95:5.2f} ms  max {every[-1]:5.2f} ms  (budget 16 ms)")


def main():
    args = [BIN, TREE]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(BIN, args)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    drain(fd, 0.5)
    report(f"key to frame, {TREE}", measure(fd, 30, 0.05))
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)


main()
