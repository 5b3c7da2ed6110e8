"""Where Numba caches kdtourney's compiled kernels: the user's cache folder, never the package.

By default Numba writes its cache (`__pycache__/*.nbi`, `*.nbc`) next to the source when it can:
for an installed kdtourney, inside site-packages, where pip does not know the files. Uninstalling
then leaves `kdtourney/engine/__pycache__` behind, and that leftover folder, taken for a namespace
package, hides a later editable install (`cannot import name 'Rules' from 'kdtourney.engine'
(unknown location)`).

So kdtourney's own kernels always cache where Numba caches a read-only package: the user-wide
cache folder (`~/.cache/numba` on Linux, or `$XDG_CACHE_HOME/numba`), in one subfolder per source
folder, so every installation keeps its own cache. A `NUMBA_CACHE_DIR` set by the user still wins,
and other packages' functions are left to Numba's usual rules. Every kernel module imports this
module before its first `@njit(cache=True)`.

Numba checks a cached kernel against its own source file only, yet a kernel has the kernels it
calls (and the tile table) compiled into it: after an edit to `engine/_kernels.py`, or an upgrade
that changes it, `mcts_run` in `bots/_search_kernels.py` would load from the cache with the old
engine inside. So a kernel's stamp here also holds a digest of every kernel source (`KERNEL_SOURCES`):
when any of them changes, every kernel compiles afresh.
"""

import hashlib
import os
import re
from pathlib import Path

from numba.core import caching

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# the public names since Numba 0.62, the private ones before
_UserWideCacheLocator = getattr(caching, "UserWideCacheLocator", None) \
    or getattr(caching, "_UserWideCacheLocator")
_UserProvidedCacheLocator = getattr(caching, "UserProvidedCacheLocator", None) \
    or getattr(caching, "_UserProvidedCacheLocator")


# the files compiled into kernels: every module that defines one, and the tile table
KERNEL_SOURCES = sorted([p for p in Path(_PACKAGE).rglob("*.py")
                         if re.search(r"^@(njit|kernel)\b", p.read_text(encoding="utf-8"), re.MULTILINE)]
                        + list(Path(_PACKAGE, "engine").glob("tiles.*")))


def sources_digest(paths):
    """One digest of the files' names and contents."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


_DIGEST = sources_digest(KERNEL_SOURCES)


class _KernelSourcesStamp:
    """For kdtourney's own functions only: the stamp also holds the digest of every kernel source."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return super().get_source_stamp(), _DIGEST


class PackageCacheLocator(_KernelSourcesStamp, _UserWideCacheLocator):
    """Numba's user-wide cache locator, for the functions of kdtourney's own source files only."""


class PackageCacheDirLocator(_KernelSourcesStamp, _UserProvidedCacheLocator):
    """Numba's locator of a NUMBA_CACHE_DIR (set by the user, or by the sandbox, which hands its
    bots a copy of the cache there), with the same stamps as PackageCacheLocator."""


_LOCATORS = caching.CacheImpl._locator_classes
if PackageCacheLocator not in _LOCATORS:
    # NUMBA_CACHE_DIR first, as Numba does; then the user-wide folder, before the one writing next
    # to the source
    _LOCATORS.insert(0, PackageCacheDirLocator)
    _LOCATORS.insert(2, PackageCacheLocator)
