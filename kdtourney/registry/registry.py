"""`BotRegistry`: every available bot by name, and what an entrant of one needs.

    BotRegistry(bots_dirs, ...)   finds the bots (kdtourney.registry.discovery) when built;
                                  `from_sources` rebuilds them on a worker from `source_files()`
    resolve, check                an entrant checked against its bot: its parameters and values
    create, factory, program      making the bot of an entrant, here or in its own process
    identity, program_identity    what code plays for an entrant (registry.identity)
    start_check, assume_hello, pin  the hello and files of bots in their own process
    check_made                    make a Python bot once with an entrant's values

Raises EntrantError (unknown bot, bad parameter or value), BotsDirError, DuplicateBotError,
StartupError: each one line.
"""

from dataclasses import replace

from kdtourney.bots.base import Bot
from kdtourney.external import (
    DEFAULT_STARTUP_TIMEOUT,
    ExternalBot,
    ProcessPool,
    ProcessSettings,
    Program,
    Sandbox,
    check_programs,
    program_identity,
    serve_program,
)
from kdtourney.external.files import Unreadable
from kdtourney.registry.bundles import encode_sources, sources_digest, unpacked
from kdtourney.registry.discovery import BUILT_IN, BotInfo, BrokenModule, Catalog
from kdtourney.registry.entrants import Entrant, EntrantError, converted, parse_entrant
from kdtourney.registry.folders import bots_folders
from kdtourney.registry.identity import code_digest, python_identity
from kdtourney.registry.modules import error_line
from kdtourney.registry.sandboxed import SandboxQuestions


