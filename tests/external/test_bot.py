"""Bots in their own process, the harness side: TOML declarations in bot folders, the start-up
check, and one bot process answering against the clock."""

import json
import re
import sys
import time
from pathlib import Path

import pytest
from kdtp_support import left_behind, new_marker, processes_with, write_fake_bots

from kdtourney.bots.clock import TimeControl
from kdtourney.engine import Game, Rules
from kdtourney.external import (
    BotExited,
    BotProcess,
    BotProtocolError,
    BotTimeout,
    ExternalBot,
    IllegalAnswer,
    ProcessPool,
    ProcessSettings,
    StartupError,
    program_identity,
)
from kdtourney.external.declaration import Program
from kdtourney.external.identity import run_paths
from kdtourney.registry import BotRegistry, EntrantError, code_digest, listing


def registry_of(folder):
    return BotRegistry([folder], env=False, cwd=False, entry_points=False)


@pytest.mark.parametrize("text, error", [
    ('name = "x"\ncommand = [', "not a readable TOML file"),
    ('name = "x"\n', "no command"),
    ('name = "x"\ncommand = []\n', "no command"),
    ('command = ["./x"]\n', "no name"),
    ('name = "x"\ncommand = ["./x"]\nflavour = 1\n', "unknown key 'flavour'"),
    ('name = "x"\ncommand = ["./x"]\n[options]\ndepth = [1, 2]\n', "option depth"),
])
def test_a_bad_bot_file_is_reported_with_its_error(tmp_path, text, error):
    (tmp_path / "x.toml").write_text(text)
    registry = registry_of(tmp_path)
    assert "x" not in registry
    [broken] = registry.broken
    assert broken.origin.endswith("x.toml") and error in broken.error
    with pytest.raises(EntrantError, match=r"unknown bot 'x'.*x\.toml"):
        registry.resolve("x")


def test_a_bot_file_declares_a_bot_with_typed_options(tmp_path):
    (tmp_path / "deep.toml").write_text(
        'name = "deep"\ndescription = "Searches deep"\ncommand = ["./deep", "--fast"]\n'
        '[options]\ndepth = 2\nwidth = 0.5\nbook = "none"\nverbose = false\n')
    (tmp_path / "noded.toml").write_text('name = "noded"\ncommand = "node bot.js --quiet"\n')
    (tmp_path / "bot.js").write_text("")
    registry = registry_of(tmp_path)
    info = registry.bots["deep"]
    assert info.program.command == (str(tmp_path / "deep"), "--fast")
    assert info.program.cwd == str(tmp_path) and info.parameters["depth"] == 2
    assert registry.resolve("deep:depth=3:width=1").spec == "deep:depth=3:width=1.0"
    with pytest.raises(EntrantError, match="parameter depth expects an integer"):
        registry.resolve("deep:depth=deeper")
    with pytest.raises(EntrantError, match="deep has no parameter 'colour'"):
        registry.resolve("deep:colour=red")
    bot = registry.create("deep:depth=3")
    assert isinstance(bot, ExternalBot) and bot.options == {"depth": 3, "width": 0.5,
                                                             "book": "none", "verbose": False}
    bot.close()  # never started: nothing to stop
    assert registry.bots["noded"].program.command == ("node", "bot.js", "--quiet")
    assert run_paths(registry.bots["noded"].program) == [tmp_path / "bot.js"]
    text = listing(registry)
    assert "deep" in text and "command: ./deep --fast (NOT FOUND)" in text
    assert "parameters: depth=2 width=0.5 book=none verbose=false" in text


def test_toml_bots_travel_with_the_sources(tmp_path):
    (tmp_path / "deep.toml").write_text('name = "deep"\ncommand = ["./deep"]\n')
    registry = registry_of(tmp_path)
    remote = BotRegistry.from_sources(registry.source_files(), entry_points=False)
    assert remote.bots["deep"].program == registry.bots["deep"].program  # runs from its folder


