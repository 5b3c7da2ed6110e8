"""The game service: the workers a command's games are played on for the whole command, taking
games and handing back results.

    local        worker processes on this machine (started from fork_server, which loads preload)
    cluster      the same on a Dask cluster
    worker       what a worker of either backend holds and does: registry, bots, warm-up
    forfeit      games whose worker died or hung: replay, forfeit or fail
"""
