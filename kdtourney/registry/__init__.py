"""Finding bots: the built-ins, folders of bots, installed packages; parsing entrants; the code
identity of each; the sources shipped to workers.

    registry   BotRegistry, entrants, identities, bundles
"""
