"""What the two backends of the game service (kdtourney.service.local, .dask_service) share.

    Finished       a game handed back: its spec and MatchResult, or the message of a failed game
    Entrants       the entrants the workers know, in the order they joined (seats index them)
    GameService    the games submitted, those not yet sent, the forfeit policy, the notes; the
                   interface's shared part (submit's queue, queued, cancel, a context manager)
    DEFAULT_HANG_TIMEOUT, NOTES_KEPT
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, replace

from kdtourney.match.loop import MatchResult
from kdtourney.service.forfeit import ForfeitPolicy
from kdtourney.tournament.definition import Tournament

DEFAULT_HANG_TIMEOUT = 600.0  # s without progress before a worker counts as hung, without a clock
NOTES_KEPT = 100              # notes a service keeps (a ladder runs for days)


@dataclass
class Finished:
    """A game the service is done with: its spec and result, or (result None) the message of a
    game that could not be finished (kdtourney.service.forfeit)."""

    spec: object
    result: MatchResult | None = None
    failed: str | None = None


class Entrants:
    """The entrants a service's workers know, (label, spec) in the order they joined: a feed's
    new entrants (a tune's new parameter values, a ladder's new bot) join the running workers, and
    a game's seats are sent as indexes into this list."""

    def __init__(self, tournament: Tournament):
        self.pairs: list[tuple] = []
        self.index: dict[tuple, int] = {}
        self.labels: list[str] = []  # by index, for the forfeit policy's notes and rows
        self.join(tournament)

    def join(self, tournament: Tournament) -> tuple[tuple, list]:
        """(the index of each entrant of `tournament`, the (label, spec) pairs new here)."""
        mapping, new = [], []
        for pair in zip(tournament.entrants, tournament.specs):
            if pair not in self.index:
                self.index[pair] = len(self.pairs)
                self.pairs.append(pair)
                self.labels.append(pair[0])
                new.append(pair)
            mapping.append(self.index[pair])
        return tuple(mapping), new

    def table(self, tournament: Tournament, pairs=None) -> Tournament:
        """`tournament` with these entrants (default: all known) as its own."""
        pairs = self.pairs if pairs is None else pairs
        return replace(tournament, entrants=tuple(p[0] for p in pairs),
                       specs=tuple(p[1] for p in pairs))


class GameService:
    """The part of the interface both backends keep alike (`close` and the rest are theirs):
    the games submitted and not handed back (`specs` as the feed gave them, `sent` with seats
    indexing `entrants`), those not yet sent to a worker (`pending`), the forfeit policy, the
    games handed back at the next step (`finished`), the losses and the latest notes (`on_note`
    is told each). A context manager: leaving it closes the service."""

    def __init__(self, tournament: Tournament, on_note=None):
        self.tournament = tournament
        self.on_note = on_note
        self.notes: collections.deque = collections.deque(maxlen=NOTES_KEPT)
        self.losses = 0          # workers that died or hung
        self.specs: dict = {}    # game index -> GameSpec, of the games submitted and not done
        self.sent: dict = {}     # ... as sent to the workers: seats index self.entrants
        self.pending: collections.deque = collections.deque()  # game indexes not yet sent
        self.finished: list[Finished] = []
        self.renew(tournament)

    def renew(self, tournament: Tournament) -> None:
        """Know only the entrants of `tournament` from now on (new workers, new sources)."""
        self.tournament = tournament
        self.entrants = Entrants(tournament)
        self.mapping = tuple(range(len(tournament.entrants)))  # the last table's seats
        self.policy = ForfeitPolicy(self.sent, self.entrants.labels)

    def submit(self, specs) -> None:
        """Queue games (GameSpecs of the table last joined) to play."""
        for spec in specs:
            self.specs[spec.game] = spec
            self.sent[spec.game] = replace(spec, seats=tuple(self.mapping[e] for e in spec.seats))
            self.pending.append(spec.game)

    @property
    def queued(self) -> int:
        """Games submitted and not yet sent to a worker."""
        return len(self.pending)

    def cancel(self) -> list:
        """Drop the games not yet sent to a worker (those being played still finish); returns
        their GameSpecs."""
        dropped = [self.forget(g) for g in self.pending]
        self.pending.clear()
        return dropped

    def forget(self, game: int):
        """Done with `game` (handed back or cancelled): its GameSpec, no longer kept."""
        self.sent.pop(game)
        self.policy.forget(game)
        return self.specs.pop(game)

    def note(self, text: str) -> None:
        self.notes.append(text)
        if self.on_note is not None:
            self.on_note(text)

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["Finished", "Entrants", "GameService", "DEFAULT_HANG_TIMEOUT", "NOTES_KEPT"]
