"""A KDTP bot in plain Python whose processes spin between and during its decisions
(benchmarks/bench_sandbox_cpu.py): a thread of its own spins all the time; at each game it starts
HELPERS processes in sessions of their own that spin without end (as long as it lives: a sandbox
kills them when the game ends); each decision spins THINK seconds before it answers the first
legal action.

usage: spinner.py HELPERS THINK
"""

import json
import os
import sys
import threading
import time

helpers, think = int(sys.argv[1]), float(sys.argv[2])
me = os.getpid()
started = []


def spin():
    while True:
        for _ in range(100_000):
            pass
        if os.getppid() != me and os.getpid() != me:  # a helper whose bot is gone
            os._exit(0)


def alive(pid):
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


threading.Thread(target=spin, daemon=True).start()
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        answer = {"type": "hello", "name": "spinner"}
    elif kind == "game":
        started = [pid for pid in started if alive(pid)]
        while len(started) < helpers:
            pid = os.fork()
            if pid == 0:
                os.setsid()
                spin()
            started.append(pid)
        continue
    elif kind == "act":
        deadline = time.perf_counter() + think
        while time.perf_counter() < deadline:
            pass
        answer = {"type": "action", "action": message["legal"][0]}
    elif kind == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
