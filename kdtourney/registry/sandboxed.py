"""Bot modules that run in a sandbox only (--sandbox): what they define and which parameter
values they refuse, asked there (kdtourney.external.listing) and kept.

    SandboxQuestions  `ask` modules for their listings (a module whose files did not change
                      is not asked again in this process), `note` the refusals of a listing,
                      `check` entrants in one round, `check_one` (EntrantError for a refusal)
    read_listing      the bots and errors of one module's listing, None if it is malformed;
                      forget_listings: ask every module again
    clip              a text a listing gave, on one line, at most TEXT_LIMIT characters
"""

import hashlib
import json

from kdtourney.external import ProcessSettings, Sandbox
from kdtourney.external.listing import list_modules
from kdtourney.registry.bundles import encode_sources
from kdtourney.registry.entrants import EntrantError

TEXT_LIMIT = 500                # characters kept of a text a module's listing gives (an error)
LISTED_KEPT = 1000              # listings kept in this process (modules whose files stay the same)
_LISTED: dict[str, dict] = {}   # {`SandboxQuestions._key`: its listing}: not asked again


def clip(text: str) -> str:
    """A text a module's listing gave, on one line, at most TEXT_LIMIT characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 3] + "..."


def read_listing(answer: dict, origin: str) -> tuple[list, list] | None:
    """([(name, description, parameters)] of the bots, [error]) that the listing `answer` gives
    for the module `origin`; None when it is not what kdtourney list-bots writes."""
    try:
        bots = [(b["name"], b.get("description") or "", dict(b.get("parameters") or {}))
                for b in answer.get("bots") or () if b.get("origin", origin) == origin]
        errors = [b["error"] for b in answer.get("broken") or () if b.get("origin") == origin]
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    if not all(isinstance(name, str) and isinstance(description, str)
               and all(isinstance(k, str) for k in parameters)
               for name, description, parameters in bots) \
            or not all(isinstance(e, str) for e in errors):
        return None
    return bots, errors


def forget_listings() -> None:
    """Forget the listings kept in this process: every module is asked again (a benchmark)."""
    _LISTED.clear()


class SandboxQuestions:
    """Asking bot modules in `sandbox`, each answering within `startup_timeout` seconds; what
    they refused is kept (`refused`: {spec: its one-line error, None for a value taken}).
    `own_files(origin)` gives a module's own files (bundles.Sources.own_files): all it gets."""

    def __init__(self, sandbox: Sandbox, startup_timeout: float):
        self.sandbox, self.startup_timeout = sandbox, startup_timeout
        self.refused: dict[str, str | None] = {}

    def ask(self, specs: dict, own_files) -> dict:
        """{module: (its listing, or {"error": one line})} of the modules of `specs` ({module:
        the entrants of its bots to check}), each in a sandbox given only its own files."""
        requests = {origin: (encode_sources(own_files(origin)), list(checked))
                    for origin, checked in specs.items()}
        keys = {origin: self._key(origin, *request) for origin, request in requests.items()}
        asked = {origin: request for origin, request in requests.items()
                 if keys[origin] not in _LISTED}
        answers = list_modules(asked, ProcessSettings(startup_timeout=self.startup_timeout,
                                                      sandbox=self.sandbox)) if asked else {}
        for origin, answer in answers.items():
            if "error" not in answer:  # a failure is asked again (the load may have passed)
                if len(_LISTED) >= LISTED_KEPT:
                    _LISTED.clear()
                _LISTED[keys[origin]] = answer
        return {origin: answers.get(origin) or _LISTED[keys[origin]] for origin in requests}

    def _key(self, origin: str, text: str, specs: list) -> str:
        """What a listing answers from: the module, its files, the specs, the sandbox."""
        return hashlib.sha256(json.dumps([origin, text, specs, repr(self.sandbox)])
                              .encode("utf-8")).hexdigest()

    def note(self, answer: dict, specs) -> None:
        """Keep what a module's listing says of `specs`: the one-line error of a value it
        refuses, None for one it takes."""
        refused = answer.get("refused")
        if not isinstance(refused, dict):
            refused = {}
        for spec in specs:
            message = refused.get(spec)
            self.refused[spec] = clip(message) if isinstance(message, str) else None

    def check(self, asked: dict, own_files) -> None:
        """Ask at once, one sandbox per module, about the entrants of `asked` ({module: specs})
        not asked about yet; a module that fails is asked again by `check_one`, which says why."""
        asked = {origin: [s for s in specs if s not in self.refused]
                 for origin, specs in asked.items()}
        asked = {origin: specs for origin, specs in asked.items() if specs}
        if asked:
            for origin, answer in self.ask(asked, own_files).items():
                if "error" not in answer:
                    self.note(answer, asked[origin])

    def check_one(self, origin: str, spec: str, own_files) -> None:
        """EntrantError (one line) if the bot of the module `origin` refuses the entrant `spec`
        (asked unless known), or the module failed when asked."""
        if spec not in self.refused:
            answer = self.ask({origin: [spec]}, own_files)[origin]
            if "error" in answer:
                raise EntrantError(f"{spec}: {answer['error']}")
            self.note(answer, [spec])
        if self.refused[spec]:
            raise EntrantError(self.refused[spec])


__all__ = ["SandboxQuestions", "read_listing", "clip", "forget_listings", "TEXT_LIMIT",
           "LISTED_KEPT"]
