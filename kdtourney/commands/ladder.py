"""A standing ladder (`kdtourney ladder`): every bot in the watched folders is an entrant, and the
ladder keeps choosing which block to play next.

The driver
----------
The ladder's feed (`LadderFeed`, run by the one driver loop of kdtourney.commands.run, as every
command) hands chunks of blocks to the ladder's one game service (kdtourney.service.local: its
workers, their pooled bot processes and kernels stay up; a new entrant joins them, new sources, a
new bot or version, give it new workers). Each chunk is chosen by
:mod:`kdtourney.stats.matchmaking` from the ladder's `Tallies` (the pairwise totals of the
balanced blocks and the blocks scheduled, read from the store once at the start and kept up to
date from the games stored since: a chunk costs the same after 100,000 games as after 1,000),
recorded (the store's `blocks` table, with the entrants they seat and their specs, as every
command records its blocks) and queued while half a chunk is still queued, so the workers never
wait for the matchmaker. Chunks last about `chunk_seconds` of play, so a bot dropped into a
folder plays within seconds. The store's tournament holds the ladder's fixed settings only
(`ladder_table`), written once. The looks at the folders (`look`: their files, then `scan`,
which starts each TOML bot for hello) run beside play, in a process at the lowest priority
(kdtourney.commands.beside), the bots it starts too; only the first one, before anything can be
played, runs in the ladder's own process. A look that changes the entrants or the bots' code is
taken in (`_take_in`) once the games queued are played: no block is played by other code than
the one it was scheduled with.

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

from kdtourney.commands import beside, run as runner
from kdtourney.stats import matchmaking
from kdtourney import store
from kdtourney.tournament.blocks import Incoming
from kdtourney.match.settings import PlaySettings
from kdtourney.tournament.definition import ArenaError, Tournament, clock_of, differences, full_rules, parse_players
from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, ProcessSettings, StartupError
from kdtourney.external.files import Unreadable, read_file, tree
from kdtourney.stats.outcomes import balanced_blocks, pair_outcomes

LADDER_FORMAT = "ladder"
LIST_FILE = "ladder.txt"   # in a bot folder: more entrants, one spec per line
LIST_LIMIT = 1 << 20       # bytes of it read
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
    be made of (kdtourney.external.files.tree: a log a bot writes beside itself, a cache, a hidden
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
    from kdtourney.registry import BotRegistry, EntrantError, parse_entrant

    sandbox = play.sandbox_for(folder) if play is not None else None
    # who holds a name: a newcomer taking it is refused
    entrants = _stored_entrants(folder) if folder is not None and store.exists(folder) else {}
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
        from kdtourney.registry.registry import BotRegistry

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
    from kdtourney.registry import BotsDirError, DuplicateBotError

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


class Tallies:
    """What the matchmaker reads, kept up to date as the ladder goes rather than read again from
    the store: over every entrant ever seated or rated (a game against a superseded version still
    tells about the active one), the pairwise totals of the balanced blocks (wins, comparisons
    and their worth: `matchmaking.dependence`) and the blocks scheduled and not cancelled (per
    entrant: how many, the last; per pair: the blocks they met in). Its cost per chunk depends
    on the entrants, not on the games stored."""

    def __init__(self, rule: int = matchmaking.MATCH_RULE):
        self.rule = rule
        self.labels: list = []
        self.index: dict = {}
        self.wins, self.games, self.worth, self.meetings = (np.zeros((0, 0)) for _ in range(4))
        self.blocks, self.last = np.zeros(0), np.zeros(0)

    def _grow(self, labels) -> None:
        new = [label for label in dict.fromkeys(labels) if label not in self.index]
        if not new:
            return
        for label in new:
            self.index[label] = len(self.labels)
            self.labels.append(label)
        k, n = len(self.labels), len(new)
        self.wins, self.games, self.worth, self.meetings = (
            np.pad(m, ((0, n), (0, n))) for m in (self.wins, self.games, self.worth,
                                                   self.meetings))
        self.blocks = np.r_[self.blocks, np.zeros(n)]
        self.last = np.r_[self.last, np.full(n, -1.0)]
        assert self.wins.shape == (k, k)

    def add_results(self, results) -> None:
        """Count the pairwise outcomes of `results` (rows of balanced blocks)."""
        if not len(results):
            return
        self._grow(results["entrant"].astype(str))
        pairs = pair_outcomes(results)
        if not len(pairs):
            return
        a = pairs["entrant_a"].map(self.index).to_numpy()
        b = pairs["entrant_b"].map(self.index).to_numpy()
        n_players = pairs["game"].map(results.groupby("game").size()).to_numpy()
        w = matchmaking.dependence(n_players, self.rule)
        np.add.at(self.wins, (a, b), pairs["score"].to_numpy())
        np.add.at(self.wins, (b, a), 1.0 - pairs["score"].to_numpy())
        for at in ((a, b), (b, a)):
            np.add.at(self.games, at, 1.0)
            np.add.at(self.worth, at, w)

    def schedule(self, block: int, seats) -> None:
        """Count a block scheduled (or played) at the table `seats` (labels)."""
        self._grow(seats)
        at = sorted({self.index[s] for s in seats})
        self.blocks[at] += 1
        self.last[at] = np.maximum(self.last[at], block)
        for i in at:
            for j in at:
                if i != j:
                    self.meetings[i, j] += 1

    def standing(self, labels: list, next_block: int) -> matchmaking.Standing:
        """The matchmaker's standing of the active `labels` (the fit over everyone, centred on
        them), the next block being `next_block`."""
        self._grow(labels)
        full = matchmaking.Standing.from_counts(self.labels, self.wins, self.games, self.blocks,
                                                self.last, self.meetings, next_block, self.worth)
        keep = [self.index[label] for label in labels]
        return matchmaking.Standing(list(labels), full.elo[keep] - full.elo[keep].mean(),
                                    full.sd[keep], full.blocks[keep], full.last[keep],
                                    full.meetings[np.ix_(keep, keep)], next_block)


def standing(results, blocks, labels: list, next_block: int, *,
             rule: int = matchmaking.MATCH_RULE) -> matchmaking.Standing:
    """The matchmaker's standing of the active `labels` from the stored results (balanced blocks,
    all versions, every table size) and the scheduled blocks (not cancelled: played or still to
    play): `Tallies` of them."""
    tallies = Tallies(rule)
    tallies._grow(sorted(set(labels) | set(results["entrant"].astype(str))) if len(results)
                  else sorted(labels))
    tallies.add_results(balanced_blocks(results))
    for block, seats in zip(blocks["block"], blocks["seats"]):
        tallies.schedule(block, seats)
    return tallies.standing(labels, next_block)


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


def open_ladder(config: LadderConfig, folder, meta: dict,
                play: PlaySettings | None = None) -> tuple[LadderConfig, int]:
    """Create the ladder's store in `folder` (with the `play` settings), or check that it holds
    this ladder played under these play settings (ArenaError if not: `runner.record_play`);
    returns the ladder as the folder plays it (under the matchmaking rule it was made with) and
    the session number."""
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
            runner.record_play(st, play or PlaySettings(), folder)
        return config, 1
    stored = stored_config(folder)
    config = replace(config, rule=stored.rule)  # a ladder keeps the rule it was made with
    diff = differences(stored.to_dict(), config.to_dict())
    if diff:
        more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
        raise ArenaError(f"{folder} holds another ladder: {diff[0]}{more}; choose a new --out, "
                         f"or continue that one with kdtourney ladder --resume {folder}")
    with store.open_store(folder) as st:
        runner.record_play(st, play or PlaySettings(), folder)
        sessions = st.begin_session(meta.get("command"))
    return config, sessions


def _stored_entrants(folder) -> dict:
    """{label: row} of the ladder's entrants as stored."""
    return {r["label"]: r for r in store.load_ladder_entrants(folder).to_dict("records")}


