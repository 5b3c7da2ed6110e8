"""What a worker does to play a tournament's games, whichever backend runs it (the local
runner's processes, kdtourney.arena.runner, or Dask workers, kdtourney.arena.cluster): the bot
factories, the warm-up that fills Numba's cache, and starting worker processes without the
parent's __main__."""

from __future__ import annotations

import sys

from kdtourney import interrupts
from kdtourney.arena.tournament import ArenaError, Tournament
from kdtourney.bots.registry import BUILT_IN

WARM_DECISIONS = 4        # decisions each entrant's bot plays in the warm-up game


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


def warm_bots(tournament: Tournament, registry, touch=lambda: None, builtin_only=False) -> None:
    """A few decisions of each Python entrant's bot, in this process, so Numba-compiled bot kernels
    land in the cache (the processes of isolated bots then load them from there). builtin_only:
    kdtourney's own bots only (sandboxed, a bot's code runs nowhere but in its sandbox)."""
    from kdtourney.engine import Game

    rules = tournament.rules_for(tournament.players[0])
    for spec in tournament.specs:
        if registry.program(spec) is not None:  # a TOML bot: no code of ours to compile
            continue
        if builtin_only and registry.bots[registry.resolve(spec).name].origin != BUILT_IN:
            continue
        touch()
        try:
            bot = registry.create(spec)
            bot.setup(0, rules, 0)
            game = Game(rules, 0)
            asked = 0
            while not game.is_over and asked < WARM_DECISIONS:
                legal = game.legal_actions()
                action = legal[0]
                if game.current_player == 0:
                    touch()
                    choice = bot.act(game.view(0))
                    asked += 1
                    if choice in legal:
                        action = choice
                game.apply(action)
        except KeyboardInterrupt:
            if interrupts.from_ctrl_c():
                raise
        except (Exception, SystemExit):  # a faulty bot shows its faults in the games, not here
            pass


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


__all__ = ["bot_factories", "check_loaded", "warm_bots", "main_module_hidden", "WARM_DECISIONS"]
