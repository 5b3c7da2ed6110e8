"""`kdtourney sprt`: duplicate blocks of a candidate against a baseline until an SPRT decides.

    prepare_test(registry, candidate=, baseline=, elo0=, elo1=, ...) -> (Tournament, SprtTest)
    play_sprt(tournament, test, folder, registry, meta=, display=, **options) -> SprtOutcome
    load_test(folder): a resume; evaluate(folder, tournament, test): where the test stands

The test, its tally and the lines that tell it are kdtourney.tournament.sprt's.

The table is a gauntlet: the candidate and n - 1 baselines, each block one deal under every
rotation. `SprtFeed` keeps about LEAD_SECONDS of play queued, evaluates the complete blocks in
order (`Tally`) and, once decided, plays only what the workers hold and the
rest of their blocks, so the decision depends only on the seed and the test. The store's config
`sprt` holds the test, its table `sprt` the LLR path (`record`). options: as
kdtourney.commands.setup.Options. Raises ArenaError (one line) for bad input or a folder holding
anything else. docs/commands.md#how-a-command-plays says more.
"""

from __future__ import annotations

import collections
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

from kdtourney import store
from kdtourney.commands.driver import Driver, Feed
from kdtourney.commands.folders import (
    check_existing,
    create_store,
    open_existing,
    read_config,
    resume_command,
)
from kdtourney.commands.setup import Options, setup
from kdtourney.stats.sprt import DEFAULT_MIN_BLOCKS
from kdtourney.tournament import schedule
from kdtourney.tournament.blocks import of_plan
from kdtourney.tournament.definition import (
    RULE_OPTIONS,
    ArenaError,
    Tournament,
    differences,
    parse_players,
    prepare,
)
from kdtourney.tournament.sprt import (
    SprtState,
    SprtTest,
    Tally,
    cap_blocks,
    stored_test,
    verdict_line,
)
from kdtourney.tournament.sprt import evaluate as evaluate_incoming

DEFAULT_MAX_GAMES = 20_000
LEAD_SECONDS = 0.1     # games queued beyond what the workers hold: about this much play
EVALUATION_SHARE = 10  # the test is evaluated at most once per this many times an evaluation took
RECORD_SECONDS = 1.0   # the `sprt` table and the display's estimate: at most this often, and at
                       # the decision and the end


MAX_ELO = 1000.0   # past it, a score is within rounding of 0 or 1: the model says nothing
MIN_ELO_GAP = 0.1


