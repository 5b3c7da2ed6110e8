"""Finding bots and what plays for an entrant: `BotRegistry` (registry), a small front over
discovery (the built-ins, bot folders and entry points, broken modules and why), folders (what a
bots folder holds, read without running it), modules (importing a bot module), entrants
(`NAME[:key=value]` specs, `Entrant`, checking values), identity (the code identity of Python
bots and the built-ins, digests), bundles (the sources shipped to workers), sandboxed (modules
listed and checked in a sandbox), printout (the text of `kdtourney bots`) and serve (a registered
bot as a program speaking KDTP, `kdtourney serve`, and the module side of a sandboxed listing).
"""

from kdtourney.registry.bundles import (
    BUNDLE_LIMIT,
    FILES_VAR,
    decode_sources,
    encode_sources,
    sources_digest,
    unpacked,
)
from kdtourney.registry.discovery import (
    BUILT_IN,
    BUILTIN_MODULES,
    ENTRY_POINT_GROUP,
    BotInfo,
    BrokenModule,
    DuplicateBotError,
)
from kdtourney.registry.entrants import Entrant, EntrantError, format_value, parse_entrant
from kdtourney.registry.folders import ENV_VAR, BotsDirError
from kdtourney.registry.identity import CODE_FIELDS, builtin_files, code_digest
from kdtourney.registry.printout import listing
from kdtourney.registry.registry import BotRegistry

__all__ = ["BotRegistry", "BotInfo", "BrokenModule", "Entrant", "EntrantError",
           "DuplicateBotError", "BotsDirError", "parse_entrant", "format_value", "listing",
           "code_digest", "builtin_files", "encode_sources", "decode_sources", "sources_digest",
           "unpacked", "BUILT_IN", "BUILTIN_MODULES", "ENTRY_POINT_GROUP", "ENV_VAR",
           "CODE_FIELDS", "FILES_VAR", "BUNDLE_LIMIT"]
