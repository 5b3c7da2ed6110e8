"""A game as text, for `render()` and OpenSpiel's observation strings."""

from kdtourney.engine import Game
from kdtourney.engine.tiles import TILES


def render_text(game: Game) -> str:
    """A text picture of a game: every seat's kingdom and score, the two rows, whose turn."""
    scores = game.scores()
    lines = []
    for p in range(game.n_players):
        lines.append(f"player_{p}: {scores[p]} points")
        lines.extend("  " + line for line in game.kingdom(p).to_text().splitlines())

    def row(dominoes):
        return "  ".join(f"{TILES[d]}" + (f" (player_{o})" if o >= 0 else "")
                         for d, o in dominoes) or "-"
    lines.append(f"current row: {row(game.current_row)}")
    lines.append(f"new row: {row(game.new_row)}")
    if game.is_over:
        lines.append("game over: ranks "
                     + ", ".join(f"player_{p} {r}" for p, r in enumerate(game.ranking())))
    else:
        lines.append(f"to act: player_{game.current_player} ({game.phase})")
    return "\n".join(lines)
