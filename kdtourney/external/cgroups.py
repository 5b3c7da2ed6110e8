"""The cgroup of a sandboxed bot process (docs/sandbox.md, "Limits: cgroups"): it holds the bot
and all it starts, so that their memory, number and CPU are bounded together, a kill past a
limit is known, all of them are frozen between decisions and killed with none forking meanwhile.

    machine, probe   the hierarchies this process may use (cgroup v2, v1 or hybrid, delegated or
                     as root; KDTOURNEY_CGROUP_ROOT names another root): a `Machine`, whose
                     `missing` says which limits cannot hold here
    BotCgroup        `make` one bot's cgroup; `procs_files` to join it, `bounds`, `freeze`,
                     `thaw`, `kill` (all, or all but some), `out_of_memory`,
                     `hit_process_limit`, `remove`
    own_cpus         the CPUs this process's bots keep to: the slot of its `ticket` (a lock
                     file of the private folder) among the cores it may use, so that the
                     workers of a machine keep to different cores
    kill_scanning    without a cgroup: kill what scans of a process's members find
"""

from __future__ import annotations

import fcntl
import itertools
import math
import os
import signal
import time
from dataclasses import dataclass

from kdtourney.external import private

CGROUP_ROOT = "/sys/fs/cgroup"
ROOT_VARIABLE = "KDTOURNEY_CGROUP_ROOT"
OWN_CGROUP = "/proc/self/cgroup"
PARENT = "kdtourney"            # the folder of the bots' cgroups, in each hierarchy
LEAF = "kdtourney-harness"      # delegated v2: where the processes of our own cgroup move
CPU_PERIOD_US = 10_000          # a quota's period: 5 of them in a 50 ms decision
FREEZE_TIMEOUT = 1.0            # s a freeze may take (a task in uninterruptible sleep delays it)
SCANS = 20                      # without a freezer: scans of the members until none is left
MEMORY, PROCESSES, CPU, CPUSET, FREEZE, KILL = "memory", "pids", "cpu", "cpuset", "freeze", "kill"
LIMITS = (MEMORY, PROCESSES, CPU, CPUSET, FREEZE)
WEAKER = {MEMORY: "memory per process only", PROCESSES: "no process bound", CPU: "no CPU quota",
          CPUSET: "no CPUs of their own", FREEZE: "no freezing"}
CONTROLLERS = (MEMORY, PROCESSES, CPU, CPUSET)
# v1: the feature, its hierarchy's folder, and a file a cgroup of it has
_V1 = ((MEMORY, "memory", "memory.limit_in_bytes"), (PROCESSES, "pids", "pids.max"),
       (CPU, "cpu", "cpu.cfs_quota_us"), (CPUSET, "cpuset", "cpuset.cpus"),
       (FREEZE, "freezer", "freezer.state"))


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy kdtourney may use: its version, the folder where the bots'
    cgroups go, and what those cgroups can do there."""

    version: int
    parent: str
    features: frozenset


@dataclass(frozen=True)
class Machine:
    """The hierarchies this process may use (v2 first)."""

    hierarchies: tuple = ()

    def source(self, feature: str) -> Hierarchy | None:
        """The hierarchy giving `feature`, None where none does."""
        return next((h for h in self.hierarchies if feature in h.features), None)

    @property
    def missing(self) -> list[str]:
        """What bots are not held to here, in words ([] when every limit holds)."""
        return [WEAKER[f] for f in LIMITS if self.source(f) is None]


def _words(path: str) -> list[str]:
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def can_make(folder: str) -> bool:
    """Whether `folder` is there (made now if not) and this process may make cgroups in it."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def _own_cgroup() -> str | None:
    """This process's cgroup in the v2 tree ('/user.slice/...'), None if it has none."""
    try:
        with open(OWN_CGROUP) as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return None


