"""A standing ladder (`kdtourney ladder`): every bot in the watched folders is an entrant, and the
ladder keeps choosing which block to play next.

The driver
----------
A loop of chunks beside `sequential.py`: each chunk (1) takes in what the last look at the bot
folders saw, (2) chooses blocks with :mod:`kdtourney.arena.matchmaking` from what is stored, (3)
records them (the store's `blocks` table, with the entrants they seat and their specs:
`runner.schedule_blocks`, as every command records its blocks) and (4) hands them to the runner
(`runner.run_tournament`: the same faults, Dask cluster and store as a tournament) on the ladder's
one game service (kdtourney.arena.service: its workers, their pooled bot processes and kernels
stay up from chunk to chunk; a new entrant joins them, new sources, a new bot or version, give it
new workers). Chunks last about `chunk_seconds` of play, so a bot dropped into a folder plays
within seconds. The store's tournament holds the ladder's fixed settings only (`ladder_table`),
written once. The looks at the folders (`look`: their files, then `scan`, which starts each TOML
bot for hello) run beside play, in a process at the lowest priority (kdtourney.arena.beside), the
bots it starts too; only the first one, before anything can be played, runs in the ladder's own
process.

Entrants and versions
---------------------
An entrant is a spec (a bot of the folders with its default parameters; a line of a folder's
`ladder.txt`, such as `mcts:iterations=200`; a `--bots` reference) and the code that plays for it
(the registry's identity digest). Its first version is labelled by the spec, later ones
`SPEC@v2`, `SPEC@v3`, ...: a new label per code, so the store never mixes code (the label's
identity is recorded in the `entrants` table, as in a tournament). When a bot's code changes, its
old version is *superseded* (kept, with its games) and the new one enters; when it disappears from
the folders, it is *retired* (kept, no new games); if the same code comes back, it is active again.

Resume
------
Blocks are recorded before they are played: a run killed mid-chunk leaves scheduled blocks with
missing games, and the next run plays exactly those games first (with the same seeds), so nothing
is lost or played twice. A scheduled block whose entrant has left (changed or removed while the
ladder was down) cannot be played with its code: it is marked cancelled, and its games played
before stay stored but out of the statistics (an incomplete block is not balanced).

Determinism: a game is fixed by its block's record (seed, block, game numbers, table) exactly as in
a tournament; which tables are chosen depends on the results in when the choice is made, so it
depends on timing (how many workers, how fast), as a live ladder must.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from kdtourney import interrupts
from kdtourney.arena import beside, matchmaking, runner, store
from kdtourney.arena.blocks import entrants_of, seated
from kdtourney.arena.play import PlaySettings
from kdtourney.arena.sequential import ChunkFeed
from kdtourney.arena.tournament import (ArenaError, Tournament, clock_of, differences, full_rules,
                                        parse_players)
from kdtourney.bots.external import DEFAULT_STARTUP_TIMEOUT, ProcessSettings, StartupError
from kdtourney.bots.files import tree
from kdtourney.outcomes import balanced_blocks, pair_outcomes

LADDER_FORMAT = "ladder"
LIST_FILE = "ladder.txt"   # in a bot folder: more entrants, one spec per line
CHUNK_SECONDS = 3.0
POLL_SECONDS = 1.0         # how often an idle ladder looks at its folders
ACTIVE, SUPERSEDED, RETIRED = "active", "superseded", "retired"


@dataclass(frozen=True)
class LadderConfig:
    """What defines a ladder's games (stored as config `ladder`; a re-run must match it)."""

    players: tuple
    seed: int
    rules: dict = field(default_factory=dict)
    dynasty: bool = False
    move_time_limit: float | None = None
    clock: dict | None = None   # the rest of the time control, as a Tournament's `clock`
    rule: int = matchmaking.MATCH_RULE  # the matchmaker's rule, fixed when the folder is made

    def to_dict(self) -> dict:
        return dict(asdict(self), players=list(self.players))

    @classmethod
    def from_dict(cls, d: dict) -> "LadderConfig":
        # no rule recorded: a ladder made under rule 1
        return cls(**dict(d, players=tuple(d["players"]), rule=d.get("rule", 1)))