def chunk_blocks(workers: int, rate: float | None, seconds: float) -> int:
    """Blocks in the next chunk: two per worker at least, about `seconds` of play at `rate`
    (blocks per second, measured so far)."""
    size = 2 * workers
    if rate:
        size = max(size, int(rate * seconds))
    return size


def play_ladder(config: LadderConfig, folder, bots_dirs=(), references=(), *,
                workers: int | None = None, meta: dict | None = None, display=None,
                games: int | None = None, until: float | None = None,
                chunk_seconds: float = CHUNK_SECONDS, poll: float = POLL_SECONDS,
                scheduler=None, after_chunk=None, hang_timeout: float | None = None,
                play: PlaySettings | None = None,
                startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
                require_limits: bool = False) -> LadderOutcome:
    """Run the ladder in `folder` until `games` games are stored, `until` seconds have passed, or
    Ctrl-C (KeyboardInterrupt: the outcome says interrupted). bots_dirs: the watched folders;
    references: fixed entrant specs (--bots). display: a kdtourney.terminal.display.LadderDisplay or None;
    after_chunk: called with the folder after each chunk is queued (the page). poll: seconds
    between the looks at the folders (beside play). scheduler, workers, hang_timeout, play,
    startup_timeout, require_limits: as `runner.run_tournament`. ArenaError for a folder holding
    anything else or for runner failures."""
    started = time.perf_counter()
    folder = Path(folder)
    play = play or PlaySettings()
    if play.sandbox:
        runner.check_sandbox()  # before the folders are scanned: one line, not a note per bot
    with contextlib.ExitStack() as stack:
        cluster, workers = stack.enter_context(runner.holding_workers(folder, scheduler, workers))
        config, _ = open_ladder(config, folder, meta or {}, play)
        table = ladder_table(config)
        settings = runner.bot_settings(table, folder, play, startup_timeout, cluster,
                                       require_limits)
        st = stack.enter_context(store.open_store(folder))
        stored = st.count_games()
        outcome = LadderOutcome(folder=folder, stored_before=stored, stored=stored)
        if display is not None:
            display.begin(config, folder, stored, workers)
            stack.callback(display.end)
            if config.rule != matchmaking.MATCH_RULE:
                display.note(f"{folder} was made under matchmaking rule {config.rule} (this "
                             f"kdtourney makes rule {matchmaking.MATCH_RULE}): it goes on under "
                             f"rule {config.rule}")
        watch = _Watch(folder, bots_dirs, references, dict(startup_timeout=startup_timeout,
                                                          play=play), display, outcome, poll)
        stack.callback(watch.close)
        try:
            watch.first()
        except KeyboardInterrupt:
            outcome.interrupted = True
        else:
            driver = runner.Driver(stack, folder, st, table, watch.registry, cluster=cluster,
                                   workers=workers, settings=settings, play=play, identities={},
                                   hang_timeout=hang_timeout, require_limits=require_limits,
                                   reporter=display)
            feed = LadderFeed(config, folder, watch, display, outcome, games=games,
                              deadline=None if until is None else started + until,
                              chunk_seconds=chunk_seconds, after_chunk=after_chunk)
            ran = driver.run(feed)
            outcome.played, outcome.interrupted = ran.played, ran.interrupted
            outcome.stored = stored + ran.played
    outcome.seconds = time.perf_counter() - started
    return outcome


