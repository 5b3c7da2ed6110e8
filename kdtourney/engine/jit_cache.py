"""Where Numba caches kdtourney's compiled kernels: the user's cache folder, never the package.

Kernels cache under the user-wide Numba cache (`~/.cache/numba` or `$XDG_CACHE_HOME/numba`),
one subfolder per source folder; a user's `NUMBA_CACHE_DIR` still wins. A kernel's stamp holds a
digest of every source compiled into it (`compiled_sources`), so an edit to the engine
recompiles the kernels built on it. With KDTOURNEY_PLAIN_NJIT=1 (`PLAIN`: plain `numba.njit`,
docs/engine.md) kernels cache in a `plain` subfolder, apart from the patched ones. Why:
docs/internals.md.
"""

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

from numba.core import caching

from kdtourney.engine import numba_version

numba_version.check()  # before this module's and jit's patches of Numba

PLAIN_VARIABLE = "KDTOURNEY_PLAIN_NJIT"
# set (not 0): kernels compile by plain numba.njit, without engine/jit.py's patches
PLAIN = os.environ.get(PLAIN_VARIABLE, "") not in ("", "0")

_NAME = __name__.partition(".")[0]  # "kdtourney"
# the package's own folder (imported before any of its modules), wherever this module lies in it
_PACKAGE = os.path.dirname(os.path.abspath(sys.modules[_NAME].__file__ or "")) + os.sep


def _module_file(name: str) -> Path | None:
    """The source file of kdtourney's module `name` (dotted), None if there is none."""
    path = Path(_PACKAGE).parent.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> str:
    """The dotted name of the package holding the source file `path` (its own for __init__.py)."""
    return ".".join(path.relative_to(Path(_PACKAGE).parent).parts[:-1])


# an import statement at any indentation (inside functions too): `from` and its names (a
# parenthesised list may span lines), or `import` and its names; also matches such lines inside
# strings, which can only add files. Every process that imports a kernel scans its files: this
# takes a tenth of the time of parsing them (33 files: 0.013 s against 0.10 s with `ast`); tests
# check it against `ast` on every module.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)"
                     r"|import[ \t]+([^\n#;]*))", re.M)


def _names(text: str) -> list[str]:
    """`a as b, c` (or in parentheses, across lines, with comments) -> ['a', 'c']."""
    text = re.sub(r"#[^\n]*", "", text).strip().strip("()")
    return [part.split()[0] for part in text.split(",") if part.strip()]


@functools.cache
def _imports(path: Path) -> frozenset:
    """The kdtourney files that the module at `path` imports, anywhere in its code (so some it
    may not need): `from kdtourney.a import b` is a/b.py when b is a module, else a.py (or
    a/__init__.py); the package of a module imported by name is not counted, it defines nothing
    the module reads."""
    found = set()
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    for match in _IMPORT.finditer(text):
        module, imported, plain = match.groups()
        if plain is not None:
            names = _names(plain)
        else:
            base = module.lstrip(".")
            level = len(module) - len(base)
            if level:
                package = _package_of(path).split(".")
                base = ".".join(package[:len(package) - level + 1] + ([base] if base else []))
            names = []
            for name in _names(imported):
                sub = f"{base}.{name}"
                names.append(sub if _module_file(sub) is not None else base)
        for name in names:
            if name.partition(".")[0] == _NAME and (file := _module_file(name)) is not None:
                found.add(file)
    found.discard(path)
    return frozenset(found)


@functools.cache
def compiled_sources(py_file) -> tuple:
    """The files whose contents may be compiled into a kernel of the kdtourney module `py_file`:
    that file, the kdtourney files it imports, at any depth, and their data files (a module's data
    shares its name: `engine/tiles.csv` beside `engine/tiles.py`), sorted."""
    seen, todo = set(), [Path(os.path.abspath(py_file))]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(_imports(path))
    data = {p for path in seen for p in path.parent.glob(path.stem + ".*") if p.is_file()}
    return tuple(sorted(seen | data))


def sources_digest(paths) -> str:
    """One digest of the files' names and contents."""
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def _digest(py_file) -> str:
    return sources_digest(compiled_sources(py_file))


class _CompiledSourcesStamp:
    """For kdtourney's own functions only: the stamp also holds the digest of the sources compiled
    into the function (`compiled_sources` of its file)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return super().get_source_stamp(), _digest(os.path.abspath(self._py_file))

    def get_cache_path(self):
        path = super().get_cache_path()
        return os.path.join(path, "plain") if PLAIN else path


class PackageCacheLocator(_CompiledSourcesStamp, caching.UserWideCacheLocator):
    """Numba's user-wide cache locator, for the functions of kdtourney's own source files only."""


class PackageCacheDirLocator(_CompiledSourcesStamp, caching.UserProvidedCacheLocator):
    """Numba's locator of a NUMBA_CACHE_DIR (set by the user, or by the sandbox, which hands its
    bots a copy of the cache there), with the same stamps as PackageCacheLocator."""


_LOCATORS = caching.CacheImpl._locator_classes
if PackageCacheLocator not in _LOCATORS:
    # NUMBA_CACHE_DIR first, as Numba does; then the user-wide folder, before the one writing next
    # to the source
    _LOCATORS.insert(0, PackageCacheDirLocator)
    _LOCATORS.insert(2, PackageCacheLocator)


def cache_folders() -> list[str]:
    """The folders of this installation's cache of kdtourney's kernels that exist, one per
    package folder (the sandbox lends its bots a copy)."""
    found = []
    for sub in sorted(os.listdir(_PACKAGE)):
        source = os.path.join(_PACKAGE, sub, "kernels.py")
        if not os.path.isdir(os.path.dirname(source)):
            continue
        path = PackageCacheLocator(cache_folders, source).get_cache_path()
        if os.environ.get("NUMBA_CACHE_DIR"):  # the user's choice, which Numba takes first
            path = os.path.join(os.environ["NUMBA_CACHE_DIR"], os.path.basename(path))
        if os.path.isdir(path):
            found.append(path)
    return found


def lock_path(dispatcher) -> str | None:
    """The file of a kdtourney kernel's compile lock, beside its cache index (None for a function
    cached elsewhere)."""
    impl = getattr(dispatcher._cache, "_impl", None)
    if impl is None or not isinstance(impl.locator, _CompiledSourcesStamp):
        return None
    return os.path.join(impl.locator.get_cache_path(), impl.filename_base + ".lock")


def in_cache(dispatcher) -> bool:
    """Whether the cache holds compiled code of a kdtourney kernel (its index file, beside which
    `lock_path` lies): where it does not, the kernel's first call compiles it."""
    impl = getattr(getattr(dispatcher, "_cache", None), "_impl", None)  # None: not compiled
    if impl is None or not isinstance(impl.locator, _CompiledSourcesStamp):
        return False
    return os.path.exists(os.path.join(impl.locator.get_cache_path(), impl.filename_base + ".nbi"))
