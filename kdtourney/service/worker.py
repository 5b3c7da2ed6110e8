"""What a worker does to play a tournament's games, whichever backend runs it (a local worker
process, kdtourney.service.local_worker, or a Dask worker, kdtourney.service.dask_worker).

    WorkerState     the registry built once from the command's sources, the bots of the entrants
                    it was told of (checked and warmed up once each), play(spec, forced)
    warm_up, warm_bots, warm_bot, kernel_specs, kernel_shape    filling Numba's cache first
    bot_factories, check_loaded     an entrant's bots, and its code checked against the store's
    main_module_hidden              start worker processes without the parent's __main__
"""

from __future__ import annotations

import collections
import sys
import warnings
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from kdtourney import interrupts
from kdtourney.engine import Game, jit
from kdtourney.engine import warm_up as warm_up_engine
from kdtourney.external import SandboxError, StartupError, sandbox
from kdtourney.match.loop import play_match
from kdtourney.registry import BUILT_IN, CODE_FIELDS, BotRegistry, EntrantError, parse_entrant
from kdtourney.registry.serve import warm_up as warm_up_served
from kdtourney.tournament.definition import ArenaError, Tournament

WARM_DECISIONS = 4        # decisions with a choice each entrant's bot makes in the warm-up game


def bot_factories(registry, tournament: Tournament, pool=None, isolate=False):
    """Per entrant (by its index: a tune's batch seats several specs under one label), a callable
    making a new bot (resolved once per worker); a bot in its own process (a TOML bot; with
    `isolate`, every bot) plays in a process of `pool` (kdtourney.external.ProcessPool), the
    entrant's own (two labels of one spec in an A/A test are two entrants)."""
    return [registry.factory(spec, pool, isolate, label)
            for label, spec in zip(tournament.entrants, tournament.specs)]


def check_loaded(registry, tournament: Tournament, recorded: dict, machine: str,
                 local: bool = False) -> None:
    """Every entrant's bot as this worker loaded it is the code the store recorded (`recorded`:
    {label: identity}); ArenaError, one line naming the entrant and `machine`, for the first that
    is not. A TOML bot this worker has not started is checked with the name and version it gave
    where it was started. `local`: a worker on the machine that hashed the TOML bots' files at
    the start of the run, which their processes may write to since: their files are not hashed
    again."""
    for label, spec in zip(tournament.entrants, tournament.specs):
        want = recorded.get(label)
        if not want or not want.get("digest"):
            continue
        registry.assume_hello(spec, want)
        have = registry.identity(spec)
        fields = [k for k in CODE_FIELDS[want["kind"]]
                  if not (local and want["kind"] == "kdtp" and k == "files_sha256")]
        changed = [k for k in fields if want.get(k) != have.get(k)]
        if have["kind"] != want["kind"] or changed:
            raise ArenaError(f"{label} on {machine}: the bot loaded there is not the code the "
                             f"store recorded (digest {have['digest']} there, {want['digest']} "
                             f"recorded; differs in {', '.join(changed) or 'kind'}): give every "
                             "machine the same bot")
        registry.pin(spec, want)  # sandboxed, it plays the files recorded, not later ones


def warm_up(tournament: Tournament, registry, touch=lambda: None, builtin_only=False,
            isolate=False, first=0, warmed: set | None = None) -> None:
    """Load, or on a fresh install compile, every kernel the games need, in this process: the
    engine's, each Python entrant's bot's (`warm_bots`) and, when a bot plays in its own process
    (a TOML bot; with `isolate`, every bot), those of the protocol and of `kdtourney serve`'s
    start (a sandboxed bot copies the cache as its sandbox starts: what is missing there it
    compiles in its private /tmp, for every process). warmed: what this process warmed up
    already (kernel shapes, `kernel_shape`, and "engine", "served"), which is not warmed again,
    and to which what is warmed here is added (a worker's entrants join as a command goes on).

    Workers warming up at once share out the compiling: a kernel compiles in one process and the
    others load it (kdtourney.engine.jit). Each worker starts at the `first`-th step (its slot) and
    goes round; a step needing a kernel that another worker is compiling is put off (the kernels it
    compiled so far are cached) and taken again after the others; when every step left waits for
    another worker, this one waits for the first of them. The bots come first: the engine's
    kernels are mostly those every bot's game needs anyway, and the other workers then start on
    other bots (whose kernels a search bot's playouts may call: a second worker compiles them
    while the first one compiles the rest of the search)."""
    warmed = set() if warmed is None else warmed
    steps: list[tuple[object, Callable[[], object]]]
    steps = [(kernel_shape(spec),
              partial(warm_bots, tournament, registry, touch, builtin_only, [spec]))
             for spec in kernel_specs(_warmed(tournament.specs, registry, builtin_only))]
    steps.append(("engine", warm_up_engine))
    if isolate or any(registry.program(spec) is not None for spec in tournament.specs):
        steps.append(("served", warm_up_served))
    steps = [step for step in steps if step[0] not in warmed]
    if not steps:
        return
    first %= len(steps)
    pending = collections.deque(steps[first:] + steps[:first])
    while pending:
        busy = None
        for _ in range(len(pending)):
            what, step = pending.popleft()
            touch()
            try:
                with jit.busy_raises():
                    step()
            except jit.KernelBusy as exc:
                pending.append((what, step))
                busy = busy or exc
            else:
                warmed.add(what)
                busy = None  # a step done: go round again before waiting
                break
        if busy is not None:
            busy.wait()


