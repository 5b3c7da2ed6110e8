"""Importing a bot module, and saying in one line why it failed.

    exec_file        a folder module imported fresh, under `module_name_for` its origin, its
                     folder on sys.path only meanwhile
    bot_classes      the Bot subclasses with a name that a module (or its package) defines
    error_line       an exception as one line, with its line in the bot's file
"""

import hashlib
import inspect
import linecache
import re
import sys
import traceback
import types
from pathlib import Path

from kdtourney.bots.base import Bot


def error_line(exc: BaseException, origin: str | None = None) -> str:
    """'ZeroDivisionError: division by zero (line 3)'; the line is the last one in `origin`."""
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if origin is not None:
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == origin]
        if lines:
            text += f" (line {lines[-1]})"
    return text


def module_name_for(origin: str) -> str:
    """The name a folder module is imported under: unique per file path, the same in every
    process."""
    stem = re.sub(r"\W", "_", Path(origin).stem)
    digest = hashlib.sha1(origin.encode("utf-8")).hexdigest()[:10]
    return f"kdtourney_userbots_{digest}_{stem}"


def exec_file(path: Path, origin: str, source: str) -> types.ModuleType:
    """Import the file `path` (text `source`) as a fresh module whose code is `origin`'s (its
    tracebacks name `origin`) and whose `__file__` is `path` (its files lie beside it)."""
    name = module_name_for(origin)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    if str(path) != origin:  # loaded from shipped source: let tracebacks show its lines
        linecache.cache[origin] = (len(source), None, source.splitlines(True), origin)
    folder = str(path.parent)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        exec(compile(source, origin, "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def bot_classes(module: types.ModuleType, submodules: bool = False) -> list[type[Bot]]:
    """The Bot subclasses with a name defined in `module` (or, with submodules, in its
    package)."""
    found: list[type[Bot]] = []
    for obj in vars(module).values():
        if not (inspect.isclass(obj) and issubclass(obj, Bot) and obj is not Bot):
            continue
        home = obj.__module__ or ""
        if not (home == module.__name__ or (submodules and home.startswith(module.__name__ + "."))):
            continue
        if getattr(obj, "name", "") and not inspect.isabstract(obj) and obj not in found:
            found.append(obj)
    return found


__all__ = ["exec_file", "bot_classes", "error_line", "module_name_for"]