class LadderFeed(runner.Feed):
    """The feed of a ladder: the blocks left to play of its earlier sessions, then chunks of
    blocks chosen by the matchmaker (`Tallies` kept up to date from the games stored), the next
    chunk chosen and queued while half a chunk is still queued, so the workers never wait for
    matchmaking. A look at the folders that changes the entrants or their code is taken in once
    the games queued are played (a worker keeps the modules it imported: new code needs new
    workers, and no block is played by other code than the one it was scheduled with)."""

    def __init__(self, config: LadderConfig, folder, watch, display, outcome, *, games, deadline,
                 chunk_seconds, after_chunk):
        self.config, self.folder, self.watch = config, folder, watch
        self.display, self.outcome = display, outcome
        self.games, self.deadline, self.chunk_seconds = games, deadline, chunk_seconds
        self.after_chunk = after_chunk
        self.entrants = _stored_entrants(folder)
        self.tallies = Tallies(config.rule)
        self.incoming: Incoming | None = None  # the games of the blocks not yet whole
        self.next_block = self.next_game = 0
        self.pending: list = []  # the blocks of earlier sessions left to play
        self.seen = None         # a look waiting to be taken in
        self.waiting = False     # for a second entrant
        self.over = False

    def start(self, driver) -> None:
        """What the store holds, read once: the results (balanced blocks) and the blocks
        scheduled, the games stored of the blocks not yet whole; the blocks of earlier sessions
        left to play (those whose entrant left are cancelled)."""
        blocks = store.load_blocks(self.folder)
        self.incoming = store.load_incoming(self.folder)
        whole = [b for b in self.incoming.counts if self.incoming.whole(b)]
        self.tallies.add_results(balanced_blocks(self.incoming.take(whole)))
        self.pending, cancel = _pending(blocks, self.entrants, driver.done)
        if cancel:
            driver.st.cancel_blocks(cancel)
        for block, seats, cancelled in zip(blocks["block"], blocks["seats"], blocks["cancelled"]):
            if cancelled or block in cancel:
                self.incoming.drop(block)  # never whole: out of the statistics
            else:
                self.tallies.schedule(block, seats)
        if len(blocks):
            self.next_block = int(blocks["block"].max()) + 1
            self.next_game = int((blocks["first_game"] + blocks["n_players"]).max())

    def took(self, spec, results):
        self.incoming.add(spec, results)
        self.outcome.stored += 1

    def more(self, driver):
        if self.incoming is None:
            self.start(driver)
        if self.over:
            return
        now = time.perf_counter()
        if (self.deadline is not None and now >= self.deadline) or (
                self.games is not None and self.outcome.stored >= self.games):
            self.over = True
            return
        self.look()
        if self.seen is not None:
            if self.watch.needs_idle(self.seen, self.entrants) and driver.busy:
                return  # no more games until the ones queued are played
            self.take_in(driver)
        if self.pending:
            driver.queue(self.pending)
            self.pending = []
        if driver.queued > self.size(driver) // 2 * self.players:
            return
        self.queue_chunk(driver)

    def idle(self, driver):
        """Fewer than two entrants: wait for the next look at the folders."""
        self.look(wait=self.watch.poll_seconds)

    def look(self, wait: float = 0.0):
        seen = self.watch.poll(wait=wait)
        if seen is not None:
            self.seen = seen

    @property
    def players(self) -> float:
        return float(np.mean(self.config.players))

    def size(self, driver) -> int:
        speed = driver.games_per_second()
        return chunk_blocks(driver.workers, speed / self.players if speed else None,
                            self.chunk_seconds)

    def take_in(self, driver):
        seen, self.seen = self.seen, None
        before = self.watch.registry
        self.watch.take_in(seen)
        self.entrants = _stored_entrants(self.folder)
        if self.watch.registry is not before:
            driver.reload(self.watch.registry)

    def queue_chunk(self, driver):
        """Choose the next chunk's blocks from the tallies and queue them; with fewer than two
        entrants, wait for bots (the next look)."""
        active = [label for label, r in self.entrants.items() if r["status"] == ACTIVE]
        if len(active) < 2:
            if not driver.busy:
                if self.display is not None and not self.waiting:
                    self.display.note(f"{len(active)} entrant{'s' * (len(active) != 1)}: waiting "
                                      "for a second bot in the folders")
                self.waiting = True
            return
        self.waiting = False
        budget = None if self.games is None else \
            self.games - self.outcome.stored - driver.outstanding
        self.incoming_results()
        chosen = self.choose(active, self.size(driver), budget)
        if not chosen:
            return
        for b in chosen:
            self.tallies.schedule(b["block"], b["seats"])
        driver.queue(chosen)  # recorded when chosen: the choice depends on timing, not the games
        self.outcome.chunks += 1
        if self.after_chunk is not None:
            self.after_chunk(self.folder)

    def incoming_results(self):
        """Count the blocks whole since the last chunk."""
        whole = [b for b in self.incoming.counts if self.incoming.whole(b)]
        if whole:
            self.tallies.add_results(balanced_blocks(self.incoming.take(whole)))

    def choose(self, active: list, count: int, budget: int | None) -> list[dict]:
        """`count` new blocks after the scheduled ones, at most `budget` games (None: no bound),
        chosen by the matchmaker (block records, kdtourney.tournament.blocks)."""
        st = self.tallies.standing(active, self.next_block)
        specs = {label: self.entrants[label]["spec"] for label in active}
        out = []
        for _ in range(count):
            n = self.config.players[st.block % len(self.config.players)]
            if budget is not None and budget <= 0:
                break
            table = matchmaking.choose_table(st, n, matchmaking.table_rng(self.config.seed,
                                                                          st.block),
                                             rule=self.config.rule)
            seats = [active[i] for i in table]
            out.append(dict(block=st.block, first_game=self.next_game, n_players=n, seats=seats,
                            entrants={label: specs[label] for label in seats}))
            st.scheduled(table)
            self.next_game += n
            if budget is not None:
                budget -= n
        self.next_block = st.block
        return out


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
    entrants = _stored_entrants(folder)
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


