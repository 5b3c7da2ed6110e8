"""A ladder ended by SIGTERM or SIGINT, sent to its own process only (as a service manager or
`kill` does), leaves no process behind: the process beside play, the resource tracker, the
workers and their bots end with it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")


def descendants(pid: int) -> set[int]:
    """The processes below `pid` now (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_ladder_ended_by_a_signal_leaves_no_process_behind(tmp_path, sig):
    bots = tmp_path / "bots"
    bots.mkdir()
    args = ["--bots-dir", bots, "--bots", "random,greedy", "--out", tmp_path / "ladder",
            "--workers", 1, "--seed", 1, "--until", "300s", "--quiet", "--no-report"]
    proc = subprocess.Popen([KDTOURNEY, "ladder", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline, seen = time.monotonic() + 120, set()
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= descendants(proc.pid)
            if (tmp_path / "ladder" / "tournament.sqlite").exists() and len(seen) >= 3:
                break  # the process beside play, the resource tracker, a worker
            time.sleep(0.2)
        assert proc.poll() is None and len(seen) >= 3, proc.stdout.read() if proc.poll() else seen
        time.sleep(2)
        seen |= descendants(proc.pid)
        proc.send_signal(sig)
        output = proc.communicate(timeout=60)[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(map(alive, seen)):
            time.sleep(0.1)
        left = [pid for pid in seen if alive(pid)]
        assert left == [], (left, output)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
