"""`Rules`: which game of Kingdomino is played (the rules of record: docs/rules.md)."""

from dataclasses import dataclass

VARIANTS = ("standard", "duel")
THREE_PLAYER_SETUPS = ("official", "bga")
TIEBREAKS = ("crowns", "territory")
FIRST_PICKS = ("random", "abba")


@dataclass(frozen=True)
class Rules:
    """The rules of one game.

    players: 2, 3 or 4. variant: "standard" (5x5) or "duel" (Mighty Duel: 2 players, 7x7, all 48
    dominoes). three_player: "official" (36 dominoes, rows of 3) or "bga" (48 dominoes, rows of 4,
    the unclaimed domino discarded). harmony: +5 when none of the player's dominoes was discarded.
    middle_kingdom: +10 when the castle is the centre of the kingdom's square. tiebreak: "crowns"
    (largest territory, then crowns) or "territory" (largest territory only). first_picks: "random"
    (kings drawn at random for the first row) or "abba" (2 players: seat 0, 1, 1, 0).
    """

    players: int = 4
    variant: str = "standard"
    three_player: str = "official"
    harmony: bool = False
    middle_kingdom: bool = False
    tiebreak: str = "crowns"
    first_picks: str = "random"

    def __post_init__(self):
        def check(ok, message):
            if not ok:
                raise ValueError(message)

        check(type(self.players) is int and self.players in (2, 3, 4),
              f"players must be 2, 3 or 4, not {self.players!r}")
        check(self.variant in VARIANTS,
              f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        check(self.variant != "duel" or self.players == 2,
              f"the duel variant (Mighty Duel) is for 2 players, not {self.players}")
        check(self.three_player in THREE_PLAYER_SETUPS,
              f"three_player must be one of {', '.join(THREE_PLAYER_SETUPS)}, "
              f"not {self.three_player!r}")
        check(self.tiebreak in TIEBREAKS,
              f"tiebreak must be one of {', '.join(TIEBREAKS)}, not {self.tiebreak!r}")
        check(self.first_picks in FIRST_PICKS,
              f"first_picks must be one of {', '.join(FIRST_PICKS)}, not {self.first_picks!r}")
        check(self.first_picks != "abba" or self.players == 2,
              f"first_picks='abba' is a 2-player order; with {self.players} players use 'random'")
        check(isinstance(self.harmony, bool),
              f"harmony must be True or False, not {self.harmony!r}")
        check(isinstance(self.middle_kingdom, bool),
              f"middle_kingdom must be True or False, not {self.middle_kingdom!r}")

    @property
    def size(self) -> int:
        """Side of the kingdom's square: 5, or 7 in Mighty Duel."""
        return 7 if self.variant == "duel" else 5

    @property
    def kings_per_player(self) -> int:
        return 2 if self.players == 2 else 1

    @property
    def row_length(self) -> int:
        """Dominoes drawn per row."""
        return 3 if self.players == 3 and self.three_player == "official" else 4

    @property
    def dominoes_in_play(self) -> int:
        if self.variant == "duel":
            return 48
        return {2: 24, 3: 36 if self.three_player == "official" else 48, 4: 48}[self.players]

    @property
    def rounds(self) -> int:
        """Rows drawn in a game, which is also the number of dominoes each king places."""
        return self.dominoes_in_play // self.row_length

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}
