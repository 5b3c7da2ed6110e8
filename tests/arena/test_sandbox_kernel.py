"""--sandbox: what the kernel keeps per user or beside the namespaces is no channel between
sandboxes (a bot's two copies at one table, two submissions), and a bot makes no user namespace
of its own. The bot that tries is tests/data/kernel_bot.py."""

import errno
import json
import platform
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from kdtp_support import SANDBOX_ALLOW

from kdtourney.bots.external import (BotExited, BotProcess, ProcessSettings, Sandbox, cgroups,
                                     load_toml)
from kdtourney.bots.external.syscalls import REFUSED

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


def test_a_bot_is_refused_the_calls_no_bot_needs_and_a_user_namespace(tmp_path):
    [report] = reports([kernel_bot(tmp_path / "bot", "kernel", "t")], tmp_path)
    refused = report["refused"]
    assert refused.pop("unshare -U") != 0
    assert refused.pop("vsock") == "EAFNOSUPPORT"
    assert refused == {call: errno.errorcode[REFUSED[call]] for call in refused}


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
