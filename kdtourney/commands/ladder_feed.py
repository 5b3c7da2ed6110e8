"""What a ladder plays next: the matchmaker's chunks of blocks, as the one driver loop asks.

    LadderFeed   the blocks left to play of earlier sessions, then chunks chosen by the matchmaker
                 (kdtourney.stats.matchmaking), the next queued while half a chunk is still queued
    Tallies      what the matchmaker reads, kept up to date from the games stored (a chunk costs
                 the same after 100,000 games as after 1,000); standing(): the same from the store
    chunk_blocks the blocks of a chunk: about CHUNK_SECONDS of play, two per worker at least

A look at the folders that changes the entrants or their code is taken in once the games queued
are played: no block is played by other code than the one it was scheduled with.
"""

from __future__ import annotations

import time

import numpy as np

from kdtourney import store
from kdtourney.commands.driver import Feed
from kdtourney.commands.ladder_entrants import ACTIVE, pending_blocks, stored_entrants
from kdtourney.stats import matchmaking
from kdtourney.stats.outcomes import balanced_blocks, pair_outcomes
from kdtourney.tournament.blocks import Incoming

CHUNK_SECONDS = 3.0


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

    def grow(self, labels) -> None:
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
        self.grow(results["entrant"].astype(str))
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
        self.grow(seats)
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
        self.grow(labels)
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
    tallies.grow(sorted(set(labels) | set(results["entrant"].astype(str))) if len(results)
                  else sorted(labels))
    tallies.add_results(balanced_blocks(results))
    for block, seats in zip(blocks["block"], blocks["seats"]):
        tallies.schedule(block, seats)
    return tallies.standing(labels, next_block)


def chunk_blocks(workers: int, rate: float | None, seconds: float) -> int:
    """Blocks in the next chunk: two per worker at least, about `seconds` of play at `rate`
    (blocks per second, measured so far)."""
    size = 2 * workers
    if rate:
        size = max(size, int(rate * seconds))
    return size


class LadderFeed(Feed):
    """The feed of a ladder: the blocks left to play of its earlier sessions, then chunks of
    blocks chosen by the matchmaker (`Tallies` kept up to date from the games stored), the next
    chunk chosen and queued while half a chunk is still queued, so the workers never wait for
    matchmaking. A look at the folders that changes the entrants or their code is taken in once
    the games queued are played (a worker keeps the modules it imported: new code needs new
    workers, and no block is played by other code than the one it was scheduled with)."""

    def __init__(self, config, folder, watch, display, outcome, *, games, deadline,
                 chunk_seconds, after_chunk):
        self.config, self.folder, self.watch = config, folder, watch
        self.display, self.outcome = display, outcome
        self.games, self.deadline, self.chunk_seconds = games, deadline, chunk_seconds
        self.after_chunk = after_chunk
        self.entrants = stored_entrants(folder)
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
        self.pending, cancel = pending_blocks(blocks, self.entrants, driver.done)
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
        self.entrants = stored_entrants(self.folder)
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


__all__ = ["LadderFeed", "Tallies", "standing", "chunk_blocks", "CHUNK_SECONDS"]
