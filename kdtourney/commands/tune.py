"""`kdtourney tune`: SPSA tuning of a bot's numeric parameters by play.

    prepare_tune(registry, bot, params, ...) -> (Tournament, Tune)
    play_tune(table, tune, folder, registry, meta=, display=, **options) -> TuneOutcome
    verify(...) -> Verdict, verify_sprt(...) -> SequentialVerdict: the tuned values against the
    start values, over N games or by an SPRT, in FOLDER/verify
    load_tune(folder): a resume

An iteration plays `blocks` duplicate blocks of theta+ against theta- (and, at 3 or 4 players,
the --against opponents); `TuneFeed` plays fixed batches of iterations from the theta after the
previous batch (kdtourney.stats.spsa), so the values depend only on the seed and the tune. The
store's config `tune` holds the tune, its table `tune` one row per iteration (`record`). options:
as kdtourney.commands.setup.Options. Raises ArenaError (one line) for bad input or a folder
holding anything else. docs/commands.md#how-a-command-plays says more.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from kdtourney import store
from kdtourney.commands import sprt as sequential
from kdtourney.commands.driver import Driver, Feed
from kdtourney.commands.folders import check_existing, create_store, open_existing, read_config
from kdtourney.commands.run import run_tournament
from kdtourney.commands.setup import Options, setup
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import EntrantError
from kdtourney.stats import spsa
from kdtourney.stats.descriptive import block_resamples, percentile_interval
from kdtourney.stats.outcomes import balanced_blocks, score_to_elo
from kdtourney.stats.sprt import block_scores
from kdtourney.tournament.blocks import Incoming
from kdtourney.tournament.definition import (
    ArenaError,
    Tournament,
    differences,
    parse_players,
    prepare,
)
from kdtourney.tournament.sprt import SprtTest, verdict_line
from kdtourney.tournament.tune import DEFAULT_BATCH, MINUS, PAGE_FILE, PLUS, Tune

DEFAULT_ITERATIONS = 1000
VERIFY_DIR = "verify"


def parse_param(text: str) -> tuple[str, list[str]]:
    """'c=0.2,0.02,1.0[,c_end[,r_end]]' -> ('c', ['0.2', '0.02', '1.0', ...]); ArenaError."""
    name, eq, values = (text or "").partition("=")
    parts = [v.strip() for v in values.split(",")] if eq else []
    if not name.strip() or not 3 <= len(parts) <= 5 or not all(parts):
        raise ArenaError(f"--param {text!r}: give name=start,min,max[,c_end[,r_end]], e.g. "
                         "--param c=0.2,0.02,1.0")
    return name.strip(), parts


def tuned_params(registry, base, bot: str, params, iterations: int) -> list:
    """The spsa.Params of the --param texts `params` for the bot `base` (the resolved `bot`
    spec): each a numeric parameter of the bot, not fixed in the spec, given once; ArenaError."""
    defaults = registry.bots[base.name].parameters
    fixed = dict(base.params)
    tuned: list = []
    for text in params:
        name, parts = parse_param(text)
        if name not in defaults:
            valid = ", ".join(defaults) or "none"
            raise ArenaError(f"--param {name}: {base.name} has no parameter {name!r} (its "
                             f"parameters: {valid})")
        default = defaults[name]
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            raise ArenaError(f"--param {name}: {base.name}'s parameter {name} is not numeric "
                             f"(default {default!r}); only int and float parameters can be tuned")
        if name in fixed:
            raise ArenaError(f"--param {name}: {name} is also fixed in {bot!r}; give it once")
        if name in (p.name for p in tuned):
            raise ArenaError(f"--param {name} given twice")
        try:
            tuned.append(spsa.make_param(name, *parts, integer=isinstance(default, int),
                                         iterations=iterations))
        except spsa.SpsaError as exc:
            raise ArenaError(str(exc)) from None
    return tuned


def prepare_tune(registry, bot: str | None, params, *, players=None, iterations: int =
                 DEFAULT_ITERATIONS, against=None, seed: int | None = None, batch: int =
                 DEFAULT_BATCH, blocks: int = 1, dynasty: bool = False,
                 move_time_limit: float | None = None, time_control: str | None = None,
                 first_move_time: float | None = None, **rules) -> tuple[Tournament, Tune]:
    """Check user input and build the tune and its table (Tournament with the start values).
    Raises ArenaError with a one-line message."""
    if not bot:
        raise ArenaError("give the bot to tune, e.g. kdtourney tune mcts --param c=0.2,0.02,1.0")
    if not params:
        raise ArenaError("give at least one --param name=start,min,max (e.g. --param "
                         "c=0.2,0.02,1.0)")
    for name, value in (("--iterations", iterations), ("--batch", batch), ("--blocks", blocks)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArenaError(f"{name} must be a positive whole number, not {value}")
    try:
        base = registry.resolve(bot)
    except EntrantError as exc:
        raise ArenaError(str(exc)) from None
    fixed = dict(base.params)
    tuned = tuned_params(registry, base, bot, params, iterations)
    tune = Tune(bot=base.name, fixed=tuple(sorted(fixed.items())), params=tuple(tuned),
                schedule=spsa.Schedule(iterations), batch=batch, blocks=blocks,
                rule=spsa.SPSA_RULE)
    for i, p in enumerate(tune.params):  # the bot must take every value of the range
        for end in (p.min, p.max):
            try:
                theta = [end if j == i else v for j, v in enumerate(tune.start)]
                registry.resolve(tune.spec(theta))
            except EntrantError as exc:
                raise ArenaError(f"--param {p.name}: the range [{p.min:g}, {p.max:g}] holds values "
                                 f"the bot refuses: {exc}") from None
    if players is None or (isinstance(players, int) and not isinstance(players, bool)):
        players = (players or 2,)
    sizes = parse_players(players)
    if len(sizes) != 1:
        raise ArenaError(f"--players: a tune plays one table size (2, 3 or 4), not "
                         f"{','.join(map(str, sizes))}")
    n = sizes[0]
    start = tune.spec(tune.start)
    opponents = [] if against is None else [s.strip() for s in against.split(",") if s.strip()]
    if n == 2 and opponents:
        raise ArenaError("--against fills the seats besides theta+ and theta-: it is for 3 or 4 "
                         "players")
    if not opponents:
        opponents = [start]
    if len(opponents) == 1:
        opponents = opponents * (n - 2)
    if len(opponents) != n - 2:
        raise ArenaError(f"--against: give one spec, or {n - 2} comma-separated ones for the "
                         f"{n - 2} other seats, not {len(opponents)}")
    # the lineup of the start values and the opponents checks every spec, the rules and the seed
    checked = prepare(registry, lineup=[start, start] + opponents, players=sizes,
                      games=iterations * blocks * n, seed=seed, dynasty=dynasty,
                      move_time_limit=move_time_limit, time_control=time_control,
                      first_move_time=first_move_time, **rules)
    assert checked.lineup is not None  # prepared as a lineup
    seat_specs = [checked.specs[i] for i in checked.lineup[2:]]
    others = list(dict.fromkeys(seat_specs))
    table = replace(checked, entrants=(PLUS, MINUS, *others), specs=(start, start, *others),
                    lineup=(0, 1, *(2 + others.index(s) for s in seat_specs)))
    return table, tune


# --------------------------------------------------------------------------------------------------
# A batch's table: every iteration's theta+ and theta- as entrants of their own
# --------------------------------------------------------------------------------------------------


def batch_blocks(table: Tournament, tune: Tune, iterations) -> list[dict]:
    """The block records of a batch (kdtourney.tournament.blocks): each iteration's `blocks` blocks,
    the table's lineup with that iteration's theta+ and theta- values in the seats labelled
    theta+ and theta-."""
    n = table.players[0]
    assert table.lineup is not None  # a tune's table is a lineup (`prepare_tune`)
    seats = [table.entrants[i] for i in table.lineup]
    return [dict(block=b, first_game=b * n, n_players=n, seats=seats,
                 entrants=dict(zip(table.entrants, table.specs),
                               **{PLUS: tune.spec(it.plus), MINUS: tune.spec(it.minus)}))
            for it in iterations for b in range((it.k - 1) * tune.blocks, it.k * tune.blocks)]


# --------------------------------------------------------------------------------------------------
# State from the store
# --------------------------------------------------------------------------------------------------


@dataclass
class TuneState:
    """The tune as the store has it: the iterations replayed from the stored results (see
    `spsa.replay`), games stored."""

    iterations: list = field(default_factory=list)
    stored: int = 0

    @property
    def done(self) -> int:
        """Iterations with a result, in order (the complete batches')."""
        return sum(1 for it in self.iterations if it.after is not None)

    def theta(self, tune: Tune) -> list[float]:
        return spsa.final_theta(tune.params, self.iterations)

    def pending(self) -> list:
        """The iterations of the batch to play next (none when the tune is over)."""
        return [it for it in self.iterations if it.after is None]


def score_blocks(incoming: Incoming, blocks, tune: Tune) -> dict:
    """{block: theta+'s score against theta-} of `blocks` (whole ones, taken from `incoming`),
    NaN for a block without one: under rule 3 also a block with a failed game (not balanced:
    kdtourney.stats.outcomes), which rules 1 and 2 scored from its games played."""
    results = incoming.take(blocks)
    if tune.rule >= 3:
        results = balanced_blocks(results)
    read = block_scores(results, PLUS, MINUS) if len(results) else {}
    return {b: float(read.get(b, math.nan)) for b in blocks}


def iteration_results(scores: dict, tune: Tune) -> dict:
    """{k: result} of the iterations whose blocks are all scored (`scores`: {block: theta+'s
    score}, `score_blocks`)."""
    out = {}
    for k in range(1, tune.schedule.iterations + 1):
        blocks = range((k - 1) * tune.blocks, k * tune.blocks)
        if all(b in scores for b in blocks):
            out[k] = spsa.result_of((scores[b] for b in blocks), rule=tune.rule)
    return out


def state_of(scores: dict, tune: Tune, seed: int, stored: int) -> TuneState:
    """The tune once the blocks of `scores` are scored, `stored` games stored."""
    its = spsa.replay(tune.params, tune.schedule, seed, tune.batch,
                      iteration_results(scores, tune), rule=tune.rule)
    return TuneState(iterations=its, stored=stored)


def stored_scores(folder, tune: Tune) -> tuple[dict, Incoming, int]:
    """(the scores of the whole blocks stored in `folder`, the games stored of the others, the
    games stored)."""
    incoming = store.load_incoming(folder)
    stored = sum(incoming.counts.values())
    return score_blocks(incoming, sorted(b for b in incoming.counts if incoming.whole(b)),
                        tune), incoming, stored


def evaluate(folder, tune: Tune, seed: int) -> TuneState:
    """The tune as the store has it."""
    scores, _, stored = stored_scores(folder, tune)
    return state_of(scores, tune, seed, stored)


def record(st: store.Store, state: TuneState) -> None:
    """Write the `tune` table through the command's store `st`."""
    rows = [(it.k, it.batch, list(it.theta), list(it.signs), list(it.plus), list(it.minus),
             it.result, None if it.after is None else list(it.after))
            for it in state.iterations if it.after is not None]
    st.write_tune(rows)


def open_tune(table: Tournament, tune: Tune, folder, meta: dict, identities: dict,
              play: PlaySettings | None = None) -> tuple[Tune, list[str]]:
    """Create the store of a new tune (with the entrants' `identities` and the `play` settings),
    or check that `folder` holds this tune played by this code under these play settings
    (ArenaError otherwise: `check_code`, `record_play` of kdtourney.commands.folders). Returns the
    tune as the folder plays it (under the SPSA rule it was made with) and notes for the user."""
    folder = Path(folder)
    if not store.exists(folder):
        create_store(folder, table, meta, identities, play, {"tune": tune.to_dict()})
        return tune, []
    with open_existing(folder) as st:
        config = st.config()
        if "tune" not in config:
            raise ArenaError(f"{folder} holds a tournament that is not a tune; choose a new --out")
        stored_table = dict(config["tournament"], entrants=None, specs=None, games=None)
        stored_tune = _stored_tune(config, folder)
        tune = replace(tune, rule=stored_tune.rule)  # a tune keeps the rule it was made with
        diff = differences({"tune": stored_tune.to_dict(), "tournament": stored_table},
                           {"tune": tune.to_dict(),
                            "tournament": dict(table.to_dict(), entrants=None, specs=None,
                                               games=None)})
        notes = check_existing(st, folder, "tune", diff, "choose a new --out, or continue that "
                               f"one with kdtourney tune --resume {folder}", identities, play)
        if tune.rule != spsa.SPSA_RULE:
            notes.append(f"{folder} was made under SPSA rule {tune.rule} (this kdtourney makes "
                         f"rule {spsa.SPSA_RULE}): it finishes under rule {tune.rule}")
        st.begin_session(meta.get("command"))
    return tune, notes


def _stored_tune(config: dict, folder) -> Tune:
    tune = Tune.from_dict(config["tune"])
    if tune.rule not in spsa.RULES:
        raise ArenaError(f"{folder} was made under SPSA rule {tune.rule}, which this kdtourney "
                         f"does not know (it knows {', '.join(map(str, spsa.RULES))}): finish it "
                         "with the kdtourney that made it")
    return tune


def load_tune(folder) -> tuple[Tournament, Tune, dict]:
    """The stored table, tune and meta of a tune folder (for --resume); ArenaError if none."""
    config = read_config(folder)
    if "tune" not in config:
        raise ArenaError(f"{folder} holds no tune (kdtourney tune)")
    return Tournament.from_dict(config["tournament"]), _stored_tune(config, folder), \
        config.get("meta", {})


# --------------------------------------------------------------------------------------------------
# Playing
# --------------------------------------------------------------------------------------------------


@dataclass
class TuneOutcome:
    folder: Path
    table: Tournament
    tune: Tune
    state: TuneState
    stored_before: int
    played: int = 0
    batches: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    decision_seconds: float = 0.0  # the bots' decision time, summed over every game stored

    @property
    def theta(self) -> list[float]:
        return self.state.theta(self.tune)

    @property
    def complete(self) -> bool:
        return self.state.done >= self.tune.schedule.iterations

    def tuned_spec(self) -> str:
        return self.tune.spec(self.tune.rounded(self.theta))


def play_tune(table: Tournament, tune: Tune, folder, registry, *, meta: dict | None = None,
              display=None, **options) -> TuneOutcome:
    """Play the tune's batches into `folder` until its last iteration (or an interruption).

    As `sequential.play_sprt`: registry, meta, display (kdtourney.terminal.display.TuneDisplay or
    None), options (kdtourney.commands.setup.Options). One game service plays every batch: a
    batch's theta+ and theta- join its running workers as new entrants. Raises ArenaError for a
    folder holding something else, and for what cannot be played.
    """
    started = time.perf_counter()
    folder = Path(folder)
    how = Options(**options)

    def open_folder(identities):
        nonlocal tune  # as the folder plays it: under the SPSA rule it was made with
        tune, notes = open_tune(table, tune, folder, meta or {}, identities, how.play)
        return notes

    with setup(table, folder, registry, open_folder, how) as s:
        scores, incoming, stored = stored_scores(folder, tune)
        state = state_of(scores, tune, table.seed, stored)
        record(s.st, state)
        outcome = TuneOutcome(folder=folder, table=table, tune=tune, state=state,
                              stored_before=state.stored)
        s.show(display, table, tune, state)
        if state.pending():
            ran = Driver(s, display).run(TuneFeed(outcome, scores, incoming, display))
            outcome.played, outcome.interrupted = ran.played, ran.interrupted
    outcome.seconds = time.perf_counter() - started
    outcome.decision_seconds = float(store.load_results(folder, columns=["time_total"])
                                     ["time_total"].sum())
    return outcome


class TuneFeed(Feed):
    """The feed of a tune: one batch at a time (all the iterations of a batch start from the
    theta after the previous one), its blocks with each iteration's theta+ and theta- as new
    entrants; once its games are all stored, the batch's blocks are scored, theta steps, the
    `tune` table is written and the next batch is queued."""

    def __init__(self, outcome: TuneOutcome, scores: dict, incoming: Incoming, display=None):
        self.outcome, self.scores, self.incoming = outcome, scores, incoming
        self.display = display
        self.batch: list = []  # the blocks of the batch being played

    # Feed.over is a flag the feeds that stop once set; this one computes it, and nothing sets it
    @property
    def over(self) -> bool:  # type: ignore[override]
        return not self.batch and not self.outcome.state.pending()

    def took(self, spec, results):
        self.incoming.add(spec, results)
        self.outcome.state.stored += 1

    def more(self, driver):
        o = self.outcome
        blocks = [b["block"] for b in self.batch if b["block"] not in self.scores]
        if self.batch and all(self.incoming.whole(b) for b in blocks):
            self.scores.update(score_blocks(self.incoming, blocks, o.tune))
            self.batch = []
            o.state = state_of(self.scores, o.tune, o.table.seed, o.state.stored)
            record(driver.st, o.state)
            if self.display is not None:
                self.display.update(o.state)
        if not self.batch and o.state.pending():
            self.batch = batch_blocks(o.table, o.tune, o.state.pending())
            o.batches += 1
            driver.queue(self.batch)


# --------------------------------------------------------------------------------------------------
# Verifying: the tuned values against the start values
# --------------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    """The tuned spec against the start spec: mean pairwise score of the tuned in the verify
    games, as Elo with a 95% block-bootstrap interval."""

    tuned: str
    start: str
    games: int
    blocks: int
    score: float
    elo: float
    lo: float
    hi: float
    interrupted: bool = False

    @property
    def better(self) -> bool:
        return self.lo > 0

    def line(self) -> str:
        what = (f"tuned {self.tuned} against start {self.start} over {self.games} games "
                f"({self.blocks} deals): Elo {self.elo:+.1f} [{self.lo:+.1f}, {self.hi:+.1f}] "
                f"(score {self.score:.3f})")
        if self.better:
            return f"the tune beat its start values: {what}"
        if self.hi < 0:
            return f"the tune did NOT beat its start values, it is weaker: {what}"
        return f"the tune did NOT beat its start values (the interval includes 0): {what}"


def verify_table(registry, table: Tournament, tuned: str, start: str, games: int) -> Tournament:
    """The verify games: the tuned spec in theta+'s seat, the start spec in theta-'s, the same
    opponents, on deals of their own (a seed derived from the tune's)."""
    seed = int(np.random.SeedSequence([table.seed, 3]).generate_state(2, np.uint32)[0])
    assert table.lineup is not None  # a tune's table is a lineup (`prepare_tune`)
    opponents = [table.specs[i] for i in table.lineup[2:]]
    return replace(prepare(registry, lineup=[tuned, start] + opponents, players=table.players,
                           games=games, seed=seed, dynasty=table.dynasty,
                           move_time_limit=table.move_time_limit, **table.rules),
                   clock=table.clock)


def verify(registry, table: Tournament, tuned: str, start: str, games: int, folder, *,
           meta=None, reporter=None, n_boot: int = 2000, **options) -> Verdict:
    """Play (or finish) the verify games in FOLDER/verify and measure the gain. options: as
    kdtourney.commands.setup.Options."""
    vt = verify_table(registry, table, tuned, start, games)
    out = Path(folder) / VERIFY_DIR
    _check_verify_folder(out, vt, None)
    ran = run_tournament(vt, out, registry, meta=meta, reporter=reporter, **options)
    return replace(verdict_of(store.load_results(out), vt.entrants[0], vt.entrants[1], tuned,
                              start, n_boot), interrupted=ran.interrupted)


def verdict_of(results, candidate: str, baseline: str, tuned: str, start: str,
               n_boot: int = 2000) -> Verdict:
    """The Verdict of the verify games' `results` (the tuned spec labelled `candidate`, the start
    spec `baseline`): the balanced blocks only (a block with a failed game is left out, as in
    every statistic: kdtourney.stats.outcomes)."""
    results = balanced_blocks(results)
    values = block_scores(results, candidate, baseline).dropna().to_numpy(dtype=float)
    draws = np.concatenate([c @ values / len(values) for c in block_resamples(
        np.random.default_rng(0), n_boot, len(values))]) if len(values) else np.array([np.nan])
    lo, hi = percentile_interval(draws[:, None])
    mean = float(values.mean()) if len(values) else math.nan
    return Verdict(tuned=tuned, start=start, games=len(results["game"].unique()),
                   blocks=len(values), score=mean, elo=float(score_to_elo(mean)),
                   lo=float(score_to_elo(lo[0])), hi=float(score_to_elo(hi[0])))


def verify_test(elo0=0.0, elo1=10.0, alpha=0.05, beta=0.05) -> SprtTest:
    """The sequential test of a verify (`--verify-elo0` ...), checked (ArenaError); `verify_sprt`
    labels its candidate and baseline."""
    elo0, elo1, alpha, beta = sequential.check_hypotheses(elo0, elo1, alpha, beta, "--verify-")
    return SprtTest(candidate=PLUS, baseline=MINUS, elo0=elo0, elo1=elo1, alpha=alpha,
                               beta=beta)


@dataclass
class SequentialVerdict:
    """The tuned spec against the start spec by an SPRT (kdtourney.commands.sprt) over at
    most the verify's games."""

    tuned: str
    start: str
    outcome: sequential.SprtOutcome

    @property
    def interrupted(self) -> bool:
        return self.outcome.interrupted

    @property
    def verdict(self) -> str | None:
        """'H1', 'H0', 'undecided' (the cap reached), or None (interrupted)."""
        return self.outcome.verdict

    def line(self) -> str:
        o = self.outcome
        verdict = verdict_line(o.state, o.test, o.tournament, candidate="tune",
                                          baseline="the start values")
        return f"{verdict}; tuned {self.tuned} against start {self.start}"


def verify_sprt(registry, table: Tournament, tuned: str, start: str, games: int, folder,
                test: SprtTest, *, meta=None, display=None, **options
                ) -> SequentialVerdict:
    """Play (or go on with) the verify in FOLDER/verify as an SPRT (`test`, from `verify_test`)
    of the tuned spec against the start spec, stopping at a bound or after `games` games (the
    cap, which a re-run may change as `kdtourney sprt --max-games` does). options: as
    kdtourney.commands.setup.Options."""
    vt = verify_table(registry, table, tuned, start, games)
    test = replace(test, candidate=vt.entrants[0], baseline=vt.entrants[1])
    out = Path(folder) / VERIFY_DIR
    _check_verify_folder(out, vt, test)
    outcome = sequential.play_sprt(vt, test, out, registry, meta=meta, display=display, **options)
    return SequentialVerdict(tuned=tuned, start=start, outcome=outcome)


def _check_verify_folder(out: Path, vt: Tournament, test: SprtTest | None
                         ) -> None:
    """Refuse (ArenaError) a verify folder of another verify: other games or tuned values, or
    a sequential test where none is asked (or another test, or none, where one is)."""
    if not store.exists(out):
        return
    try:
        config = store.load_config(out)
        stored = config["tournament"]
    except (store.StoreError, KeyError):
        return  # the runner says what is wrong with it
    stored_test = config.get("sprt")
    if test is None and stored_test is not None:
        raise ArenaError(f"{out} holds a sequential verify (--verify-elo0 "
                         f"{stored_test['elo0']:g} --verify-elo1 {stored_test['elo1']:g}): give "
                         f"the --verify options of that one again, or remove {out}")
    if test is not None and stored_test is None:
        raise ArenaError(f"{out} holds a verify of {stored.get('games')} games without a "
                         f"sequential test: give the --verify of that one again (without "
                         f"--verify-elo0/--verify-elo1), or remove {out}")
    asked = vt.to_dict()
    if test is not None:  # an SPRT's cap may change
        stored, asked = dict(stored, games=None), dict(asked, games=None)
        stored, asked = dict(stored, test=stored_test), dict(asked, test=test.to_dict())
    diff = differences(stored, asked)
    if diff:
        given = "--verify" if test is None else "--verify options"
        raise ArenaError(f"{out} holds another verify ({diff[0]}): give the {given} of that one "
                         f"again, or remove {out}")


# --------------------------------------------------------------------------------------------------
# Text and the live view
# --------------------------------------------------------------------------------------------------


def values_text(tune: Tune, values) -> str:
    return " ".join(f"{p.name}={v}" for p, v in zip(tune.params, tune.rounded(values)))


def header_line(table: Tournament, tune: Tune, state: TuneState, workers: int) -> str:
    n = table.players[0]
    text = (f"tune {tune.spec(tune.start)} ({table.describe().split('(', 1)[1]}: "
            f"{tune.schedule.iterations} iterations of {tune.blocks} "
            f"block{'s' * (tune.blocks > 1)} "
            f"({tune.blocks * n} games), batches of {tune.batch}, seed {table.seed}, {workers} "
            f"worker{'s' * (workers != 1)}")
    if state.stored:
        text += f"; {state.done} iterations and {state.stored} games stored"
    return text


def status_line(tune: Tune, state: TuneState) -> str:
    return (f"iteration {state.done}/{tune.schedule.iterations}, {state.stored} games: "
            f"{values_text(tune, state.theta(tune))}")


__all__ = ["Tune", "TuneState", "TuneOutcome", "Verdict", "prepare_tune",
           "play_tune", "TuneFeed", "evaluate", "record", "open_tune", "load_tune", "verify",
           "verdict_of", "score_blocks",
           "verify_table", "verify_test", "verify_sprt", "SequentialVerdict", "parse_param",
           "values_text", "PLUS", "MINUS", "DEFAULT_BATCH",
           "PAGE_FILE", "VERIFY_DIR"]
