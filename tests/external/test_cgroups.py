"""The cgroup of a sandboxed bot (kdtourney.external.cgroups).

Two kinds of tests: the kernel's behaviour (freezing, killing all but one with none able to
fork meanwhile, the CPU quota) on the hierarchies this machine has, as root, skipped elsewhere;
and which layout kdtourney finds and what it writes where, on fake cgroup trees in a temporary
folder (pure v2 as root, v2 delegated to a user, pure v1, hybrid, none), whose files say what the
kernel would show: those check kdtourney's choices, not the kernel's."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kdtp_support import cpu_ns

from kdtourney.external import cgroups
from kdtourney.external.cgroups import (
    CPU,
    CPUSET,
    FREEZE,
    KILL,
    MEMORY,
    PROCESSES,
    Hierarchy,
    Machine,
)

# --- fake trees ---------------------------------------------------------------------------------


def tree(root: Path, files: dict) -> str:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


def cpu_list(cpus) -> str:
    return ",".join(map(str, cpus))


def written(cgroup, name):
    """{file: value} of what kdtourney wrote in the bot's folder of hierarchy `name`."""
    folder = next(Path(f) for f in cgroup.folders.values() if name in f)
    return {p.name: p.read_text() for p in folder.iterdir()}


V1_TREE = {"memory/cgroup.procs": "", "memory/kdtourney/memory.limit_in_bytes": "",
           "pids/cgroup.procs": "", "pids/kdtourney/pids.max": "",
           "cpu/cgroup.procs": "", "cpu/kdtourney/cpu.cfs_quota_us": "",
           "cpuset/cgroup.procs": "", "cpuset/cpuset.cpus": "0-1\n", "cpuset/cpuset.mems": "0\n",
           "cpuset/kdtourney/cpuset.cpus": "\n", "cpuset/kdtourney/cpuset.mems": "\n",
           "freezer/cgroup.procs": "", "freezer/kdtourney/freezer.state": "THAWED\n"}


def test_cgroup_v2_gives_every_limit_in_one_folder(tmp_path):
    root = tree(tmp_path, {"cgroup.controllers": "cpuset cpu io memory pids\n",
                           "cgroup.subtree_control": "cpuset cpu memory pids\n",
                           # what the kernel shows in kdtourney's folder once it lent them down
                           "kdtourney/cgroup.subtree_control": "cpuset cpu memory pids\n",
                           "kdtourney/cgroup.freeze": "0\n", "kdtourney/cgroup.kill": ""})
    machine = cgroups.probe(root)
    assert [h.version for h in machine.hierarchies] == [2] and machine.missing == []
    cgroup = cgroups.BotCgroup.make(300 << 20, 64, 0.5, machine)
    assert len(cgroup.procs_files()) == 1
    assert written(cgroup, "kdtourney") == {"memory.max": str(300 << 20), "pids.max": "64",
                                            "cpu.max": "5000 10000",
                                            "cpuset.cpus": cpu_list(cgroups.own_cpus(0.5))}
    assert all(cgroup.bounds(f) for f in (MEMORY, PROCESSES, CPU, CPUSET, FREEZE, KILL))
    # all the bots weigh as much as a busy process per core against the machine's other work
    assert (tmp_path / "kdtourney" / "cpu.weight").read_text() == str(100 * os.cpu_count())


def test_a_delegated_cgroup_v2_moves_kdtourney_into_a_leaf_and_says_what_it_lacks(tmp_path,
                                                                                 monkeypatch):
    scope = "user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope"
    root = tree(tmp_path / "fs", {
        "cgroup.controllers": "cpu memory pids\n",
        "kdtourney": "",  # not a folder kdtourney can make: the top is not the user's
        f"{scope}/cgroup.controllers": "memory pids\n",  # systemd did not delegate cpu
        f"{scope}/cgroup.subtree_control": "memory pids\n",
        f"{scope}/cgroup.procs": f"{os.getpid()}\n",
        f"{scope}/kdtourney/cgroup.subtree_control": "memory pids\n",
        f"{scope}/kdtourney/cgroup.freeze": "0\n", f"{scope}/kdtourney/cgroup.kill": ""})
    own = tmp_path / "self-cgroup"
    monkeypatch.setattr(cgroups, "OWN_CGROUP", str(own))
    own.write_text(f"0::/{scope}\n")
    machine = cgroups.probe(root)
    assert machine.hierarchies == (Hierarchy(2, f"{root}/{scope}/kdtourney",
                                             frozenset({MEMORY, PROCESSES, FREEZE, KILL})),)
    assert machine.missing == ["no CPU quota", "no CPUs of their own"]
    # this process moved into a leaf: the controllers can then be lent to the bots' cgroups
    assert (Path(root) / scope / "kdtourney-harness" / "cgroup.procs").read_text() == \
        str(os.getpid())
    cgroup = cgroups.BotCgroup.make(100 << 20, 8, 1.0, machine)
    assert written(cgroup, "kdtourney") == {"memory.max": str(100 << 20), "pids.max": "8"}
    # a worker started from the leaf finds the same cgroup
    own.write_text(f"0::/{scope}/kdtourney-harness\n")
    assert cgroups.probe(root) == machine
    # a cgroup that is not the user's (a login session's): nothing
    os.chmod(Path(root) / scope, 0o555)
    try:
        if not os.access(Path(root) / scope, os.W_OK):  # (root may write anyway)
            assert cgroups.probe(root).missing == list(cgroups.WEAKER.values())
    finally:
        os.chmod(Path(root) / scope, 0o755)


