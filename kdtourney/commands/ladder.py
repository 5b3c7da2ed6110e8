"""`kdtourney ladder`: a standing rating list of the bots in watched folders.

    prepare_ladder(players=, seed=, ...) -> LadderConfig; stored_config, resumed_config: a
    resume's; check_field(bots_dirs, references, make_registry): entrants to play
    play_ladder(config, folder, bots_dirs, references, meta=, display=, games=, until=,
                after_chunk=, **options) -> LadderOutcome
    open_ladder(config, folder, meta, play): make or check the ladder's folder

Every bot of the folders, every spec of their ladder.txt and every reference is an entrant
(kdtourney.commands.ladder_entrants), in versions by its code; the folders are watched beside
play (ladder_watch); each chunk of duplicate blocks is chosen by the matchmaker (ladder_feed) and
recorded before it is played, so a re-run plays what a killed one left. options: as
kdtourney.commands.setup.Options. Raises ArenaError (one line) for bad input or a folder holding
anything else.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from kdtourney import store
from kdtourney.commands.driver import Driver
from kdtourney.commands.folders import create_store, read_config, record_play, refuse_another
from kdtourney.commands.ladder_feed import CHUNK_SECONDS, LadderFeed
from kdtourney.commands.ladder_watch import POLL_SECONDS, Watch
from kdtourney.commands.setup import Options, setup
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import EntrantError
from kdtourney.stats import matchmaking
from kdtourney.tournament.definition import (
    ArenaError,
    Tournament,
    clock_of,
    differences,
    full_rules,
    parse_players,
)

LADDER_FORMAT = "ladder"


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
    def from_dict(cls, d: dict) -> LadderConfig:
        # no rule recorded: a ladder made under rule 1
        return cls(**dict(d, players=tuple(d["players"]), rule=d.get("rule", 1)))


def prepare_ladder(*, players=None, seed: int | None = None, dynasty: bool = False,
                   move_time_limit: float | None = None, time_control: str | None = None,
                   first_move_time: float | None = None, **rules) -> LadderConfig:
    """Check user input; ArenaError (one line) for bad rules, players or seed."""
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
    config = read_config(folder)
    if "ladder" not in config:
        raise ArenaError(f"{folder} holds a tournament, not a ladder; choose another --out")
    stored = LadderConfig.from_dict(config["ladder"])
    if stored.rule not in matchmaking.RULES:
        raise ArenaError(f"{folder} was made under matchmaking rule {stored.rule}, which this "
                         f"kdtourney does not know (it knows "
                         f"{', '.join(map(str, matchmaking.RULES))}): go on with the kdtourney "
                         "that made it")
    return stored


def resumed_config(folder) -> LadderConfig:
    """The ladder stored in `folder`, for --resume; ArenaError if there is none."""
    config = stored_config(folder)
    if config is None:
        raise ArenaError(f"no ladder in {folder} (no {store.STORE_FILE})")
    return config


def check_field(bots_dirs, references, make_registry) -> None:
    """The ladder's entrants as given: folders to watch and/or references, specs that
    `make_registry()` resolves; ArenaError (one line) for none, for a reference that does not
    resolve, or for fewer than two references and no folder to watch (it would wait for ever)."""
    if not bots_dirs and not references:
        raise ArenaError("no entrants: give --bots-dir FOLDER (watched for bots) and/or "
                         "--bots SPECS")
    registry = make_registry()
    for spec in references:
        try:
            registry.resolve(spec)
        except EntrantError as exc:
            raise ArenaError(str(exc)) from None
    if not bots_dirs and len(set(references)) < 2:
        raise ArenaError("a ladder needs two entrants or more: give more --bots, or a "
                         "--bots-dir to watch")


def ladder_table(config: LadderConfig) -> Tournament:
    """The ladder's fixed settings as a tournament (format `ladder`, no entrants of its own: each
    block records the entrants it seats), stored once when the folder is made."""
    return Tournament(entrants=(), specs=(), format=LADDER_FORMAT, players=config.players,
                      games=0, seed=config.seed, rules=dict(config.rules), dynasty=config.dynasty,
                      move_time_limit=config.move_time_limit, clock=config.clock)


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
    this ladder played under these play settings (ArenaError if not: `record_play`);
    returns the ladder as the folder plays it (under the matchmaking rule it was made with) and
    the session number."""
    folder = Path(folder)
    if not store.exists(folder):
        create_store(folder, ladder_table(config), meta, {}, play, {"ladder": config.to_dict()},
                     then=lambda st: st.write_ladder())
        return config, 1
    stored = resumed_config(folder)
    config = replace(config, rule=stored.rule)  # a ladder keeps the rule it was made with
    refuse_another(folder, "ladder", differences(stored.to_dict(), config.to_dict()),
                   f"choose a new --out, or continue that one with kdtourney ladder --resume "
                   f"{folder}")
    with store.open_store(folder) as st:
        record_play(st, play or PlaySettings(), folder)
        sessions = st.begin_session(meta.get("command"))
    return config, sessions

