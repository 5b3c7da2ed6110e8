"""Entrants: a bot name with parameters, written `NAME[:key=value]...` (`mcts:iterations=2000`).

    Entrant        a name and its (key, value) parameters, sorted; `spec`, `kwargs`; equal by spec
    parse_entrant  a spec -> Entrant, values becoming int, float, bool (true/false) or str
    converted      an Entrant checked against a bot's parameters, its values converted to the
                   types of their defaults
    format_value   a value as a spec writes it; show_value: any default, for a message
    BOT_NAME       what a bot name may be: letters, digits, _ . and -
    EntrantError   a malformed spec, an unknown bot or parameter, a bad value (a UserError)
"""

import math
import re
from dataclasses import dataclass, field

from kdtourney.errors import UserError

BOT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


class EntrantError(UserError):
    """A malformed entrant spec, an unknown bot or parameter, or a bad parameter value."""


def _parse_value(text: str):
    if _INT.match(text):
        return int(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _FLOAT.match(text):
        return float(text)
    return text


def format_value(value) -> str:
    """A parameter value as written in a spec: true/false, 3, 0.7, text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def show_value(value) -> str:
    """A parameter's value for a message: as a spec writes it, or its repr (any other type)."""
    return format_value(value) if isinstance(value, (bool, int, float, str)) else repr(value)


@dataclass(frozen=True, eq=False)
class Entrant:
    """A bot name with parameters: what plays in a tournament.

    params: (key, value) pairs, sorted by key when the Entrant is made (a dict is accepted too).
    Two entrants are equal when their canonical `spec` is, so the same bot with the same parameters
    is one entrant and with different parameters another.
    """

    name: str
    params: tuple | dict = field(default=())

    def __post_init__(self):
        if not isinstance(self.name, str) or not BOT_NAME.match(self.name):
            raise EntrantError(f"bad bot name {self.name!r}: use letters, digits, _ . and -")
        items = self.params.items() if isinstance(self.params, dict) else self.params
        pairs = {}
        for key, value in items:
            if not isinstance(key, str) or not _KEY.match(key):
                raise EntrantError(f"{self.name}: bad parameter name {key!r}")
            if key in pairs:
                raise EntrantError(f"{self.name}: parameter {key} given twice")
            if not isinstance(value, (bool, int, float, str)):
                raise EntrantError(f"{self.name}: parameter {key} must be an int, float, bool or "
                                   f"str, not {type(value).__name__}")
            if isinstance(value, str) and (not value or ":" in value):
                raise EntrantError(f"{self.name}: parameter {key} has the value {value!r}; a value "
                                   "must be non-empty and cannot contain ':'")
            pairs[key] = value
        object.__setattr__(self, "params", tuple(sorted(pairs.items())))

    @property
    def spec(self) -> str:
        """The canonical spec `name:k=v:...`, keys sorted."""
        return ":".join([self.name] + [f"{k}={format_value(v)}" for k, v in self.params])

    @property
    def kwargs(self) -> dict:
        """The parameters as keyword arguments for the bot's constructor."""
        return dict(self.params)

    def __eq__(self, other):
        return isinstance(other, Entrant) and other.spec == self.spec

    def __hash__(self):
        return hash(self.spec)

    def __str__(self):
        return self.spec


def parse_entrant(spec) -> Entrant:
    """`NAME[:key=value]...` -> Entrant; values become int, float, bool (true/false) or str.

    An Entrant is returned as it is. A malformed spec raises EntrantError.
    """
    if isinstance(spec, Entrant):
        return spec
    if not isinstance(spec, str):
        raise EntrantError(f"an entrant is a string NAME[:key=value]..., not {spec!r}")
    name, *parts = spec.strip().split(":")
    if not name.strip():
        raise EntrantError(f"bad entrant {spec!r}: the bot name is missing (NAME[:key=value]...)")
    params = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise EntrantError(f"bad entrant {spec!r}: {part!r} is not key=value")
        if key in params:
            raise EntrantError(f"bad entrant {spec!r}: parameter {key} given twice")
        params[key] = _parse_value(value)
    return Entrant(name.strip(), params)


def converted(bot: str, parameters: dict, entrant: Entrant) -> Entrant:
    """`entrant` of the bot named `bot`, whose parameters and defaults are `parameters`: known
    parameters only, each value of its default's type (`_convert`). EntrantError otherwise."""
    values = []
    for key, value in entrant.params:
        if key not in parameters:
            valid = ", ".join(f"{k}={show_value(v)}" for k, v in parameters.items())
            raise EntrantError(f"{bot} has no parameter {key!r}; " + (
                f"its parameters: {valid}" if valid else "it takes no parameters"))
        values.append((key, _convert(bot, key, value, parameters[key])))
    return Entrant(bot, tuple(values))


def _convert(bot: str, key: str, value, default):
    """`value` as the type of `default` for int, float, bool and str defaults (an int where a
    float is expected becomes a float, a value where a str is expected its text); EntrantError if
    it cannot be."""
    def bad(expected):
        return EntrantError(f"{bot}: parameter {key} expects {expected} (default "
                            f"{show_value(default)}), not {format_value(value)!r}")

    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        try:
            if math.isfinite(float(value)):
                return float(value)
        except OverflowError:  # an int past a float's range
            pass
        raise bad("a finite number")
    if isinstance(default, str):
        return format_value(value)
    return value


__all__ = ["Entrant", "EntrantError", "parse_entrant", "converted", "format_value", "show_value",
           "BOT_NAME"]
