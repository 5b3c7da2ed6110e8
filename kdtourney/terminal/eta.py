"""A run's time left, from the recent rate of whole blocks.

    BlockEta(sizes, done)   .game(block, now) as each game ends; .left(now): seconds, or None
    clock_text(seconds)     '1:02:03'

Games end in bursts (a block's rotations on several workers, games of several lengths), so the
rate of single games swings; whole blocks are steadier. The rate is taken over the last `window`
blocks completed, the time left counts down between completions.
"""

from __future__ import annotations

from collections import Counter, deque

WINDOW = 40  # blocks the rate is taken over: one completion more or less moves it by 2.5%
MIN_BLOCKS = 3  # completions needed before the blocks give a rate


class BlockEta:
    """The time left of a plan whose blocks hold `sizes` games ({block: games}); `done`: the
    games already stored per block (a resumed run)."""

    def __init__(self, sizes: dict, done: dict | None = None, window: int = WINDOW):
        self.sizes = dict(sizes)
        self.played = Counter(done or {})
        self.left_blocks = sum(1 for b, n in self.sizes.items() if self.played[b] < n)
        self.times: deque = deque(maxlen=window + 1)  # when the last blocks were completed

    def game(self, block: int, now: float) -> None:
        """A game of `block` ended at `now` (seconds, any clock that only goes forward)."""
        self.played[block] += 1
        if self.played[block] == self.sizes.get(block):
            self.left_blocks -= 1
            self.times.append(now)

    def rate(self) -> float | None:
        """Blocks per second over the recent completions, None before MIN_BLOCKS of them."""
        if len(self.times) < MIN_BLOCKS:
            return None
        span = self.times[-1] - self.times[0]
        return (len(self.times) - 1) / span if span > 0 else None

    def left(self, now: float) -> float | None:
        """Seconds left at the recent rate: the blocks to complete, less the time since the last
        completion (it counts down between them); None until the rate is known."""
        rate = self.rate()
        if rate is None:
            return None
        return max(0.0, self.left_blocks / rate - (now - self.times[-1]))


def clock_text(seconds: float | None) -> str:
    """'0:01:05' (hours, minutes, seconds), or '-:--:--' when unknown."""
    if seconds is None:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


__all__ = ["BlockEta", "clock_text", "WINDOW", "MIN_BLOCKS"]
