"""What code plays for an entrant: the identity of folder bots, built-ins and entry points, over
their own code only."""

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from registry_support import (
    forget,
    forget_wlib,
    local,
    write_bot,
    write_bundled_bot,
    write_submissions,
)

import kdtourney
from kdtourney.external import program_identity
from kdtourney.registry import BotRegistry, EntrantError, discovery


def test_identity_is_the_code_not_the_place(tmp_path):
    write_bot(tmp_path / "a", "mybot.py", "id-bot")
    write_bot(tmp_path / "a", "other.py", "id-other", cls="Other")
    shutil.copytree(tmp_path / "a", tmp_path / "clone")
    one, two = local([tmp_path / "a"]), local([tmp_path / "clone"])
    first = one.identity("id-bot")
    assert first == one.identity("id-bot:depth=5")  # parameters are the entrant's label, not code
    assert first["kind"] == "python"
    assert first["origin"] == str((tmp_path / "a" / "mybot.py").resolve())
    assert len(first["digest"]) == 12 and len(first["source_sha256"]) == 64
    clone = two.identity("id-bot")
    assert clone["digest"] == first["digest"] and clone["origin"] != first["origin"]
    # the module, and a helper it may import, are its code; another bot module is not
    (tmp_path / "clone" / "other.py").write_text((tmp_path / "clone" / "other.py").read_text()
                                                 + "\n# changed\n")
    assert local([tmp_path / "clone"]).identity("id-bot")["digest"] == first["digest"]
    (tmp_path / "clone" / "_helper.py").write_text("X = 1\n")
    assert local([tmp_path / "clone"]).identity("id-bot")["digest"] != first["digest"]
    (tmp_path / "a" / "mybot.py").write_text((tmp_path / "a" / "mybot.py").read_text() + "\n# v2\n")
    assert one.identity("id-bot") == first  # a registry keeps the code it read
    assert local([tmp_path / "a"]).identity("id-bot")["digest"] != first["digest"]
    # a registry rebuilt from shipped sources (a worker) knows the same code
    assert BotRegistry.from_sources(one.source_files(), entry_points=False).identity(
        "id-bot")["digest"] == first["digest"]
    builtin = one.identity("random")
    assert builtin["origin"] == "built-in" and builtin["digest"] != first["digest"]
    with pytest.raises(EntrantError, match="unknown bot"):
        one.identity("nobot")


# run on a copy of the package (argv[1]): every built-in bot's digest, then again after each edit
# (argv[2]: [file under the package, old text, new text], in order)
_DIGESTS_AFTER_EDITS = """
import json
import sys
from pathlib import Path

from kdtourney.registry import BotRegistry, identity

package = Path(identity.__file__).parent.parent
assert package == Path(sys.argv[1]), package  # the copy, not the installed package


def digests():
    identity.builtin_sha256.cache_clear()
    reg = BotRegistry(env=False, cwd=False, entry_points=False)
    return {name: reg.identity(name)["digest"] for name in reg.bots}


seen = [digests()]
for name, old, new in json.loads(sys.argv[2]):
    text = (package / name).read_text()
    assert old in text, (name, old)
    (package / name).write_text(text.replace(old, new, 1))
    seen.append(digests())
print(json.dumps(seen))
"""


