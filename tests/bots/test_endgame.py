"""The exact endgame (kdtourney.bots.endgame) against brute force: every placement sequence tried on
the slow reference kingdoms (tests/naive.py), and every claim sequence played through `Game`."""

import itertools

import naive
import numpy as np
import pytest

from kdtourney.bots import endgame
from kdtourney.bots import search_kernels as SK
from kdtourney.bots.greedy import GreedyBot
from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import decode_placement


def naive_best(kingdom, dominoes, size, rules, discards):
    """The best final score placing `dominoes` in order, by brute force on a naive kingdom."""
    if not dominoes:
        harmony = 5 if rules.harmony and discards == 0 else 0
        return naive.score(kingdom, size, middle_kingdom=rules.middle_kingdom)["total"] + harmony
    spots = naive.legal_placements(kingdom, dominoes[0], size)
    if not spots:
        return naive_best(kingdom, dominoes[1:], size, rules, discards + 1)
    return max(naive_best(naive.place(kingdom, dominoes[0], s), dominoes[1:], size, rules, discards)
               for s in spots)


def late_positions(rules, seed):
    """The decisions of a greedy game from the first one with no domino left to draw."""
    game = Game(rules, seed)
    bots = [GreedyBot() for _ in range(rules.players)]
    for p, bot in enumerate(bots):
        bot.setup(p, rules, seed + p)
    while not game.is_over:
        if endgame.solvable(game.arrays[2]):
            yield game.copy()
        game.apply(bots[game.current_player].act(game.view(game.current_player)))


def brute_claims(game, payoff, me, start):
    """(final scores, claim) by trying every claim sequence through the game, each player claiming
    as the endgame's model says (the others their best score, equal ones the worst for `me`; `me`
    its best margin, then score); the placements on the way are any legal ones (a player's final
    score depends only on which dominoes it ends with: `payoff(player, dominoes)`). start: the
    round of the position solved (claims made in it count)."""

    def margin(v):
        return v[me] - max(x for q, x in enumerate(v) if q != me), v[me]

    def walk(g):
        if g.is_over or g.round > start or not g.new_row:
            # the claims of round `start` (none when it is the last round)
            row = g.current_row if g.round > start else g.new_row
            owned = [[d for d, o in row if o == p] for p in range(g.n_players)]
            return [payoff(p, tuple(owned[p])) for p in range(g.n_players)], -1
        if g.phase == "place":
            g = g.copy()
            g.apply(g.legal_actions()[0])
            return walk(g)
        q, best = g.current_player, None
        for a in g.legal_actions():
            h = g.copy()
            h.apply(a)
            v, _ = walk(h)
            key = margin(v) if q == me else (v[q], tuple(-x for x in margin(v)))
            if best is None or key > best[0]:
                best = (key, v, a)
        return best[1], best[2]

    return walk(game)


@pytest.mark.slow
@pytest.mark.parametrize("players, seed", [(4, 3), (3, 5), (2, 7)])
def test_endgame_matches_brute_force(players, seed):
    rules = Rules(players=players, harmony=True, middle_kingdom=True)
    size = rules.size
    checked = 0
    for game in late_positions(rules, seed):
        bits, bbox, st = game.arrays
        me = game.current_player
        kingdoms = [naive.parse_text(game.kingdom(p).to_text()) for p in range(players)]
        unplaced = [[d for (d, o), done in zip(game.current_row, game.placed)
                     if o == p and not done]
                    for p in range(players)]

        def payoff(p, owned):
            return naive_best(kingdoms[p], unplaced[p] + list(owned), size, rules, game.discards(p))

        place, claim, scores = endgame.solve(bits, bbox, st)
        expected, brute_claim = brute_claims(game, payoff, me, game.round)
        where = f"{players} players, seed {seed}, move {len(game.history)}"
        assert scores == expected, where
        # the claim is one of the best (equal keys may differ in the action only)
        if brute_claim >= 0:
            forced = game.copy()
            if place >= 0:
                forced.apply(place)
            forced.apply(claim)
            assert brute_claims(forced, payoff, me, game.round)[0] == expected, where
        else:
            assert claim == -1, where
        if place >= 0:  # the placement keeps the same outcome reachable
            after = game.copy()
            after.apply(place)
            kingdom = naive.parse_text(after.kingdom(me).to_text())

            def payoff_after(p, owned):
                if p != me:
                    return payoff(p, owned)
                return naive_best(kingdom, unplaced[me][1:] + list(owned), size, rules,
                                  after.discards(me))

            assert brute_claims(after, payoff_after, me, game.round)[0] == expected, where
        checked += 1
    assert checked >= players


def test_best_final_tries_every_sequence():
    """best_final against naive brute force for each player and each ordered pair of the last
    row's dominoes, and its first action leads to that score."""
    rules = Rules(players=4, harmony=True, middle_kingdom=True)
    game = next(late_positions(rules, 11))
    bits, bbox, st = game.arrays
    free = [d for d, _ in game.new_row]
    for p in range(4):
        kingdom = naive.parse_text(game.kingdom(p).to_text())
        discards = game.discards(p)
        for seq in itertools.permutations(free, 2):
            got, first = SK.best_final(bits, bbox, p, rules.size, int(st[K.ST_FLAGS]), discards,
                                       np.array(seq, dtype=np.int64), 2)
            assert got == naive_best(kingdom, list(seq), rules.size, rules, discards)
            if first == K.DISCARD:
                assert not naive.legal_placements(kingdom, seq[0], rules.size)
            else:
                after = naive.place(kingdom, seq[0], decode_placement(first))
                assert naive_best(after, [seq[1]], rules.size, rules, discards) == got
