"""`--sandbox`: bubblewrap's command line for one bot process, and limits with verdicts
(docs/sandbox.md: what a sandboxed bot sees, may do and cannot, and how each wall is built).

    Sandbox        the limits, the folders hidden from every bot (`hidden`: the tournament's) and
                   shown to every bot (`allowed`: --sandbox-allow); `confine(program)`
    Confinement    one process's sandbox: `argv` (bwrap's command, its cgroup made), `freeze`,
                   `thaw`, `end_game` (kill all the bot started), `kill`, `out_of_memory`,
                   `hit_process_limit`, `release`
    Limits         memory, processes, output and CPUs of a bot process; `own_uid`: as root, a
                   uid no other live sandbox of the machine has (locks in UID_FOLDER)
    refusal        why a sandbox does not run a program (what it names lies beyond its view);
                   bwrap_path: bwrap's path, or SandboxError saying what to install;
                   missing_limits, weaker_limits_line: what this machine cannot enforce
    SandboxError   no sandbox on this machine (a UserError); Refused: a program it does not run
                   (a UserError and an OSError, as a process that cannot start)
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import PurePath

import kdtourney
from kdtourney.engine.jit_cache import cache_folders
from kdtourney.errors import UserError
from kdtourney.external import cgroups, private, syscalls
from kdtourney.external.declaration import SERVED, Program
from kdtourney.external.files import Unreadable
from kdtourney.external.identity import FilesChanged, inside, snapshot

INSTALL_HINT = "apt-get install bubblewrap"
DEFAULT_MEMORY_MIB = 1024    # a served Python bot with numpy and Numba takes about 150 MiB
DEFAULT_PROCESSES = 64       # processes and threads (a JVM starts about 20 threads)
DEFAULT_OUTPUT_MIB = 16      # stdout and stderr a bot may write per game
DEFAULT_CPUS = 1.0           # a bot's CPU quota while it decides, in cores
SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM = (*SYSTEM_DIRS, *SYSTEM_LINKS)  # the system's folders, which every sandbox shows
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
             "java-*", "nodejs", "ssl/openssl.cnf")
NUMBA_COPY_FROM = "/run/kdtourney-numba"
# who the bots are when kdtourney runs as root: one uid and gid per live sandbox on the machine,
# from a range no account uses (systemd leaves 0x70000000 to 0x7ffdffff unused)
SANDBOX_UIDS = range(2_000_000_000, 2_000_000_000 + 65536)
# the bot's TMPDIR: not /tmp, where the harness's private folder (of its uid, which a bot not run
# as root shares) is shown for the files it gives, made 0755 by bwrap
BOT_TMPDIR = "/tmp/tmp"
UID_FOLDER = "/run/kdtourney-uids"  # their locks: one folder for the machine (not in TMPDIR)
SECCOMP_FD = 3               # where bwrap reads the system call filter
ARGS_FD = 4                  # and its options
ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")  # for setpriv only, which drops them all


class SandboxError(UserError):
    """No sandbox on this machine; one line saying what to install."""


class Refused(PermissionError, UserError):
    """A bot its sandbox does not run: what it names lies beyond what a sandbox shows (an
    OSError, as what fails to start a process is)."""


def bwrap_path() -> str:
    """bwrap's path; SandboxError naming the package to install when it is not there (or when
    what the sandbox needs besides is not: the system call filter's libseccomp and, as root,
    util-linux's setpriv, see `_as_bot`)."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(f"--sandbox needs bubblewrap (bwrap), which is not installed: install "
                           f"it, e.g. `{INSTALL_HINT}`")
    try:
        syscalls.program_file()
    except private.NotPrivate:
        raise  # its own line: the private folder is taken
    except (ImportError, OSError) as exc:
        raise SandboxError(f"--sandbox needs libseccomp for its system call filter, which is not "
                           f"there ({exc}): {syscalls.INSTALL_HINT}") from None
    _as_bot(SANDBOX_UIDS[0])
    return found


