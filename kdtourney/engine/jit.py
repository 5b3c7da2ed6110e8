"""How kdtourney compiles its kernels: `cached_jit` (used by `engine.kernel_base.kernel`).

`cached_jit` is `numba.njit(cache=True)` with three changes that cut a first run's compile time
without changing the code the kernels run: one specialisation per argument type, one process
compiling a kernel while the others wait and load it (`compile_lock`, `busy_raises`,
`KernelBusy`), and no second O3 pass over kernels already optimised. Why: docs/internals.md.
With KDTOURNEY_PLAIN_NJIT=1 (`jit_cache.PLAIN`) none of this: plain `numba.njit(cache=True)`.
Where compiled kernels are cached: `kdtourney.engine.jit_cache`.
"""

import contextlib
import fcntl
import re

from llvmlite import binding as llvm
from numba import njit, types
from numba.core import config, sigutils
from numba.core.codegen import CPUCodeLibrary
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from kdtourney.engine import jit_cache  # first: it checks Numba's version before any patch

_HELD: set = set()  # the kernels whose compile lock this process holds
_WAITING = [True]  # False inside `busy_raises`
_COMPILING = [0]  # KernelDispatcher.compile calls under way in this process
BIG_FUNCTION = 1000  # instructions: LLVM does not inline a linked function this big (too costly)


class KernelBusy(BaseException):
    """Raised inside `busy_raises` where a kernel is needed that another process is compiling.
    A BaseException: the compiler and the bots let it through."""

    def __init__(self, lock_path):
        super().__init__(lock_path)
        self.lock_path = lock_path

    def wait(self) -> None:
        """Return once that process has compiled the kernel (or stopped)."""
        with open(self.lock_path, "ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)


@contextlib.contextmanager
def busy_raises():
    """Inside, a kernel that another process is compiling raises KernelBusy instead of waiting
    for it, so that a warm-up can compile something else meanwhile (and call again later)."""
    _WAITING[0] = False
    try:
        yield
    finally:
        _WAITING[0] = True


@contextlib.contextmanager
def compile_lock(dispatcher):
    """Hold a kdtourney kernel's compile lock (a file beside its cache index, shared by every
    process using that cache folder) while it is compiled and saved, or loaded once another
    process saved it (a kernel found in the cache at once is loaded without it): a process that
    needs a kernel another one is compiling waits (inside `busy_raises`: raises KernelBusy), then
    loads it from the cache. A kernel compiles the kernels it calls while holding its own lock, so
    locks are taken along the call graph, callers first: as kernels do not call each other in a
    circle, no two processes wait for each other. Take it under Numba's compiler lock, so that one
    thread of a process at a time takes them (a second open file of the same process would wait for
    the first)."""
    path = jit_cache.lock_path(dispatcher)
    if path is None or dispatcher in _HELD:
        yield
        return
    try:
        lock = open(path, "ab")
    except OSError:  # a read-only cache: nothing is saved there to share
        yield
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if _WAITING[0] else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KernelBusy(path) from None
        _HELD.add(dispatcher)
        try:
            yield
        finally:
            _HELD.discard(dispatcher)


_optimize_final_module = CPUCodeLibrary._optimize_final_module
_OPTNONE = re.compile(r"^(attributes #\d+ = \{.*?) optnone\b", re.MULTILINE)


def _optimize_kernel_module(library):
    """Numba's optimization of a library's final module, except that while a kdtourney kernel
    compiles, the big functions linked in from the kernels it calls (optimized already, at O3, when
    they were compiled) sit the second O3 pass out: they are marked optnone (and noinline, which
    optnone requires: LLVM would not inline them anyway), then the optnone is taken off again so
    that they are compiled to machine code as before. That pass was most of the LLVM time of the
    search kernels (the same greedy bot optimized again in each of them) and made them no faster."""
    if not _COMPILING[0]:
        return _optimize_final_module(library)
    resting = 0
    for function in library._final_module.functions:
        if (function.is_declaration or function.linkage != llvm.Linkage.linkonce_odr
                or any("alwaysinline" in str(a) for a in function.attributes)
                or sum(len(list(block.instructions)) for block in function.blocks) < BIG_FUNCTION):
            continue
        function.add_function_attribute("noinline")
        function.add_function_attribute("optnone")
        resting += 1
    _optimize_final_module(library)
    if resting:  # llvmlite cannot take an attribute off: through the module's text
        module = llvm.parse_assembly(_OPTNONE.sub(r"\1", str(library._final_module)))
        module.name = library._final_module.name
        module.verify()
        library._final_module = module


if not jit_cache.PLAIN:
    CPUCodeLibrary._optimize_final_module = _optimize_kernel_module  # type: ignore[method-assign]


class KernelDispatcher(CPUDispatcher):
    """The dispatcher of kdtourney's kernels (`cached_jit`): one specialisation per argument type,
    compiled by one process at a time (`compile_lock`)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                         {k: types.unliteral(v) for k, v in kws.items()})

    def compile(self, sig):
        if tuple(sigutils.normalize_signature(sig)[0]) in self.overloads:
            return super().compile(sig)
        try:
            return self._from_cache(sig)
        except _NotCached:
            pass
        with global_compiler_lock, compile_lock(self):
            _COMPILING[0] += 1
            try:
                return super().compile(sig)
            finally:
                _COMPILING[0] -= 1


    def _from_cache(self, sig):
        """The kernel loaded from the cache without its compile lock (_NotCached if it is not
        there): Numba writes a cache file whole and renames it into place, so a reader never sees
        half of one, and workers loading a warm cache at once do not wait for each other."""
        with global_compiler_lock:
            compiler, self._compiler = self._compiler, _CacheOnly(self._compiler)
            try:
                return super().compile(sig)
            except _NotCached:
                self._cache_misses[sig] -= 1  # counted when it compiles
                raise
            finally:
                self._compiler = compiler


class _NotCached(Exception):
    pass


class _CacheOnly:
    """A dispatcher's compiler that refuses to compile (`KernelDispatcher._from_cache`)."""

    def __init__(self, compiler):
        self.compiler = compiler

    def compile(self, args, return_type):
        raise _NotCached

    def __getattr__(self, name):
        return getattr(self.compiler, name)


def cached_jit(function, **options):
    """`function` compiled as `numba.njit(cache=True, **options)` would, by a KernelDispatcher."""
    if config.DISABLE_JIT:
        return function
    if jit_cache.PLAIN:
        return njit(cache=True, **options)(function)
    dispatcher = KernelDispatcher(py_func=function, locals={},
                                  targetoptions={"nopython": True, "boundscheck": None, **options})
    dispatcher.enable_caching()
    return dispatcher