@contextlib.contextmanager
def terminated_as_interrupted():
    """SIGTERM ends the block as Ctrl-C does (the ladder ends, and so does everything it
    started: the process beside play, the workers, their bots), in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum, frame):
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def play_ladder(config: LadderConfig, folder, bots_dirs=(), references=(), *,
                meta: dict | None = None, display=None, games: int | None = None,
                until: float | None = None, chunk_seconds: float = CHUNK_SECONDS,
                poll: float = POLL_SECONDS, after_chunk=None, **options) -> LadderOutcome:
    """Run the ladder in `folder` until `games` games are stored, `until` seconds have passed, or
    Ctrl-C (KeyboardInterrupt: the outcome says interrupted). bots_dirs: the watched folders;
    references: fixed entrant specs (--bots). display: a kdtourney.terminal.display.LadderDisplay
    or None; after_chunk: called with the folder after each chunk is queued (the page:
    kdtourney.commands.ladder_pages). poll: seconds between the looks at the folders (beside
    play). options: as kdtourney.commands.setup.Options. ArenaError for a folder holding anything
    else and for what cannot be played."""
    started = time.perf_counter()
    folder = Path(folder)
    how = Options(**options)
    table = ladder_table(config)

    def open_folder(identities):
        nonlocal config  # as the folder plays it: under the matchmaking rule it was made with
        config, _ = open_ladder(config, folder, meta or {}, how.play)
        return []

    with terminated_as_interrupted(), setup(table, folder, None, open_folder, how) as s:
        stored = s.st.count_games()
        outcome = LadderOutcome(folder=folder, stored_before=stored, stored=stored)
        if display is not None:
            display.begin(config, folder, stored, s.workers)
            s.stack.callback(display.end)
            if config.rule != matchmaking.MATCH_RULE:
                display.note(f"{folder} was made under matchmaking rule {config.rule} (this "
                             f"kdtourney makes rule {matchmaking.MATCH_RULE}): it goes on under "
                             f"rule {config.rule}")
        watch = Watch(folder, bots_dirs, references, startup_timeout=how.startup_timeout,
                      play=how.play, display=display, outcome=outcome, poll=poll)
        s.stack.callback(watch.close)
        try:
            s.registry = watch.first()
        except KeyboardInterrupt:
            outcome.interrupted = True
        else:
            feed = LadderFeed(config, folder, watch, display, outcome, games=games,
                              deadline=None if until is None else started + until,
                              chunk_seconds=chunk_seconds, after_chunk=after_chunk)
            ran = Driver(s, display).run(feed)
            outcome.played, outcome.interrupted = ran.played, ran.interrupted
            outcome.stored = stored + ran.played
    outcome.seconds = time.perf_counter() - started
    return outcome


__all__ = ["LadderConfig", "LadderOutcome", "prepare_ladder", "stored_config", "resumed_config",
           "check_field", "ladder_table", "open_ladder", "play_ladder", "LADDER_FORMAT"]
