"""What code plays for a Python bot: its code identity, and the digest of any identity.

    python_identity  {"kind": "python", "origin", "source_sha256"} of a bot (and "files" for a
                     folder module); over its code only, never where it lies
    code_digest      12 hex characters of a sha256 over an identity's CODE_FIELDS
    builtin_files    what decides the play of a built-in module's bots; builtin_sha256 its hash
    package_sha256   the files of the top-level package that defines a class (an entry point)

A TOML bot's identity is kdtourney.external.identity's. What each covers: docs/bots.md, "What
counts as a bot's code".
"""

import functools
import hashlib
import json
import sys
from pathlib import Path

from kdtourney.engine.jit_cache import compiled_sources
from kdtourney.external.files import files_sha256, tree
from kdtourney.registry.bundles import Sources, bundle_files, declared_files
from kdtourney.registry.discovery import BUILT_IN, BotInfo

# the fields of an identity the digest covers, per kind: code only, never where it lives
CODE_FIELDS = {"python": ("source_sha256",),
               "kdtp": ("command", "files_sha256", "bot_name", "bot_version")}
# built-in sources that never decide a move: finding bots, compiling and caching kernels
NOT_PLAYING = ("external/files.py", "engine/jit.py", "engine/jit_cache.py",
               "engine/numba_version.py")
REGISTRY = "registry/"  # the registry's modules, which find bots: none decides a move


def code_digest(identity: dict) -> str:
    """The short digest (12 hex characters of a sha256) of an identity's code fields."""
    kind = identity["kind"]
    code = {k: identity.get(k) for k in CODE_FIELDS[kind]}
    text = json.dumps(dict(code, kind=kind), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def python_identity(info: BotInfo, sources: Sources) -> dict:
    """The code identity (no digest) of the Python bot `info`: a built-in's `builtin_sha256`, a
    folder module's files as read (`sources`), an entry point's package."""
    if info.origin == BUILT_IN:
        source = builtin_sha256(info.cls.__module__)
    elif info.origin in sources.bundles:
        named = sources.own_named(info.origin)
        return {"kind": "python", "origin": info.origin, "files": [n for n, _ in named],
                "source_sha256": files_sha256(named)}
    else:
        assert info.cls is not None  # an entry point's bot: a class loaded here
        source = package_sha256(info.cls)
    return {"kind": "python", "origin": info.origin, "source_sha256": source}


def builtin_files(module: str) -> dict[str, bytes]:
    """{path under the kdtourney package: bytes} of what decides the play of the built-in bots of
    `module`: the sources compiled into its kernels (`jit_cache.compiled_sources`) but
    NOT_PLAYING and the registry's, and the data they list in KDTOURNEY_FILES."""
    root = Path(__file__).resolve().parents[1]
    files = {}
    for path in compiled_sources(root.joinpath(*module.split(".")[1:]).with_suffix(".py")):
        name = path.relative_to(root).as_posix()
        if name in NOT_PLAYING or name.startswith(REGISTRY):
            continue
        files[name] = source = path.read_bytes()
        if path.suffix == ".py":
            listed = declared_files(source.decode("utf-8"))
            for extra, data in bundle_files(path.parent, listed).items():
                files[path.parent.joinpath(extra).relative_to(root).as_posix()] = data
    return files


@functools.cache
def builtin_sha256(module: str) -> str:
    """The hash of what decides the play of the built-in bots of `module` (`builtin_files`)."""
    return files_sha256(builtin_files(module).items())


def package_sha256(cls: type) -> str:
    """The hash of the files of the top-level package (or single module) that defines `cls`."""
    top = sys.modules[cls.__module__.split(".")[0]]
    paths = getattr(top, "__path__", None)
    if paths:
        return files_sha256([(f"{i}/{path.relative_to(p).as_posix()}", path.read_bytes())
                             for i, p in enumerate(map(Path, paths))
                             for path in tree(p, files=None)])  # installed: not bounded
    assert top.__file__ is not None  # no __path__: a module of one file
    path = Path(top.__file__)
    return files_sha256([(path.name, path.read_bytes())])


__all__ = ["python_identity", "code_digest", "builtin_files", "builtin_sha256", "package_sha256",
           "CODE_FIELDS"]