class BotRegistry:
    """Every available bot by name; discovery happens here, when the registry is built.

    bots_dirs: folders of bot modules, searched first; env: also the folders of KDTOURNEY_BOTS_DIR;
    cwd: also `./bots/` when it exists; entry_points: also installed packages' `kdtourney.bots`
    entry points. A folder that was asked for and does not exist raises BotsDirError; two bots
    with one name raise DuplicateBotError, unless `taken` ({bot name: the origin holding it}, a
    ladder's entrants) is given: then the bot holding the name keeps it (a built-in, the origin
    `taken` names, or else the first found) and the other is broken, refused with one line.
    sandbox: bot modules of the folders run in such a sandbox only (--sandbox): what they
    define, and the parameter values they refuse (`resolve`), is asked there, each module
    answering within `startup_timeout` seconds.
    """

    def __init__(self, bots_dirs=(), *, env: bool = True, cwd: bool = True,
                 entry_points: bool = True, sandbox: Sandbox | None = None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, taken: dict | None = None):
        questions = None if sandbox is None else SandboxQuestions(sandbox, startup_timeout)
        folders = bots_folders(bots_dirs, env, cwd)
        catalog = Catalog(taken=taken, run_modules=sandbox is None, questions=questions,
                          sandbox_allow=None if sandbox is None else tuple(sandbox.allowed))
        catalog.load([(folder, str(folder)) for folder in folders], entry_points=entry_points)
        self._start(catalog, questions, sandbox, startup_timeout)

    def _start(self, catalog: Catalog, questions: SandboxQuestions | None,
               sandbox: Sandbox | None, startup_timeout: float):
        self._catalog, self._questions = catalog, questions
        self._sandbox, self._startup_timeout = sandbox, startup_timeout
        self._hellos: dict[Program, dict] = {}
        self._identities: dict[str, dict] = {}
        self._checked: set[str] = set()  # specs of Python bots made once (resolve)

    @classmethod
    def from_sources(cls, files: dict, *, entry_points: bool = True, builtins: bool = True,
                     listed: dict | None = None) -> "BotRegistry":
        """A registry of the built-ins (with builtins), the bot folders shipped as `files` (from
        `source_files()`) and, with entry_points, the installed entry points: how a worker gets
        the bots of the process that scheduled the games. listed: what the bot modules define,
        as that process's `listings()` gave it, for a worker of a sandboxed run, which does not
        run them (they run in their sandbox only; their values were checked there).

        Each folder's files are unpacked once per machine into a folder named by their content
        (`bundles.unpacked`), and imported from there under the names and origins they had in
        the original process: a bot finds its files beside its module's `__file__`.
        """
        catalog = Catalog(run_modules=listed is None, given=listed)
        catalog.load(((unpacked(names), folder) for folder, names in files.items()),
                     builtins=builtins, entry_points=entry_points)
        registry = cls.__new__(cls)
        registry._start(catalog, None, None, DEFAULT_STARTUP_TIMEOUT)
        return registry

    # what a registry offers

    @property
    def bots(self) -> dict[str, BotInfo]:
        """{name: BotInfo} of every available bot: built-ins first, then in discovery order."""
        return dict(self._catalog.bots)

    @property
    def broken(self) -> list[BrokenModule]:
        """The bot modules that failed to import."""
        return list(self._catalog.broken)

    def listings(self) -> dict[str, dict]:
        """{folder bot module: {"bots": [{"name", "description", "parameters"}]}}: what each
        module defines as this registry learned it (running it, or asking it in a sandbox), for
        `from_sources(listed=...)`."""
        return self._catalog.listings()

    def source_files(self) -> dict[str, dict[str, bytes]]:
        """{bots folder: {name relative to it: bytes}}: every `.py` and `.toml` file at the top of
        the bot folders used and of their bots' subfolders, every file of a subfolder holding a
        bot module, and the files the modules at the top list in KDTOURNEY_FILES, as read when
        the registry was built; `BotRegistry.from_sources` rebuilds the bots from it (a TOML bot's
        command still runs from the folder of its origin)."""
        return self._catalog.sources.source_files()

    def resolve(self, spec) -> Entrant:
        """The Entrant of `spec` checked against its bot: known bot, known parameters, values of
        the types of their defaults (an int where a float is expected becomes a float; a value where
        a str is expected becomes its text), and for a Python bot values it accepts (it is made
        once, in this process, or for a module run in a sandbox only, in one: `mcts:c=-1` fails
        here, not in every game). Raises EntrantError with a one-line message."""
        info, resolved = self._converted(spec)
        if info.program is None and resolved.spec not in self._checked:
            if info.cls is not None:
                check_made(info, resolved)
            elif self._questions is not None:  # (a worker's listed bots were checked before)
                self._questions.check_one(info.origin, resolved.spec,
                                          self._catalog.sources.own_files)
            self._checked.add(resolved.spec)
        return resolved

    def _converted(self, spec) -> tuple[BotInfo, Entrant]:
        """(its bot, the Entrant of `spec` with its values converted): `resolve` but making it."""
        entrant = parse_entrant(spec)
        info = self._catalog.bots.get(entrant.name)
        if info is None:
            raise EntrantError(self._catalog.unknown_bot(entrant.name))
        return info, converted(info.name, info.parameters, entrant)

    def check(self, specs) -> None:
        """Ask at once, one sandbox per module, what values the bots of `specs` whose modules run
        in a sandbox only would refuse, so that resolving them one by one (`resolve`) asks no
        more; a spec that does not resolve is left to `resolve` to report. Nothing to do for a
        registry that runs its modules."""
        if self._questions is None:
            return
        asked: dict[str, list] = {}
        for spec in specs:
            try:
                info, entrant = self._converted(spec)
            except EntrantError:
                continue
            if info.cls is None and info.program is None:
                asked.setdefault(info.origin, []).append(entrant.spec)
        self._questions.check(asked, self._catalog.sources.own_files)

    def identity(self, spec) -> dict:
        """What code plays for the entrant `spec`: {"kind", "digest", ...} (a TOML bot's:
        `program_identity`; a Python bot's: registry.identity); EntrantError for an unknown bot.
        The same for any parameters of one bot."""
        info = self._catalog.bots[self.resolve(spec).name]
        if info.name not in self._identities:
            code = self.program_identity(info.name) if info.program is not None \
                else python_identity(info, self._catalog.sources)
            assert code is not None  # a TOML bot's (it has a program): never None
            self._identities[info.name] = dict(code, digest=code_digest(code))
        return dict(self._identities[info.name])

    def create(self, spec) -> Bot:
        """A new instance of the bot of `spec` (a string or an Entrant) with its parameters (a bot
        in its own process: started at its first `setup`, stopped at `close`)."""
        entrant = self.resolve(spec)
        try:
            return self.factory(entrant)()
        except (TypeError, ValueError) as exc:
            raise EntrantError(f"{entrant.spec}: {exc}") from exc

    def factory(self, spec, pool: ProcessPool | None = None, isolate: bool = False,
                label: str | None = None):
        """A callable making a new instance of the bot of `spec` per call. A TOML bot, or with
        `isolate` any bot (through `kdtourney serve`), plays in a process of `pool` (default: a
        pool of its own per instance, closed with it), as the entrant `label` (default: the
        spec; its processes and log file are its own)."""
        entrant = self.resolve(spec)
        info = self._catalog.bots[entrant.name]
        if info.program is None and not isolate:
            if info.cls is None:
                raise EntrantError(f"{entrant.spec}: its module runs in a sandbox only "
                                   "(--sandbox): it plays in its own process only")
            return lambda cls=info.cls, kwargs=entrant.kwargs: cls(**kwargs)
        options = dict(info.parameters, **entrant.kwargs) if info.program is not None else {}
        if pool is not None:
            program = self.program(entrant, pool, isolate)
            assert program is not None  # a TOML bot's, or with isolate `kdtourney serve`
            return lambda: pool.bot(program, label or entrant.spec, options)

        def own_pool():
            pool = ProcessPool()
            return ExternalBot(pool, self.program(entrant, pool, isolate), entrant.spec, options,
                               owns_pool=True)
        return own_pool

    def program(self, spec, pool: ProcessPool | None = None,
                isolate: bool = False) -> Program | None:
        """How the entrant `spec` is started in its own process: a TOML bot's command, or with
        `isolate` a Python bot's `kdtourney serve` (its sources in a file of `pool`); None for a bot
        that plays in this process."""
        entrant = self.resolve(spec)
        info = self._catalog.bots[entrant.name]
        if info.program is not None or not isolate:
            return info.program
        assert pool is not None  # isolate: the bot's sources go in a file of its pool
        # sandboxed, a bot gets its own files only: other bots' code is theirs (none: a bot of
        # kdtourney or the installation, which the harness runs too)
        sandboxed = pool.settings.sandbox is not None
        sources = self._catalog.sources
        files = sources.own_files(info.origin) if sandboxed else sources.source_files()
        name = f"sources-{sources_digest(files)[:12]}.json"
        return serve_program(entrant.spec, pool.file(name, encode_sources(files)),
                             trusted=sandboxed and not files)

    def start_check(self, specs, settings: ProcessSettings | None = None) -> dict:
        """Start once every TOML bot among the entrants `specs` and exchange hello: {spec: the
        bot's hello}. StartupError (one line naming the TOML file) for one that does not start
        or answer within the start-up timeout. (Python bots played isolated run kdtourney's own
        `serve`: a failure there shows in the games' faults.) Without `settings`, in the
        registry's sandbox, if it has one (never outside it)."""
        programs = {spec: self.program(spec) for spec in specs}
        settings = settings or ProcessSettings(sandbox=self._sandbox,
                                               startup_timeout=self._startup_timeout)
        hellos = check_programs([p for p in programs.values() if p is not None], settings)
        self._hellos.update(hellos)
        return {spec: hellos[p] for spec, p in programs.items() if p is not None}

    def assume_hello(self, spec, identity: dict) -> None:
        """For a TOML bot not started in this process: take the name and version it answered
        to hello from `identity` (a recorded one), so that `identity` needs no start. Nothing
        for a Python bot, or a TOML bot started here already."""
        program = self._catalog.bots[self.resolve(spec).name].program
        if program is not None and program not in self._hellos:
            self._hellos[program] = {"name": identity.get("bot_name"),
                                     "version": identity.get("bot_version")}

    def pin(self, spec, identity: dict) -> None:
        """A TOML bot (nothing for a Python bot) plays its files as the run recorded them
        (`identity`, its `files_sha256`): sandboxed, its processes show the copy of its files
        hashed then, however its folder changed since (kdtourney.external.identity
        .snapshot)."""
        name = self.resolve(spec).name
        info = self._catalog.bots[name]
        if info.program is None or not identity.get("files_sha256"):
            return
        pinned = replace(info.program, files_sha256=identity["files_sha256"])
        if info.program in self._hellos:
            self._hellos[pinned] = self._hellos[info.program]
        self._catalog.bots[name] = replace(info, program=pinned)

    def program_identity(self, spec) -> dict | None:
        """The code identity of a TOML bot (kind "kdtp": declared command, sha256 of its files,
        the name and version it answers to hello; origin: the TOML file, for display, not in the
        digest); None for a Python bot. Starts the bot once if `start_check` has not."""
        info = self._catalog.bots[self.resolve(spec).name]
        if info.program is None:
            return None
        if info.program not in self._hellos:
            self.start_check([info.name])
        try:
            found = program_identity(info.program, self._hellos[info.program])
        except (OSError, Unreadable) as exc:
            raise EntrantError(f"{info.origin}: its files cannot be read: "
                               f"{exc if isinstance(exc, Unreadable) else error_line(exc)}") \
                from None
        return dict(found, origin=info.origin)

    def __contains__(self, name) -> bool:
        return name in self._catalog.bots

    def __repr__(self):
        return f"BotRegistry(bots={sorted(self._catalog.bots)}, broken={len(self._catalog.broken)})"


def check_made(info: BotInfo, entrant: Entrant) -> None:
    """Make the Python bot `info` once with the entrant's values (and close it), so that a value
    it refuses is one EntrantError before play, not a fault in every game. A built-in's refusal
    is a TypeError or ValueError (anything else is a bug, and shows as one); a bot written
    elsewhere may refuse with any exception."""
    assert info.cls is not None  # a Python bot made here (not one listed in a sandbox)
    refusals = (TypeError, ValueError) if info.origin == BUILT_IN else (Exception, SystemExit)
    try:
        bot = info.cls(**entrant.kwargs)
        bot.close()
    except refusals as exc:
        text = str(exc) if isinstance(exc, (TypeError, ValueError)) and str(exc) else \
            error_line(exc, info.origin)
        raise EntrantError(f"{entrant.spec}: {text}") from None


__all__ = ["BotRegistry", "check_made"]
