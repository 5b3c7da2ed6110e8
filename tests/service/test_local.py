"""The game service: one set of workers plays what its feed hands it, chunk after chunk; a worker
past its games or memory bound is replaced between games without changing a result; new entrants
join the running workers, new sources get new ones."""

import multiprocessing
import os
import textwrap
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest
from arena_support import write_bot

from kdtourney.commands.setup import bot_settings, entrant_identities, open_service
from kdtourney.match.loop import play_match
from kdtourney.registry import BotRegistry
from kdtourney.service import heartbeat, local
from kdtourney.service.forfeit import HANG_GRACE
from kdtourney.tournament.definition import ArenaError, prepare


@pytest.fixture(scope="module")
def registry():
    return BotRegistry(env=False, cwd=False, entry_points=False)


def in_process(tournament, registry, spec):
    """The game as one process plays it, with no worker and no service."""
    factories = [lambda label=label, s=s: registry.create(s)
                 for label, s in zip(tournament.entrants, tournament.specs)]
    return play_match(tournament.rules_for(spec.n_players), spec.deal_seeds, spec.bot_seeds,
                      [factories[e] for e in spec.seats])


def play(service, specs):
    """Hand `specs` to the service and take back every finished game."""
    service.submit(specs)
    got = []
    while service.busy:
        got += service.step()
    return got


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("recycle", [(3, 10**6), (10**6, 0)], ids=["games", "memory"])
def test_chunks_share_the_workers_and_recycling_changes_no_result(tmp_path, registry, recycle):
    t = prepare(registry, bots="random,greedy", players="2,3", games=12, seed=4)
    specs = t.plan().games
    settings = bot_settings(t, tmp_path, None)
    with open_service(t, registry, None, 1, settings, None, entrant_identities(registry, t),
                      on_note=print) as service:
        service.recycle = recycle  # before the first submit starts the workers
        first = play(service, specs[:5])
        assert service.queued == 0 and not service.busy
        second = play(service, specs[5:])
        recycled = service.recycled
    # every batch ends past the bound: the worker is replaced, between games
    assert recycled >= 1 and service.losses == 0
    finished = {f.spec.game: f for f in first + second}
    assert sorted(finished) == list(range(len(specs)))
    for spec in specs:
        want = in_process(t, registry, spec)
        got = finished[spec.game].result
        assert (got.status, got.moves, [s.score for s in got.seats]) == \
               (want.status, want.moves, [s.score for s in want.seats])


@pytest.mark.process
def test_a_service_does_not_restart_its_workers_between_chunks(tmp_path, registry):
    t = prepare(registry, bots="random,greedy", games=8, seed=9)
    specs = t.plan().games
    settings = bot_settings(t, tmp_path, None)
    with open_service(t, registry, None, 2, settings, None,
                      entrant_identities(registry, t)) as service:
        assert len(play(service, specs[:4])) == 4
        processes = [w.process for w in service.pool]
        assert len(play(service, specs[4:])) == 4
        assert [w.process for w in service.pool] == processes  # the same, still up
        assert all(p.is_alive() for p in processes)
        assert service.losses == service.recycled == 0
    assert not any(p.is_alive() for p in processes)  # closing the service ends them


def edge_bot(which):
    """A bot of a folder always taking the first (or last) legal action: two versions of one
    module that play differently."""
    return textwrap.dedent(f'''
        from kdtourney.bots.base import Bot


        class Edge(Bot):
            name = "edge"

            def act(self, view):
                return view.legal_actions()[{0 if which == "first" else -1}]
    ''')


@pytest.mark.process
def test_a_new_version_of_a_module_gets_new_workers_a_new_entrant_joins_the_running_ones(
        tmp_path):
    bots = tmp_path / "bots"
    write_bot(bots, "edge", edge_bot("first"))
    old = BotRegistry([bots], env=False, cwd=False, entry_points=False)
    t = prepare(old, bots="edge,random", games=4, seed=3)
    specs = t.plan().games
    settings = bot_settings(t, tmp_path, None)
    with open_service(t, old, None, 1, settings, None, entrant_identities(old, t)) as service:
        first = {f.spec.game: f.result for f in play(service, specs)}
        processes = [w.process for w in service.pool]
        # a new entrant of the same sources joins the running worker
        t2 = prepare(old, bots="edge,greedy", games=4, seed=3)
        service.join(t2, entrant_identities(old, t2), old)
        assert len(play(service, [replace(s, game=s.game + 100) for s in t2.plan().games])) == 4
        assert [w.process for w in service.pool] == processes and service.reloads == 0
        # the module changes: the next games are played by new workers with the new code
        write_bot(bots, "edge", edge_bot("last"))
        new = BotRegistry([bots], env=False, cwd=False, entry_points=False)
        service.join(t, entrant_identities(new, t), new)
        second = {f.spec.game - 200: f.result
                  for f in play(service, [replace(s, game=s.game + 200) for s in specs])}
        assert service.reloads == 1 and not any(p.is_alive() for p in processes)
    for spec in specs:
        assert first[spec.game].moves == in_process(t, old, spec).moves
        assert second[spec.game].moves == in_process(t, new, spec).moves
        assert second[spec.game].moves != first[spec.game].moves


class _Watched(list):
    """A worker's status array whose every write the parent's watchdog looks at, at once: each
    point where a worker could be preempted between two writes."""

    def __init__(self, clock, watch):
        super().__init__([0.0] * heartbeat.SLOT)
        self.clock, self.watch, self.seen = clock, watch, []

    def __setitem__(self, i, value):
        super().__setitem__(i, value)
        self.seen.append(self.watch(self, self.clock.now))


