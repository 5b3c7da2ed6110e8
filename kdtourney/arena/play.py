"""How the bots of a run are played (`PlaySettings`): recorded with the store, taken from it again.

What decides the games themselves (entrants, rules, seed, the time control) is the Tournament;
what decides how the bots are run around them is here: whether Python entrants play in their own
process (`isolate`), the margin every seat gets beyond its clock (`margin`, seconds), whether
every entrant plays in a sandbox (`sandbox`, kdtourney.bots.external.sandbox), its memory limit
(`bot_memory`, MiB) and its CPU quota (`bot_cpus`, cores). All of them change the games a bot
plays (what it can reach, how much it can compute, when it forfeits), so one store holds games
played one way only: a resumed or re-run tournament or test takes the stored settings, and one
that asks for other settings is refused with one line saying which (`settle`).

The machine-dependent options (start-up timeout, hang timeout, workers, scheduler, whether a
machine must enforce every limit) are not play settings: a resume may change them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

from kdtourney.arena.tournament import ArenaError
from kdtourney.bots.external import DEFAULT_MOVE_TIME_MARGIN
from kdtourney.bots.external.sandbox import DEFAULT_CPUS, DEFAULT_MEMORY_MIB, Limits, Sandbox

CONFIG_KEY = "play"  # the store's config row holding the settings


@dataclass(frozen=True)
class PlaySettings:
    """isolate: every Python entrant through `kdtourney serve` in its own process; margin:
    seconds tolerated beyond what a decision may take (kdtourney.bots.clock), for every seat;
    sandbox: every entrant in its own process inside a sandbox; bot_memory: a sandboxed bot's
    memory limit (MiB); bot_cpus: a sandboxed bot's CPU quota while it decides (cores)."""

    isolate: bool = False
    margin: float = DEFAULT_MOVE_TIME_MARGIN
    sandbox: bool = False
    bot_memory: int = DEFAULT_MEMORY_MIB
    bot_cpus: float = DEFAULT_CPUS

    # the command-line option of each setting, for the messages
    OPTIONS = {"isolate": "--isolate", "margin": "--move-time-margin", "sandbox": "--sandbox",
               "bot_memory": "--bot-memory", "bot_cpus": "--bot-cpus"}

    @property
    def in_own_process(self) -> bool:
        """Whether Python entrants play through `kdtourney serve` (isolated or sandboxed)."""
        return self.isolate or self.sandbox

    def sandbox_for(self, folder) -> Sandbox | None:
        """The sandbox every entrant of the run in `folder` plays in (the folder hidden from
        them), None without one."""
        if not self.sandbox:
            return None
        return Sandbox(Limits(memory_mib=self.bot_memory, cpus=self.bot_cpus),
                       hidden=(str(Path(folder).resolve()),))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PlaySettings":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def stored_settings(config: dict) -> dict | None:
    """The play settings a store's config records ({} for a store older than the record, which
    kept only `isolate` in its meta; None for no store)."""
    if config is None:
        return None
    if CONFIG_KEY in config:
        return dict(config[CONFIG_KEY])
    meta = config.get("meta", {})
    return {"isolate": bool(meta["isolate"])} if "isolate" in meta else {}


def settle(stored: dict | None, asked: dict, folder) -> PlaySettings:
    """The settings to play with: the stored ones (None: a new store, the defaults) with the
    `asked` ones ({setting: value}, only what the user gave) over them; ArenaError naming the
    first setting asked for that differs from what the store records."""
    base = PlaySettings().to_dict()
    base.update(stored or {})
    for key, value in asked.items():
        if stored is not None and key in stored and stored[key] != value:
            option = PlaySettings.OPTIONS.get(key, key)
            raise ArenaError(f"{folder} was played with {option} {_show(stored[key])}, not "
                             f"{_show(value)}: one store holds games played one way; drop "
                             f"{option} to go on as stored, or play under a new --out")
        base[key] = value
    return PlaySettings.from_dict(base)


def _show(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


__all__ = ["PlaySettings", "settle", "stored_settings", "CONFIG_KEY"]
