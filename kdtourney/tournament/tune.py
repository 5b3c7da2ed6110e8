"""What a tune is, as its folder records it (config `tune`): the bot, its fixed and tuned
parameters, the schedule, the batch and the blocks per iteration. The driver
(kdtourney.commands.tune) and the tune's page (kdtourney.report.tune_page) both read it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kdtourney.registry import Entrant
from kdtourney.stats import spsa

DEFAULT_BATCH = 16
PLUS, MINUS = "theta+", "theta-"  # the labels of the two seats whose values an iteration plays
PAGE_FILE = "tune.html"


@dataclass(frozen=True)
class Tune:
    """What is tuned and how: the bot, its fixed parameters, the tuned ones, the schedule, the
    iterations per batch and the blocks per iteration."""

    bot: str
    fixed: tuple
    params: tuple
    schedule: spsa.Schedule
    batch: int = DEFAULT_BATCH
    blocks: int = 1
    rule: int = spsa.SPSA_RULE  # SPSA's rule (spsa.py's docstring), fixed when the folder is made

    def spec(self, values) -> str:
        """The bot spec with these values of the tuned parameters (an integer one as an int)."""
        tuned = {p.name: (int(round(v)) if p.integer else float(v))
                 for p, v in zip(self.params, values)}
        return Entrant(self.bot, dict(dict(self.fixed), **tuned)).spec

    @property
    def start(self) -> list[float]:
        return [p.start for p in self.params]

    def rounded(self, values) -> list:
        """Values as shown to people: integers, floats to three digits of the range."""
        out: list = []
        for p, v in zip(self.params, values):
            if p.integer:
                out.append(int(round(v)))
            else:
                digits = max(0, 2 - math.floor(math.log10(p.max - p.min)))
                out.append(round(float(v), digits))
        return out

    def to_dict(self) -> dict:
        return dict(bot=self.bot, fixed=[list(kv) for kv in self.fixed],
                    params=[p.to_dict() for p in self.params], schedule=self.schedule.to_dict(),
                    batch=self.batch, blocks=self.blocks, rule=self.rule)

    @classmethod
    def from_dict(cls, d: dict) -> Tune:
        return cls(bot=d["bot"], fixed=tuple(tuple(kv) for kv in d["fixed"]),
                   params=tuple(spsa.Param.from_dict(p) for p in d["params"]),
                   schedule=spsa.Schedule(**d["schedule"]), batch=d["batch"], blocks=d["blocks"],
                   rule=d.get("rule", 1))  # no rule recorded: made under rule 1


__all__ = ["Tune", "DEFAULT_BATCH", "PAGE_FILE", "PLUS", "MINUS"]