@pytest.mark.process
def test_the_start_up_check_names_the_file_of_a_bot_that_does_not_start(tmp_path):
    marker = new_marker()
    folder = write_fake_bots(tmp_path, ["exit-at-start", "no-hello", "illegal"], marker=marker)
    (folder / "missing.toml").write_text('name = "missing"\ncommand = ["./not-built-yet"]\n')
    registry = registry_of(folder)
    settings = ProcessSettings(startup_timeout=1.0)
    hellos = registry.start_check(["illegal", "random", "greedy"], settings)
    assert hellos == {"illegal": {"name": "fake-illegal", "version": "0.1", "author": None}}
    with pytest.raises(StartupError, match=r"exit-at-start\.toml: the bot exited with status 3 "
                                           r"\(while asked for hello\) \(stderr: cannot start: no "
                                           r"configuration\)"):
        registry.start_check(["exit-at-start"], settings)
    with pytest.raises(StartupError, match=r"no-hello\.toml: the bot did not answer hello within "
                                           r"the start-up timeout of 1 s"):
        registry.start_check(["no-hello"], settings)
    with pytest.raises(StartupError, match=r"missing\.toml: the bot cannot start ./not-built-yet: "
                                           r"No such file or directory"):
        registry.start_check(["missing"], settings)
    assert left_behind(marker) == []


@pytest.mark.process
def test_identity_of_a_toml_bot(tmp_path):
    folder = write_fake_bots(tmp_path / "here", ["illegal"])
    identity = registry_of(folder).program_identity("illegal")
    assert identity["kind"] == "kdtp" and identity["command"][0] == sys.executable
    assert identity["bot_name"] == "fake-illegal" and identity["bot_version"] == "0.1"
    assert len(identity["files_sha256"]) == 64 and identity["files"] == 2  # script and TOML
    moved = write_fake_bots(tmp_path / "elsewhere", ["illegal"])
    assert registry_of(moved).program_identity("illegal")["files_sha256"] == \
        identity["files_sha256"]


def files_digest(folder, name, hello=None):
    """The files part of a TOML bot's identity, without starting it."""
    return program_identity(registry_of(folder).bots[name].program, hello)["files_sha256"]


def test_a_toml_bots_identity_covers_its_own_files_and_what_its_command_runs(tmp_path,
                                                                             monkeypatch):
    """In a bots folder shared with other bots, a TOML bot's files are its TOML file and what its
    command and `files` name: a file nobody names, another bot or ladder.txt are no bot's."""
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "weights.bin").write_bytes(b"\x01\x02")
    (bots / "py.toml").write_text('name = "py"\ncommand = ["python3", "-m", "kdt_mpkg", "x.cfg"]\n')
    (bots / "jv.toml").write_text('name = "jv"\ncommand = "java -cp ../build:lib/x.jar Main"\n')
    (bots / "ext.toml").write_text('name = "ext"\ncommand = ["python3", "run.py"]\n'
                                   'files = ["../common/table.bin"]\n')
    for path in ("lib/kdt_mpkg/__init__.py", "lib/kdt_mpkg/core.py", "build/Main.class",
                 "build/util/Helper.class", "common/table.bin", "bots/lib/x.jar"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(path)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))  # python -m finds the package installed
    before = {name: files_digest(bots, name) for name in ("py", "jv", "ext")}
    assert len(set(before.values())) == 3
    # the runtime is not the bot: a data file of the folder, the package, the class path are
    (bots / ".git").mkdir()
    (bots / ".git" / "HEAD").write_text("ref")
    assert {name: files_digest(bots, name) for name in before} == before
    for changed, which in (("bots/weights.bin", set()), ("bots/ladder.txt", set()),
                           ("bots/other.toml", set()), ("bots/jv.toml", {"jv"}),
                           ("lib/kdt_mpkg/core.py", {"py"}),
                           ("build/util/Helper.class", {"jv"}), ("bots/lib/x.jar", {"jv"}),
                           ("common/table.bin", {"ext"})):
        text = (tmp_path / changed).read_text() if changed.endswith(".toml") and \
            (tmp_path / changed).exists() else ""
        (tmp_path / changed).write_text(text + "# changed\n" if text else
                                        'name = "other"\ncommand = ["x"]\n'
                                        if changed.endswith(".toml") else "changed " + changed)
        now = {name: files_digest(bots, name) for name in before}
        assert {name for name in before if now[name] != before[name]} == which, changed
        before = now
    # the name and version it answers to hello are part of it; so is the command
    registry = registry_of(bots)
    program = registry.bots["ext"].program
    assert code_digest(program_identity(program, {"name": "e", "version": "1"})) != \
        code_digest(program_identity(program, {"name": "e", "version": "2"}))
    (bots / "bad.toml").write_text('name = "bad"\ncommand = ["x"]\nfiles = "table.bin"\n')
    with pytest.raises(EntrantError, match="files must be a list of paths"):
        registry_of(bots).resolve("bad")