def _delegated(mount: str) -> str | None:
    """The cgroup this process runs in, when its user may manage it (delegated), its processes
    moved into a leaf of it; None if it is not ours."""
    own = _own_cgroup()
    if own is None:
        return None
    base = os.path.normpath(os.path.join(mount, own.lstrip("/")))
    if os.path.basename(base) == LEAF:  # moved there already (a worker started by kdtourney)
        base = os.path.dirname(base)
    if base == os.path.normpath(mount) or not os.access(base, os.W_OK):
        return None
    leaf = os.path.join(base, LEAF)
    if can_make(leaf):
        for pid in _words(os.path.join(base, "cgroup.procs")):
            try:
                _write(os.path.join(leaf, "cgroup.procs"), pid)
            except OSError:  # not ours, or gone: the controllers then stay off
                pass
    return base


def _v2(mount: str) -> Hierarchy | None:
    base, parent = mount, os.path.join(mount, PARENT)
    if not can_make(parent):
        delegated = _delegated(mount)
        if delegated is None:
            return None
        base, parent = delegated, os.path.join(delegated, PARENT)
        if not can_make(parent):
            return None
    offered = [c for c in CONTROLLERS if c in _words(os.path.join(base, "cgroup.controllers"))]
    for folder in (base, parent):  # lent down to the bots' cgroups, one controller at a time
        control = os.path.join(folder, "cgroup.subtree_control")
        enabled = _words(control)
        for controller in offered:
            if controller not in enabled:
                try:
                    _write(control, f"+{controller}")
                except OSError:
                    pass
    features = set(offered) & set(_words(os.path.join(parent, "cgroup.subtree_control")))
    for feature, name in ((FREEZE, "cgroup.freeze"), (KILL, "cgroup.kill")):
        if os.path.exists(os.path.join(parent, name)):
            features.add(feature)
    if CPU in features:
        _weigh(parent, "cpu.weight", 100, 10_000)
    return Hierarchy(2, parent, frozenset(features)) if features else None


def _weigh(parent: str, name: str, one: int, most: int) -> None:
    """Give the bots' cgroups together the CPU weight of a busy process per core (`one`: a
    process's; at most `most`): all sandboxed bots share their parent's weight against the
    machine's other work, where each would weigh one process out of a cgroup."""
    try:
        _write(os.path.join(parent, name), str(min(most, one * (os.cpu_count() or 1))))
    except OSError:
        pass


def _cpuset_v1(mount: str, parent: str) -> bool:
    """A v1 cpuset's cgroup takes processes only once it has CPUs and memory nodes: kdtourney's
    folder gets those of the whole hierarchy. Whether it has them."""
    for name in ("cpuset.cpus", "cpuset.mems"):
        if not _words(os.path.join(parent, name)):
            try:
                _write(os.path.join(parent, name), " ".join(_words(os.path.join(mount, name))))
            except OSError:
                return False
    return True


def probe(root: str) -> Machine:
    """The hierarchies under `root` this process may use, their parent folders made (see the
    module docstring)."""
    found = []
    unified = next((p for p in (root, os.path.join(root, "unified"))
                    if os.path.isfile(os.path.join(p, "cgroup.controllers"))), None)
    if unified is not None:
        hierarchy = _v2(unified)
        if hierarchy is not None:
            found.append(hierarchy)
    if unified != root:  # v1 for what v2 does not give
        have = {f for h in found for f in h.features}
        for feature, name, interface in _V1:
            mount = os.path.join(root, name)
            parent = os.path.join(mount, PARENT)
            if feature in have or not os.path.isfile(os.path.join(mount, "cgroup.procs")) \
                    or os.path.isfile(os.path.join(mount, "cgroup.controllers")):
                continue
            if can_make(parent) and os.path.exists(os.path.join(parent, interface)):
                if feature == CPU:
                    _weigh(parent, "cpu.shares", 1024, 262_144)
                if feature == CPUSET and not _cpuset_v1(mount, parent):
                    continue
                same = [h for h in found if os.path.samefile(h.parent, parent)]  # co-mounted
                if same:
                    found[found.index(same[0])] = Hierarchy(1, parent, same[0].features | {feature})
                else:
                    found.append(Hierarchy(1, parent, frozenset({feature})))
    return Machine(tuple(found))