class _Watch:
    """The ladder's looks at its folders: the first in the ladder's own process (nothing plays
    before it), the later ones every `poll` seconds in the process beside play, handed to the
    feed when they are done (`poll`) and taken in when it says (`take_in`), so that play never
    waits for one."""

    def __init__(self, folder, bots_dirs, references, bots, display, outcome, poll):
        self.args = (list(bots_dirs), list(references), bots.get("startup_timeout"),
                     bots.get("play"), folder)
        self.folder, self.display, self.outcome = folder, display, outcome
        self.poll_seconds = poll
        self.registry, self.signature = None, None
        self.sources = None  # (sources, listings) of the look taken in last
        self.looking, self.last = None, -math.inf
        self._beside = contextlib.ExitStack()
        self.beside = self._beside.enter_context(beside.beside_play())

    def close(self):
        """End the look under way, if any, and the process beside play."""
        self._beside.close()

    def first(self):
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
            self._beside = contextlib.ExitStack()
            self.beside = self._beside.enter_context(beside.beside_play())
            return None

    def needs_idle(self, seen: Look, entrants: dict) -> bool:
        """Whether taking in `seen` changes the entrants or the bots' code (then the games queued
        are played first)."""
        if seen.error is not None:
            return False
        return (seen.sources, seen.listed) != self.sources or \
            bool(update_entrants(entrants, seen.found, "")[0])

    def take_in(self, seen: Look) -> None:
        """Record what `seen` saw (`_take_in`); a look out of date is looked at again at once."""
        registry = _take_in(self.folder, seen, self.display, self.outcome, self.registry)
        if registry is None:  # out of date: look again at once
            self.signature, self.last = None, -math.inf
        elif registry is not self.registry:
            self.registry, self.signature = registry, seen.signature
            self.sources = (seen.sources, seen.listed)


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


__all__ = ["LadderConfig", "LadderOutcome", "Found", "prepare_ladder",
           "stored_config",
           "play_ladder", "scan", "update_entrants", "standing", "ladder_table", "label_for",
           "open_ladder", "LIST_FILE", "ACTIVE", "SUPERSEDED", "RETIRED", "LADDER_FORMAT"]