def _as_bot(uid: int | None) -> list[str]:
    """The command that makes the bot `uid` (an unprivileged user) inside the sandbox, as root;
    [] for another user (the bot keeps the user's uid)."""
    if os.geteuid() != 0:
        return []
    found = shutil.which("setpriv")
    if found is None or not any(inside(found, d) for d in SYSTEM):
        raise SandboxError("--sandbox as root needs util-linux's setpriv in /usr (to run bots as "
                           "an unprivileged user): install it, e.g. `apt-get install util-linux`")
    return [os.path.realpath(found), f"--reuid={uid}", f"--regid={uid}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]


def own_uid() -> tuple[int, int]:
    """(a uid of SANDBOX_UIDS no other live sandbox of this machine has, the descriptor holding
    it), as root: the first slot of UID_FOLDER whose lock no process holds, held until the
    descriptor is closed (or its process ends). UID_FOLDER is one for the machine, whatever the
    temporary folder (a TMPDIR, systemd's PrivateTmp)."""
    folder = uid_folder()
    for slot, uid in enumerate(SANDBOX_UIDS):
        fd = private.open_file(os.path.join(folder, str(slot)))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return uid, fd
    raise SandboxError(f"--sandbox: all {len(SANDBOX_UIDS)} users of the sandboxes are taken")


def uid_folder() -> str:
    """UID_FOLDER, made if missing (root's alone, mode 0700); SandboxError when it is not."""
    try:
        os.makedirs(UID_FOLDER, 0o700, exist_ok=True)
        info = os.lstat(UID_FOLDER)
    except OSError as exc:
        raise SandboxError(f"--sandbox as root keeps its users' locks in {UID_FOLDER}, which "
                           f"cannot be made ({exc.strerror})") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
        raise SandboxError(f"{UID_FOLDER} should be a folder of root's only (mode 0700), where "
                           "--sandbox keeps its users' locks, but is not: remove it")
    return UID_FOLDER


def refusal(program: Program, allowed=()) -> str | None:
    """Why a sandbox does not run `program` (one line naming the path), None if it does: what a
    sandboxed bot sees is the harness's decision, not its author's. The files its TOML lists and a
    program given by a relative path must lie in its folder; a program given by an absolute path
    in the system's folders, a folder in `allowed` (--sandbox-allow) or its folder; all with
    their links resolved. kdtourney's own `serve` is the harness's program: never refused."""
    if program.origin == SERVED:
        return None
    folder = program.cwd
    for path in program.reads:
        if not inside(path, folder):
            return f"its files entry {path} {_leads(path)}lies outside its folder {folder}"
    declared, first = (program.declared or program.command)[0], program.command[0]
    if os.sep in declared and not os.path.isabs(declared) and not inside(first, folder):
        return f"its program {declared} {_leads(first)}lies outside its folder {folder}"
    if os.path.isabs(declared) and not any(inside(first, d)
                                           for d in [*SYSTEM, *allowed, folder]):
        return (f"its program {first} {_leads(first)}lies outside the system's folders "
                f"({', '.join(SYSTEM_DIRS)}), the folders --sandbox-allow grants and its folder")
    return None


def _util(name: str) -> str:
    """The path of a util-linux program of the system (shown in every sandbox)."""
    found = shutil.which(name, path="/usr/bin:/bin")
    if found is None:
        raise SandboxError(f"--sandbox needs util-linux's {name}: install it, e.g. "
                           "`apt-get install util-linux`")
    return os.path.realpath(found)


def _leads(path: str) -> str:
    real = os.path.realpath(path)
    return "" if real == os.path.abspath(path) else f"(a link to {real}) "
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
    """How bot processes are sandboxed: their limits, the folders no bot may see even where
    a folder it does see holds them (`hidden`: the tournament's folder), and the folders every
    bot may see (`allowed`: what the organiser grants with --sandbox-allow)."""

    limits: Limits = Limits()
    hidden: tuple = ()
    allowed: tuple = ()

    def confine(self, program: Program) -> Confinement:
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


def sandbox_processes(pid: int, members) -> set[int]:
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


def _options_file(options: list[str]) -> str:
    """A file of the private folder holding bwrap's `options`, NUL-separated (`--args`)."""
    fd, path = tempfile.mkstemp(prefix="bwrap-", dir=private.folder("sandboxes"))
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(o.encode("utf-8", "surrogateescape") + b"\0" for o in options))
    return path


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


def _package() -> str:
    """The folder of the kdtourney package this process runs, links resolved (as the sandbox
    shows it)."""
    return os.path.dirname(os.path.realpath(kdtourney.__file__))


