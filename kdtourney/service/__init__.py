"""The game service: the workers a command's games are played on for the whole command, taking
games and handing back results; two backends behind one interface (docs/clusters.md).

    backend        what both share: Finished, Entrants, GameService (the interface's common part)
    local          LocalService: worker processes on this machine (the parent's side)
    local_worker   a local worker process (started from fork_server, which loads preload)
    heartbeat      where each local worker is, for the parent's watchdog
    cluster        Cluster: a connection to a Dask scheduler
    dask_service   DaskService: the same service on a Dask cluster (the client's side)
    dask_worker    what runs on a Dask worker: tasks, the shipment, the trace for its nanny
    worker         what a worker of either backend holds and does: registry, bots, warm-up
    forfeit        games whose worker died or hung: replay, forfeit or fail
"""
