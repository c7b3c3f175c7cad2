#!/usr/bin/env python3
"""How soon an edit made outside is found in a running TUI (SPEC 18).

Starts the binary in tmux (120x36) on TREE, waits until the status bar shows
the index, then, ROUNDS times: opens Ctrl+P, types a symbol's name that is
nowhere yet, writes a new file defining it (or, every other round, adds the
definition to an existing file), and asks again every few milliseconds (a
key and its backspace) until the file is on screen. Each figure is from the
write's return to the capture that shows it, so it includes tmux's
round trip.

    bench/index_fresh.py BIN TREE [ROUNDS]     (bench/index_fresh.sh runs it)

Budget: 500 ms.
"""
import os
import shlex
import statistics
import subprocess
import sys
import time

BIN, TREE = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
SESSION = f"fresh{os.getpid()}"


def tmux(*args):
    return subprocess.run(["tmux", "-L", SESSION, *args], capture_output=True, text=True,
                          check=True).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(text, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s = screen()
        if text in s:
            return s
        time.sleep(0.05)
    sys.exit(f"bench: {text!r} not on screen after {timeout} s:\n{screen()}")


def main():
    keep = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in
                    ("HOME", "TERM", "AGENT_TUI_HOME", "XDG_CONFIG_HOME") if k in os.environ)
    tmux("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "36",
         f"env {keep} {shlex.quote(BIN)} {shlex.quote(TREE)}")
    try:
        t = time.monotonic()
        wait_for(" files", 120)
        while "indexing" in screen() or "index " not in screen():
            time.sleep(0.1)
        print(f"index ready in the status bar after {time.monotonic() - t:.1f} s")
        folder = os.path.join(TREE, "zz_fresh_bench")
        os.makedirs(folder, exist_ok=True)
        existing = os.path.join(folder, "existing.rs")
        with open(existing, "w") as f:
            f.write("pub fn already_here() {}\n")
        time.sleep(1.0)
        samples = []
        for n in range(ROUNDS):
            name = f"zqfreshsym{n}x"
            tmux("send-keys", "-t", SESSION, "C-p")
            wait_for("Find a file or a symbol", 5)
            tmux("send-keys", "-t", SESSION, "-l", name)
            time.sleep(0.2)
            if n % 2 == 0:
                path, rel = os.path.join(folder, f"new_{n}.rs"), f"zz_fresh_bench/new_{n}.rs"
                with open(path, "w") as f:
                    f.write(f"pub fn {name}() {{}}\n")
            else:
                path, rel = existing, "zz_fresh_bench/existing.rs"
                with open(path, "a") as f:
                    f.write(f"pub fn {name}() {{}}\n")
            t0 = time.monotonic()
            while True:
                tmux("send-keys", "-t", SESSION, "x", "BSpace")
                if rel in screen():
                    break
                if time.monotonic() - t0 > 10:
                    sys.exit(f"bench: {rel} not found after 10 s:\n{screen()}")
            samples.append(time.monotonic() - t0)
            tmux("send-keys", "-t", SESSION, "Escape")
            time.sleep(0.3)
        samples.sort()
        p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
        print(f"external edit found by Ctrl+P: p50 {statistics.median(samples)*1000:.0f} ms, "
              f"p95 {p95*1000:.0f} ms, max {samples[-1]*1000:.0f} ms over {len(samples)} edits "
              f"(budget 500 ms)")
    finally:
        subprocess.run(["tmux", "-L", SESSION, "kill-server"], capture_output=True)
        subprocess.run(["rm", "-rf", os.path.join(TREE, "zz_fresh_bench")])


if __name__ == "__main__":
    main()
