"""Numba caches kdtourney's kernels in the user's cache folder, never inside the installed package:
pip does not know such files, and left behind by an uninstall they hide a later editable install."""

import os
from pathlib import Path

import numba
import pytest
from numba.core import caching

import kdtourney
from kdtourney import _jit_cache
from kdtourney.bots import _kernels as BK
from kdtourney.bots import _search_kernels as SK
from kdtourney.engine import _kernels as K
from kdtourney.engine import warm_up


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_the_kernels_are_cached_outside_the_package():
    warm_up()
    package = os.path.dirname(os.path.abspath(kdtourney.__file__)) + os.sep
    for kernel in (K.init_game, K.apply_action, BK.playout):
        folder = os.path.abspath(kernel._cache.cache_path)
        assert not folder.startswith(package), folder
    names = os.listdir(K.init_game._cache.cache_path)
    assert any(n.startswith("_kernels.init_game-") and n.endswith(".nbi") for n in names), names


def test_every_kernel_source_is_in_the_cache_stamp():
    """Numba checks a cached kernel against its own file only; kdtourney's stamp also covers every
    file compiled into kernels, so editing (or upgrading) the engine recompiles the search kernels
    built on it instead of loading them with the old engine inside."""
    package = Path(kdtourney.__file__).parent
    expected = {package / name for name in ("engine/_base.py", "engine/_kernels.py", "engine/_word64.py",
                                            "engine/_rows.py", "engine/tiles.py", "engine/tiles.csv",
                                            "bots/_kernels.py", "bots/_search_kernels.py",
                                            "bots/kdtp.py", "env/_kernels.py")}
    assert expected <= set(_jit_cache.KERNEL_SOURCES)
    stamp = SK.mcts_run._cache._impl.locator.get_source_stamp()
    assert stamp[1] == _jit_cache.sources_digest(_jit_cache.KERNEL_SOURCES)


def test_the_stamp_changes_when_any_kernel_source_changes(tmp_path):
    files = []
    for name in ("_kernels.py", "_search_kernels.py", "tiles.csv"):
        files.append(tmp_path / name)
        files[-1].write_text(f"# {name}\n")
    before = _jit_cache.sources_digest(files)
    files[0].write_text("# _kernels.py, edited\n")
    assert _jit_cache.sources_digest(files) != before


def test_a_numba_cache_dir_gets_the_same_stamps(monkeypatch, tmp_path):
    """With NUMBA_CACHE_DIR set (by a user, or by the sandbox for its bots, which get a copy of
    the cache there) kdtourney's kernels are found with the same stamps as in the user-wide folder,
    so a copied cache is used and not compiled afresh."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    first = next(loc for cls in caching.CacheImpl._locator_classes
                 if (loc := cls.from_function(SK.mcts_run.py_func, SK.__file__)) is not None)
    assert isinstance(first, _jit_cache.PackageCacheDirLocator)
    assert first.get_cache_path().startswith(str(tmp_path))
    assert first.get_source_stamp() == SK.mcts_run._cache._impl.locator.get_source_stamp()
