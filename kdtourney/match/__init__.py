"""One game between bots and its faults (named match, not play, so as not to be read as the
`kdtourney play` command).

    loop       play_match: the game loop with the fairness rules (a fault forfeits the game)
    clock      game clocks: move limits, banks and increments, the margin
    settings   PlaySettings: how the bots are played (in-process, isolated, sandboxed)
"""