_MACHINES: dict = {}


def machine() -> Machine:
    """This machine's hierarchies, as this process may use them (probed once per root)."""
    root = os.environ.get(ROOT_VARIABLE) or CGROUP_ROOT
    if root not in _MACHINES:
        _MACHINES[root] = probe(root)
    return _MACHINES[root]


# --- killing ---------------------------------------------------------------------------------

def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def kill_scanning(members, spare=None) -> None:
    """Without a freezer: SIGKILL to `members()` but `spare(members)` until a scan finds none
    left (at most SCANS scans: a process forking without end can outrun them)."""
    for _ in range(SCANS):
        found = set(members())
        doomed = found - (spare(found) if spare else set())
        if not doomed:
            return
        _kill(doomed)
        time.sleep(0.001)


def _procs(folder: str) -> list[int]:
    return [int(w) for w in _words(os.path.join(folder, "cgroup.procs")) if w.isdigit()]


def _sweep(parent: str) -> None:
    """Remove the cgroups that kdtourney processes now gone left in `parent` (a worker killed
    before it could remove its own), killing and thawing what is still in them."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        owner = name.split("-")[1] if name.startswith("kdtourney-") else ""
        if not owner.isdigit() or os.path.exists(f"/proc/{owner}"):
            continue
        folder = os.path.join(parent, name)
        for _ in range(20):
            try:
                os.rmdir(folder)
                break
            except OSError:
                pass
            try:
                if os.path.exists(os.path.join(folder, "cgroup.kill")):
                    _write(os.path.join(folder, "cgroup.kill"), "1")
                _kill(_procs(folder))
                if os.path.exists(os.path.join(folder, "freezer.state")):
                    _write(os.path.join(folder, "freezer.state"), "THAWED")
                elif os.path.exists(os.path.join(folder, "cgroup.freeze")):
                    _write(os.path.join(folder, "cgroup.freeze"), "0")
            except OSError:
                pass
            time.sleep(0.01)


# --- the CPUs of a process's bots --------------------------------------------------------------

_TICKET: list = []  # [the number of this process's ticket], its lock held until the process ends


def ticket() -> int:
    """This process's ticket: the lowest number whose lock file (in the harness's private
    folder, one set per user) no live process holds; held from now on."""
    if not _TICKET:
        for number in range(10_000):
            fd = private.open_file(os.path.join(private.folder("cpus"), str(number)))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            _TICKET.append(number)  # fd stays open: the lock lives as long as this process
            break
        else:
            _TICKET.append(os.getpid())
    return _TICKET[0]


def cpus_of(number: int, allowed, cpus: float) -> list[int]:
    """The CPUs of the bots of the process whose ticket is `number`: its slot of ceil(cpus) of
    the `allowed` CPUs (the slots in turn: tickets past the last slot share)."""
    allowed = sorted(allowed)
    size = max(1, min(len(allowed), math.ceil(cpus)))
    slot = number % (len(allowed) // size)
    return allowed[slot * size:(slot + 1) * size]


def own_cpus(cpus: float) -> list[int]:
    """The CPUs this process's bots, each with a quota of `cpus` cores, keep to."""
    return cpus_of(ticket(), os.sched_getaffinity(0), cpus)


# --- one bot's cgroup --------------------------------------------------------------------------

_COUNTER = itertools.count()
_SWEPT: set = set()  # the parents this process has swept


