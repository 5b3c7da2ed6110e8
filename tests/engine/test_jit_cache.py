"""How kdtourney's kernels are cached (kdtourney.engine.jit_cache) and compiled
(kdtourney.engine.jit): in the user's cache folder, never inside the installed package (pip does not
know such files, and left behind by an uninstall they hide a later editable install); never loaded
with a stale kernel inside; compiled once between processes and once per argument type."""

import ast
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core import caching

import kdtourney
from kdtourney.bots import kernels as BK
from kdtourney.bots import search_kernels as SK
from kdtourney.engine import jit, jit_cache, warm_up
from kdtourney.engine import kernels as K


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_the_kernels_are_cached_outside_the_package():
    warm_up()
    package = os.path.dirname(os.path.abspath(kdtourney.__file__)) + os.sep
    for kernel in (K.init_game, K.apply_action, BK.playout):
        folder = os.path.abspath(kernel._cache.cache_path)
        assert not folder.startswith(package), folder
    names = os.listdir(K.init_game._cache.cache_path)
    assert any(n.startswith("kernels.init_game-") and n.endswith(".nbi") for n in names), names


def test_a_kernel_stamp_covers_the_sources_compiled_into_it():
    """Numba checks a cached kernel against its own file only; kdtourney's stamp also covers the
    files compiled into it (the kernels it calls, the tile table), so editing (or upgrading) the
    engine recompiles the search kernels built on it instead of loading them with the old engine
    inside; the engine's own kernels do not depend on the bots' files."""
    package = Path(kdtourney.__file__).parent
    engine = {package / name for name in ("engine/jit.py", "engine/jit_cache.py",
                                          "engine/kernel_base.py", "engine/kernels.py",
                                          "engine/kingdom_kernels.py", "engine/word64.py",
                                          "engine/rows.py", "engine/tiles.py", "engine/tiles.csv",
                                          "engine/numba_version.py")}
    search = engine | {package / "bots/kernels.py", package / "bots/search_kernels.py",
                       package / "bots/evaluation.py",
                       # mcts's leaves may be valued by the network
                       package / "bots/net_kernels.py",
                       package / "bots/heuristic_kernels.py"}  # and its playouts by the heuristic
    assert set(jit_cache.compiled_sources(K.__file__)) == engine
    assert set(jit_cache.compiled_sources(SK.__file__)) == search
    stamp = SK.mcts_run._cache._impl.locator.get_source_stamp()
    assert stamp[1] == jit_cache.sources_digest(sorted(search))