@pytest.mark.slow
@pytest.mark.process
def test_a_builtin_bots_identity_leaves_out_benchmarks_training_and_compiling(tmp_path):
    """Editing a kernel that only the benchmarks or the training of a network run, or how kernels
    are compiled, changes no built-in bot's identity (a ladder would otherwise see a new mcts);
    editing one mcts searches with changes mcts's, and not greedy's."""
    package = Path(kdtourney.__file__).parent
    copy = tmp_path / "src" / "kdtourney"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edits = [("engine/bench_kernels.py", "res += one", "res -= one"),
             ("bots/bench_kernels.py", "total = 0\n", "total = 1\n"),
             ("bots/train_kernels.py", "out[i, 0] = margin / n", "out[i, 0] = margin / n / 2"),
             ("engine/jit.py", "BIG_FUNCTION = 1000", "BIG_FUNCTION = 2000"),
             ("engine/numba_version.py", "TESTED = ((0, 68), (0, 68))",
              "TESTED = ((0, 68), (0, 69))"),
             ("bots/search_kernels.py", "    useed = np.uint64(seed)\n",
              "    useed = np.uint64(seed + 1)\n")]
    env = dict(os.environ, PYTHONPATH=str(copy.parent))
    done = subprocess.run([sys.executable, "-c", _DIGESTS_AFTER_EDITS, str(copy),
                           json.dumps(edits)], env=env, cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    before, *helpers, searched = json.loads(done.stdout)
    assert {"mcts", "greedy", "mce", "expectimax", "value-greedy", "random"} <= set(before)
    assert helpers == [before] * 5
    assert searched["mcts"] != before["mcts"] and searched["greedy"] == before["greedy"]


def test_identity_of_an_entry_point_is_its_package(tmp_path, monkeypatch):
    package = tmp_path / "pkgs" / "kdt_id_pkg"
    write_bot(package, "bots.py", "pkg-bot")
    (package / "__init__.py").write_text("")
    (package / "weights.txt").write_text("1 2 3\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    points = [metadata.EntryPoint("pkg", "kdt_id_pkg.bots", "kdtourney.bots")]
    monkeypatch.setattr(discovery, "installed_entry_points", lambda: points)
    before = BotRegistry(env=False, cwd=False).identity("pkg-bot")
    assert before["origin"] == "entry point pkg"
    (package / "weights.txt").write_text("1 2 4\n")  # data of the package plays too
    assert BotRegistry(env=False, cwd=False).identity("pkg-bot")["digest"] != before["digest"]


@pytest.mark.parametrize("change", ["weights.json", "wlib/net.py", "wlib/extra.py"])
def test_a_bots_data_and_subpackage_are_its_identity(tmp_path, change):
    folder = tmp_path / "bundled"
    write_bundled_bot(folder)
    forget_wlib()
    before = local([folder]).identity("w-bot")["digest"]
    forget_wlib()
    (folder / "notes.txt").write_text("not listed: not the bot's")
    assert local([folder]).identity("w-bot")["digest"] == before
    forget_wlib()
    path = folder / change
    path.write_text('{"w": 4}' if change.endswith(".json") else
                    (path.read_text() if path.exists() else "") + "\n# changed\n")
    assert local([folder]).identity("w-bot")["digest"] != before
    forget_wlib()


def kdtp_files(registry, name):
    """The files part of a TOML bot's identity, without starting it."""
    return program_identity(registry.bots[name].program, None)["files_sha256"]


def test_a_bots_identity_is_its_own_files_whatever_its_neighbours_do(tmp_path):
    bots = write_submissions(tmp_path / "bots")

    def digests():
        forget("alib")
        reg = local([bots])
        return {"alice": reg.identity("alice")["digest"], "bob": kdtp_files(reg, "bob"),
                "flat": reg.identity("flat")["digest"]}

    before = digests()
    for change, which in [
            (lambda: (bots / "ladder.txt").write_text("random\ngreedy\n"), set()),
            (lambda: write_bot(bots / "carol", "carol.py", "carol"), set()),  # a bot added
            (lambda: (bots / "alice" / "play.log").write_text("more\n"), set()),  # its log
            (lambda: (bots / "alice" / "__pycache__").mkdir(), set()),
            (lambda: (bots / "bob" / "book.bin").write_bytes(b"\x02"), {"bob"}),
            (lambda: (bots / "alice" / "alib" / "deep" / "pick.py").write_text("PICK = -1\n"),
             {"alice"}),
            (lambda: (bots / "alice" / "data" / "new.json").write_text("{}"), {"alice"}),
            (lambda: (bots / "flat.py").write_text((bots / "flat.py").read_text() + "# v2\n"),
             {"flat"}),
            (lambda: shutil.rmtree(bots / "carol"), set())]:  # a bot removed
        change()
        now = digests()
        assert {name for name in now if now[name] != before[name]} == which
        before = now
    forget("alib")