class BotCgroup:
    """The cgroup of one bot process: a folder in each hierarchy the machine lends it (`make`),
    removed by `remove`."""

    def __init__(self, machine_: Machine):
        self.machine = machine_
        self.folders: dict = {}     # Hierarchy -> its folder for this bot
        self.frozen = False
        self._events: int | None = None  # cgroup.events (v2), kept open: read at every freeze

    @classmethod
    def make(cls, memory_bytes: int, processes: int, cpus: float,
             machine_: Machine | None = None) -> BotCgroup | None:
        """A new cgroup bounding memory (bytes, all its processes together), processes and CPUs
        (a quota, in cores) wherever this machine can; None where it can do nothing."""
        machine_ = machine_ or machine()
        used = list(dict.fromkeys(h for f in (FREEZE, KILL, *CONTROLLERS)
                                  if (h := machine_.source(f)) is not None))
        if not used:
            return None
        for hierarchy in used:  # the freezer's first: what it holds must thaw to die
            if hierarchy.parent not in _SWEPT:
                _SWEPT.add(hierarchy.parent)
                _sweep(hierarchy.parent)
        cgroup = cls(machine_)
        name = f"kdtourney-{os.getpid()}-{next(_COUNTER)}"
        try:
            for hierarchy in used:
                folder = os.path.join(hierarchy.parent, name)
                os.mkdir(folder)
                cgroup.folders[hierarchy] = folder
                for key, value in cgroup._settings(hierarchy, memory_bytes, processes, cpus):
                    _write(os.path.join(folder, key), value)
        except OSError:
            cgroup.remove()
            return None
        return cgroup

    def _settings(self, hierarchy: Hierarchy, memory: int, processes: int, cpus: float):
        """[(file, value)] of the limits `hierarchy` gives this bot."""
        folder = self.folders[hierarchy]
        mine = {f for f in CONTROLLERS if self.machine.source(f) is hierarchy}
        quota = max(1000, round(cpus * CPU_PERIOD_US))
        out = []
        if MEMORY in mine:
            out += [("memory.max" if hierarchy.version == 2 else "memory.limit_in_bytes",
                     str(memory))]
            swap = "memory.swap.max" if hierarchy.version == 2 else "memory.memsw.limit_in_bytes"
            if os.path.exists(os.path.join(folder, swap)):  # only with swap accounting
                out += [(swap, "0" if hierarchy.version == 2 else str(memory))]
        if PROCESSES in mine:
            out += [("pids.max", str(processes))]
        if CPU in mine:
            out += [("cpu.max", f"{quota} {CPU_PERIOD_US}")] if hierarchy.version == 2 else [
                ("cpu.cfs_period_us", str(CPU_PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
        if CPUSET in mine:
            if hierarchy.version == 1:  # its memory nodes first: v1 wants both
                out += [("cpuset.mems", " ".join(_words(os.path.join(hierarchy.parent,
                                                                     "cpuset.mems"))))]
            out += [("cpuset.cpus", ",".join(map(str, own_cpus(cpus))))]
        return out

    def _folder(self, feature: str) -> str | None:
        return self.folders.get(self.machine.source(feature))

    def _hierarchy(self, feature: str) -> Hierarchy:
        source = self.machine.source(feature)
        assert source is not None  # asked only of a feature this cgroup bounds
        return source

    def bounds(self, feature: str) -> bool:
        """Whether this cgroup gives `feature` (MEMORY, PROCESSES, CPU, CPUSET, FREEZE, KILL)."""
        return self._folder(feature) is not None

    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join this cgroup."""
        return [os.path.join(folder, "cgroup.procs") for folder in self.folders.values()]

    def members(self) -> list[int]:
        """The pids of the processes in this cgroup."""
        folder = self._folder(FREEZE) or next(iter(self.folders.values()), None)
        return [] if folder is None else _procs(folder)

    # freezing

    def freeze(self) -> bool:
        """Stop every process of the cgroup, and wait until they are (at most FREEZE_TIMEOUT):
        False when that did not happen in time (or there is no freezer)."""
        folder = self._folder(FREEZE)
        if folder is None:
            return False
        if self.frozen:
            return True
        self.frozen = True
        try:
            if self._hierarchy(FREEZE).version == 2:
                if self._events is None:
                    self._events = os.open(os.path.join(folder, "cgroup.events"), os.O_RDONLY)
                events = self._events
                _write(os.path.join(folder, "cgroup.freeze"), "1")
                return _wait(lambda: b"frozen 1" in os.pread(events, 4096, 0))
            _write(os.path.join(folder, "freezer.state"), "FROZEN")
            return _wait(lambda: _words(os.path.join(folder, "freezer.state")) == ["FROZEN"])
        except OSError:  # the cgroup is going away
            return False

    def thaw(self) -> None:
        """Let the processes of the cgroup run again."""
        folder = self._folder(FREEZE)
        if folder is None or not self.frozen:
            return
        self.frozen = False
        try:
            if self._hierarchy(FREEZE).version == 2:
                _write(os.path.join(folder, "cgroup.freeze"), "0")
            else:
                _write(os.path.join(folder, "freezer.state"), "THAWED")
        except OSError:
            pass

    # killing

    def kill(self, spare=None) -> None:
        """SIGKILL to every process of the cgroup but those `spare(members)` names (None: all),
        with the cgroup frozen meanwhile, so that no fork outruns it; frozen or not afterwards as
        before (a v1 freezer thaws for a moment: the processes it holds die only then). Without a
        freezer, scans (`kill_scanning`)."""
        kill_folder = self._folder(KILL)
        if spare is None and kill_folder is not None:
            try:
                _write(os.path.join(kill_folder, "cgroup.kill"), "1")
            except OSError:
                pass
            return
        if not self.bounds(FREEZE):
            kill_scanning(self.members, spare)
            return
        was_frozen = self.frozen
        self.freeze()
        members = set(self.members())
        _kill(members - (spare(members) if spare else set()))
        if self._hierarchy(FREEZE).version == 1 or not was_frozen:
            self.thaw()
            if was_frozen:
                self.freeze()

    def remove(self) -> None:
        """Kill what is left and remove the folders (trying for a second: the killed take a
        moment to go; what is still there then is left to the next sweep)."""
        self.kill()
        if self._events is not None:
            os.close(self._events)
            self._events = None
        deadline = time.monotonic() + 1.0
        for folder in self.folders.values():
            while True:
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                self.kill()
                time.sleep(0.01)
        self.folders = {}

    # verdicts

    def _counts(self, feature: str, name: str) -> dict:
        folder = self._folder(feature)
        if folder is None:
            return {}
        try:
            with open(os.path.join(folder, name)) as f:
                return {k: int(v) for k, v in (line.split() for line in f if line.strip())
                        if v.isdigit()}
        except (OSError, ValueError):
            return {}

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the cgroup for want of memory."""
        hierarchy = self.machine.source(MEMORY)
        name = "memory.events" if hierarchy and hierarchy.version == 2 else "memory.oom_control"
        return self._counts(MEMORY, name).get("oom_kill", 0) > 0

    def hit_process_limit(self) -> bool:
        """Whether a process of the cgroup was refused a new process (or thread)."""
        return self._counts(PROCESSES, "pids.events").get("max", 0) > 0


def _wait(done) -> bool:
    """Wait until done() (at most FREEZE_TIMEOUT), looking again after pauses growing from 20 us
    to 1 ms. (Not a poll of cgroup.events: the kernel tells a change of it at most every 10 ms,
    later than a freeze takes.)"""
    deadline = time.monotonic() + FREEZE_TIMEOUT
    pause = 20e-6
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(2 * pause, 0.001)
    return True


__all__ = ["BotCgroup", "Machine", "Hierarchy", "machine", "probe", "kill_scanning", "own_cpus",
           "ticket", "cpus_of", "can_make", "MEMORY", "PROCESSES", "CPU", "CPUSET", "FREEZE",
           "KILL", "WEAKER", "CPU_PERIOD_US", "ROOT_VARIABLE"]
