"""Games whose worker died or hung: one policy for the local service and the Dask cluster.

    ForfeitPolicy(specs, entrants)
        lost(game, seat, call, why, hung=False, times=1) -> (REPLAY | FAIL | DONE, note's end)
            the first loss of a game blames no one (played again as it was); a later loss in a
            bot's call makes that bot forfeit at that call (or at the earlier call it hung a
            replay in); a loss outside any bot call (seat -1) is played again until the game was
            lost players + 2 times, then it fails
        forced(game) -> {seat: (call, kind, message)}    the faults to force when it is replayed
        forget(game), failed_message(game)
    failed_rows(spec, entrants, message)   the store rows of a failed game ('failed' per seat)
    hang_limit(hang_timeout, call_limit)   seconds a call may make no progress before a hang
    FAILED, REPLAY, FAIL, DONE, HANG_GRACE
Why so: docs/clusters.md.
"""

from __future__ import annotations

import collections

from kdtourney.match.loop import CRASH, TIMEOUT

FAILED = "failed"  # the fault kind of every seat of a game that could not be finished
REPLAY, FAIL, DONE = "replay", "fail", "done"
HANG_GRACE = 2.0   # s a decision may run past the most its clock lets it take before it is a hang


def hang_limit(hang_timeout: float, call_limit: float | None) -> float:
    """Seconds a worker may spend in its current call before it counts as hung: `hang_timeout`,
    or for a decision of an in-process bot under a clock (`call_limit`: the most it may take, its
    margin included; None otherwise) that plus HANG_GRACE when it is shorter."""
    if call_limit is None:
        return hang_timeout
    return min(hang_timeout, call_limit + HANG_GRACE)


class ForfeitPolicy:
    """The losses of a run's games and what to do about each (see the module docstring).

    specs: the plan's GameSpecs (by game index); entrants: the tournament's entrant labels.
    """

    def __init__(self, specs, entrants):
        self.specs, self.entrants = specs, entrants
        self.losses: dict[int, int] = collections.Counter()
        self._forced: dict[int, dict] = collections.defaultdict(dict)

    def forced(self, game: int) -> dict:
        """{seat: (call, kind, message)}: the faults to force when `game` is played again."""
        return dict(self._forced.get(game, {}))

    def lost(self, game: int, seat: int, call: int, why: str, hung: bool = False,
             times: int = 1) -> tuple[str, str]:
        """A worker died or hung (`why`, e.g. 'died (exit code 3)') in `game`, during call `call`
        of `seat`'s bot (seat -1: outside any bot call, or not known), `times` times.
        Returns (REPLAY, FAIL, or DONE for a loss already decided on, the note's ending: what
        happens to the game). `why` goes to the note only: what is stored is the same whichever
        backend played."""
        spec = self.specs[game]
        forced = self._forced[game]
        if seat in forced and forced[seat][0] <= call:
            # a forfeited seat makes no call from that one on: a replay from before the forfeit
            # (Dask replays a task as it was until the client cancels it); counted already
            return DONE, f"{self.entrants[spec.seats[seat]]} (seat {seat + 1}) forfeits it already"
        self.losses[game] += times
        losses = self.losses[game]
        if losses >= 2 and seat >= 0:
            # a seat forfeiting at a later call forfeits here instead: a game played again need
            # not take its course (a loaded machine stalls another call past its limit)
            entrant = self.entrants[spec.seats[seat]]
            # the stored message is the same on every backend (the note says more)
            forced[seat] = (call, TIMEOUT if hung else CRASH,
                            f"the worker {'hung' if hung else 'died'} during this bot's call "
                            f"{call} ({losses} losses of this game)")
            return REPLAY, f"{entrant} (seat {seat + 1}) forfeits it"
        if losses >= spec.n_players + 2:
            return FAIL, "stored as a failed game"
        return REPLAY, "playing it again"

    def forget(self, game: int) -> None:
        """The service is done with `game`: its losses are no longer needed."""
        self.losses.pop(game, None)
        self._forced.pop(game, None)

    def failed_message(self, game: int) -> str:
        """What a failed game's faults say (the same on every backend)."""
        return (f"the game's worker died or hung {self.losses[game]} times, outside any bot call "
                "or where the harness could not tell")


def failed_rows(spec, entrants, message: str) -> tuple[dict, list, list]:
    """The store rows (game, results, faults) of a game that could not be finished: status 'fault',
    no player rows, a 'failed' fault for every seat (who sat there; the seat at fault is not
    known)."""
    moves: list = [] if len(spec.deal_seeds) == 1 else [[] for _ in spec.deal_seeds]
    game = dict(game=spec.game, block=spec.block, arrangement=spec.arrangement,
                n_players=spec.n_players, deal_seeds=list(spec.deal_seeds), status="fault",
                duration=0.0, moves=moves, error=message)
    faults = [dict(seat=seat, entrant=entrants[e], kind=FAILED, message=message, call=None)
              for seat, e in enumerate(spec.seats)]
    return game, [], faults


__all__ = ["ForfeitPolicy", "failed_rows", "hang_limit", "FAILED", "REPLAY", "FAIL", "DONE",
           "HANG_GRACE"]
