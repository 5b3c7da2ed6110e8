"""How the bots of a run are played (`PlaySettings`): recorded with the store, taken from it again.

What decides the games themselves (entrants, rules, seed, the time control) is the Tournament;
what decides how the bots are run around them is here: whether Python entrants play in their own
process (`isolate`), the margin every seat gets beyond its clock (`margin`, seconds), whether
every entrant plays in a sandbox (`sandbox`, kdtourney.bots.external.sandbox), its memory
limit (`bot_memory`, MiB) and the folders every sandbox shows besides the system and the bot's
own (`sandbox_allow`). All of them change the games a bot plays (what it can reach, when it
forfeits), so one store holds games played one way only: a resumed or re-run tournament or test
takes the stored settings, and one that asks for other settings is refused with one line saying
which (`settle`).

The machine-dependent options (start-up timeout, hang timeout, workers, scheduler) are not play
settings: a resume may change them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

from kdtourney.arena.tournament import ArenaError
from kdtourney.bots.external import DEFAULT_MOVE_TIME_MARGIN
from kdtourney.bots.external.sandbox import DEFAULT_MEMORY_MIB, Limits, Sandbox

CONFIG_KEY = "play"  # the store's config row holding the settings


@dataclass(frozen=True)
class PlaySettings:
    """isolate: every Python entrant through `kdtourney serve` in its own process; margin:
    seconds tolerated beyond what a decision may take (kdtourney.bots.clock), for every seat;
    sandbox: every entrant in its own process inside a sandbox; bot_memory: a sandboxed bot's
    memory limit (MiB); sandbox_allow: the folders (resolved) every sandbox shows, such as a JDK
    in /opt (--sandbox-allow)."""

    isolate: bool = False
    margin: float = DEFAULT_MOVE_TIME_MARGIN
    sandbox: bool = False
    bot_memory: int = DEFAULT_MEMORY_MIB
    sandbox_allow: tuple = ()

    # the command-line option of each setting, for the messages
    OPTIONS = {"isolate": "--isolate", "margin": "--move-time-margin", "sandbox": "--sandbox",
               "bot_memory": "--bot-memory", "sandbox_allow": "--sandbox-allow"}

    def __post_init__(self):
        object.__setattr__(self, "sandbox_allow", tuple(self.sandbox_allow))

    @property
    def in_own_process(self) -> bool:
        """Whether Python entrants play through `kdtourney serve` (isolated or sandboxed)."""
        return self.isolate or self.sandbox

    def sandbox_for(self, folder) -> Sandbox | None:
        """The sandbox every entrant of the run in `folder` plays in (the folder hidden from
        them), None without one."""
        if not self.sandbox:
            return None
        return Sandbox(Limits(memory_mib=self.bot_memory), hidden=(str(Path(folder).resolve()),),
                       allowed=self.sandbox_allow)

    def registry_options(self) -> dict:
        """BotRegistry's keyword arguments for bots played this way: sandboxed, a bot module is
        read, not run, and a bot naming what its sandbox would not show is refused."""
        return {"run_modules": not self.sandbox,
                "sandbox_allow": self.sandbox_allow if self.sandbox else None}

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


__all__ = ["PlaySettings", "settle", "stored_settings", "CONFIG_KEY"]