def _finite(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ArenaError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(x):
        raise ArenaError(f"{name} must be a finite number, not {value}")
    return x


def check_hypotheses(elo0, elo1, alpha, beta, option: str = "--") -> tuple[float, float, float,
                                                                          float]:
    """elo0, elo1, alpha and beta as floats, checked; `option` prefixes the options' names in the
    one-line ArenaError (`--verify-` for a tune's verify)."""
    e0, e1, a, b = (f"{option}{name}" for name in ("elo0", "elo1", "alpha", "beta"))
    elo0, elo1 = _finite(e0, elo0), _finite(e1, elo1)
    if not elo1 > elo0:
        raise ArenaError(f"{e1} must be greater than {e0} (H1: at least elo1 stronger, H0: not "
                         f"more than elo0), not elo0 {elo0:g} and elo1 {elo1:g}")
    if max(abs(elo0), abs(elo1)) > MAX_ELO or elo1 - elo0 < MIN_ELO_GAP:
        raise ArenaError(f"{e0} and {e1} must lie within +-{MAX_ELO:g} and at least "
                         f"{MIN_ELO_GAP:g} apart (a test between closer hypotheses cannot end), "
                         f"not {elo0:g} and {elo1:g}")
    for name, value in ((a, alpha), (b, beta)):
        if not 0 < _finite(name, value) < 0.5:
            raise ArenaError(f"{name} is an error rate strictly between 0 and 0.5, not {value:g}")
    return elo0, elo1, float(alpha), float(beta)


def prepare_test(registry, *, candidate: str | None, baseline: str | None, elo0: float = 0.0,
                 elo1: float = 10.0, alpha: float = 0.05, beta: float = 0.05, players=None,
                 max_games: int = DEFAULT_MAX_GAMES, seed: int | None = None,
                 dynasty: bool = False, move_time_limit: float | None = None,
                 time_control: str | None = None, first_move_time: float | None = None,
                 min_blocks: int = DEFAULT_MIN_BLOCKS, **rules) -> tuple[Tournament, SprtTest]:
    """Check user input and build the tournament (a gauntlet of the candidate against the
    baseline, `max_games` games at most) and the test. Raises ArenaError (one line)."""
    if not candidate or not baseline:
        raise ArenaError("give --candidate and --baseline (bot specs, e.g. --candidate "
                         "mcts:iterations=2000 --baseline mcts:iterations=1000)")
    elo0, elo1, alpha, beta = check_hypotheses(elo0, elo1, alpha, beta)
    if players is None or (isinstance(players, int) and not isinstance(players, bool)):
        players = (players or 2,)
    sizes = parse_players(players)
    if len(sizes) != 1:
        raise ArenaError(f"--players: an SPRT plays one table size (2, 3 or 4), not "
                         f"{','.join(map(str, sizes))}")
    if isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < 1:
        raise ArenaError(f"--max-games must be a positive number of games, not {max_games}")
    if isinstance(min_blocks, bool) or not isinstance(min_blocks, int) or min_blocks < 1:
        raise ArenaError(f"min_blocks must be a positive number of blocks, not {min_blocks}")
    # a round robin of the two specs checks everything (bots, parameters, rules, seed) and labels
    # them (the same spec twice: spec#1, spec#2); the table is the candidate's gauntlet
    both = prepare(registry, bots=[candidate, baseline], players=sizes, games=max_games, seed=seed,
                   dynasty=dynasty, move_time_limit=move_time_limit, time_control=time_control,
                   first_move_time=first_move_time, **rules)
    tournament = replace(both, format=schedule.GAUNTLET, candidate=0)
    try:
        schedule.compositions(tournament.format, 2, sizes[0], 0)
    except schedule.ScheduleError as exc:
        raise ArenaError(str(exc)) from None
    test = SprtTest(candidate=tournament.entrants[0], baseline=tournament.entrants[1], elo0=elo0,
                    elo1=elo1, alpha=float(alpha), beta=float(beta), min_blocks=min_blocks)
    return tournament, test


# --------------------------------------------------------------------------------------------------
# Evaluation from the store
# --------------------------------------------------------------------------------------------------


def tally(folder, tournament: Tournament, test: SprtTest) -> Tally:
    """The test's Tally of the games stored in `folder`."""
    incoming = store.load_incoming(folder)
    out = Tally(tournament, test, incoming, stored=sum(incoming.counts.values()))
    out.advance()
    return out


def evaluate(folder, tournament: Tournament, test: SprtTest) -> SprtState:
    """Where the test of the games stored in `folder` stands (tournament.sprt.evaluate)."""
    return evaluate_incoming(store.load_incoming(folder), tournament, test)


def record(st: store.Store, state: SprtState) -> None:
    """Write the `sprt` table through the command's store `st`."""
    st.write_sprt(state.rows)


def open_test(tournament: Tournament, test: SprtTest, folder, meta: dict,
              identities: dict | None = None, play=None) -> list[str]:
    """Create the store of a new test (with the entrants' `identities` and the `play` settings),
    or check that `folder` holds this test, played by this code under these play settings
    (refused otherwise: ArenaError, see `check_code` and `record_play` of
    kdtourney.commands.folders), and set its cap. Returns notes for the user."""
    folder = Path(folder)
    if not store.exists(folder):
        create_store(folder, tournament, meta, identities, play, {"sprt": test.to_dict()})
        return []
    with open_existing(folder) as st:
        config = st.config()
        if "sprt" not in config:
            raise ArenaError(f"{folder} holds a tournament that is not an SPRT (kdtourney run); "
                             "choose a new --out")
        diff = differences({"tournament": dict(config["tournament"], games=None),
                            "sprt": config["sprt"]},
                           {"tournament": dict(tournament.to_dict(), games=None),
                            "sprt": test.to_dict()})
        notes = check_existing(st, folder, "SPRT", diff, "choose a new --out, or continue that "
                               f"one with kdtourney sprt --resume {folder}", identities, play)
        st.begin_session(meta.get("command"), tournament.games)  # its cap
    return notes


def load_test(folder) -> tuple[Tournament, SprtTest, dict]:
    """The stored tournament, test and meta of an SPRT folder (for --resume); ArenaError if the
    folder holds none."""
    config = read_config(folder)
    if "sprt" not in config:
        raise ArenaError(f"{folder} holds a tournament that is not an SPRT; continue it with "
                         f"{resume_command(folder)}")
    tournament, test = stored_test(config, store.load_sessions(folder)["games"])
    return tournament, test, config.get("meta", {})


# --------------------------------------------------------------------------------------------------
# Playing
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionPoint:
    """When the test decided: the games stored, the games the workers held, and the games of the
    blocks they began that were queued again (the rest of the queue was dropped). The games
    stored past the decision are the last two, no more."""

    stored: int
    held: int
    kept: int


@dataclass
class SprtOutcome:
    """What a call of :func:`play_sprt` did and found. verdict: 'H1', 'H0' or 'undecided' (the cap
    reached), None when interrupted before a decision."""

    folder: Path
    tournament: Tournament
    test: SprtTest
    state: SprtState
    stored_before: int
    played: int = 0
    evaluations: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    decision: DecisionPoint | None = None  # when this session's play decided

    @property
    def verdict(self) -> str | None:
        if self.state.decided:
            return self.state.status
        if self.state.complete >= cap_blocks(self.tournament):
            return "undecided"
        return None

    @property
    def past_decision(self) -> int:
        """Games stored beyond the counted blocks (played past the decision)."""
        return max(0, self.state.stored - self.state.games) if self.state.decided else 0

    def verdict_line(self) -> str:
        return verdict_line(self.state, self.test, self.tournament)


def play_sprt(tournament: Tournament, test: SprtTest, folder, registry, *,
              meta: dict | None = None, display=None, **options) -> SprtOutcome:
    """Play blocks of `tournament` into `folder` until `test` decides or the cap
    (`tournament.games`) is reached; returns an SprtOutcome.

    registry: the BotRegistry the entrants were checked against; display: a
    kdtourney.terminal.display.SprtDisplay (or anything with its methods) or None; options: how
    and where the games are played (kdtourney.commands.setup.Options; on a Dask cluster the
    workers are the cluster's). One game service plays every block. Raises ArenaError for a
    folder holding another test, and for what cannot be played.
    """
    started = time.perf_counter()
    folder = Path(folder)
    how = Options(**options)

    def open_folder(identities):
        return open_test(tournament, test, folder, meta or {}, identities, how.play)

    with setup(tournament, folder, registry, open_folder, how) as s:
        counted = tally(folder, tournament, test)
        state = counted.state()
        record(s.st, state)
        outcome = SprtOutcome(folder=folder, tournament=tournament, test=test, state=state,
                              stored_before=state.stored)
        s.show(display, tournament, test, state)
        if not state.decided and state.complete < cap_blocks(tournament):
            ran = Driver(s, display).run(SprtFeed(outcome, counted, display))
            outcome.played, outcome.interrupted = ran.played, ran.interrupted
    if outcome.interrupted and outcome.state.decided:
        outcome.interrupted = False  # the decision was reached: nothing is left to play
    outcome.seconds = time.perf_counter() - started
    return outcome


class SprtFeed(Feed):
    """The feed of an SPRT: the blocks of the plan in order, kept queued about LEAD_SECONDS of
    play ahead of the workers (so they never wait for an evaluation and little is played past a
    decision); the test evaluated as blocks complete (its Tally scores each block once, from the
    games the driver stores), at most once per EVALUATION_SHARE times what an evaluation takes;
    once decided, the games no worker has taken are dropped, but for those of a block already
    begun (a stored block is always whole: every rotation of its deal)."""

    def __init__(self, outcome: SprtOutcome, counted: Tally, display=None):
        self.outcome, self.tally, self.display = outcome, counted, display
        self.tournament = outcome.tournament
        self.players = self.tournament.players[0]
        self.planned = self.tournament.plan().games
        self.queued_to = counted.complete  # the blocks before it are recorded and handed out
        # what an evaluation takes: the least of the last few (one may include a pause)
        self.costs: collections.deque = collections.deque(maxlen=5)
        self.evaluated = 0.0  # when the last one ended (perf_counter)
        self.recorded = 0.0   # when the `sprt` table was last written

    # Feed.over is a flag the feeds that stop once set; this one computes it, and nothing sets it
    @property
    def over(self) -> bool:  # type: ignore[override]
        return self.tally.decided or self.queued_to >= self.tally.cap

    def took(self, spec, results):
        self.tally.add(spec, results)

    def more(self, driver):
        now = time.perf_counter()
        cost = min(self.costs, default=0.0)
        if not self.tally.decided and (now - self.evaluated >= EVALUATION_SHARE * cost
                                       or not driver.busy) \
                and self.tally.available() >= self.outcome.test.min_blocks:
            self.evaluate(driver, now)
        if not self.over:
            speed = driver.games_per_second()
            lead = max(2 * self.players * driver.workers, int((speed or 0) * LEAD_SECONDS))
            while not self.over and driver.queued < lead:
                self.queue(driver, max(1, -(-(lead - driver.queued) // self.players)))

    def evaluate(self, driver, now):
        if not self.tally.advance():
            return
        self.outcome.evaluations += 1
        self.evaluated = time.perf_counter()
        if self.outcome.evaluations > 1:  # the first makes pandas' first calls (0.1 s)
            self.costs.append(self.evaluated - now)
        if self.tally.decided:
            self.stop(driver)
        if self.tally.decided or self.evaluated - self.recorded >= RECORD_SECONDS:
            self.show(driver)

    def show(self, driver):
        """Write the `sprt` table and show where the test stands."""
        state = self.outcome.state = self.tally.state(estimate=self.display is not None)
        record(driver.st, state)
        self.recorded = time.perf_counter()
        if self.display is not None:
            self.display.update(state)

    def queue(self, driver, blocks: int):
        """The next `blocks` blocks of the plan, to the cap."""
        end = min(self.tally.cap, self.queued_to + blocks)
        chunk = self.planned[self.queued_to * self.players:end * self.players]
        t = self.tournament
        driver.queue(of_plan(t.entrants, t.specs, chunk), chunk)
        self.queued_to = end

    def stop(self, driver):
        """Decided: drop the games no worker has taken, but for those of a block begun."""
        dropped = driver.cancel()
        per_block = collections.Counter(g.block for g in dropped)
        kept = [g for g in dropped if per_block[g.block] < g.n_players]
        self.outcome.decision = DecisionPoint(self.tally.stored, driver.outstanding, len(kept))
        driver.submit(kept)

    def stopped(self, driver):
        self.tally.advance()
        self.show(driver)


__all__ = ["SprtOutcome", "DecisionPoint", "SprtFeed", "prepare_test", "play_sprt", "evaluate",
           "tally", "record", "open_test", "load_test", "check_hypotheses", "RULE_OPTIONS",
           "DEFAULT_MAX_GAMES"]
