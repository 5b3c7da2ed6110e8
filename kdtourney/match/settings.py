"""How the bots of a run are played (`PlaySettings`): recorded with the store, taken from it again.

    PlaySettings(isolate, margin, sandbox, bot_memory, bot_cpus, sandbox_allow, clock_rule)
        whether Python entrants play in their own process, every seat's margin beyond its clock,
        the sandbox and its limits, the clock's rule (kdtourney.bots.clock.CLOCK_RULE)
    settle(stored, asked, folder) -> PlaySettings   the stored settings with what the user asked
        over them; ArenaError, one line, for other settings than a store's games were played with
        (or a clock rule this kdtourney no longer plays)
    stored_settings(config, played), played_with(config), clocked(config)   read from a config
    CONFIG_KEY          the store's config row holding them

All of them change the games a bot plays, so one store holds games played one way only; the
machine's options (timeouts, workers, scheduler) are not play settings (docs/commands.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

from kdtourney.bots.clock import CLOCK_RULE
from kdtourney.external import DEFAULT_MOVE_TIME_MARGIN
from kdtourney.external.sandbox import DEFAULT_CPUS, DEFAULT_MEMORY_MIB, Limits, Sandbox
from kdtourney.tournament.definition import ArenaError

CONFIG_KEY = "play"  # the store's config row holding the settings
_CLOCK_RULES = {1: "the margin forgiven on every decision", 2: "one margin per game"}


@dataclass(frozen=True)
class PlaySettings:
    """isolate: every Python entrant through `kdtourney serve` in its own process; margin:
    every seat's margin per game, seconds its decisions may take beyond what the clock allows
    them (kdtourney.bots.clock); sandbox: every entrant in its own process inside a sandbox;
    bot_memory: a sandboxed bot's memory limit (MiB); bot_cpus: a sandboxed bot's CPU quota while
    it decides (cores); sandbox_allow: the folders (resolved) every sandbox shows, such as a JDK
    in /opt (--sandbox-allow); clock_rule: the clock's rule."""

    isolate: bool = False
    margin: float = DEFAULT_MOVE_TIME_MARGIN
    sandbox: bool = False
    bot_memory: int = DEFAULT_MEMORY_MIB
    bot_cpus: float = DEFAULT_CPUS
    sandbox_allow: tuple = ()
    clock_rule: int = CLOCK_RULE

    # the command-line option of each setting, for the messages
    OPTIONS = {"isolate": "--isolate", "margin": "--move-time-margin", "sandbox": "--sandbox",
               "bot_memory": "--bot-memory", "bot_cpus": "--bot-cpus",
               "sandbox_allow": "--sandbox-allow"}

    def __post_init__(self):
        object.__setattr__(self, "sandbox_allow", tuple(self.sandbox_allow))

    @property
    def in_own_process(self) -> bool:
        """Whether Python entrants play through `kdtourney serve` (isolated or sandboxed)."""
        return self.isolate or self.sandbox

    def sandbox_for(self, folder) -> Sandbox | None:
        """The sandbox every entrant of the run in `folder` plays in (the folder hidden from
        them; None: a folder not known yet), None without one."""
        if not self.sandbox:
            return None
        hidden = () if folder is None else (str(Path(folder).resolve()),)
        return Sandbox(Limits(memory_mib=self.bot_memory, cpus=self.bot_cpus), hidden=hidden,
                       allowed=tuple(self.sandbox_allow))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> PlaySettings:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def stored_settings(config: dict, played: bool = True) -> dict | None:
    """The play settings a store's config records ({} for a store older than the record, which
    kept only `isolate` in its meta; None for no store). A store that holds games (`played`)
    played on a clock before the clock's rule was recorded: `clock_rule` 1."""
    if config is None:
        return None
    if CONFIG_KEY in config:
        stored = dict(config[CONFIG_KEY])
    else:
        meta = config.get("meta", {})
        stored = {"isolate": bool(meta["isolate"])} if "isolate" in meta else {}
    if "clock_rule" not in stored and played and clocked(config):
        stored["clock_rule"] = 1
    return stored


def played_with(config: dict) -> dict:
    """What a store's games were played with besides its tournament: the play settings (the
    defaults where it records none; without those that change nothing in its games: the margin
    and the clock's rule without a clock, the memory limit, CPU quota and allowed folders without
    a sandbox) and the seed secret mixed into its seeds (None: public seeds). Two stores of one
    tournament and code hold the same games only if this is the same (`kdtourney ratings`)."""
    settings = PlaySettings().to_dict()
    settings.update(stored_settings(config) or {})
    if not clocked(config):
        del settings["margin"], settings["clock_rule"]
    if not settings["sandbox"]:
        del settings["bot_memory"], settings["bot_cpus"], settings["sandbox_allow"]
    return {"play": settings, "seed_secret": config.get("seed_secret")}


def clocked(config: dict) -> bool:
    """Whether a store's games are played on a clock (a move limit, a bank or both)."""
    table = config.get("tournament") or {}
    return table.get("move_time_limit") is not None or bool(table.get("clock"))


def settle(stored: dict | None, asked: dict, folder) -> PlaySettings:
    """The settings to play with: the stored ones (None: a new store, the defaults) with the
    `asked` ones ({setting: value}, only what the user gave) over them; ArenaError naming the
    first setting asked for that differs from what the store records, or the clock rule the
    store was played under when it is not this kdtourney's."""
    base = PlaySettings().to_dict()
    base.update(stored or {})
    rule = base["clock_rule"]
    if rule != CLOCK_RULE:
        raise ArenaError(f"{folder} was played under clock rule {rule} "
                         f"({_CLOCK_RULES.get(rule, 'not known to this kdtourney')}); this "
                         f"kdtourney plays rule {CLOCK_RULE} ({_CLOCK_RULES[CLOCK_RULE]}) and "
                         "cannot go on with its games: play under a new --out (the stored games "
                         "still read: report, ratings)")
    for key, value in asked.items():
        if stored is not None and key in stored and _plain(stored[key]) != _plain(value):
            option = PlaySettings.OPTIONS.get(key, key)
            raise ArenaError(f"{folder} was played with {option} {_show(stored[key])}, not "
                             f"{_show(value)}: one store holds games played one way; drop "
                             f"{option} to go on as stored, or play under a new --out")
        base[key] = value
    return PlaySettings.from_dict(base)


def _plain(value):
    """A setting as JSON gives it back (a tuple is a list there)."""
    return list(value) if isinstance(value, tuple) else value


def _show(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


__all__ = ["PlaySettings", "settle", "stored_settings", "played_with", "clocked",
           "CONFIG_KEY"]