def _warmed(specs, registry, builtin_only: bool) -> tuple:
    """The specs to warm up: sandboxed (`builtin_only`), every built-in bot at its defaults too.
    A folder bot may call a built-in's kernels (by subclassing it) that no entrant here warms, and
    a sandbox gets a private copy of the cache: each of its processes would compile them in its
    first decisions, on its clock. Loading them all takes a worker about 0.3 s."""
    if not builtin_only:
        return tuple(specs)
    return (*specs, *(name for name, info in registry.bots.items() if info.origin == BUILT_IN))


def kernel_specs(specs) -> list:
    """One of `specs` per `kernel_shape`: a tune's dozens of theta+ and theta- warm up as one (a
    bot whose numbers choose other kernels loads those in its first game)."""
    chosen: dict = {}
    for spec in specs:
        chosen.setdefault(kernel_shape(spec), spec)
    return list(chosen.values())


def kernel_shape(spec) -> tuple:
    """Which kernels a bot calls: they depend on its code and its switches, not on its numbers
    (Numba compiles per type, not per value), so this is the bot's name and its non-numeric
    parameters (a spec that does not parse is its own: warm_bots passes over its faults, its
    games show them)."""
    try:
        entrant = parse_entrant(spec)
    except EntrantError:
        return ("spec", spec)
    return (entrant.name, tuple(
        (k, "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
        for k, v in entrant.params))


def warm_bots(tournament: Tournament, registry, touch=lambda: None, builtin_only=False,
              specs=None) -> None:
    """A few decisions of each Python entrant's bot (of `specs`, default: all, and sandboxed every
    built-in bot: `_warmed`), in this process, so Numba-compiled bot kernels land in the cache (the
    processes of isolated bots then load them from there): it plays seat 0 of a game, the other
    seats play their middle legal action (with the first one, a search bot's decisions in 4-player
    games never reused its tree).
    builtin_only: kdtourney's own bots only (sandboxed, a bot's code runs nowhere but in its
    sandbox)."""
    rules = tournament.rules_for(tournament.players[0])
    for spec in _warmed(tournament.specs, registry, builtin_only) if specs is None else specs:
        if registry.program(spec) is not None:  # a TOML bot: no code of ours to compile
            continue
        with warnings.catch_warnings():
            if spec not in tournament.specs:
                # sandboxed, every built-in warms up: the warnings of one nobody entered
                # (value-greedy without a network for this table) are nobody's business
                warnings.simplefilter("ignore")
            if builtin_only and registry.bots[registry.resolve(spec).name].origin != BUILT_IN:
                continue
            touch()
            try:
                warm_bot(registry.create(spec), rules, touch)
            except KeyboardInterrupt:
                if interrupts.from_ctrl_c():
                    raise
            except (Exception, SystemExit):  # a faulty bot shows its faults in the games
                pass


def warm_bot(bot, rules, touch) -> None:
    """`bot` plays seat 0 of a game up to WARM_DECISIONS decisions with a choice."""
    bot.setup(0, rules, 0)
    game = Game(rules, 0)
    asked = 0
    while not game.is_over and asked < WARM_DECISIONS:
        legal = game.legal_actions()
        action = legal[len(legal) // 2]
        if game.current_player == 0:
            touch()
            choice = bot.act(game.view(0))
            asked += len(legal) > 1
            if choice in legal:
                action = choice
        game.apply(action)


class WorkerState:
    """What a worker holds to play a command's games, whichever backend runs it (a local worker
    process or a Dask worker, which only differ in how games, entrants and results travel): the
    registry built once from the command's bot `sources` (sandboxed, with what the client's
    registry `listed` the modules define, instead of running them), the bots of the entrants it
    was told of in the order they joined (a game's seats index `pairs`), the bot processes of its
    `pool` (kdtourney.external.ProcessPool) and the kernels it warmed up.

    An entrant joins once (`join`; those of `tdict`, the table, at the start): its code is
    checked against the identity the store recorded (`identities`, {label: identity}), on another
    machine than the one that checked the run (`local` False) its TOML bot is started once to
    say hello, and its bot's kernels are warmed up unless a bot calling the same kernels was
    (`kernel_shape`; with `warm` False, the engine's only). Nothing is restarted, and nothing
    warmed up again, as entrants join. ArenaError, one line naming `machine`, for an entrant this
    worker cannot play as recorded.

    beat: where the worker is, for its backend's watchdog: `warming()` at every step of a
    warm-up, `game(index)` as a game starts, `(seat, call, limit)` at each call into a bot
    (play_match's monitor) and `idle()` (kdtourney.service.heartbeat.Heartbeat, a Dask
    worker's dask_worker.DaskBeat). first: where this worker starts the warm-up's round
    (`warm_up`)."""

    def __init__(self, sources: dict, tdict: dict, isolate: bool, listed, identities: dict, pool,
                 beat, *, machine: str, local: bool, warm: bool = True, first: int = 0):
        self.table = Tournament.from_dict(tdict)
        self.registry = BotRegistry.from_sources(sources, listed=listed)
        self.isolate, self.pool, self.beat = isolate, pool, beat
        self.machine, self.local, self.warm, self.first = machine, local, warm, first
        self.sandboxed = pool.settings.sandbox is not None
        self.rules = {p: self.table.rules_for(p) for p in self.table.players}
        self.pairs: list[tuple] = []      # (label, spec) of the entrants, by index
        self.factories: list = []         # their bots' factories (bot_factories), by index
        self.started: set[str] = set()    # the TOML bots started here to say hello (by name)
        self.warmed: set = set()          # what was warmed up here (warm_up)
        self.join(list(zip(self.table.entrants, self.table.specs)), identities)

    def join(self, pairs, identities: dict) -> None:
        """The entrants `pairs`, [(label, spec)] new to this worker, join it; identities: {label:
        identity} of theirs, as the store records them."""
        more = replace(self.table, entrants=tuple(p[0] for p in pairs),
                       specs=tuple(p[1] for p in pairs))
        if not self.local:
            self._start(more, pairs)
        check_loaded(self.registry, more, identities, self.machine, local=self.local)
        self.factories += bot_factories(self.registry, more, self.pool, self.isolate)
        self.pairs += pairs
        # loading the kernels takes a fresh process a good part of a second (several on a loaded
        # machine): in its first game it would count against the seat called last
        if self.warm:
            warm_up(more, self.registry, self.beat.warming, builtin_only=self.sandboxed,
                    isolate=self.isolate, first=self.first, warmed=self.warmed)
        elif "engine" not in self.warmed:
            self.beat.warming()
            warm_up_engine()
            self.warmed.add("engine")

    def _start(self, more: Tournament, pairs) -> None:
        """Start once each TOML bot of `more` this worker has not started, and exchange hello
        (registry.start_check): ArenaError if one does not start here, or a bot is missing."""
        try:
            names: dict = {}
            for spec in more.specs:
                names.setdefault(self.registry.resolve(spec).name, spec)
            todo = [spec for name, spec in names.items() if name not in self.started]
            if todo and self.sandboxed:
                sandbox.bwrap_path()
            self.registry.start_check(todo, self.pool.settings)
            self.started.update(names)
        except (EntrantError, StartupError, SandboxError) as exc:
            whole = [*self.pairs, *pairs]
            table = replace(self.table, entrants=tuple(p[0] for p in whole),
                            specs=tuple(p[1] for p in whole))
            raise ArenaError(f"{self.machine} cannot play {table.describe()}: {exc}") from None

    def play(self, spec, forced=None, beat=None):
        """Play the game `spec` (a GameSpec whose seats index `pairs`), with the `forced` faults
        (kdtourney.service.forfeit): its MatchResult. beat: this game's, if not the worker's."""
        beat = beat or self.beat
        beat.game(spec.game)
        self.pool.new_game(spec.game, spec.deal_seeds)
        return play_match(self.rules[spec.n_players], spec.deal_seeds, spec.bot_seeds,
                          [self.factories[e] for e in spec.seats],
                          clock=self.table.time_control, margin=self.pool.settings.margin,
                          forced=forced, monitor=beat)

    def close(self) -> None:
        """Stop the bot processes (quit, then killed after a grace)."""
        self.pool.close()

    def kill_all(self) -> None:
        """Kill the bot processes now (this process is going away)."""
        self.pool.kill_all()


class main_module_hidden:
    """Start workers without re-importing the parent's __main__ (which 'spawn' does by default):
    a worker needs only kdtourney and the bots, and a script calling run_tournament need not guard
    itself with `if __name__ == "__main__"`."""

    def __enter__(self):
        self.main = sys.modules.get("__main__")
        self.saved = {k: getattr(self.main, k) for k in ("__file__", "__spec__")
                      if self.main is not None and hasattr(self.main, k)}
        if "__file__" in self.saved:
            del self.main.__file__
        if "__spec__" in self.saved:
            self.main.__spec__ = None

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.main, k, v)


__all__ = ["WorkerState", "bot_factories", "check_loaded", "warm_up", "warm_bots", "warm_bot",
           "kernel_specs", "kernel_shape", "main_module_hidden", "WARM_DECISIONS"]
