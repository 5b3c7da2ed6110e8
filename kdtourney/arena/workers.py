"""What a worker does to play a tournament's games, whichever backend runs it (the local
runner's processes, kdtourney.arena.runner, or Dask workers, kdtourney.arena.cluster): the bot
factories, the warm-up that fills Numba's cache, and starting worker processes without the
parent's __main__."""

from __future__ import annotations

import collections
import sys
import warnings

from kdtourney import interrupts
from kdtourney.engine import jit
from kdtourney.arena.tournament import ArenaError, Tournament
from kdtourney.bots.registry import BUILT_IN, EntrantError, parse_entrant
from kdtourney.bots.serve import warm_up as warm_up_served
from kdtourney.engine import warm_up as warm_up_engine

WARM_DECISIONS = 4        # decisions with a choice each entrant's bot makes in the warm-up game


def bot_factories(registry, tournament: Tournament, pool=None, isolate=False):
    """Per entrant (by its index: a tune's batch seats several specs under one label), a callable
    making a new bot (resolved once per worker); a bot in its own process (a TOML bot; with
    `isolate`, every bot) plays in a process of `pool` (kdtourney.bots.external.ProcessPool), the
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
    from kdtourney.bots.registry import CODE_FIELDS

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
            isolate=False, first=0) -> None:
    """Load, or on a fresh install compile, every kernel the games need, in this process: the
    engine's, each Python entrant's bot's (`warm_bots`) and, when a bot plays in its own process
    (a TOML bot; with `isolate`, every bot), those of the protocol and of `kdtourney serve`'s
    start (a sandboxed bot copies the cache as its sandbox starts: what is missing there it
    compiles in its private /tmp, for every process).

    Workers warming up at once share out the compiling: a kernel compiles in one process and the
    others load it (kdtourney.engine.jit). Each worker starts at the `first`-th step (its slot) and
    goes round; a step needing a kernel that another worker is compiling is put off (the kernels it
    compiled so far are cached) and taken again after the others; when every step left waits for
    another worker, this one waits for the first of them. The bots come first: the engine's
    kernels are mostly those every bot's game needs anyway, and the other workers then start on
    other bots (whose kernels a search bot's playouts may call: a second worker compiles them
    while the first one compiles the rest of the search)."""
    steps = [lambda spec=spec: warm_bots(tournament, registry, touch, builtin_only, [spec])
             for spec in kernel_specs(_warmed(tournament.specs, registry, builtin_only))]
    steps.append(warm_up_engine)
    if isolate or any(registry.program(spec) is not None for spec in tournament.specs):
        steps.append(warm_up_served)
    first %= len(steps)
    pending = collections.deque(steps[first:] + steps[:first])
    while pending:
        busy = None
        for _ in range(len(pending)):
            step = pending.popleft()
            touch()
            try:
                with jit.busy_raises():
                    step()
            except jit.KernelBusy as exc:
                pending.append(step)
                busy = busy or exc
            else:
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
    """One of `specs` per bot and non-numeric parameters: which kernels a bot calls depends on its
    code and its switches, not on its numbers (Numba compiles per type, not per value), so a
    tune's dozens of theta+ and theta- warm up as one (a bot whose numbers choose other kernels
    loads those in its first game)."""
    chosen = {}
    for spec in specs:
        try:
            entrant = parse_entrant(spec)
        except EntrantError:  # warmed alone (warm_bots passes over its faults: its games show them)
            chosen.setdefault(spec, spec)
            continue
        shape = (entrant.name, tuple(
            (k, "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
            for k, v in entrant.params))
        chosen.setdefault(shape, spec)
    return list(chosen.values())


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
                _warm_bot(registry.create(spec), rules, touch)
            except KeyboardInterrupt:
                if interrupts.from_ctrl_c():
                    raise
            except (Exception, SystemExit):  # a faulty bot shows its faults in the games
                pass


def _warm_bot(bot, rules, touch) -> None:
    """`bot` plays seat 0 of a game up to WARM_DECISIONS decisions with a choice."""
    from kdtourney.engine import Game

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


__all__ = ["bot_factories", "check_loaded", "warm_up", "warm_bots", "main_module_hidden",
           "WARM_DECISIONS"]
