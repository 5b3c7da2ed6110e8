"""A KDTP bot written to cheat (plain Python, no kdtourney import), for the sandbox tests.

usage: cheating_bot.py MODE MARKER TARGET...   MODE: cheat | hog | flood | spy

A TARGET may be written path:PATH, so that the harness does not take it for a file the command
names (which a sandbox would show, or refuse).

cheat: at its first `game` message it tries what a cheater would (find the store through /proc,
read each TARGET that is a path, read the environment of the sandbox's init, write outside /tmp,
connect to each TARGET written tcp:HOST:PORT and to public hosts, leave a daemon behind, allocate
past its memory limit in a child, start 200 processes) and writes one line `CHEAT-REPORT {json}`
on stderr saying what worked; then plays the first legal action. At each later `game` it writes
`DAEMON-CHECK {json}`: whether its daemon is still there. It remembers the first row of every game
it plays and writes `DEAL-SEEN` when a game starts with one it has seen (a deal played again: it
would know the rows to come). hog: allocates 2 GiB at its first decision. flood: writes stderr
without end at its first decision. spy: at `hello` it writes `SPY-REPORT {json}` on stderr: who it
is (uid, gid, groups, capabilities), what its working directory holds, and what it read of each
TARGET.
MARKER is in the command line of the daemon it leaves.
"""
import json
import os
import socket
import subprocess
import sys
import time

mode, marker = sys.argv[1], sys.argv[2]
secrets = [t.removeprefix("path:") for t in sys.argv[3:] if not t.startswith("tcp:")]
servers = [tuple(t.split(":")[1:]) for t in sys.argv[3:] if t.startswith("tcp:")]


def find_store():
    """Every process it can see, and any open file of theirs named tournament.sqlite."""
    seen, found = [], []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        seen.append(int(entry))
        try:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                target = os.readlink(f"/proc/{entry}/fd/{fd}")
                if "tournament.sqlite" in target:
                    found.append(target)
        except OSError:
            pass
    return seen, found


def read(path):
    try:
        if os.path.isdir(path):
            return sorted(os.listdir(path))[:5]
        with open(path, "rb") as f:
            return f.read(64).decode(errors="replace") or True
    except OSError:
        return None


def who():
    """Its user, groups and capabilities (as /proc/self/status shows them)."""
    with open("/proc/self/status") as f:
        status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
            "groups": os.getgroups(), "cap_eff": status.get("CapEff"),
            "cap_bnd": status.get("CapBnd")}


def network():
    reached = []
    for host, port in (("1.1.1.1", 53), ("pypi.org", 443), *servers):
        try:
            socket.create_connection((host, int(port)), timeout=2).close()
            reached.append(f"{host}:{port}")
        except OSError:
            pass
    return reached


def init_environment():
    """The names of the variables of process 1 (the sandbox's init), None if it cannot be read."""
    try:
        with open("/proc/1/environ", "rb") as f:
            return sorted(v.split(b"=", 1)[0].decode() for v in f.read().split(b"\0") if v)
    except OSError:
        return None


def written():
    """The places outside /tmp where it could create a file."""
    done = []
    for folder in ("/", "/usr", os.getcwd()):
        try:
            with open(os.path.join(folder, "cheat-was-here"), "w") as f:
                f.write("x")
            done.append(folder)
        except OSError:
            pass
    return done


def daemon():
    """setsid and a double fork: a grandchild that outlives the bot unless something kills it."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c",
                                      "import time\nwhile True: time.sleep(1)", marker])
        os._exit(0)
    os.waitpid(pid, 0)
    return True


def daemons_alive():
    """How many processes other than itself it sees with MARKER in their command line."""
    found = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (os.getpid(), 1):  # 1: the sandbox's init
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found += marker.encode() in f.read()
            except OSError:
                pass
    return found


def fork_bomb(n):
    """How many of `n` processes it could start at once (all killed afterwards)."""
    children = []
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return len(children)


def allocate(mib):
    """A child allocating (and touching) `mib` MiB: its exit status (0: it got it all)."""
    child = subprocess.run([sys.executable, "-c", f"b = bytearray({mib} << 20)\nb[::4096] = "
                            f"b'x' * len(b[::4096])\nprint('allocated')"], capture_output=True)
    return child.returncode


def cheat(game):
    seen, store = find_store()
    report = {
        "game": game["game"], "seat": game["seat"], "seed": game["seed"],
        "pid": os.getpid(), "processes_seen": len(seen), "store_found": store, **who(),
        "read": {path: read(path) for path in secrets},
        "init_environment": init_environment(),
        "written": written(),
        "network": network(),
        "daemon_started": daemon(),
        "allocation_status": allocate(2048),
        "processes_started": fork_bomb(200),
    }
    print("CHEAT-REPORT " + json.dumps(report), file=sys.stderr, flush=True)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


cheated = False
rows, first = set(), False
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "game":
        first = True
    elif kind == "act" and first:
        first = False
        row = tuple(d["domino"] for d in message["state"]["next_row"])
        if row in rows:
            print("DEAL-SEEN " + json.dumps(row), file=sys.stderr, flush=True)
        rows.add(row)
    if kind == "hello":
        if mode == "spy":
            report = {**who(), "cwd": sorted(os.listdir(".")),
                      "read": {path: read(path) for path in secrets}}
            print("SPY-REPORT " + json.dumps(report), file=sys.stderr, flush=True)
        send({"type": "hello", "name": mode, "version": "1"})
    elif kind == "game" and mode == "cheat" and cheated:  # the daemon of its last game: gone?
        print("DAEMON-CHECK " + json.dumps({"alive": daemons_alive()}), file=sys.stderr, flush=True)
    elif kind == "game" and mode == "cheat":
        cheated = True
        cheat(message)
    elif kind == "act":
        if mode == "hog":
            hog = bytearray(2048 << 20)
            hog[::4096] = b"x" * len(hog[::4096])
        if mode == "flood":
            while True:
                sys.stderr.write("x" * 1023 + "\n")
        send({"type": "action", "action": message["legal"][0]})
    elif kind == "quit":
        break
