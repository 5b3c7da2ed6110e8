"""A KDTP bot (plain Python, no kdtourney import) that uses the CPU or starts processes when it
should not, for the tests of a sandboxed bot's time and of the end of its games.

usage: busy_bot.py MODE MARKER     MODE: spin | hop | daemon

spin: from its start a thread of its own and a child in a session of its own (setsid) spin
without end; it answers each `act` with the first legal action at once.
hop: at each `game` it starts a daemon that forks without end: each generation forks the next
and exits, so one is always alive, under a new pid (what a scan of /proc races against).
daemon: at each `game` it starts a daemon (setsid, forked twice) that sleeps.
MARKER is in the command line of the processes it starts (the hopper's: its own, it does not
exec).
"""
import json
import os
import sys
import threading

mode, marker = sys.argv[1], sys.argv[2]


def spin():
    while True:
        pass


def detached(body):
    """body() in a grandchild in a session of its own (the child exits: init adopts it)."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            body()
            os._exit(0)
        os._exit(0)
    os.wait()


def hop():
    while True:
        if os.fork() != 0:
            os._exit(0)


def sleep():
    os.execv(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(1)",
                              marker])


if mode == "spin":
    threading.Thread(target=spin, daemon=True).start()
    detached(spin)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        send({"type": "hello", "name": mode, "version": "1"})
    elif kind == "game" and mode == "hop":
        detached(hop)
    elif kind == "game" and mode == "daemon":
        detached(sleep)
    elif kind == "act":
        send({"type": "action", "action": message["legal"][0]})
    elif kind == "quit":
        break