def prepare_ladder(*, players=None, seed: int | None = None, dynasty: bool = False,
                   move_time_limit: float | None = None, time_control: str | None = None,
                   first_move_time: float | None = None, **rules) -> LadderConfig:
    """Check user input; ArenaError (one line) for bad rules, players or seed."""
    import secrets

    sizes = parse_players(players if players is not None else (2,))
    if seed is not None and not 0 <= seed < 2**63:
        raise ArenaError(f"--seed must be between 0 and 2**63-1, not {seed}")
    if move_time_limit is not None and not move_time_limit > 0:
        raise ArenaError(f"--move-time-limit must be a positive number of seconds, not "
                         f"{move_time_limit:g}")
    return LadderConfig(players=sizes, seed=secrets.randbits(32) if seed is None else int(seed),
                        rules=full_rules(sizes, rules), dynasty=bool(dynasty),
                        move_time_limit=None if move_time_limit is None else float(move_time_limit),
                        clock=clock_of(move_time_limit, time_control, first_move_time),
                        rule=matchmaking.MATCH_RULE)


def stored_config(folder) -> LadderConfig | None:
    """The ladder stored in `folder` (None: no store there); ArenaError if it holds something
    else."""
    if not store.exists(folder):
        return None
    try:
        config = store.load_config(folder)
    except store.StoreError as exc:
        raise ArenaError(str(exc)) from None
    if "ladder" not in config:
        raise ArenaError(f"{folder} holds a tournament, not a ladder; choose another --out")
    stored = LadderConfig.from_dict(config["ladder"])
    if stored.rule not in matchmaking.RULES:
        raise ArenaError(f"{folder} was made under matchmaking rule {stored.rule}, which this "
                         f"kdtourney does not know (it knows "
                         f"{', '.join(map(str, matchmaking.RULES))}): go on with the kdtourney "
                         "that made it")
    return stored


# --------------------------------------------------------------------------------------------------
# The folders: which entrants exist now (pure given the registry), and their versions
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """An entrant found in the folders or references: its spec and the code that plays for it."""

    spec: str
    digest: str
    identity: dict
    origin: str


