"""The statistics: from results to ratings, tests and choices; pure functions of results,
tested on simulated data.

    outcomes      the pairwise outcomes of a ranked table, the Elo scale
    ratings       Bradley-Terry Elo with block-bootstrap intervals
    descriptive   per entrant, pair, seat and player count; the block bootstrap
    sprt          the sequential probability ratio test's mathematics
    spsa          SPSA's mathematics (the tuner's step)
    matchmaking   the ladder's choice of tables
"""
