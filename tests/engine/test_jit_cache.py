"""Numba caches kdtourney's kernels in the user's cache folder, never inside the installed package
(pip does not know such files, and left behind by an uninstall they hide a later editable
install), and never loads one with a stale kernel inside."""

import os
import subprocess
import sys
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


def test_a_kernel_stamp_covers_the_sources_compiled_into_it():
    """Numba checks a cached kernel against its own file only; kdtourney's stamp also covers the
    files compiled into it (the kernels it calls, the tile table), so editing (or upgrading) the
    engine recompiles the search kernels built on it instead of loading them with the old engine
    inside; the engine's own kernels do not depend on the bots' files."""
    package = Path(kdtourney.__file__).parent
    engine = {package / name for name in ("_jit_cache.py", "engine/_base.py", "engine/_kernels.py",
                                          "engine/_word64.py", "engine/_rows.py", "engine/tiles.py",
                                          "engine/tiles.csv")}
    search = engine | {package / "bots/_kernels.py", package / "bots/_search_kernels.py"}
    assert set(_jit_cache.compiled_sources(K.__file__)) == engine
    assert set(_jit_cache.compiled_sources(SK.__file__)) == search
    stamp = SK.mcts_run._cache._impl.locator.get_source_stamp()
    assert stamp[1] == _jit_cache.sources_digest(sorted(search))


_CALLEE = """from {pkg} import _jit_cache  # noqa: F401
from numba import njit


@njit(cache=True)
def value():
    return {value}
"""
_CALLER = """from {pkg} import _jit_cache  # noqa: F401
from numba import njit

from {pkg}.callee import value


@njit(cache=True)
def twice():
    return 2 * value()
"""
_OTHER = """from {pkg} import _jit_cache  # noqa: F401
from numba import njit


@njit(cache=True)
def three():
    return 3
"""
_RUN = """from {pkg} import caller, other
print(caller.twice(), other.three(), sum(caller.twice.stats.cache_hits.values()),
      sum(other.three.stats.cache_hits.values()))
"""


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_an_edited_callee_recompiles_its_callers_and_only_them(tmp_path):
    """The cache machinery copied into a package of three modules, each run in a fresh process on
    one cache folder: once the callee's file is edited (same size and modification time, as a
    checkout can leave it), its caller compiles afresh with the new callee inside, while a kernel
    of a module that does not import it still loads from the cache."""
    pkg = "kdt_cache_probe"
    folder = tmp_path / pkg
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "_jit_cache.py").write_bytes(Path(_jit_cache.__file__).read_bytes())
    (folder / "callee.py").write_text(_CALLEE.format(pkg=pkg, value=1))
    (folder / "caller.py").write_text(_CALLER.format(pkg=pkg))
    (folder / "other.py").write_text(_OTHER.format(pkg=pkg))
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run():
        return subprocess.run([sys.executable, "-c", _RUN.format(pkg=pkg)], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.split()

    assert run() == ["2", "3", "0", "0"]  # compiled
    assert run() == ["2", "3", "1", "1"]  # loaded
    callee = folder / "callee.py"
    before = callee.stat()
    callee.write_text(_CALLEE.format(pkg=pkg, value=5))
    os.utime(callee, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert callee.stat().st_size == before.st_size
    assert run() == ["10", "3", "0", "1"]  # the caller compiled afresh, the other loaded
    assert run() == ["10", "3", "1", "1"]


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