def test_cgroup_v1_gives_each_limit_in_its_hierarchy(tmp_path):
    machine = cgroups.probe(tree(tmp_path, V1_TREE))
    assert [(h.version, set(h.features)) for h in machine.hierarchies] == [
        (1, {MEMORY}), (1, {PROCESSES}), (1, {CPU}), (1, {CPUSET}), (1, {FREEZE})]
    assert machine.missing == []
    # a v1 cpuset takes processes once it has CPUs and memory nodes: kdtourney's gets the root's
    assert (tmp_path / "cpuset" / "kdtourney" / "cpuset.cpus").read_text() == "0-1"
    cgroup = cgroups.BotCgroup.make(200 << 20, 64, 2, machine)
    assert len(cgroup.procs_files()) == 5 and not cgroup.bounds(KILL)  # v1 has no cgroup.kill
    assert written(cgroup, "memory")["memory.limit_in_bytes"] == str(200 << 20)
    assert written(cgroup, "pids")["pids.max"] == "64"
    assert written(cgroup, "cpu") == {"cpu.cfs_period_us": "10000", "cpu.cfs_quota_us": "20000"}
    assert written(cgroup, "cpuset") == {"cpuset.mems": "0", "cpuset.cpus": cpu_list(
        cgroups.own_cpus(2))}
    assert (tmp_path / "cpu" / "kdtourney" / "cpu.shares").read_text() == \
        str(1024 * os.cpu_count())


def test_a_hybrid_host_freezes_and_kills_through_its_v2_tree(tmp_path):
    root = tree(tmp_path, {**V1_TREE, "unified/cgroup.controllers": "hugetlb\n",
                           "unified/kdtourney/cgroup.freeze": "0\n",
                           "unified/kdtourney/cgroup.kill": ""})
    machine = cgroups.probe(root)
    assert machine.source(FREEZE) == machine.source(KILL) == machine.hierarchies[0]
    assert machine.hierarchies[0].version == 2
    assert machine.source(MEMORY).version == machine.source(CPU).version == 1
    cgroup = cgroups.BotCgroup.make(200 << 20, 64, 1, machine)
    joined = sorted(Path(f).parent.parent.parent.name for f in cgroup.procs_files())
    assert joined == ["cpu", "cpuset", "memory", "pids", "unified"]  # not the v1 freezer


def test_without_cgroups_every_limit_is_missing(tmp_path):
    machine = cgroups.probe(str(tmp_path))  # a folder that is not a cgroup filesystem
    assert machine == Machine(())
    assert machine.missing == ["memory per process only", "no process bound", "no CPU quota",
                               "no CPUs of their own", "no freezing"]
    assert cgroups.BotCgroup.make(1 << 30, 64, 1, machine) is None


@pytest.mark.process
def test_the_workers_of_a_machine_keep_their_bots_to_cores_of_their_own():
    cpus_of = cgroups.cpus_of
    assert [cpus_of(t, [0, 1, 2, 3], 1) for t in range(6)] == [[0], [1], [2], [3], [0], [1]]
    assert [cpus_of(t, {3, 2, 1, 0}, 2) for t in range(3)] == [[0, 1], [2, 3], [0, 1]]
    assert cpus_of(1, [4, 6], 0.5) == [6]  # a fraction of a core is a quota on one
    assert cpus_of(5, [0, 1], 8) == [0, 1]  # more than the machine: all of it
    # a ticket is this process's as long as it lives: another process gets another one
    mine = cgroups.ticket()
    other = subprocess.run([sys.executable, "-c", "from kdtourney.external import cgroups; "
                            "print(cgroups.ticket())"], capture_output=True, text=True, check=True)
    assert int(other.stdout) != mine and cgroups.ticket() == mine


# --- the kernel's behaviour, on this machine's hierarchies --------------------------------------

def freezers() -> list:
    """The freezers this machine offers kdtourney (as root): the one it uses, and a v1 freezer
    hierarchy beside a v2 one (a hybrid host has both)."""
    machine = cgroups.machine()
    found = [h for h in machine.hierarchies if FREEZE in h.features]
    v1 = os.path.join(cgroups.CGROUP_ROOT, "freezer", cgroups.PARENT)
    if not any(h.version == 1 for h in found) and cgroups.can_make(v1) \
            and os.path.exists(os.path.join(v1, "freezer.state")):
        found.append(Hierarchy(1, v1, frozenset({FREEZE})))
    return found


FREEZERS = freezers() if sys.platform.startswith("linux") else []


