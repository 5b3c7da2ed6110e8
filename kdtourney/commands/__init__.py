"""The commands: what `kdtourney run`, `sprt`, `tune`, `ladder` and `play` do, each a prepare step
and a feed that chooses the next blocks, over one setup (lock, store, identities, service).

    run        a tournament (round robin, gauntlet, lineup), its Driver and Feed
    sprt       a sequential test: is the candidate stronger than the baseline?
    tune       SPSA tuning of a bot's parameters
    ladder     a standing rating list over folders of bots; beside: its work beside play
    play       a person's games against bots; play_page: the page the person plays on
    new_bot    a bot to start from
"""
