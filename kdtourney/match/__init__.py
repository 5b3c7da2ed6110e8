"""One game between bots and its faults (named match, not play, so as not to be read as the
`kdtourney play` command).

    loop       play_match: the game loop with the fairness rules (a fault forfeits the game; the
               clocks it charges are kdtourney.bots.clock's, part of what a bot is told)
    settings   PlaySettings: how the bots are played (in-process, isolated, sandboxed)
"""