@pytest.mark.process
def test_the_clock_cuts_at_the_limit_plus_the_margin(tmp_path):
    marker = new_marker()
    folder = write_fake_bots(tmp_path, ["late"], at=0, marker=marker, late=1.0)
    registry = registry_of(folder)
    rules = Rules(2)
    view = Game(rules, 1).view(Game(rules, 1).current_player)
    view.time_left = 0.5  # as the arena's clock says
    with ProcessPool(ProcessSettings(TimeControl(move_s=0.5), margin=2.0)) as pool:
        bot = registry.factory("late", pool)()
        bot.setup(view.player, rules, 1)
        assert bot.act(view) in view.legal_actions()  # late, but within the margin
        bot.close()
    view.time_left = 0.2
    with ProcessPool(ProcessSettings(TimeControl(move_s=0.2), margin=0.3)) as pool:
        bot = registry.factory("late", pool)()
        bot.setup(view.player, rules, 1)
        with pytest.raises(BotTimeout,
                           match=r"no answer to act within its 0.200 s \+ 0.3 s") as late:
            bot.act(view)
        assert late.value.stderr == "misbehaving: late"
        bot.close()
    assert left_behind(marker) == []


@pytest.mark.process
def test_an_answer_nobody_asked_for_is_a_protocol_fault(tmp_path):
    registry = registry_of(write_fake_bots(tmp_path, ["twice"], at=0))
    rules = Rules(2)
    game = Game(rules, 1)
    seat = game.current_player
    with ProcessPool(ProcessSettings()) as pool:
        bot = registry.factory("twice", pool)()
        bot.setup(seat, rules, 1)
        game.apply(bot.act(game.view(seat)))  # answered twice: the second answer waits
        while game.current_player != seat:
            game.apply(game.legal_actions()[0])
        with pytest.raises(BotProtocolError, match=r'wrote \{"type": "action", .* before it was '
                                                  r'asked for act'):
            bot.act(game.view(seat))
        bot.close()


@pytest.mark.process
def test_an_illegal_answer_is_refused_however_it_is_written(tmp_path):
    registry = registry_of(write_fake_bots(tmp_path, ["illegal", "illegal-compact"], at=0))
    rules = Rules(2)
    view = Game(rules, 1).view(Game(rules, 1).current_player)  # a claim: discarding is illegal
    with ProcessPool(ProcessSettings()) as pool:
        for name, answer in (("illegal", '{"claim":99}'), ("illegal-compact", '{"discard":true}')):
            bot = registry.factory(name, pool)()
            bot.setup(view.player, rules, 1)
            with pytest.raises(IllegalAnswer, match=f"answered {re.escape(answer)}, not one of "):
                bot.act(view)
            bot.close()


@pytest.mark.process
def test_an_isolated_folder_bot_plays_as_it_does_in_process():
    examples = Path(__file__).resolve().parents[2] / "examples" / "bots"
    registry = registry_of(examples)
    rules = Rules(3, harmony=True)
    with ProcessPool(ProcessSettings()) as pool:
        isolated = registry.factory("crown-grabber:prefer_high=false", pool, isolate=True)()
        local = registry.create("crown-grabber:prefer_high=false")
        game = Game(rules, 4)
        for bot in (isolated, local):
            bot.setup(1, rules, 9)
        while not game.is_over:
            if game.current_player == 1:
                view = game.view(1)
                action = local.act(view)
                assert isolated.act(view) == action
            else:
                action = game.legal_actions()[0]
            game.apply(action)
        isolated.close()


