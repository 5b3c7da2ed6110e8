"""The store: the one way to read and write a tournament folder (DIR/tournament.sqlite).

    store      the SQLite store, its loaders as pandas tables, export, the folder lock
"""
