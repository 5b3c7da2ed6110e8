"""The contract every bot is written against."""

import inspect

from kdtourney.engine import GameView, Rules


class Bot:
    """Base class of every bot.

    Subclass it, set the class attribute `name` (how tournaments call the bot) and implement `act`.
    Parameters are the keyword arguments of `__init__`, each with a default; `setup` is called
    before every game with the bot's seat, the rules and a seed that the bot should use for all
    its randomness, so that a game can be replayed exactly; `finish` after it, `close` when the
    instance is no longer needed.
    """

    name: str = ""
    out_of_process = False  # True for a bot in another process: the harness's clock cuts it

    def setup(self, seat: int, rules: Rules, seed: int) -> None:
        """Called before each game."""

    def act(self, view: GameView) -> int:
        """Return one element of `view.legal_actions()`."""
        raise NotImplementedError  # abstract

    def finish(self, scores: list[int], ranks: list[int]) -> None:
        """Called after each game the bot played to the end: every seat's final score and rank
        (1 = best; a seat that forfeited is last)."""

    def close(self) -> None:
        """Called once when the harness is done with this instance, after its last game."""

    def kernel_parts(self) -> list:
        """[(kernel, example arguments)]: Numba kernels the bot's decisions call (through its own),
        callees first, that a warm-up may compile apart, in several processes at once
        (kdtourney.engine.jit.precompile). Default: none (its decisions compile what they call)."""
        return []

    @classmethod
    def description(cls) -> str:
        """The first line of the class docstring."""
        doc = inspect.getdoc(cls) if cls.__doc__ else ""
        return doc.splitlines()[0] if doc else ""

    @classmethod
    def parameters(cls) -> dict:
        """{parameter: default} from the keyword arguments of `__init__`."""
        if cls.__init__ is object.__init__:
            return {}
        sig = inspect.signature(cls.__init__)
        return {p.name: p.default for p in list(sig.parameters.values())[1:]
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
