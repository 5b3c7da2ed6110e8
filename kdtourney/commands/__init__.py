"""The commands that play: each a prepare step and a feed that chooses the next blocks, run by
one driver loop over one setup (the folder's lock, its store, the entrants' identities, the
game service).

    setup      the one setup of every command (Options, Setup, setup)
    driver     the one loop: Driver plays a Feed's blocks and stores each game
    folders    a command's folder: where it is, what it records, the checks of what it holds
    run        a tournament (round robin, gauntlet, lineup): run_tournament
    sprt       a sequential test: is the candidate stronger than the baseline?
    tune       SPSA tuning of a bot's parameters, and its verify
    ladder     a standing rating list over folders of bots: ladder_entrants, ladder_watch,
               ladder_feed, ladder_pages; beside: work beside play, at the lowest priority
    play       a person's games against bots; play_page: the page the person plays on
    new_bot    a bot to start from
"""
