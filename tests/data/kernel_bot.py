"""A KDTP bot (plain Python, no kdtourney import) that tries to pass messages to another sandbox
through what the kernel keeps per user or per machine, for the sandbox tests.

usage: kernel_bot.py TOKEN

At `hello`, before answering, it writes one line `KERNEL-REPORT {json}` on stderr, then plays
the first legal action. The report's parts:
- found: it looks for TOKEN where another copy of itself (or another bot) would have left it: a
  key in its user keyring and in its session keyring, a System V message queue, a POSIX message
  queue, an abstract unix socket, a file in /dev/shm; and counts the inotify instances and the
  processes it can get (given back at once): fewer than another sandbox got tells that one holds
  some;
- left: then it leaves TOKEN in each of those places (`add_key` for the keys), takes every
  inotify instance and every process it may have, and holds them as long as it lives;
- refused: the errno name of each system call that no bot needs (x86_64 numbers), `clone3`
  included, and the status of `unshare -U true` (a user namespace of its own).
Each value is what it found or did, or the errno name where the kernel refused.
"""
import ctypes
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time

token = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_ADD_KEY, SYS_KEYCTL = 248, 250           # x86_64
KEYCTL_SEARCH, KEYCTL_READ = 10, 11
KEY_SPEC_SESSION, KEY_SPEC_USER = -3, -4
CLONE_NEWUSER = 0x10000000
IPC_CREAT, IPC_NOWAIT = 0o1000, 0o4000
MOST = 300                                   # inotify instances and processes tried, at most
REFUSED = {"io_uring_setup": 425, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
           "fanotify_init": 300, "syslog": 103, "clone3": 435, "request_key": 249}
AF_VSOCK = 40


def failure():
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def key_name(keyring):
    return f"kdtourney-{token}-{keyring}".encode()


def leave_key(keyring):
    name = key_name(keyring)
    payload = token.encode()
    found = libc.syscall(SYS_ADD_KEY, b"user", name, payload, len(payload), keyring)
    return "left" if found >= 0 else failure()


def find_key(keyring):
    found = libc.syscall(SYS_KEYCTL, KEYCTL_SEARCH, keyring, b"user", key_name(keyring), 0)
    if found < 0:
        return failure()
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(SYS_KEYCTL, KEYCTL_READ, found, buffer, 256)
    return buffer.raw[:size].decode() if size >= 0 else failure()


def sysv_key():
    return int.from_bytes(token.encode()[:4].ljust(4, b"k"), "little") & 0x7FFFFFFF


def leave_sysv():
    queue = libc.msgget(sysv_key(), IPC_CREAT | 0o666)
    return "left" if queue >= 0 else failure()


def find_sysv():
    queue = libc.msgget(sysv_key(), 0o666)
    return "found" if queue >= 0 else failure()


def mq_name():
    return f"/kdtourney-{token}".encode()


def leave_mqueue():
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    queue = rt.mq_open(mq_name(), os.O_CREAT | os.O_RDWR, 0o666, None)
    return "left" if queue >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


def find_mqueue():
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    queue = rt.mq_open(mq_name(), os.O_RDONLY)
    return "found" if queue >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


held = []


def leave_socket():
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(f"\0kdtourney-{token}")
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc))
    listener.listen()
    held.append(listener)
    return "left"


def find_socket():
    client = socket.socket(socket.AF_UNIX)
    try:
        client.connect(f"\0kdtourney-{token}")
        return "found"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc))
    finally:
        client.close()


def shm_path():
    return f"/dev/shm/kdtourney-{token}"


def leave_shm():
    try:
        with open(shm_path(), "w") as f:
            f.write(token)
        return "left"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc))


def find_shm():
    return "found" if os.path.exists(shm_path()) else "absent"


def inotify_instances():
    """How many inotify instances it can get (held: they stay open)."""
    got = []
    for _ in range(MOST):
        fd = libc.inotify_init()
        if fd < 0:
            break
        got.append(fd)
    return got


def processes():
    """How many processes it can start (each sleeps until killed)."""
    children = []
    for _ in range(MOST):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        children.append(pid)
    return children


def refused():
    found = {}
    for name, number in REFUSED.items():
        buffer = ctypes.create_string_buffer(256)  # zeros: arguments no call accepts as they are
        done = libc.syscall(number, 0, buffer, 0, 0, 0, 0) if name != "syslog" else \
            libc.syscall(number, 10, 0, 0)
        found[name] = "done" if done >= 0 else failure()
    try:
        socket.socket(AF_VSOCK, socket.SOCK_STREAM).close()
        found["vsock"] = "done"
    except OSError as exc:
        found["vsock"] = errno.errorcode.get(exc.errno, str(exc))
    found["unshare -U"] = subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode
    return found


def leave():
    left = {"user_keyring": leave_key(KEY_SPEC_USER),
            "session_keyring": leave_key(KEY_SPEC_SESSION),
            "sysv": leave_sysv(), "mqueue": leave_mqueue(), "socket": leave_socket(),
            "shm": leave_shm()}
    instances = inotify_instances()
    left["inotify"] = len(instances)
    held.extend(instances)
    children = processes()
    left["processes"] = len(children)
    return left


def look():
    found = {"user_keyring": find_key(KEY_SPEC_USER),
             "session_keyring": find_key(KEY_SPEC_SESSION),
             "sysv": find_sysv(), "mqueue": find_mqueue(), "socket": find_socket(),
             "shm": find_shm()}
    instances = inotify_instances()
    found["inotify"] = len(instances)
    for fd in instances:
        os.close(fd)
    children = processes()
    found["processes"] = len(children)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return found


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        report = {"found": look(), "refused": refused(), "left": leave()}
        print("KERNEL-REPORT " + json.dumps(report), file=sys.stderr, flush=True)
        sys.stdout.write(json.dumps({"type": "hello", "name": "kernel", "version": "1"}) + "\n")
        sys.stdout.flush()
    elif message["type"] == "act":
        sys.stdout.write(json.dumps({"type": "action", "action": message["legal"][0]}) + "\n")
        sys.stdout.flush()
    elif message["type"] == "quit":
        break
