"""The text `kdtourney bots` prints (`listing`)."""

import os
import shlex

from kdtourney.registry.entrants import show_value
from kdtourney.text import shown


def listing(registry) -> str:
    """Every bot of `registry` (a BotRegistry) with its description, origin and parameters, then
    the broken modules with their errors. Paths under the working directory are shown relative
    to it."""
    def short(origin):
        if os.path.isabs(origin):
            rel = os.path.relpath(origin)
            return origin if rel.startswith("..") else rel
        return origin

    bots = registry.bots
    width = max((len(name) for name in bots), default=0) + 2
    pad = " " * width
    lines = [f"{len(bots)} bot(s):" if bots else "No bots found."]
    for name, info in bots.items():
        lines.append(f"  {name:<{width}}{shown(info.description) or '(no description)'}")
        lines.append(f"  {pad}from: {short(info.origin)}")
        if info.program is not None:
            found = "found" if info.program.executable else "NOT FOUND"
            lines.append(f"  {pad}command: {shlex.join(info.program.declared)} ({found})")
        if info.parameters:
            params = " ".join(f"{k}={show_value(v)}" for k, v in info.parameters.items())
            lines.append(f"  {pad}parameters: {params}")
    if registry.broken:
        lines += ["", f"{len(registry.broken)} broken module(s):"]
        lines += [f"  {short(b.origin)}: {shown(b.error)}" for b in registry.broken]
    return "\n".join(lines)


__all__ = ["listing"]
