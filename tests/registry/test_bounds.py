"""What a submission holds costs at most one broken entry: walking, parsing and hashing it are
bounded (docs/sandbox.md, "What a submission can cost"), never recursion it can drive."""

import pytest
from hostile_support import remove_deep, write_hostile_submissions
from registry_support import local, write_bot

from kdtourney.external.files import TooMany, tree, walk


def test_each_hostile_submission_is_one_broken_line_and_the_others_play(tmp_path, request):
    bots = tmp_path / "bots"
    write_bot(bots, "honest.py", "honest", cls="Honest")
    hostile = write_hostile_submissions(bots)
    request.addfinalizer(lambda: remove_deep(bots))
    registry = local([bots])
    assert registry.resolve("honest").name == "honest" and "random" in registry.bots
    broken = {b.origin: b.error for b in registry.broken}
    assert set(broken) == {str(p) for p in hostile.values()}
    assert "nested more than 32 deep" in broken[str(hostile["toml"])]
    assert "nested more than 32 deep" in broken[str(hostile["folder"])]
    assert "nests deeper than kdtourney parses" in broken[str(hostile["module"])]
    assert all("\n" not in error and len(error) < 300 for error in broken.values())


def test_a_walk_is_bounded_in_depth_and_entries(tmp_path):
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    for i in range(5):
        (root / "a" / f"f{i}").write_text("x")
    assert sorted(walk(root)) == ["a", "a/b", *[f"a/f{i}" for i in range(5)]]
    assert len(tree(root)) == 5
    with pytest.raises(TooMany, match="nested more than 1 deep"):
        walk(root, depth=1)
    with pytest.raises(TooMany, match="more than 4 files and folders"):
        walk(root, files=4)
