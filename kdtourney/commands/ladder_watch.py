"""A ladder's looks at its bot folders, beside play.

    folder_signature(bots_dirs)   what changes when a file of the folders does
    scan(...) -> (registry, {spec: Found}, notes): the entrants the folders hold now
    look(...) -> Look | None      a scan as it travels from the process beside play
    take_in(folder, look, ...)    record what a look saw: the entrants' changes, their identities
    Watch                         the looks of one ladder: the first at once, then every
                                  POLL_SECONDS beside play (kdtourney.commands.beside), taken in
                                  when the feed says

A bot that fails to load or start is a note, not an entrant; folders that are wrong (one gone,
two bots of one name) leave the entrants as they were, with a note (ArenaError at the first look).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdtourney import store
from kdtourney.commands import beside
from kdtourney.commands.ladder_entrants import ACTIVE, Found, stored_entrants, update_entrants
from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, ProcessSettings, StartupError
from kdtourney.external.files import (
    FILE,
    LINK,
    TooMany,
    Unreadable,
    is_run_folder,
    left_out,
    read_file,
    walk,
)
from kdtourney.external.identity import prune_snapshots
from kdtourney.registry import (
    BotRegistry,
    BotsDirError,
    DuplicateBotError,
    EntrantError,
    parse_entrant,
)
from kdtourney.tournament.definition import ArenaError

LIST_FILE = "ladder.txt"   # in a bot folder: more entrants, one spec per line
LIST_LIMIT = 1 << 20       # bytes of it read
POLL_SECONDS = 1.0         # how often an idle ladder looks at its folders


def folder_signature(bots_dirs) -> tuple:
    """What changes when a file of the folders is added, edited or removed, at their top or
    anywhere inside (a bot's subfolder, a package): names, sizes, mtimes of the files a bot may
    be made of (kdtourney.external.files.tree: a log a bot writes beside itself, a cache, a hidden
    file or a tournament folder changes nothing). Each entry at a folder's top is walked on its
    own, within kdtourney.external.files's bounds: one past them is its name and why (the scan
    says it too), the others are seen as they are."""
    out: list[tuple[str, int, int | str]] = []  # (path, size, mtime or why it is past the bounds)
    for folder in bots_dirs:
        if not os.path.isdir(folder):
            out.append((str(folder), -1, -1))
            continue
        with os.scandir(folder) as entries:
            top = sorted((e.name, e.is_dir(), e.is_symlink()) for e in entries
                         if not left_out(e.name))
        for name, is_folder, is_link in top:
            if is_folder and (is_link or is_run_folder(Path(folder, name))):
                continue  # a link to a folder is not followed, a tournament folder not read
            try:
                paths = [name] if not is_folder else \
                    [f"{name}/{key}" for key, kind in walk(Path(folder, name)).items()
                     if kind in (FILE, LINK)]
            except TooMany as exc:  # one submission past the bounds: its own entry
                out.append((str(Path(folder, name)), -2, str(exc)))
                continue
            for path in map(Path(folder).joinpath, paths):
                try:
                    st = path.stat()
                except OSError:  # removed meanwhile (or a link leading nowhere)
                    continue
                out.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def scan(bots_dirs, references, startup_timeout: float | None, play, folder):
    """(registry, {spec: Found}, notes): every bot of the folders with its default parameters, the
    specs of each folder's ladder.txt, and the `references`, each with its code identity; a bot
    that fails to load or start is a note, not an entrant. play: the PlaySettings (sandboxed, a
    bot module runs in a sandbox only, where it is asked what it defines, and a TOML bot starts
    in its sandbox, which hides `folder`)."""
    sandbox = play.sandbox_for(folder) if play is not None else None
    # who holds a name: a newcomer taking it is refused
    entrants = stored_entrants(folder) if folder is not None and store.exists(folder) else {}
    taken = {parse_entrant(r["spec"]).name: r["origin"] for r in entrants.values()
             if r["status"] == ACTIVE}
    registry = BotRegistry(bots_dirs, sandbox=sandbox, taken=taken,
                           startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT)
    folders = [Path(d).resolve() for d in bots_dirs]

    def watched(origin):  # a bot of a watched folder: at its top or in a bot's subfolder
        parent = Path(origin).parent
        return os.path.isabs(origin) and (parent in folders or parent.parent in folders)

    notes = [f"{b.origin}: {b.error}" for b in registry.broken if watched(b.origin)]
    specs = {}  # spec -> origin
    for name, info in registry.bots.items():
        if watched(info.origin):
            specs[registry.resolve(name).spec] = info.origin
    for folder in bots_dirs:
        listed = Path(folder) / LIST_FILE
        try:
            lines = read_file(listed, LIST_LIMIT).decode("utf-8").splitlines() \
                if listed.exists() else []
        except (OSError, UnicodeDecodeError, Unreadable) as exc:
            notes.append(f"{listed}: {exc}")
            lines = []
        if lines:
            for number, line in enumerate(lines, 1):
                line = line.split("#", 1)[0].strip()
                if line:
                    try:
                        specs.setdefault(registry.resolve(line).spec, f"{listed}:{number}")
                    except EntrantError as exc:
                        notes.append(f"{listed}:{number}: {exc}")
    for spec in references:
        specs.setdefault(registry.resolve(spec).spec, "--bots")
    settings = ProcessSettings(startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT,
                               sandbox=sandbox)
    found = {}
    for spec, origin in specs.items():
        try:
            registry.start_check([spec], settings)
            identity = registry.identity(spec)
        except (StartupError, EntrantError, Unreadable) as exc:  # its files past the bounds
            notes.append(f"{spec}: {exc}")
            continue
        found[spec] = Found(spec, identity["digest"], identity, origin)
    return registry, found, notes


@dataclass(frozen=True)
class Look:
    """What a look at the folders saw, as it travels from the process beside play: the folders'
    `signature`, the entrants `found` ({spec: Found}) and the `notes` of `scan`, the bot sources
    and (sandboxed) listings of its registry, from which the ladder's process rebuilds that
    registry as a worker does (`registry`); or `error`: the folders are wrong (one gone, two bots
    of one name)."""

    signature: tuple
    found: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    sources: dict = field(default_factory=dict)
    listed: dict | None = None
    error: str | None = None

    def registry(self):
        """The registry of what this look saw, the TOML bots' hellos taken from their identities
        (none started again); None when the files changed since they were read (a TOML bot's
        files are read again for its identity): the next look sees them as they are."""
        registry = BotRegistry.from_sources(self.sources, listed=self.listed)
        for spec, found in self.found.items():
            registry.assume_hello(spec, found.identity)
            if registry.identity(spec)["digest"] != found.digest:
                return None
        return registry


def look(bots_dirs, references, startup_timeout: float | None, play, folder,
         seen: tuple | None = None) -> Look | None:
    """Look at the folders (`scan`): None if their signature is still `seen`. Runs in the process
    beside play (kdtourney.commands.beside), where the TOML bots it starts for hello run at its
    priority, or in the ladder's own process for the first look."""
    signature = folder_signature(bots_dirs)  # before the scan: a change meanwhile is seen next
    if signature == seen:
        return None
    try:
        registry, found, notes = scan(bots_dirs, references, startup_timeout, play, folder)
    except (BotsDirError, DuplicateBotError) as exc:
        return Look(signature, error=str(exc))
    sandboxed = play is not None and play.sandbox
    if sandboxed:  # the snapshots of versions gone for days (the entrants' are kept)
        prune_snapshots(keep=[f.identity.get("files_sha256") for f in found.values()])
    return Look(signature, found, notes, registry.source_files(),
                registry.listings() if sandboxed else None)


