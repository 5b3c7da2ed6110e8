"""--sandbox: what the kernel keeps per user or beside the namespaces is no channel between
sandboxes (a bot's two copies at one table, two submissions), and a bot makes no user namespace
of its own, nor fills its /tmp past its memory. The bot that tries the kernel is
tests/data/kernel_bot.py."""

import errno
import json
import platform
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from kdtp_support import SANDBOX_ALLOW

from kdtourney.external import (
    BotExited,
    BotProcess,
    Limits,
    ProcessSettings,
    Sandbox,
    cgroups,
    load_toml,
)
from kdtourney.external.syscalls import REFUSED

KERNEL_BOT = Path(__file__).resolve().parents[1] / "data" / "kernel_bot.py"
pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap"),
    pytest.mark.skipif(platform.machine() != "x86_64",
                       reason="the probing bot calls the kernel by x86_64 system call numbers")]


def kernel_bot(folder: Path, name: str, token: str):
    folder.mkdir(parents=True)
    shutil.copy(KERNEL_BOT, folder / "kernel_bot.py")
    (folder / "bot.toml").write_text(f"name = {json.dumps(name)}\ncommand = "
                                     f"{json.dumps([sys.executable, 'kernel_bot.py', token])}\n")
    return load_toml(folder / "bot.toml").program


def reports(programs, logs: Path) -> list[dict]:
    """Start each program in a sandbox in turn, each holding what it took while the next one
    looks; their KERNEL-REPORTs."""
    processes = []
    try:
        for n, program in enumerate(programs):
            process = BotProcess(program, ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW)),
                                 str(logs / f"{n}.log"))
            processes.append(process)
            assert process.start()["name"] == "kernel"
    finally:
        for process in processes:
            process.stop()
    found = []
    for n in range(len(programs)):
        [line] = [line for line in (logs / f"{n}.log").read_text().splitlines()
                  if "KERNEL-REPORT " in line]
        found.append(json.loads(line.split("KERNEL-REPORT ", 1)[1]))
    return found


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroups", "no-cgroups"])
@pytest.mark.parametrize("who", ["copies", "submissions"])
def test_sandboxes_pass_nothing_through_the_kernel(tmp_path, monkeypatch, cgroup, who):
    """Two copies of one bot (as at one table: both alive, the first holding what it took), or
    two submissions: the second finds nothing the first left, and gets as many inotify instances
    and processes as the first did."""
    if not cgroup:
        monkeypatch.setenv(cgroups.ROOT_VARIABLE, str(tmp_path / "no-cgroups"))
    token = uuid.uuid4().hex[:12]
    first = kernel_bot(tmp_path / "first", "kernel", token)
    second = first if who == "copies" else kernel_bot(tmp_path / "second", "other", token)
    logs = tmp_path / "logs"
    logs.mkdir()
    leaver, looker = reports([first, second], logs)
    keys = {"user_keyring": "EPERM", "session_keyring": "EPERM"}  # no key, anywhere
    assert {k: leaver["left"][k] for k in keys} == keys
    assert looker["found"] == dict(keys, sysv="ENOENT", mqueue="ENOENT", socket="ECONNREFUSED",
                                   shm="absent", inotify=leaver["found"]["inotify"],
                                   processes=leaver["found"]["processes"])
    assert leaver["left"]["inotify"] > 0  # it held them all while the other counted its own
    # a bound on processes with a cgroup or without (RLIMIT_NPROC of its own user)
    assert looker["found"]["processes"] == leaver["left"]["processes"] < 64


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
def test_a_bot_is_refused_the_calls_no_bot_needs_and_a_user_namespace(tmp_path):
    [report] = reports([kernel_bot(tmp_path / "bot", "kernel", "t")], tmp_path)
    refused = report["refused"]
    assert refused.pop("unshare -U") != 0
    assert refused.pop("vsock") == "EAFNOSUPPORT"
    assert refused == {call: errno.errorcode[REFUSED[call]] for call in refused}


@pytest.mark.process
@pytest.mark.sandbox
def test_a_bot_that_cannot_be_frozen_is_ended_with_a_fault(tmp_path, monkeypatch):
    """A freeze that does not stop all the bot's processes in time (one in uninterruptible
    sleep) is a failure of the bot, never ignored (it would think on others' time)."""
    if not cgroups.machine().source(cgroups.FREEZE):
        pytest.skip("no cgroup freezer here")
    monkeypatch.setattr(cgroups.BotCgroup, "freeze", lambda self: False)
    process = BotProcess(kernel_bot(tmp_path / "bot", "kernel", "t"),
                         ProcessSettings(sandbox=Sandbox(allowed=SANDBOX_ALLOW)))
    try:
        with pytest.raises(BotExited, match="could not be frozen between its decisions"):
            process.start()
        assert process.exit_code() is not None
    finally:
        process.stop()


FILLER = '''
import errno, json, sys

def fill(path, most):
    """MiB written to `path` before the tmpfs was full (at most `most`)."""
    written = 0
    with open(path, "wb") as f:
        while written < most:
            try:
                f.write(b"x" * (1 << 20))
                f.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
            written += 1
    return written

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        most = int(sys.argv[1])
        report = {"tmp": fill("/tmp/fill", most), "shm": fill("/dev/shm/fill", most)}
        print("FILL-REPORT " + json.dumps(report), file=sys.stderr, flush=True)
        print(json.dumps({"type": "hello", "name": "filler"}), flush=True)
    elif message["type"] == "quit":
        break
'''


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
def test_without_cgroups_a_bot_s_tmp_holds_at_most_its_memory_limit(tmp_path, monkeypatch):
    """Without a memory cgroup what /tmp and /dev/shm hold counts in no limit: each is a tmpfs of
    at most the bot's memory (a tmpfs's default is half the machine's memory)."""
    monkeypatch.setenv(cgroups.ROOT_VARIABLE, str(tmp_path / "no-cgroups"))
    limit = 48
    folder = tmp_path / "filler"
    folder.mkdir()
    (folder / "filler.py").write_text(FILLER)
    command = [sys.executable, "filler.py", str(limit + 16)]  # it tries past the limit
    (folder / "bot.toml").write_text(f'name = "filler"\ncommand = {json.dumps(command)}\n')
    sandbox = Sandbox(limits=Limits(memory_mib=limit), allowed=SANDBOX_ALLOW)
    process = BotProcess(load_toml(folder / "bot.toml").program, ProcessSettings(sandbox=sandbox),
                         str(tmp_path / "filler.log"))
    try:
        assert process.start()["name"] == "filler"
    finally:
        process.stop()
    [line] = [line for line in (tmp_path / "filler.log").read_text().splitlines()
              if "FILL-REPORT " in line]
    filled = json.loads(line.split("FILL-REPORT ", 1)[1])
    assert 0 < filled["tmp"] <= limit and 0 < filled["shm"] <= limit, filled