@pytest.mark.process
def test_a_pool_keeps_at_most_its_bound_of_idle_processes_evicting_the_least_recent(tmp_path):
    marker = new_marker()
    names = ["a", "b", "c", "d", "e"]  # bots that play normally
    registry = registry_of(write_fake_bots(tmp_path, names, marker=marker))
    rules = Rules(2)
    pids = {}

    def one_game(name):
        bot = registry.factory(name, pool)()
        bot.setup(0, rules, 1)
        pids[name] = bot.process.pid
        bot.close()

    with ProcessPool(ProcessSettings(idle_processes=2)) as pool:
        for name in names:
            one_game(name)
        assert pool.idle == 2
        assert sorted(processes_with(marker)) == sorted([pids["d"], pids["e"]])  # a, b, c: gone
        started = dict(pids)
        one_game("d")  # idle: reused
        assert pids["d"] == started["d"]
        one_game("a")  # evicted: started again, and e (now the least recent) goes
        assert pids["a"] != started["a"] and pool.idle == 2
        assert sorted(processes_with(marker)) == sorted([pids["d"], pids["a"]])
    assert left_behind(marker) == []


@pytest.mark.process
def test_a_bot_process_is_reaped_only_when_stopped_so_its_group_id_stays_its_own(tmp_path):
    registry = registry_of(write_fake_bots(tmp_path, ["exit-at-start"]))
    process = BotProcess(registry.bots["exit-at-start"].program, ProcessSettings())
    process.spawn()
    assert process.wait_exit(10) and process.exit_code() == 3
    assert not process.alive()
    zombie = Path(f"/proc/{process.pid}/stat")
    assert zombie.read_text().rsplit(")", 1)[1].split()[0] == "Z"  # not reaped: pid still taken
    process.stop()
    assert not zombie.exists()


def a_bot(folder: Path, name: str, code: str) -> Program:
    """The program of a one-line Python bot `code`, declared in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", code]
    (folder / f"{name}.toml").write_text(f'name = "{name}"\ncommand = {json.dumps(command)}\n')
    return registry_of(folder).bots[name].program


@pytest.mark.process
@pytest.mark.parametrize("order", ["exit, then hello", "hello, then exit"])
def test_a_bot_that_exits_at_start_fails_alike_whether_hello_was_written_first_or_not(tmp_path,
                                                                                      order):
    """A bot exiting before it reads: hello written into its input before it exits, or after
    (the write then meets a closed pipe), it is one failure, said the same way."""
    late = 0.0 if order == "exit, then hello" else 1.0
    program = a_bot(tmp_path, "quitter", "import sys, time; print('no configuration', "
                                         f"file=sys.stderr, flush=True); time.sleep({late}); "
                                         "sys.exit(3)")
    process = BotProcess(program, ProcessSettings())
    process.spawn()
    if late == 0.0:
        assert process.wait_exit(10)  # gone: writing hello meets EPIPE
    with pytest.raises(BotExited, match=r"^exited with status 3 \(while asked for hello\)$") as exc:
        process.handshake()
    assert exc.value.stderr == "no configuration"
    process.stop()


@pytest.mark.process
@pytest.mark.parametrize("order", ["exit, then game", "game, then exit"])
def test_a_bot_gone_after_hello_fails_at_its_next_decision_whenever_it_went(tmp_path, order):
    """A bot exiting after its hello: `game` written into its input before its exit, or after
    (meeting a closed pipe), it fails where an answer is read, at its next `act`."""
    late = 0.0 if order == "exit, then game" else 1.0
    program = a_bot(tmp_path, "one-hello", 'import json, time; input(); print(json.dumps('
                                           '{"type": "hello", "name": "x"}), flush=True); '
                                           f"time.sleep({late})")
    process = BotProcess(program, ProcessSettings())
    process.start()
    if late == 0.0:
        assert process.wait_exit(10)  # gone: writing `game` meets EPIPE
    deadline = time.monotonic() + 10
    with pytest.raises(BotExited, match=r"^exited with status 0 \(while asked for act\)$"):
        process.send(b'{"type":"game"}\n', deadline, "game")  # as ExternalBot.setup, then .act
        process.expect_silence("act")
        process.send(b'{"type":"act"}\n', deadline, "act")
        process.receive(deadline, "act")
    process.stop()


@pytest.mark.process
def test_a_bot_that_closes_its_input_and_lives_on_has_stopped_reading_it(tmp_path):
    program = a_bot(tmp_path, "deaf", "import os, sys, time; os.close(0); print('closed', "
                                      "file=sys.stderr, flush=True); time.sleep(60)")
    process = BotProcess(program, ProcessSettings())
    process.spawn()
    while process.stderr_tail() != "closed":
        time.sleep(0.01)
    with pytest.raises(BotExited, match=r"^stopped reading its input \(while sending hello\)$"):
        process.handshake()
    process.stop()