def take_in(folder, seen: Look, display, outcome, previous=None):
    """Record the entrants' changes that a look saw (and new labels' identities); the registry.
    Folders that are wrong (a folder gone, two bots of one name) leave everything as it was
    (`previous`), with a note, until the folders are right again (ArenaError at the first look).
    None: the look is out of date (its files changed since), nothing taken in."""
    if seen.error is not None:
        if previous is None:
            raise ArenaError(seen.error)
        if display is not None:
            display.note(f"{seen.error}; the ladder goes on with the entrants it has")
        return previous
    registry = seen.registry()
    if registry is None:
        return None
    entrants = stored_entrants(folder)
    rows, events = update_entrants(entrants, seen.found, store.now())
    with store.open_store(folder) as st:
        st.set_config(store.LADDER_INTAKE, seen.notes)  # for the page
        if rows:
            st.write_ladder(entrants=rows)
            st.record_entrants({r["label"]: seen.found[r["spec"]].identity for r in rows
                                if r["status"] == ACTIVE})
    outcome.events += events
    if display is not None:
        for line in seen.notes:
            display.note(line)
        for line in events:
            display.event(line)
    return registry


class Watch:
    """The ladder's looks at its folders: the first in the ladder's own process (nothing plays
    before it), the later ones every `poll` seconds in the process beside play, handed to the
    feed when they are done (`poll`) and taken in when it says (`take_in`), so that play never
    waits for one."""

    def __init__(self, folder, bots_dirs, references, *, startup_timeout, play, display,
                 outcome, poll: float = POLL_SECONDS):
        self.args = (list(bots_dirs), list(references), startup_timeout, play, folder)
        self.folder, self.display, self.outcome = folder, display, outcome
        self.poll_seconds = poll
        self.registry: Any = None
        self.signature: tuple | None = None
        self.sources: tuple | None = None  # (sources, listings) of the look taken in last
        self.looking, self.last = None, -math.inf
        self.ending = contextlib.ExitStack()
        self.beside = self.ending.enter_context(beside.beside_play())

    def close(self):
        """End the look under way, if any, and the process beside play."""
        self.ending.close()

    def first(self):
        """The first look, here and now (nothing plays before it); its registry."""
        while self.registry is None:  # (out of date: the folders changed meanwhile)
            self.take_in(look(*self.args))
        return self.registry

    def poll(self, wait: float = 0.0) -> Look | None:
        """Start the next look when it is due; a look that is done and saw a change, waiting up
        to `wait` seconds (an idle ladder) for either."""
        deadline = time.perf_counter() + wait
        if self.looking is None:
            due = self.last + self.poll_seconds
            left = due - time.perf_counter()
            if wait > 0 and left > 0:
                time.sleep(min(wait, left))
            if time.perf_counter() >= due:
                self.last = time.perf_counter()
                self.looking = self.beside.submit(look, *self.args, seen=self.signature)
        if self.looking is None:
            return None
        concurrent.futures.wait([self.looking], timeout=max(0.0, deadline - time.perf_counter()))
        if not self.looking.done():
            return None
        looking, self.looking = self.looking, None
        try:
            return looking.result()
        except concurrent.futures.process.BrokenProcessPool as exc:  # e.g. a bot module's exit
            if self.display is not None:
                self.display.note(f"the look at the folders ended ({exc}); looking again")
            self.close()
            self.ending = contextlib.ExitStack()
            self.beside = self.ending.enter_context(beside.beside_play())
            return None

    def needs_idle(self, seen: Look, entrants: dict) -> bool:
        """Whether taking in `seen` changes the entrants or the bots' code (then the games queued
        are played first)."""
        if seen.error is not None:
            return False
        return (seen.sources, seen.listed) != self.sources or \
            bool(update_entrants(entrants, seen.found, "")[0])

    def take_in(self, seen: Look) -> None:
        """Record what `seen` saw (`take_in`); a look out of date is looked at again at once."""
        registry = take_in(self.folder, seen, self.display, self.outcome, self.registry)
        if registry is None:  # out of date: look again at once
            self.signature, self.last = None, -math.inf
        elif registry is not self.registry:
            self.registry, self.signature = registry, seen.signature
            self.sources = (seen.sources, seen.listed)


__all__ = ["LIST_FILE", "POLL_SECONDS", "folder_signature", "scan", "Look", "look", "take_in",
           "Watch"]