def folder_signature(bots_dirs) -> tuple:
    """What changes when a file of the folders is added, edited or removed, at their top or
    anywhere inside (a bot's subfolder, a package): names, sizes, mtimes of the files a bot may
    be made of (kdtourney.bots.files.tree: a log a bot writes beside itself, a cache, a hidden
    file or a tournament folder changes nothing)."""
    out = []
    for folder in bots_dirs:
        if not os.path.isdir(folder):
            out.append((str(folder), -1, -1))
            continue
        for path in tree(Path(folder)):
            try:
                st = path.stat()
            except OSError:  # removed meanwhile: the next look sees it gone
                continue
            out.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def scan(bots_dirs, references, startup_timeout: float | None, play, folder):
    """(registry, {spec: Found}, notes): every bot of the folders with its default parameters, the
    specs of each folder's ladder.txt, and the `references`, each with its code identity; a bot
    that fails to load or start is a note, not an entrant. play: the PlaySettings (sandboxed, a
    bot module runs in a sandbox only, where it is asked what it defines, and a TOML bot starts
    in its sandbox, which hides `folder`)."""
    from kdtourney.bots.registry import BotRegistry, EntrantError

    sandbox = play.sandbox_for(folder) if play is not None else None
    registry = BotRegistry(bots_dirs, sandbox=sandbox,
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
        if listed.is_file():
            for number, line in enumerate(listed.read_text(encoding="utf-8").splitlines(), 1):
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
        except (StartupError, EntrantError) as exc:
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
        from kdtourney.bots.registry import BotRegistry

        registry = BotRegistry.from_sources(self.sources, listed=self.listed)
        for spec, found in self.found.items():
            registry.assume_hello(spec, found.identity)
            if registry.identity(spec)["digest"] != found.digest:
                return None
        return registry


def look(bots_dirs, references, startup_timeout: float | None, play, folder,
         seen: tuple | None = None) -> Look | None:
    """Look at the folders (`scan`): None if their signature is still `seen`. Runs in the process
    beside play (kdtourney.arena.beside), where the TOML bots it starts for hello run at its
    priority, or in the ladder's own process for the first look."""
    from kdtourney.bots.registry import BotsDirError, DuplicateBotError

    signature = folder_signature(bots_dirs)  # before the scan: a change meanwhile is seen next
    if signature == seen:
        return None
    try:
        registry, found, notes = scan(bots_dirs, references, startup_timeout, play, folder)
    except (BotsDirError, DuplicateBotError) as exc:
        return Look(signature, error=str(exc))
    sandboxed = play is not None and play.sandbox
    return Look(signature, found, notes, registry.source_files(),
                registry.listings() if sandboxed else None)


def label_for(spec: str, version: int) -> str:
    return spec if version == 1 else f"{spec}@v{version}"


def update_entrants(entrants: dict, found: dict, when: str) -> tuple[list[dict], list[str]]:
    """The changes to the ladder's entrants ({label: row} as stored) now that `found` ({spec:
    Found}) is what the folders hold: (rows to write, one line per change). New spec: version 1
    enters; changed code: the active version is superseded and a new version enters (or a retired
    version with this code returns); gone: the active version is retired."""
    rows, events = [], []
    by_spec: dict = {}
    for row in entrants.values():
        by_spec.setdefault(row["spec"], []).append(row)

    def change(row, status, note):
        rows.append(dict(row, status=status, changed=when, note=note))
        events.append(f"{row['label']}: {note}")

    for spec, now in found.items():
        versions = by_spec.get(spec, [])
        active = [r for r in versions if r["status"] == ACTIVE]
        if active and active[0]["digest"] == now.digest:
            continue
        for row in active:
            change(row, SUPERSEDED, f"superseded (its code changed: {now.digest[:12]})")
        same = [r for r in versions if r["digest"] == now.digest and r["status"] != ACTIVE]
        if same:
            change(same[-1], ACTIVE, "back with the same code")
            continue
        version = max((r["version"] for r in versions), default=0) + 1
        row = dict(label=label_for(spec, version), spec=spec, version=version,
                   digest=now.digest, origin=now.origin, added=when)
        change(row, ACTIVE, "entered" if version == 1 else f"entered as version {version}")
    for spec, versions in by_spec.items():
        if spec not in found:
            for row in versions:
                if row["status"] == ACTIVE:
                    change(row, RETIRED, "retired (no longer in the folders)")
    return rows, events


# --------------------------------------------------------------------------------------------------
# Blocks: what the matchmaker chose, as the runner plays them
# --------------------------------------------------------------------------------------------------


def ladder_table(config: LadderConfig) -> Tournament:
    """The ladder's fixed settings as a tournament (format `ladder`, no entrants of its own: each
    block records the entrants it seats), stored once when the folder is made."""
    return Tournament(entrants=(), specs=(), format=LADDER_FORMAT, players=config.players,
                      games=0, seed=config.seed, rules=dict(config.rules), dynasty=config.dynasty,
                      move_time_limit=config.move_time_limit, clock=config.clock)


def standing(results, blocks, labels: list, next_block: int, *,
             rule: int = matchmaking.MATCH_RULE) -> matchmaking.Standing:
    """The matchmaker's standing of the active `labels` from the stored results (balanced blocks,
    all versions: a game against a superseded version still tells about the active one; every
    table size, each comparison worth its `matchmaking.dependence`) and the scheduled blocks (not
    cancelled: played or still to play)."""
    everyone = sorted(set(labels) | set(results["entrant"].astype(str)) if len(results) else labels)
    index = {label: i for i, label in enumerate(everyone)}
    k = len(everyone)
    wins, games, worth = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
    pairs = pair_outcomes(balanced_blocks(results)) if len(results) else None
    if pairs is not None and len(pairs):
        a = pairs["entrant_a"].map(index).to_numpy()
        b = pairs["entrant_b"].map(index).to_numpy()
        n_players = pairs["game"].map(results.groupby("game").size()).to_numpy()
        w = matchmaking.dependence(n_players, rule)
        np.add.at(wins, (a, b), pairs["score"].to_numpy())
        np.add.at(wins, (b, a), 1.0 - pairs["score"].to_numpy())
        for at in ((a, b), (b, a)):
            np.add.at(games, at, 1.0)
            np.add.at(worth, at, w)
    played, last = np.zeros(k), np.full(k, -1.0)
    meetings = np.zeros((k, k))
    for block, seats in zip(blocks["block"], blocks["seats"]):
        at = sorted({index[s] for s in seats if s in index})
        played[at] += 1
        last[at] = np.maximum(last[at], block)
        for i in at:
            for j in at:
                if i != j:
                    meetings[i, j] += 1
    full = matchmaking.Standing.from_counts(everyone, wins, games, played, last, meetings,
                                            next_block, worth)
    keep = [index[label] for label in labels]
    return matchmaking.Standing(list(labels), full.elo[keep] - full.elo[keep].mean(),
                                full.sd[keep], full.blocks[keep], full.last[keep],
                                full.meetings[np.ix_(keep, keep)], next_block)


# --------------------------------------------------------------------------------------------------
# Playing
# --------------------------------------------------------------------------------------------------


@dataclass
class LadderOutcome:
    folder: Path
    stored_before: int
    stored: int = 0
    played: int = 0
    chunks: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    events: list = field(default_factory=list)


def open_ladder(config: LadderConfig, folder, meta: dict) -> tuple[LadderConfig, int]:
    """Create the ladder's store in `folder`, or check that it holds this ladder (ArenaError if
    not); returns the ladder as the folder plays it (under the matchmaking rule it was made with)
    and the session number."""
    folder = Path(folder)
    if not store.exists(folder):
        try:
            st = store.Store.create(folder, ladder_table(config).to_dict(), dict(meta, sessions=1),
                                    {})
        except store.StoreError as exc:
            raise ArenaError(str(exc)) from None
        with st:
            st.set_config("ladder", config.to_dict())
            st.write_ladder()
        return config, 1
    stored = stored_config(folder)
    config = replace(config, rule=stored.rule)  # a ladder keeps the rule it was made with
    diff = differences(stored.to_dict(), config.to_dict())
    if diff:
        more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
        raise ArenaError(f"{folder} holds another ladder: {diff[0]}{more}; choose a new --out, "
                         f"or continue that one with kdtourney ladder --resume {folder}")
    with store.open_store(folder) as st:
        sessions = st.begin_session(meta.get("command"))
    return config, sessions


def _stored_entrants(folder) -> tuple[dict, "object"]:
    entrants, blocks = store.load_ladder(folder)
    rows = {r["label"]: r for r in entrants.to_dict("records")}
    return rows, blocks


def chunk_blocks(workers: int, rate: float | None, seconds: float) -> int:
    """Blocks in the next chunk: two per worker at least, about `seconds` of play at `rate`
    (blocks per second, measured in the chunk before)."""
    size = 2 * workers
    if rate:
        size = max(size, int(rate * seconds))
    return size


def play_ladder(config: LadderConfig, folder, bots_dirs=(), references=(), *,
                workers: int | None = None, meta: dict | None = None, display=None,
                games: int | None = None, until: float | None = None,
                chunk_seconds: float = CHUNK_SECONDS, poll: float = POLL_SECONDS,
                scheduler=None, after_chunk=None, **bots) -> LadderOutcome:
    """Run the ladder in `folder` until `games` games are stored, `until` seconds have passed, or
    Ctrl-C (KeyboardInterrupt: the outcome says interrupted). bots_dirs: the watched folders;
    references: fixed entrant specs (--bots). display: a kdtourney.display.LadderDisplay or None;
    after_chunk: called with the folder after each chunk (the page). poll: seconds between the
    looks at the folders (beside play). scheduler, workers, bots (play, startup_timeout): as
    `runner.run_tournament`. ArenaError for a folder holding anything else or for runner
    failures."""
    started = time.perf_counter()
    folder = Path(folder)
    if bots.get("play") is not None and bots["play"].sandbox:
        runner.check_sandbox()  # before the folders are scanned: one line, not a note per bot
    with contextlib.ExitStack() as stack:
        scheduler, workers = stack.enter_context(runner.holding_workers(folder, scheduler, workers))
        config, _ = open_ladder(config, folder, meta or {})
        table = ladder_table(config)
        sandboxed = bots.get("play") is not None and bots["play"].sandbox
        with store.open_store(folder) as st:
            stored = st.count_games()
        outcome = LadderOutcome(folder=folder, stored_before=stored, stored=stored)
        if display is not None:
            display.begin(config, folder, stored, workers)
            stack.callback(display.end)
            if config.rule != matchmaking.MATCH_RULE:
                display.note(f"{folder} was made under matchmaking rule {config.rule} (this "
                             f"kdtourney makes rule {matchmaking.MATCH_RULE}): it goes on under "
                             f"rule {config.rule}")
        feed = ChunkFeed(display)
        rate, waiting = None, False
        service = None
        watch = _Watch(folder, bots_dirs, references, bots, display, outcome, poll)
        stack.callback(watch.close)
        try:
            watch.first()
            while True:
                interrupts.check()
                if games is not None and outcome.stored >= games:
                    break
                if until is not None and time.perf_counter() - started >= until:
                    break
                watch.take(wait=poll if waiting else 0.0)
                entrants, blocks = _stored_entrants(folder)
                played = _played_games(folder)
                pending, cancel = _pending(blocks, entrants, played)
                if cancel:
                    with store.open_store(folder) as st:
                        st.cancel_blocks(cancel)
                    entrants, blocks = _stored_entrants(folder)
                active = [label for label, r in entrants.items() if r["status"] == ACTIVE]
                size = chunk_blocks(workers, rate, chunk_seconds)
                new = []
                if len(active) >= 2:
                    budget = None if games is None else games - outcome.stored - sum(
                        b["n_players"] - sum(1 for g in range(b["first_game"], b["first_game"]
                                                              + b["n_players"]) if g in played)
                        for b in pending)
                    specs = {label: r["spec"] for label, r in entrants.items()}
                    new = [dict(block=b, first_game=f, n_players=n, seats=list(seats),
                                entrants={label: specs[label] for label in seats})
                           for b, f, n, seats in _choose(config, folder, blocks, active,
                                                         max(0, size - len(pending)), budget)]
                if new:  # recorded when chosen: the choice depends on timing, the games do not
                    with store.open_store(folder) as st:
                        secret = st.seed_secret(create=sandboxed and not played)
                        runner.schedule_blocks(st, table, new, secret)
                todo = pending + new
                if not todo:  # fewer than two entrants: wait for bots (the next look)
                    if display is not None and not waiting:
                        display.note(f"{len(active)} entrant{'s' * (len(active) != 1)}: waiting "
                                     "for a second bot in the folders")
                    waiting = True
                    continue
                waiting = False
                if service is None:  # one service for every chunk, opened with the first
                    service = stack.enter_context(_open_service(table, todo, folder,
                                                                watch.registry, scheduler,
                                                                workers, bots))
                ran = runner.run_tournament(table, folder, watch.registry, meta=meta or {},
                                            reporter=feed, check_bots=False, service=service,
                                            blocks=todo, **bots)
                outcome.played += ran.played
                outcome.stored += ran.played
                outcome.chunks += 1
                speed = feed.games_per_second()
                rate = speed / np.mean(config.players) if speed else None
                if after_chunk is not None:
                    after_chunk(folder)
                if ran.interrupted:
                    outcome.interrupted = True
                    break
        except KeyboardInterrupt:
            outcome.interrupted = True
    outcome.seconds = time.perf_counter() - started
    return outcome


def _open_service(table, todo, folder, registry, cluster, workers, bots):
    """The game service of the ladder's chunks, opened with the entrants of the first chunk's
    blocks `todo`: a chunk's new entrants join its workers, and new sources (a new bot or version
    in the folders) give it new workers (runner.run_tournament)."""
    chunk = seated(table, entrants_of(todo))
    play = bots.get("play") or PlaySettings()
    settings = runner.bot_settings(chunk, folder, play,
                                   bots.get("startup_timeout") or DEFAULT_STARTUP_TIMEOUT,
                                   cluster, bots.get("require_limits", False))
    return runner.open_service(chunk, registry, cluster, workers, settings, play,
                               runner.entrant_identities(registry, chunk),
                               hang_timeout=bots.get("hang_timeout"),
                               require_limits=bots.get("require_limits", False))


def _take_in(folder, seen: Look, display, outcome, previous=None):
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
    entrants, _ = _stored_entrants(folder)
    rows, events = update_entrants(entrants, seen.found, store.now())
    if rows:
        with store.open_store(folder) as st:
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


class _Watch:
    """The ladder's looks at its folders: the first in the ladder's own process (nothing plays
    before it), the later ones every `poll` seconds in the process beside play, taken in by the
    loop when they are done (`take`), so that play never waits for one."""

    def __init__(self, folder, bots_dirs, references, bots, display, outcome, poll):
        self.args = (list(bots_dirs), list(references), bots.get("startup_timeout"),
                     bots.get("play"), folder)
        self.folder, self.display, self.outcome, self.poll = folder, display, outcome, poll
        self.registry, self.signature = None, None
        self.looking, self.last = None, -math.inf
        self._beside = contextlib.ExitStack()
        self.beside = self._beside.enter_context(beside.beside_play(finish=False))

    def close(self):
        """End the look under way, if any, and the process beside play."""
        self._beside.close()

    def first(self):
        while self.registry is None:  # (out of date: the folders changed meanwhile)
            seen = look(*self.args)
            self.registry = _take_in(self.folder, seen, self.display, self.outcome)
            self.signature = seen.signature
        return self.registry

    def take(self, wait: float = 0.0) -> None:
        """Start the next look when it is due, and take in one that is done, waiting up to `wait`
        seconds (an idle ladder) for either."""
        deadline = time.perf_counter() + wait
        if self.looking is None:
            due = self.last + self.poll
            left = due - time.perf_counter()
            if wait > 0 and left > 0:
                time.sleep(min(wait, left))
            if time.perf_counter() >= due:
                self.last = time.perf_counter()
                self.looking = self.beside.submit(look, *self.args, seen=self.signature)
        if self.looking is None:
            return
        concurrent.futures.wait([self.looking], timeout=max(0.0, deadline - time.perf_counter()))
        if not self.looking.done():
            return
        looking, self.looking = self.looking, None
        try:
            seen = looking.result()
        except concurrent.futures.process.BrokenProcessPool as exc:  # e.g. a bot module's exit
            if self.display is not None:
                self.display.note(f"the look at the folders ended ({exc}); looking again")
            self.close()
            self._beside = contextlib.ExitStack()
            self.beside = self._beside.enter_context(beside.beside_play(finish=False))
            return
        if seen is None:
            return
        registry = _take_in(self.folder, seen, self.display, self.outcome, self.registry)
        if registry is None:  # out of date: look again at once
            self.signature, self.last = None, -math.inf
            return
        self.registry, self.signature = registry, seen.signature


def _played_games(folder) -> set:
    with store.open_store(folder) as st:
        return st.done_games()


def _pending(blocks, entrants: dict, played: set):
    """(the block records scheduled with games still to play whose entrants are all active; the
    blocks to cancel: some entrant left)."""
    pending, cancel = [], []
    for b in blocks.to_dict("records"):
        first, n = int(b["first_game"]), int(b["n_players"])
        if b["cancelled"] or all(g in played for g in range(first, first + n)):
            continue
        if all(entrants.get(s, {}).get("status") == ACTIVE for s in b["seats"]):
            pending.append(dict(block=int(b["block"]), first_game=first, n_players=n,
                                seats=list(b["seats"]), entrants=dict(b["entrants"])))
        else:
            cancel.append(int(b["block"]))
    return pending, cancel


def _choose(config: LadderConfig, folder, blocks, active: list, count: int, budget: int | None):
    """`count` new blocks (block, first_game, n_players, labels) after the stored ones, at most
    `budget` games (None: no bound), chosen by the matchmaker from the store."""
    next_block = int(blocks["block"].max()) + 1 if len(blocks) else 0
    next_game = (int((blocks["first_game"] + blocks["n_players"]).max()) if len(blocks) else 0)
    results = store.load_results(folder, ("game", "seat", "block", "entrant", "rank",
                                          "n_players"))
    live = blocks[blocks["cancelled"] == 0] if len(blocks) else blocks
    st = standing(results, live, active, next_block, rule=config.rule)
    out = []
    for _ in range(count):
        n = config.players[st.block % len(config.players)]
        if budget is not None and budget <= 0:
            break
        table = matchmaking.choose_table(st, n, matchmaking.table_rng(config.seed, st.block),
                                         rule=config.rule)
        out.append((st.block, next_game, n, tuple(active[i] for i in table)))
        st.scheduled(table)
        next_game += n
        if budget is not None:
            budget -= n
    return out


__all__ = ["LadderConfig", "LadderOutcome", "Found", "prepare_ladder",
           "stored_config",
           "play_ladder", "scan", "update_entrants", "standing", "ladder_table", "label_for",
           "open_ladder", "LIST_FILE", "ACTIVE", "SUPERSEDED", "RETIRED", "LADDER_FORMAT"]
