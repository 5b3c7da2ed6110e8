"""What an SPRT is and where it stands, from its stored blocks: the test (`SprtTest`), its state
(`SprtState`), the tally of complete blocks fed in order into one SPRT (`Tally`, `evaluate`), and
the lines that tell it (`verdict_line`, `status_line`, `estimate_text`, `header_line`).

The command (kdtourney.commands.sprt) plays the blocks; the report and the terminal read the test
here, from what the store holds, without the command's machinery.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from kdtourney.stats.outcomes import balanced_blocks
from kdtourney.stats.sprt import DEFAULT_MIN_BLOCKS, SPRT, block_scores, sprt_bounds
from kdtourney.tournament.blocks import Incoming
from kdtourney.tournament.definition import Tournament

VERDICTS = ("H1", "H0", "undecided")


@dataclass(frozen=True)
class SprtTest:
    """The hypotheses and error rates of a test; candidate and baseline are entrant labels."""

    candidate: str
    baseline: str
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_blocks: int = DEFAULT_MIN_BLOCKS

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SprtTest:
        return cls(**d)

    def new(self) -> SPRT:
        """A fresh SPRT with these parameters."""
        return SPRT(self.elo0, self.elo1, alpha=self.alpha, beta=self.beta,
                    min_blocks=self.min_blocks)

    @property
    def bounds(self) -> tuple[float, float]:
        return sprt_bounds(self.alpha, self.beta)


def cap_blocks(tournament: Tournament) -> int:
    """Blocks within the cap: the tournament's games rounded up to whole blocks."""
    return -(-tournament.games // tournament.players[0])


def with_cap(tournament: Tournament, max_games: int) -> Tournament:
    return replace(tournament, games=int(max_games))


def stored_test(config: dict, caps) -> tuple[Tournament, SprtTest]:
    """The tournament and test an SPRT folder's `config` holds, under the last cap its sessions
    set (`caps`: their `games`, oldest first; none: the tournament's own)."""
    caps = [c for c in caps if c is not None and not (isinstance(c, float) and math.isnan(c))]
    cap = int(caps[-1]) if caps else config["tournament"]["games"]
    return (with_cap(Tournament.from_dict(config["tournament"]), cap),
            SprtTest.from_dict(config["sprt"]))


@dataclass
class SprtState:
    """The test as the store has it.

    status: 'H1', 'H0' or 'continue'; blocks / games: counted (the complete blocks in order, up to
    the decision); complete: complete blocks in order within the cap (>= blocks); stored: games in
    the store; llr, lower, upper, elo, lo, hi: after the last counted block; rows: the `sprt` table.
    """

    status: str = "continue"
    blocks: int = 0
    games: int = 0
    complete: int = 0
    stored: int = 0
    llr: float = 0.0
    lower: float = math.nan
    upper: float = math.nan
    elo: float = math.nan
    lo: float = math.nan
    hi: float = math.nan
    rows: list = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.status in ("H0", "H1")


class Tally:
    """The test's blocks as their games come in (from the store, or from the driver as each is
    stored): the scores of the complete blocks in order, fed to one SPRT (a complete block's games
    do not change, and the LLR after a block does not depend on later ones: each block is scored
    and fed once), and the games stored of the later blocks (`incoming`) until their block is
    complete. A block with a failed game has no score (it is not balanced: see
    kdtourney.stats.outcomes) and adds nothing to the test."""

    def __init__(self, tournament: Tournament, test: SprtTest, incoming: Incoming | None = None,
                 stored: int = 0):
        self.test, self.cap = test, cap_blocks(tournament)
        self.players = tournament.players[0]
        self.t = test.new()
        self.scores: list[float] = []  # the complete blocks', NaN without a score
        self.incoming = incoming or Incoming()
        self.stored = stored

    @property
    def complete(self) -> int:
        """Complete blocks in order, within the cap."""
        return len(self.scores)

    def add(self, spec, results) -> None:
        """A game stored, with its result rows (none for a failed game)."""
        self.stored += 1
        if spec.block < self.cap:
            self.incoming.add(spec, results)

    def available(self) -> int:
        """Complete blocks in order, within the cap, counting those not yet scored."""
        end = self.complete
        while end < self.cap and self.incoming.whole(end):
            end += 1
        return end

    def advance(self) -> bool:
        """Score the blocks complete now in order and feed them to the test; whether any was."""
        begin, end = self.complete, self.available()
        if end == begin:
            return False
        results = balanced_blocks(self.incoming.take(range(begin, end)))
        new = (block_scores(results, self.test.candidate, self.test.baseline) if len(results)
               else pd.Series(dtype=float))
        scores = [float(new.get(b, math.nan)) for b in range(begin, end)]
        self.scores += scores
        self.t.update(scores)
        return True

    @property
    def decided(self) -> bool:
        return self.t.decided_at is not None

    def state(self, estimate: bool = True) -> SprtState:
        """Where the test stands: the SprtState of the complete blocks, up to the decision.
        estimate: compute the Elo estimate (always once the test has ended); else NaN."""
        t, (lower, upper) = self.t, self.t.bounds
        state = SprtState(complete=self.complete, stored=self.stored, lower=lower, upper=upper)
        counted = np.cumsum(~np.isnan(self.scores))  # blocks with a score, after each complete one
        end = self.complete if t.decided_at is None else \
            int(np.searchsorted(counted, t.decided_at)) + 1
        path = t.path
        state.rows = [(b + 1, float(path[counted[b] - 1]) if counted[b] else 0.0, lower, upper,
                       math.nan, math.nan, math.nan) for b in range(end)]
        state.status = t.status
        state.blocks = end
        state.games = state.blocks * self.players
        state.llr = t.llr if t.decided_at is None else float(path[t.decided_at - 1])
        if estimate or t.decided_at is not None or self.complete >= self.cap:
            state.elo, state.lo, state.hi = t.elo_estimate()
        if state.rows:  # the estimate where the test stands, on the last row
            state.rows[-1] = state.rows[-1][:4] + (state.elo, state.lo, state.hi)
        return state


def evaluate(incoming: Incoming, tournament: Tournament, test: SprtTest) -> SprtState:
    """Feed the complete blocks of `incoming` (the stored games), in block order and within the
    cap, into a fresh SPRT until it decides; the decision and the rows depend on those blocks'
    games only."""
    out = Tally(tournament, test, incoming, stored=sum(incoming.counts.values()))
    out.advance()
    return out.state()


def _elo(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+.1f}"


def estimate_text(state: SprtState) -> str:
    """'Elo +23.1 [+8.0, +38.4] corrected for stopping' (the candidate's advantage and its 95%
    interval, corrected for the test's stopping when it did: see kdtourney.stats.sprt)."""
    return f"Elo {_elo(state.elo)} [{_elo(state.lo)}, {_elo(state.hi)}] corrected for stopping"


def status_line(state: SprtState) -> str:
    """One line of the test's state: blocks, games, LLR and bounds, Elo estimate."""
    return (f"{state.blocks} blocks, {state.games} games: LLR {state.llr:.2f} "
            f"[{state.lower:.2f}, {state.upper:.2f}], {estimate_text(state)}")


_MORE_THAN = ("stronger than", "more than {:g} Elo stronger than", "less than {:g} Elo weaker than")
_AT_LEAST = ("at least as strong as", "at least {:g} Elo stronger than",
             "at most {:g} Elo weaker than")


def _relation(words: tuple, elo: float, baseline: str) -> str:
    """The candidate's strength against `baseline`, in words: (at zero, above, below)."""
    text = words[0] if elo == 0 else words[1] if elo > 0 else words[2]
    return f"{text.format(abs(elo))} {baseline}"


def verdict_line(state: SprtState, test: SprtTest, tournament: Tournament, *,
                 candidate: str = "candidate", baseline: str = "the baseline") -> str:
    """'H1 accepted: ...', 'H0 accepted: ...' or 'undecided after N games ...' (or 'no decision
    yet ...' for an interrupted test). Each claims only what the test shows: H1, that the candidate
    is more than elo0 stronger (with error rate alpha); H0, that it is not shown to be elo1
    stronger (a candidate that is fails with rate beta), not that it is no stronger. candidate,
    baseline: what the line calls them (a tune's verify: 'tune' and 'the start values')."""
    where = f"after {state.games} games ({state.blocks} blocks)"
    if state.status == "H1":
        return (f"H1 accepted: the {candidate} is {_relation(_MORE_THAN, test.elo0, baseline)} (a "
                f"{candidate} that is not passes about {100 * test.alpha:g}% of the time); LLR "
                f"{state.llr:.2f} >= {state.upper:.2f} {where}; {estimate_text(state)}")
    if state.status == "H0":
        return (f"H0 accepted: the {candidate} is not shown to be "
                f"{_relation(_AT_LEAST, test.elo1, baseline)} (a {candidate} that is fails about "
                f"{100 * test.beta:g}% of the time); LLR {state.llr:.2f} <= {state.lower:.2f} "
                f"{where}; {estimate_text(state)}")
    inside = f"LLR {state.llr:.2f} within [{state.lower:.2f}, {state.upper:.2f}]"
    if state.complete >= cap_blocks(tournament):
        return f"undecided after {state.games} games ({state.blocks} blocks): {inside}; " \
               f"{estimate_text(state)}"
    return f"no decision yet {where}: {inside}; {estimate_text(state)}"


def header_line(tournament: Tournament, test: SprtTest, state: SprtState, workers: int) -> str:
    p = tournament.players[0]
    lower, upper = test.bounds
    cap = cap_blocks(tournament)
    text = (f"SPRT {tournament.describe()}: H0 elo <= {test.elo0:g}, H1 elo >= {test.elo1:g}, "
            f"alpha {test.alpha:g}, beta {test.beta:g}, LLR bounds [{lower:.2f}, {upper:.2f}]; "
            f"blocks of {p} games, at most {cap * p} games, seed {tournament.seed}, "
            f"{workers} worker{'s' * (workers != 1)}")
    if state.stored:
        text += f"; {state.stored} games stored"
    return text


__all__ = ["SprtTest", "SprtState", "Tally", "stored_test", "evaluate", "cap_blocks",
           "with_cap", "verdict_line", "status_line", "estimate_text", "header_line", "VERDICTS"]