class Confinement:
    """One bot process's sandbox: its bwrap command line and its cgroup (made by `argv`,
    frozen and thawed, removed by `release`), and what the cgroup saw (`out_of_memory`,
    `hit_process_limit`)."""

    def __init__(self, sandbox: Sandbox, program: Program):
        self.sandbox, self.program = sandbox, program
        self.served = program.origin == SERVED  # kdtourney serve: no folder of its own
        self.cgroup: cgroups.BotCgroup | None = None  # made by argv
        self.uid: int | None = None  # as root: the bot's own user (argv)
        self._uid_lock: int | None = None

    def argv(self) -> list[str]:
        """The command starting the bot in its sandbox (its cgroup made now). Refused (an
        OSError) for a program that names what a sandbox does not show (`refusal`)."""
        why = refusal(self.program, self.sandbox.allowed)
        if why is not None:
            raise Refused(errno.EACCES, f"--sandbox refuses it: {why}")
        limits = self.sandbox.limits
        bwrap = bwrap_path()  # first: no bwrap is the first thing to say
        if os.geteuid() == 0:
            keep = [arg for cap in ROOT_CAPS for arg in ("--cap-add", cap)]
        else:  # bwrap maps the user into a user namespace of the sandbox's own
            keep = ["--unshare-user", "--disable-userns"]
        memory = str(limits.memory_mib << 20)
        command = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid",
                   "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                   "--cap-drop", "ALL", *keep, "--seccomp", str(SECCOMP_FD), "--clearenv",
                   "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME",
                   "/tmp", "--setenv", "TMPDIR", BOT_TMPDIR, "--setenv", "LANG", "C.UTF-8",
                   "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", memory,
                   "--tmpfs", "/dev/shm", "--perms", "1777", "--size", memory, "--tmpfs", "/tmp",
                   "--perms", "1777", "--dir", BOT_TMPDIR]
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
        command += ["--chdir", "/tmp" if self.served else os.path.realpath(self.program.cwd)]
        if self.served:  # a private copy of kdtourney's compiled kernels (a bot cannot alter them)
            for path in cache_folders():
                command += ["--ro-bind", path, f"{NUMBA_COPY_FROM}/{os.path.basename(path)}"]
            command += ["--setenv", "NUMBA_CACHE_DIR", "/tmp/numba"]
            # the kdtourney this harness runs and hashed, not another its Python might find
            command += ["--setenv", "PYTHONPATH", os.path.dirname(_package())]
        for path in ["/", *masks]:  # mounted: only /tmp (and /dev/shm) stay writable
            command += ["--remount-ro", path]
        self.cgroup = cgroups.BotCgroup.make(limits.memory_mib << 20, limits.processes,
                                             limits.cpus)
        bounded = self.cgroup is not None and self.cgroup.bounds(cgroups.PROCESSES)
        # without a pids cgroup, RLIMIT_NPROC: set inside, where it counts the bot's user's
        # processes (its own as root, those of its user namespace otherwise), not the harness's
        nproc = [] if bounded else [_util("prlimit"), f"--nproc={limits.processes}", "--"]
        if os.geteuid() == 0:
            self.uid, self._uid_lock = own_uid()
        run = [*_as_bot(self.uid), *nproc, self._program_path(), *self.program.command[1:]]
        if self.served:  # copied before the bot is who it is, then made its own to use
            command += ["--", "/bin/sh", "-c", f"cp -R {NUMBA_COPY_FROM} /tmp/numba 2>/dev/null; "
                        'chmod -R a+rwX /tmp/numba 2>/dev/null; exec "$@"', "sh", *run]
        else:
            command += ["--", *run]
        # bwrap starts with an empty environment: the sandbox's init (its pid 1, which the bot
        # can read) is a bwrap process and keeps what bwrap was started with. The shell joins
        # the cgroup (nothing escapes it) and opens the filter for bwrap, then becomes bwrap.
        # bwrap's options come from a file (removed once open), so that the sandbox's pid 1,
        # whose command line a bot reads, shows no host path of the harness: `bwrap --args 4 --
        # COMMAND`, the bot's own command
        files = [] if self.cgroup is None else self.cgroup.procs_files()
        join = "".join(f'echo $$ > "${i + 3}" && ' for i in range(len(files)))
        launch = ["env", "-i", "PATH=/usr/bin:/bin", "/bin/sh", "-c",
                  f'{join}exec {SECCOMP_FD}< "$1" {ARGS_FD}< "$2" && rm -f -- "$2" && '
                  f'shift {len(files) + 2} && exec "$@"', "sh",
                  syscalls.program_file(), _options_file(command[1:command.index("--")]), *files]
        if self.cgroup is None or not self.cgroup.bounds(cgroups.MEMORY):
            launch += ["prlimit", f"--data={memory}", "--"]
        return [*launch, bwrap, "--args", str(ARGS_FD), *command[command.index("--"):]]

    def _program_path(self) -> str:
        """The program to run: as written, or, for an absolute path that reaches the system
        or an allowed folder through a link lying elsewhere (a venv's python), the file it
        leads to (the link's folder is not shown)."""
        first = self.program.command[0]
        if not os.path.isabs(first) or self.served:
            return first
        shown = [*SYSTEM, *self.sandbox.allowed, *self._visible()]
        if any(PurePath(os.path.abspath(first)).is_relative_to(p) for p in shown):
            return first
        return os.path.realpath(first)

    def _mount_visible(self, command: list[str]) -> list[str]:
        """Add the visible folders to `command` as read-only binds, with an empty tmpfs over each
        hidden folder one of them holds (the tournament's folder, the user's home), outer ones
        first, so that a folder inside a hidden one (the bot's own, in the home) is bound again
        over the tmpfs; returns those tmpfs (to be made read-only once all is mounted). Nothing
        inside the tournament's folder is bound. All paths with their links resolved. The bot's
        own folder shows the copy of its files its identity hashed (identity.snapshot)."""
        secret = [os.path.realpath(h) for h in self.sandbox.hidden]
        visible = [p for p in self._visible()
                   if not any(PurePath(p).is_relative_to(h) for h in secret)]
        source = {}
        if not self.served:
            try:
                source[os.path.realpath(self.program.cwd)] = snapshot(self.program)
            except (Unreadable, FilesChanged) as exc:
                raise Refused(errno.EACCES, f"--sandbox refuses it: {exc}") from None
        # (the bot's folder shows only its files: no tournament folder, nothing of a home)
        masks = [h for h in dict.fromkeys([*secret, os.path.realpath(os.path.expanduser("~"))])
                 if os.path.isdir(h) and any(PurePath(h).is_relative_to(p) and h != p
                                             for p in visible if p not in source)]
        # the folders on the way to what is bound: bwrap would make them with the modes they
        # have outside (a home of 0700), which an unprivileged bot could not pass through
        parents = {str(a) for p in [*visible, *masks] for a in PurePath(p).parents} \
            - {"/", "/tmp", *masks}
        on_the_way = [a for a in parents if not any(PurePath(a).is_relative_to(p)
                                                       for p in visible)]
        for _, kind, path in sorted([(_depth(p), "bind", p) for p in visible]
                                    + [(_depth(h), "mask", h) for h in masks]
                                    + [(_depth(a), "dir", a) for a in on_the_way]):
            command += {"bind": ["--ro-bind", source.get(path, path), path],
                        "mask": ["--tmpfs", path], "dir": ["--perms", "0755", "--dir", path]}[kind]
        return masks

    def _visible(self) -> list[str]:
        """The folders (and files) the bot sees besides the system, links resolved: the allowed
        folders and its own folder (over them, when inside one), or for a served Python bot its
        sources file, its venv, its Python and kdtourney itself (an editable install lies outside
        the venv); none inside another but the bot's folder."""
        paths = [*self.program.reads, *self.sandbox.allowed]
        own = None
        if self.served:
            executable = os.path.realpath(self.program.command[0])
            paths += [sys.prefix, sys.base_prefix, _prefix(executable), _package()]
        else:
            own = os.path.realpath(self.program.cwd)
        kept = [] if own is None else [own]
        for path in sorted(set(os.path.realpath(p) for p in paths if p and os.path.exists(p))):
            if path in ("/", "/tmp") \
                    or any(PurePath(path).is_relative_to(k) for k in [*kept, "/usr"]):
                continue
            kept.append(path)
        return kept
    # its cgroup

    def freeze(self) -> bool:
        """Stop all the bot's processes until `thaw` (waiting until they are), where the machine
        has a freezer: False when they were not all stopped in time (True without a freezer)."""
        if self.cgroup is None or not self.cgroup.bounds(cgroups.FREEZE):
            return True
        return self.cgroup.freeze()

    def thaw(self) -> None:
        if self.cgroup is not None:
            self.cgroup.thaw()

    def end_game(self, pid: int) -> None:
        """Kill every process the bot started (daemons included), keeping the bot (`pid` is
        bwrap's): with its cgroup frozen meanwhile, so that no fork outruns it; without a
        freezer, scan after scan of its cgroup (or, without one, of bwrap's descendants)."""
        def spare(members):
            return sandbox_processes(pid, members)

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
        processes dying with bwrap) is killed first; then give its user back."""
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._uid_lock is not None:
            os.close(self._uid_lock)
            self.uid, self._uid_lock = None, None


__all__ = ["Sandbox", "Limits", "Confinement", "SandboxError", "Refused", "refusal", "bwrap_path",
           "own_uid", "uid_folder", "UID_FOLDER",
           "sandbox_processes", "INSTALL_HINT",
           "DEFAULT_MEMORY_MIB", "DEFAULT_PROCESSES", "DEFAULT_OUTPUT_MIB", "DEFAULT_CPUS",
           "missing_limits", "weaker_limits_line"]