def _imported_by_ast(path: Path) -> set:
    """The reference for `jit_cache._imports`: every import statement of the parsed module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = jit_cache._package_of(path).split(".")
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if jit_cache._module_file(f"{base}.{a.name}") else base
                     for a in node.names]
        else:
            continue
        found |= {file for name in names if name.startswith("kdtourney")
                  and (file := jit_cache._module_file(name))}
    return found - {path}


def test_the_import_scan_finds_what_parsing_finds_in_every_module():
    """The stamps' import scan (a regular expression, for speed) against Python's parser, on
    every kdtourney module: a missed import would let a kernel load with a stale callee. The scan
    may find more (an import in a docstring's example, as env/policy.py has), which at worst
    recompiles a kernel for nothing."""
    modules = sorted(Path(kdtourney.__file__).parent.rglob("*.py"))
    assert len(modules) > 50
    for path in modules:
        assert jit_cache._imports(path) >= _imported_by_ast(path), path


_CALLEE = """from {pkg} import jit_cache  # noqa: F401
from numba import njit


@njit(cache=True)
def value():
    return {value}
"""
_CALLER = """from {pkg} import jit_cache  # noqa: F401
from numba import njit

from {pkg}.callee import value


@njit(cache=True)
def twice():
    return 2 * value()
"""
_OTHER = """from {pkg} import jit_cache  # noqa: F401
from numba import njit


@njit(cache=True)
def three():
    return 3
"""
_RUN = """from {pkg} import caller, other
print(caller.twice(), other.three(), sum(caller.twice.stats.cache_hits.values()),
      sum(other.three.stats.cache_hits.values()))
"""


@pytest.mark.slow
@pytest.mark.process
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
    (folder / "jit_cache.py").write_bytes(Path(jit_cache.__file__).read_bytes())
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
    assert isinstance(first, jit_cache.PackageCacheDirLocator)
    assert first.get_cache_path().startswith(str(tmp_path))
    assert first.get_source_stamp() == SK.mcts_run._cache._impl.locator.get_source_stamp()


_SLOW = """import os
import time

from numba import types
from numba.extending import intrinsic

from {pkg}.jit import cached_jit


@intrinsic
def _slow_to_compile(typingctx):
    def codegen(context, builder, signature, args):
        # compiling: say so, then wait for the test to say go on
        open(os.environ["PROBE_STARTED"], "w").close()
        deadline = time.monotonic() + 20
        while not os.path.exists(os.environ["PROBE_GO_ON"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        return context.get_constant(types.int64, 7)
    return types.int64(), codegen


@cached_jit
def seven():
    return _slow_to_compile()
"""
_FIRST = """from {pkg} import slow
print(slow.seven(), sum(slow.seven.stats.cache_misses.values()))
"""
_SECOND = """import os

from {pkg} import jit, slow

try:
    with jit.busy_raises():
        slow.seven()
except jit.KernelBusy as busy:
    print("busy")
    open(os.environ["PROBE_GO_ON"], "w").close()
    busy.wait()
print(slow.seven(), sum(slow.seven.stats.cache_misses.values()),
      sum(slow.seven.stats.cache_hits.values()))
"""


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_kernel_compiles_in_one_process_while_the_others_wait_for_it(tmp_path):
    """Two processes on one cache need a kernel: while the first compiles it, the second, told not
    to wait (as a warm-up is, to compile something else meanwhile), is told it is busy; waiting for
    it then, it loads the kernel from the cache instead of compiling it again. Once it is cached,
    a process loads it without waiting for the lock."""
    pkg = "kdt_lock_probe"
    folder = tmp_path / pkg
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "jit_cache.py").write_bytes(Path(jit_cache.__file__).read_bytes())
    source = Path(jit.__file__).read_text().replace("from kdtourney.engine import",
                                                     f"from {pkg} import")
    (folder / "jit.py").write_text(source)
    (folder / "slow.py").write_text(_SLOW.format(pkg=pkg))
    started, go_on = tmp_path / "started", tmp_path / "go_on"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PROBE_STARTED=str(started), PROBE_GO_ON=str(go_on))
    first = subprocess.Popen([sys.executable, "-c", _FIRST.format(pkg=pkg)], env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert first.poll() is None and time.monotonic() < deadline, "the kernel never compiled"
            time.sleep(0.02)
        second = subprocess.run([sys.executable, "-c", _SECOND.format(pkg=pkg)], env=env,
                                capture_output=True, text=True, timeout=120)
        assert second.stdout.split() == ["busy", "7", "0", "1"], second.stderr[-2000:]
        assert first.communicate(timeout=120)[0].split() == ["7", "1"]
        # in the cache, it loads while another process holds its lock (workers warming up at
        # once load a warm cache side by side)
        [lock] = (tmp_path / "cache").rglob("*.lock")
        with open(lock, "ab") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            third = subprocess.run([sys.executable, "-c", _SECOND.format(pkg=pkg)], env=env,
                                   capture_output=True, text=True, timeout=120)
        assert third.stdout.split() == ["7", "0", "1"], third.stderr[-2000:]
    finally:
        first.kill()


def _uncached_kernel(function, **options):
    return jit.KernelDispatcher(py_func=function, locals={},
                                 targetoptions={"nopython": True, "boundscheck": None, **options})


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_kernel_called_with_a_constant_compiles_once():
    """Numba would compile `add` twice here: for the literal 0, and for an int64."""
    add = _uncached_kernel(lambda x, k: x + k)
    both = numba.njit(lambda x: add(x, 0) + add(x, x))
    assert both(3) == 9
    assert len(add.overloads) == 1


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_big_linked_kernel_is_compiled_to_machine_code_at_full_speed(monkeypatch):
    """A big function linked in from a kernel it calls sits out the caller's second O3 pass
    (optnone), but not the making of machine code: no optnone is left in the caller's module."""
    monkeypatch.setattr(jit, "BIG_FUNCTION", 1)

    def total_of(a):
        return a.sum()

    total = _uncached_kernel(total_of)
    caller = _uncached_kernel(lambda a: total(a) + 1)
    assert caller(np.arange(5)) == 11
    module = next(iter(caller.overloads.values())).library._final_module
    linked = [f for f in module.functions if not f.is_declaration and "total_of" in f.name]
    assert linked and all(any("noinline" in str(a) for a in f.attributes) for f in linked)
    assert "optnone" not in str(module)