def real(hierarchies):
    return pytest.mark.parametrize("hierarchy", hierarchies, ids=lambda h: f"v{h.version}") \
        if hierarchies else pytest.mark.skip(reason="no cgroup freezer kdtourney may use here "
                                                    "(as root, cgroup v1 or v2)")


def start_in(cgroup, code: str) -> subprocess.Popen:
    """A Python process running `code`, started inside `cgroup`."""
    files = cgroup.procs_files()
    join = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(files)))
    return subprocess.Popen(["/bin/sh", "-c", f'{join} && shift {len(files)} && exec "$@"', "sh",
                             *files, sys.executable, "-c", code])


SPINNER = """
import os, threading
def spin():
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
if os.fork() == 0:
    os.setsid()
spin()
"""

HOPPER = """
import os, time
if os.fork() == 0:
    os.setsid()
    while True:
        if os.fork() != 0:
            os._exit(0)
while True:
    time.sleep(1)
"""


def members_after(cgroup, wanted, wait=5.0):
    """The cgroup's members once they are `wanted` (killed processes take a moment to go), or
    after `wait` seconds."""
    deadline = time.monotonic() + wait
    while sorted(cgroup.members()) != sorted(wanted) and time.monotonic() < deadline:
        time.sleep(0.01)
    return sorted(cgroup.members())


@pytest.mark.process
@real(FREEZERS)
def test_a_frozen_cgroup_gets_no_cpu_until_it_is_thawed(hierarchy):
    cgroup = cgroups.BotCgroup.make(1 << 30, 64, 1, Machine((hierarchy,)))
    process = start_in(cgroup, SPINNER)
    try:
        while len(cgroup.members()) < 2:  # the spinner and its child in a session of its own
            time.sleep(0.01)
        assert cgroup.freeze()
        members = cgroup.members()
        before = cpu_ns(members)
        time.sleep(0.2)
        assert cpu_ns(members) == before
        cgroup.thaw()
        time.sleep(0.2)
        assert cpu_ns(members) > before
    finally:
        cgroup.remove()
        process.wait(5)
    assert not any(os.path.exists(f) for f in cgroup.procs_files())


@pytest.mark.process
@real(FREEZERS)
def test_killing_all_but_the_bot_leaves_nothing_a_fork_could_save(hierarchy):
    cgroup = cgroups.BotCgroup.make(1 << 30, 64, 1, Machine((hierarchy,)))
    bot = start_in(cgroup, HOPPER)  # its daemon forks without end, each time under a new pid
    try:
        while len(cgroup.members()) < 2:
            time.sleep(0.01)
        cgroup.freeze()
        cgroup.kill(spare=lambda members: {bot.pid})
        assert cgroup.frozen  # frozen afterwards as before
        cgroup.thaw()
        assert members_after(cgroup, [bot.pid]) == [bot.pid]
        cgroup.kill(spare=lambda members: {bot.pid})  # not frozen before: not after
        assert not cgroup.frozen and bot.poll() is None
        cgroup.kill()
        assert bot.wait(5) == -9
    finally:
        cgroup.remove()
        bot.wait(5)


def hierarchies_with(feature) -> list:
    """The hierarchy kdtourney would use here for `feature` (CPU, CPUSET), if there is one."""
    source = cgroups.machine().source(feature)
    return [source] if source is not None else []


@pytest.mark.process
@real(hierarchies_with(CPU))
def test_a_cpu_quota_throttles_a_bot_past_it(hierarchy):
    cgroup = cgroups.BotCgroup.make(1 << 30, 64, 0.1, Machine((hierarchy,)))
    process = start_in(cgroup, SPINNER)  # three spinning threads, for a tenth of a core
    try:
        folder = cgroup.folders[hierarchy]
        quota = "cpu.max" if hierarchy.version == 2 else "cpu.cfs_quota_us"
        assert Path(folder, quota).read_text().split()[0] == "1000"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            stat = dict(line.split() for line in Path(folder, "cpu.stat").read_text().splitlines())
            if int(stat["nr_throttled"]) > 0:
                break
            time.sleep(0.05)
        assert int(stat["nr_throttled"]) > 0
    finally:
        cgroup.remove()
        process.wait(5)


WIDEN = """
import os
try:
    os.sched_setaffinity(0, range(os.cpu_count()))
except OSError:
    pass
print(sorted(os.sched_getaffinity(0)), flush=True)
"""


@pytest.mark.process
@real(hierarchies_with(CPUSET))
def test_a_bot_keeps_to_its_cores_even_when_it_asks_for_all(hierarchy):
    cgroup = cgroups.BotCgroup.make(1 << 30, 64, 1, Machine((hierarchy,)))
    files = cgroup.procs_files()
    try:
        run = subprocess.run(["/bin/sh", "-c", 'echo $$ > "$1" && shift && exec "$@"', "sh",
                              *files, sys.executable, "-c", WIDEN], capture_output=True,
                             text=True, timeout=60)
        assert run.stdout.strip() == str(cgroups.own_cpus(1)), run.stderr
    finally:
        cgroup.remove()