def test_the_watchdog_never_sees_a_healthy_worker_as_hung():
    """The parent pairs nothing of one step with the time of another: a worker idle for a long
    time that gets a batch, or a long call followed by a clocked one with a short limit, is not
    hung at any of its writes (before, the fresh batch's game index was read with the time the
    worker went idle, and a short limit with the time of the call before: a healthy worker
    killed). A worker past its deadline is."""
    clock = SimpleNamespace(now=0.0)
    status = _Watched(clock, lambda s, now: heartbeat.overdue(s, 0, now))
    beat = heartbeat.Heartbeat(status, 0, 60.0, clock=lambda: clock.now)
    beat.warming()
    beat.idle()
    clock.now = 1000.0        # idle for long, then a batch
    beat.game(7)
    beat(0, 0, None)          # a long call ...
    clock.now = 1059.0
    beat(1, 1, 0.1)           # ... and a clocked one right after it
    clock.now = 1059.5
    beat(-1, -1, None)        # the game's end
    beat.idle()
    assert status.seen and all(limit is None for limit in status.seen)
    beat.game(8)
    beat(0, 0, 0.1)
    clock.now += 0.1 + HANG_GRACE + 0.01  # no step since: past its limit and grace
    assert heartbeat.overdue(status, 0, clock.now).limit == 0.1 + HANG_GRACE


class _FakeWorker:
    def __init__(self, slot):
        self.slot, self.inflight, self.ready, self.tired = slot, [], False, False
        self.conn = SimpleNamespace(poll=lambda: False, close=lambda: None)
        self.process = SimpleNamespace(is_alive=lambda: False, kill=lambda: None,
                                       join=lambda timeout=None: None)


def test_workers_lost_now_and_then_over_a_long_run_do_not_stop_it(tmp_path, registry,
                                                                    monkeypatch):
    """Workers failing to start again and again stop the command (a broken setup); one failing
    now and then between workers that started does not: a ladder running for days stopped at its
    fourth start failure ever."""
    t = prepare(registry, bots="random,greedy", games=4, seed=1)
    with open_service(t, registry, None, 1, bot_settings(t, tmp_path, None), None,
                      entrant_identities(registry, t)) as service:
        monkeypatch.setattr(service, "spawn", lambda slot, warm: _FakeWorker(slot))
        service.pool = [_FakeWorker(0)]
        lose = lambda: service.lose(service.pool[0], "died (exit code 1)")  # noqa: E731
        try:
            for _ in range(2):
                for _ in range(local.MAX_FAILED_STARTS):  # in a row, and no more
                    lose()
                service.handle(service.pool[0], ("ready",))  # one starts, is lost later
                lose()
            for _ in range(local.MAX_FAILED_STARTS):
                lose()
            with pytest.raises(ArenaError, match="keep failing to start"):
                lose()
        finally:
            service.pool = []


class _Process:
    """A worker process the test plays: alive until killed; `on_kill` runs first, what the worker
    does between the parent's look at it and the kill."""

    def __init__(self):
        self.sentinel, self.dead = os.pipe()
        self.alive, self.exitcode, self.on_kill = True, None, None

    def is_alive(self):
        return self.alive

    def kill(self):
        if self.on_kill is not None:
            self.on_kill()
        self.alive, self.exitcode = False, -9
        os.write(self.dead, b"x")

    def join(self, timeout=None):
        pass


@pytest.mark.parametrize("sent", [False, True], ids=["result-lost", "result-sent"])
def test_a_hang_is_charged_to_the_step_found_overdue_not_where_the_worker_got_to(
        tmp_path, registry, monkeypatch, sent):
    """The parent found a worker past the deadline of a seat's decision; a loaded machine let the
    worker, slow rather than hung, end that call, its game and start the next game of its batch
    before the kill landed. The hang is the decision's (seat 1, call 2), and a game whose result
    the worker sent before it died is handed back. Before, the parent read where the worker was
    after the kill (and its results before it): the hang went to the next game, which had not
    started, outside any bot call, or a finished game was lost and charged outside any bot
    call."""
    t = prepare(registry, bots="random,greedy", games=2, seed=1)
    first, second = t.plan().games
    with open_service(t, registry, None, 1, bot_settings(t, tmp_path, None), None,
                      entrant_identities(registry, t)) as service:
        conn, child = multiprocessing.Pipe()
        worker = _FakeWorker(0)
        worker.process, worker.conn, worker.ready = _Process(), conn, True
        monkeypatch.setattr(service, "spawn", lambda slot, warm: _FakeWorker(slot))
        service.pool = [worker]
        try:
            service.submit([first, second])
            service.step(timeout=0)
            assert worker.inflight == [first.game, second.game]
            clock = SimpleNamespace(now=time.monotonic() - 10.0)  # its steps, 10 s ago
            beat = heartbeat.Heartbeat(service.status, 0, 30.0, clock=lambda: clock.now)
            beat.game(first.game)
            for seat, call in ((0, 0), (1, 0), (0, 1), (1, 1)):
                beat(seat, call, None)
            beat(0, 2, 1.2)  # seat 1's first decision: past its 1.2 + 2 s

            def moved_on():
                beat(1, 2, 1.2)
                beat(-1, -1, None)
                if sent:
                    child.send(("game", first.game, in_process(t, registry, first)))
                beat.game(second.game)
                beat(0, 0, None)

            worker.process.on_kill = moved_on
            finished = service.step(timeout=0)
        finally:
            service.pool = []
    if sent:
        assert [f.spec.game for f in finished] == [first.game] and finished[0].result
        assert list(service.notes) == [] and service.pending[0] == second.game
    else:
        assert finished == [] and list(service.notes) == [
            f"worker 0 hung (no progress for 3.2 s) in game {first.game}; playing it again"]
        assert dict(service.policy.losses) == {first.game: 1}
