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

Limits (`Limits`): memory, processes and CPU through a cgroup of its own per bot process
(kdtourney.bots.external.cgroups) where this machine lets kdtourney make one; the kernel kills the
bot past its memory and the cgroup says so, which is the `memory` verdict. The same cgroup is
frozen between the bot's decisions (`freeze`, `thaw`: it thinks on its own time only) and lets
`end_game` kill all the bot started with none able to fork meanwhile. Without a cgroup, memory is
bounded by RLIMIT_DATA (`prlimit`): an allocation past it fails inside the bot, whose crash is then
reported as a crash; what is missing on a machine is `cgroups.machine().missing`. The output limit
is the harness's (kdtourney.bots.external.process).
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import PurePath

from kdtourney.bots.external import cgroups
from kdtourney.bots.external.declaration import SERVED, Program

INSTALL_HINT = "apt-get install bubblewrap"
DEFAULT_MEMORY_MIB = 1024    # a served Python bot with numpy and Numba takes about 150 MiB
DEFAULT_PROCESSES = 64       # processes and threads (a JVM starts about 20 threads)
DEFAULT_OUTPUT_MIB = 16      # stdout and stderr a bot may write per game
DEFAULT_CPUS = 1.0           # a bot's CPU quota while it decides, in cores
SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
             "java-*", "nodejs", "ssl/openssl.cnf")
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


def missing_limits() -> list[str]:
    """The limits of a sandboxed bot this process cannot enforce, in words ([]: none)."""
    return cgroups.machine().missing


def weaker_limits_line(where: str, missing) -> str:
    """One line saying that `where` (a machine) enforces sandboxed bots' limits only in part."""
    return (f"--sandbox on {where}: {', '.join(missing)}; kdtourney may not make the cgroups "
            "for them there (run it as root, or in a cgroup v2 delegated to its user, e.g. under "
            "systemd-run --user --scope -p Delegate=yes)")


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot process may use: memory (MiB, its processes together), processes
    (and threads), output (MiB written to stdout and stderr per game), CPUs (a quota in cores,
    its processes together)."""

    memory_mib: int = DEFAULT_MEMORY_MIB
    processes: int = DEFAULT_PROCESSES
    output_mib: int = DEFAULT_OUTPUT_MIB
    cpus: float = DEFAULT_CPUS

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


def _descendants(pid: int) -> list[int]:
    """The processes below `pid`, from one scan of /proc (without a cgroup: what the bot
    started)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo += children.get(child, [])
    return found


def _sandbox_processes(pid: int, members) -> set[int]:
    """Of `members`, the sandbox's own processes and the bot: bwrap (`pid`), its child the
    namespace's init, and the init's child with pid 2 in the namespace (the bot: the command
    bwrap started; its later children, and the orphans the init adopts, have other pids)."""
    status = {}
    for member in members:
        try:
            with open(f"/proc/{member}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            status[member] = (int(fields["PPid"]), fields.get("NSpid", "").split())
        except (OSError, KeyError, ValueError):
            continue
    init = {m: len(ns) for m, (parent, ns) in status.items() if parent == pid}
    bot = {m for m, (parent, ns) in status.items()  # (a namespace of its own would be deeper)
           if parent in init and len(ns) == init[parent] and ns[-1:] == ["2"]}
    return {pid, *init, *bot}


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
    frozen and thawed, removed by `release`), and what the cgroup saw (`out_of_memory`,
    `hit_process_limit`)."""

    def __init__(self, sandbox: Sandbox, program: Program):
        self.sandbox, self.program = sandbox, program
        self.served = program.origin == SERVED  # kdtourney serve: no folder of its own
        self.cgroup: cgroups.BotCgroup | None = None  # made by argv

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
        self.cgroup = cgroups.BotCgroup.make(limits.memory_mib << 20, limits.processes,
                                             limits.cpus)
        # bwrap starts with an empty environment: the sandbox's init (its pid 1, which the bot
        # can read) is a bwrap process and keeps what bwrap was started with
        launch = ["env", "-i", "PATH=/usr/bin:/bin"]
        if self.cgroup is not None:  # the shell joins the cgroup, becomes bwrap: nothing escapes
            files = self.cgroup.procs_files()
            join = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(files)))
            launch += ["/bin/sh", "-c", f'{join} && shift {len(files)} && exec "$@"', "sh", *files]
        if self.cgroup is None or not self.cgroup.bounds(cgroups.MEMORY):
            launch += ["prlimit", f"--data={limits.memory_mib << 20}", "--"]
        return [*launch, *command]

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

    # its cgroup

    def freeze(self) -> None:
        """Stop all the bot's processes until `thaw` (waiting until they are), where the machine
        has a freezer."""
        if self.cgroup is not None:
            self.cgroup.freeze()

    def thaw(self) -> None:
        if self.cgroup is not None:
            self.cgroup.thaw()

    def end_game(self, pid: int) -> None:
        """Kill every process the bot started (daemons included), keeping the bot (`pid` is
        bwrap's): with its cgroup frozen meanwhile, so that no fork outruns it; without a
        freezer, scan after scan of its cgroup (or, without one, of bwrap's descendants)."""
        def spare(members):
            return _sandbox_processes(pid, members)

        if self.cgroup is not None:
            self.cgroup.kill(spare)
        else:
            cgroups.kill_scanning(lambda: _descendants(pid), spare)

    def kill(self) -> None:
        """Kill every process of the sandbox, frozen or not (its cgroup's; none without one)."""
        if self.cgroup is not None:
            self.cgroup.kill()

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the bot for want of memory."""
        return self.cgroup is not None and self.cgroup.out_of_memory()

    def hit_process_limit(self) -> bool:
        """Whether the bot was refused a process (or thread) by its limit."""
        return self.cgroup is not None and self.cgroup.hit_process_limit()

    def release(self) -> None:
        """Remove the cgroup once the bot has been stopped: what is still in it (the sandbox's
        processes dying with bwrap) is killed first."""
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None


__all__ = ["Sandbox", "Limits", "Confinement", "SandboxError", "bwrap_path", "INSTALL_HINT",
           "DEFAULT_MEMORY_MIB", "DEFAULT_PROCESSES", "DEFAULT_OUTPUT_MIB", "DEFAULT_CPUS",
           "missing_limits", "weaker_limits_line"]
