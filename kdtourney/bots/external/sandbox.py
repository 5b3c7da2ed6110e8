"""`--sandbox`: a bot process inside bubblewrap (`bwrap`), with limits that give verdicts.

kdtourney only assembles bwrap's arguments (`Sandbox.confine`); the isolation is the kernel's
namespaces, set up by bwrap:
- its own PID namespace (`--unshare-pid`): the bot sees neither the harness nor other bots; at
  the end of each game every process the bot started is killed (`end_game`), and when the bot
  process ends, or bwrap is killed (`--die-with-parent`), the kernel kills every process left in
  the namespace, daemons included;
- no network (`--unshare-net`: a loopback interface only), its own IPC and host name;
- a filesystem of read-only binds: the system (/usr, the library links, a few files of /etc), the
  runtime the command needs (the folder of its program, the Python prefix for Python, the
  project's venv and kdtourney for a served Python bot), the bot's own folder and the `files` its
  TOML lists; an empty tmpfs covers the tournament's folder (`Sandbox.hidden`) and the user's home
  where a bound folder holds them; all read-only but /tmp, a private tmpfs, /proc its own, /dev a
  minimal one;
- no capabilities (`--cap-drop ALL`, with no_new_privs), an empty environment but PATH, HOME=/tmp
  (bwrap itself starts with an empty one: it is the namespace's init, which the bot can read).

Limits (`Limits`): memory and processes through a cgroup of its own per bot process when this
machine lets kdtourney create one (cgroup v2, or v1's memory and pids hierarchies: root, or a
delegated tree); the kernel kills the bot past `memory.max` and `memory.events` (v1:
`memory.oom_control`) says so, which is the `memory` verdict. Without a writable cgroup, memory is
bounded by RLIMIT_DATA (`prlimit`): an allocation past it fails inside the bot, whose crash is then
reported as a crash, and the number of processes is not bounded (the PID namespace still ends them
all). The output limit is the harness's (kdtourney.bots.external.process).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import PurePath

from kdtourney.bots.external.declaration import SERVED, Program

INSTALL_HINT = "apt-get install bubblewrap"
DEFAULT_MEMORY_MIB = 1024    # a served Python bot with numpy and Numba takes about 150 MiB
DEFAULT_PROCESSES = 64       # processes and threads (a JVM starts about 20 threads)
DEFAULT_OUTPUT_MIB = 16      # stdout and stderr a bot may write per game
SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
             "java-*", "nodejs", "ssl/openssl.cnf")
CGROUP_ROOT = "/sys/fs/cgroup"
NUMBA_COPY_FROM = "/run/kdtourney-numba"


class SandboxError(ValueError):
    """No sandbox on this machine; one line saying what to install."""


def bwrap_path() -> str:
    """bwrap's path; SandboxError naming the package to install when it is not there."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(f"--sandbox needs bubblewrap (bwrap), which is not installed: install "
                           f"it, e.g. `{INSTALL_HINT}`")
    return found


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot process may use: memory (MiB, its processes together), processes
    (and threads), output (MiB written to stdout and stderr per game)."""

    memory_mib: int = DEFAULT_MEMORY_MIB
    processes: int = DEFAULT_PROCESSES
    output_mib: int = DEFAULT_OUTPUT_MIB

    @property
    def output_bytes(self) -> int:
        return self.output_mib << 20


@dataclass(frozen=True)
class Sandbox:
    """How bot processes are sandboxed: their limits, and the folders no bot may see even where
    a folder it does see holds them (`hidden`: the tournament's folder)."""

    limits: Limits = Limits()
    hidden: tuple = ()

    def confine(self, program: Program) -> "Confinement":
        """The sandbox of one process of `program`."""
        return Confinement(self, program)


_COUNTER = itertools.count()
_SWEPT: list = []  # whether this process has removed the cgroups dead ones left


def _kill_members(folder: str) -> None:
    """SIGKILL to the processes of a cgroup of ours (a member's pid cannot be reused)."""
    try:
        with open(os.path.join(folder, "cgroup.procs")) as f:
            members = [int(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return
    for pid in members:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _sweep(parent: str) -> None:
    """Remove the empty cgroups that kdtourney processes now gone left in `parent` (a worker
    killed before it could remove its own)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = name.split("-")[1] if name.startswith("kdtourney-") else ""
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass


def _children() -> dict[int, list[int]]:
    """{pid: its children's pids} of every process this process can see."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    return children


def _start_time(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


def _depth(path: str) -> int:
    return len(path.rstrip(os.sep).split(os.sep))


def _prefix(program: str) -> str:
    """The installation a program belongs to: a venv or a Python (the folder above its bin/),
    else its own folder."""
    folder = os.path.dirname(program)
    above = os.path.dirname(folder)
    if os.path.basename(folder) == "bin" and (
            os.path.exists(os.path.join(above, "pyvenv.cfg"))
            or glob.glob(os.path.join(above, "lib", "python3*"))):
        return above
    return folder


def _numba_caches() -> list[str]:
    """The folders of this installation's Numba cache of kdtourney's kernels, one per package
    folder (see kdtourney._jit_cache)."""
    import kdtourney
    from kdtourney._jit_cache import PackageCacheLocator

    package = os.path.dirname(os.path.abspath(kdtourney.__file__))
    found = []
    for sub in sorted(os.listdir(package)):
        source = os.path.join(package, sub, "_kernels.py")
        if not os.path.isdir(os.path.dirname(source)):
            continue
        path = PackageCacheLocator(_numba_caches, source).get_cache_path()
        if os.environ.get("NUMBA_CACHE_DIR"):  # the user's choice, which Numba takes first
            path = os.path.join(os.environ["NUMBA_CACHE_DIR"], os.path.basename(path))
        if os.path.isdir(path):
            found.append(path)
    return found


class Confinement:
    """One bot process's sandbox: its bwrap command line and its cgroup (made by `argv`,
    removed by `release`), and what the cgroup saw (`out_of_memory`, `hit_process_limit`)."""

    def __init__(self, sandbox: Sandbox, program: Program):
        self.sandbox, self.program = sandbox, program
        self.served = program.origin == SERVED  # kdtourney serve: no folder of its own
        self.cgroups: list[str] = []
        self.version = None

    def argv(self) -> list[str]:
        """The command starting the bot in its sandbox (its cgroup made now)."""
        limits = self.sandbox.limits
        command = [bwrap_path(), "--die-with-parent", "--new-session", "--unshare-pid",
                   "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                   "--cap-drop", "ALL", "--clearenv", "--setenv", "PATH",
                   "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
                   "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
                   "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for path in SYSTEM_DIRS:
            command += ["--ro-bind", path, path]
        for path in SYSTEM_LINKS:
            if os.path.islink(path):
                command += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                command += ["--ro-bind", path, path]
        for pattern in ETC_FILES:
            for path in sorted(glob.glob(os.path.join("/etc", pattern))):
                command += ["--ro-bind", path, path]
        masks = self._mount_visible(command)
        command += ["--chdir", "/tmp" if self.served else os.path.abspath(self.program.cwd)]
        if self.served:  # a private copy of kdtourney's compiled kernels (a bot cannot alter them)
            for path in _numba_caches():
                command += ["--ro-bind", path, f"{NUMBA_COPY_FROM}/{os.path.basename(path)}"]
            command += ["--setenv", "NUMBA_CACHE_DIR", "/tmp/numba"]
        for path in ["/", *masks]:  # mounted: only /tmp (and /dev/shm) stay writable
            command += ["--remount-ro", path]
        if self.served:
            command += ["--", "/bin/sh", "-c",
                        f'cp -R {NUMBA_COPY_FROM} /tmp/numba 2>/dev/null; exec "$@"', "sh"]
        else:
            command += ["--"]
        command += self.program.command
        self._make_cgroups()
        # bwrap starts with an empty environment: the sandbox's init (its pid 1, which the bot
        # can read) is a bwrap process and keeps what bwrap was started with
        clean = ["env", "-i", "PATH=/usr/bin:/bin"]
        if self.cgroups:  # the shell joins the cgroups, then becomes bwrap: nothing escapes them
            join = " && ".join(f'echo $$ > "${i + 1}/cgroup.procs"' for i in range(len(self.cgroups)))
            n = len(self.cgroups)
            return [*clean, "/bin/sh", "-c", f'{join} && shift {n} && exec "$@"', "sh",
                    *self.cgroups, *command]
        return [*clean, "prlimit", f"--data={limits.memory_mib << 20}", "--", *command]

    def _mount_visible(self, command: list[str]) -> list[str]:
        """Add the visible folders to `command` as read-only binds, with an empty tmpfs over each
        hidden folder one of them holds (the tournament's folder, the user's home), outer ones
        first, so that a folder inside a hidden one (the bot's own, in the home) is bound again
        over the tmpfs; returns those tmpfs (to be made read-only once all is mounted). Nothing
        inside the tournament's folder is bound."""
        secret = [os.path.abspath(h) for h in self.sandbox.hidden]
        visible = [p for p in self._visible()
                   if not any(PurePath(p).is_relative_to(h) for h in secret)]
        masks = [h for h in dict.fromkeys([*secret, os.path.expanduser("~")])
                 if os.path.isdir(h) and any(PurePath(h).is_relative_to(p) and h != p
                                             for p in visible)]
        for _, mask, path in sorted([(_depth(p), False, p) for p in visible]
                                    + [(_depth(h), True, h) for h in masks]):
            command += ["--tmpfs", path] if mask else ["--ro-bind", path, path]
        return masks

    def _visible(self) -> list[str]:
        """The folders (and files) the bot sees besides the system: its own folder, the runtime
        of its program, Python's prefixes for Python, and the files it `reads`."""
        paths = [*self.program.reads] + ([] if self.served else [self.program.cwd])
        executable = self.program.command[0]
        if os.path.isabs(executable):  # a bare name is looked up on the sandbox's PATH (/usr)
            paths += [os.path.dirname(executable), _prefix(executable),
                      _prefix(os.path.realpath(executable))]
        if self.served:  # the venv, its Python, kdtourney itself (an editable install is outside)
            import kdtourney
            paths += [sys.prefix, sys.base_prefix,
                      os.path.dirname(os.path.abspath(kdtourney.__file__))]
        kept = []
        for path in sorted(set(os.path.abspath(p) for p in paths if p and os.path.exists(p))):
            if path in ("/", "/tmp") \
                    or any(PurePath(path).is_relative_to(k) for k in [*kept, "/usr"]):
                continue
            kept.append(path)
        return kept

    def end_game(self, pid: int) -> None:
        """Kill every process the bot started (daemons included), keeping the bot: `pid` is
        bwrap's, whose child is the namespace's init, whose first child is the bot."""
        children = _children()
        init = children.get(pid, [])
        if len(init) != 1:
            return
        bot = sorted(children.get(init[0], []), key=_start_time)[:1]
        doomed, todo = [], [c for c in children.get(init[0], []) if c not in bot] + [
            c for b in bot for c in children.get(b, [])]
        while todo:
            child = todo.pop()
            doomed.append(child)
            todo += children.get(child, [])
        for child in doomed:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass

    # the cgroup

    def _make_cgroups(self) -> None:
        limits = self.sandbox.limits
        name = f"kdtourney-{os.getpid()}-{next(_COUNTER)}"
        memory = str(limits.memory_mib << 20)
        if os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):  # v2
            settings = {os.path.join(CGROUP_ROOT, "kdtourney", name): {
                "memory.max": memory, "memory.swap.max": "0", "pids.max": str(limits.processes)}}
            parent = os.path.join(CGROUP_ROOT, "kdtourney")
            try:
                os.makedirs(parent, exist_ok=True)
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory +pids")
            except OSError:
                return
            self.version = 2
        elif all(os.path.exists(os.path.join(CGROUP_ROOT, h, "cgroup.procs"))
                 for h in ("memory", "pids")):  # v1: one folder per hierarchy
            settings = {os.path.join(CGROUP_ROOT, "memory", "kdtourney", name): {
                "memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory},
                os.path.join(CGROUP_ROOT, "pids", "kdtourney", name): {
                "pids.max": str(limits.processes)}}
            self.version = 1
        else:
            return
        if not _SWEPT:
            _SWEPT.append(True)
            for folder in settings:
                _sweep(os.path.dirname(folder))
        try:
            for folder, values in settings.items():
                os.makedirs(folder)
                self.cgroups.append(folder)
                for key, value in values.items():
                    path = os.path.join(folder, key)
                    if os.path.exists(path) or key != "memory.memsw.limit_in_bytes":
                        with open(path, "w") as f:
                            f.write(value)
        except OSError:  # no cgroup for us here: rlimits instead
            self.release()
            self.version = None

    def _events(self, name: str) -> dict:
        for folder in self.cgroups:
            path = os.path.join(folder, name)
            if os.path.exists(path):
                try:
                    with open(path) as f:
                        return {k: int(v) for k, v in (line.split() for line in f if line.strip())
                                if v.isdigit()}
                except (OSError, ValueError):
                    return {}
        return {}

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the bot for want of memory."""
        events = self._events("memory.events" if self.version == 2 else "memory.oom_control")
        return events.get("oom_kill", 0) > 0

    def hit_process_limit(self) -> bool:
        """Whether the bot was refused a process (or thread) by its limit."""
        return self._events("pids.events").get("max", 0) > 0

    def release(self) -> None:
        """Remove the cgroup once the bot has been stopped: what is still in it (the sandbox's
        processes dying with bwrap) is killed first, for at most a second."""
        deadline = time.monotonic() + 1.0
        for folder in self.cgroups:
            while True:
                try:
                    os.rmdir(folder)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                _kill_members(folder)
                time.sleep(0.01)
        self.cgroups = []


__all__ = ["Sandbox", "Limits", "Confinement", "SandboxError", "bwrap_path", "INSTALL_HINT",
           "DEFAULT_MEMORY_MIB", "DEFAULT_PROCESSES", "DEFAULT_OUTPUT_MIB"]
