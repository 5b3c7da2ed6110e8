"""One rating list over many tournament folders (`kdtourney ratings`); which games are pooled,
and how entrants are named and grouped: docs/ratings.md.

    rating_list(paths, players=, anchor=, n_boot=, seed=) -> RatingList
        the games of the tournament folders in or under `paths` pooled (the same rules, one
        player count unless `players` names several, every block once, balanced blocks only)
        and every group of connected entrants rated by kdtourney.stats.ratings; PoolError (one
        line, with the notes) when nothing can be rated or the anchor names no rated entrant
    find_tournaments(paths)   the tournament folders under `paths`, and the paths with none
    RatingList                entrants (rated first), LOS, sources, skipped folders, `notes()`
    Entrant, Source           one line of the list; one folder and what the list took from it

An entrant is a name and the code that played for it: older code shows as `name@digest`, games
from before code was recorded as `name@unknown`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from kdtourney import store as _store
from kdtourney.engine import Rules
from kdtourney.errors import UserError
from kdtourney.match.settings import played_with
from kdtourney.report import evaluation
from kdtourney.stats import ratings
from kdtourney.stats.outcomes import balanced_blocks
from kdtourney.tournament.definition import RULE_OPTIONS, Tournament

__all__ = ["rating_list", "find_tournaments", "RatingList", "Entrant", "Source", "PoolError",
           "UNKNOWN"]

UNKNOWN = "unknown"  # the version shown for games whose code is unknown
_GAME_COLUMNS = ("game", "n_players", "finished_at", "seed")
_SHIFT = 32  # game and block numbers of folder i start at i << 32


class PoolError(UserError):
    """The list cannot be made: nothing can be rated (`notes`: the lines that say what was found
    instead), or the anchor names no rated entrant. The message is one line."""

    def __init__(self, message: str, notes=()):
        super().__init__(message)
        self.notes = list(notes)


@dataclasses.dataclass
class Source:
    """One tournament folder and what the list took from it."""

    folder: Path
    kind: str  # "run" or "sprt"
    description: str
    stored: int  # games in the store
    pooled: int  # games in the list
    first: pd.Timestamp | None  # dates of the pooled games
    last: pd.Timestamp | None
    code: str  # what is known about the code that played
    version: str | None  # the kdtourney that recorded the code
    note: str | None = None  # what was left out, and why


@dataclasses.dataclass
class Entrant:
    """One line of the list."""

    name: str  # label, or label@digest / label@unknown when the label has several codes
    label: str  # the name its tournaments gave it
    digest: str | None  # None: code unknown
    identity: dict | None
    games: int
    folders: list  # indices into RatingList.sources
    first: pd.Timestamp | None
    last: pd.Timestamp | None
    failed: int = 0  # games it sat in that failed (no result: not in the fit)
    elo: float = float("nan")
    lo: float = float("nan")
    hi: float = float("nan")
    record: str = ""  # "won all" / "lost all": a one-sided interval (kdtourney.stats.ratings)
    unrated: str | None = None  # why it has no rating
    group: int = 0  # rated: its group of connected entrants, 1 the one with most encounters


@dataclasses.dataclass
class RatingList:
    entrants: list  # rated, strongest first, then the unrated
    los: pd.DataFrame  # likelihood of superiority between the rated entrants
    sources: list
    skipped: list  # (folder, reason)
    players: tuple
    rules: dict
    anchor: tuple | None
    n_boot: int
    n_games: int = 0  # games, blocks and folders of the rated entrants' games
    n_blocks: int = 0
    n_folders: int = 0
    results: pd.DataFrame | None = None  # the rated entrants' pooled results
    evaluation: dict | None = None  # kdtourney.report.evaluation's view of group 1

    @property
    def rated(self) -> list:
        return [e for e in self.entrants if e.unrated is None]

    @property
    def groups(self) -> int:
        """The groups of connected entrants rated (each on a scale of its own)."""
        return max((e.group for e in self.rated), default=0)

    def notes(self) -> list[str]:
        """One line per skipped or partly pooled folder, per group beyond the first and per
        unrated entrant."""
        lines = [f"skipped {folder}: {reason}" for folder, reason in self.skipped]
        lines += [f"{s.folder}: {s.note}" for s in self.sources if s.note]
        for g in range(2, self.groups + 1):
            names = [e.name for e in self.rated if e.group == g]
            lines.append(f"group {g} ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''}): "
                         "no game connects it to group 1, so its Elo is on a scale of its own")
        lines += [f"unrated {e.name}: {e.unrated}" for e in self.entrants if e.unrated]
        return lines


# --------------------------------------------------------------------------------------------------
# Finding and reading the folders
# --------------------------------------------------------------------------------------------------


def find_tournaments(paths) -> tuple[list[Path], list[tuple[str, str]]]:
    """The tournament folders in or under `paths` (each once, in the order given, subfolders
    sorted), and (path, reason) for each path that holds none."""
    found, skipped, seen = [], [], set()
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            skipped.append((str(path), "no such folder" if not path.exists() else "not a folder"))
            continue
        here = []
        for folder, subfolders, files in os.walk(path):
            subfolders.sort()
            if _store.STORE_FILE in files:
                here.append(Path(folder))
                subfolders.clear()  # a tournament folder holds one tournament
        if not here:
            skipped.append((str(path), f"no tournament in it (no {_store.STORE_FILE} in it or "
                                       "below)"))
        for tournament in here:
            key = tournament.resolve()
            if key not in seen:
                seen.add(key)
                found.append(tournament)
    return found, skipped


@dataclasses.dataclass
class _StoreData:
    """What the list reads from one store."""

    folder: Path
    config: dict
    results: pd.DataFrame  # game, block, entrant, rank, n_players
    games: pd.DataFrame  # game, n_players, finished_at (UTC timestamps)
    failed: pd.DataFrame  # game, entrant of 'failed' faults
    digests: dict  # label -> digest (None: unknown)
    identities: dict  # label -> identity dict
    recorded_after: int  # games stored before the code was recorded
    blocks: str  # a digest of the block records: which tables, entrants and deals it plays

    @property
    def tournament(self) -> dict:
        return self.config.get("tournament") or {}

    @property
    def made_by(self) -> str:
        """What made its games besides the tournament and code (`played_with`), as a key."""
        return json.dumps(played_with(self.config), sort_keys=True)


def _read(folder: Path) -> _StoreData:
    """StoreError (one line) for a missing, corrupt, foreign or newer store."""
    with _store.reader(folder):  # a running command stores games meanwhile: one state
        return _read_snapshot(folder)


def _read_snapshot(folder: Path) -> _StoreData:
    config = _store.load_config(folder)
    results = balanced_blocks(
        _store.load_results(folder, ("game", "seat", "block", "entrant", "rank", "n_players")))
    games = _store.load_games(folder, _GAME_COLUMNS)
    meta = config.get("meta") or {}
    fallback = pd.to_datetime(meta.get("updated") or meta.get("created"), utc=True, errors="coerce")
    games["finished_at"] = pd.to_datetime(games["finished_at"], utc=True, errors="coerce",
                                          format="ISO8601").fillna(fallback)
    faults = _store.load_faults(folder)
    failed = faults.loc[faults["kind"] == "failed", ["game", "entrant"]]
    entrants = _store.load_entrants(folder)
    digests = {str(e): d for e, d in zip(entrants["entrant"], entrants["digest"])}
    identities = {str(e): i for e, i in zip(entrants["entrant"], entrants["identity"])}
    recorded_after = meta.get("entrants_recorded_after")
    blocks = _store.load_blocks(folder, decode=False)
    signature = hashlib.sha256("\n".join(
        f"{b} {f} {seats} {entrants}" for b, f, seats, entrants in zip(
            blocks["block"], blocks["first_game"], blocks["seats"], blocks["entrants"])
    ).encode()).hexdigest()
    return _StoreData(folder, config, results, games, failed, digests, identities,
                      int(recorded_after) if isinstance(recorded_after, int) else 0, signature)


def _describe(st: _StoreData) -> str:
    try:
        return Tournament.from_dict(st.tournament).describe()
    except (TypeError, ValueError, KeyError, IndexError):  # a store from another version
        return ", ".join(str(e) for e in st.tournament.get("entrants") or [])


def _code_text(st: _StoreData) -> str:
    if not any(st.digests.values()):
        return "unknown (a store from before kdtourney recorded it)"
    if st.recorded_after:
        return f"recorded after the first {st.recorded_after} games (those: unknown)"
    return "recorded"


# --------------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------------


def _rules(st: _StoreData, n_players: int) -> dict:
    """The rules of the store's n-player games, as far as they decide a game's outcome."""
    stored = st.tournament.get("rules") or {}
    rules = {k: stored.get(k, Rules.__dataclass_fields__[k].default) for k in RULE_OPTIONS}
    if n_players != 3:
        del rules["three_player"]  # decides nothing outside 3-player games
    rules["dynasty"] = bool(st.tournament.get("dynasty"))
    return rules


def _text(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _rule_difference(rules: dict, reference: dict) -> str:
    keys = [k for k in reference if k in rules and rules[k] != reference[k]]
    return ("other rules: " + ", ".join(f"{k.replace('_', '-')} {_text(rules[k])}" for k in keys)
            + " (this list: " + ", ".join(f"{k.replace('_', '-')} {_text(reference[k])}"
                                          for k in keys) + ")")


def _choose(stores, players):
    """(player counts, reference rules): the asked player counts (default: the count with the most
    finished games, or the sizes of a ladder that plays several if they have more), then the
    rules with the most finished games among them (None: no games)."""
    counts = []  # (rules, player count, finished games) per store and player count
    for st in stores:
        for n, games in st.results.groupby("n_players")["game"].nunique().items():
            counts.append((_rules(st, int(n)), int(n), int(games)))
    if players is None:
        groups = {(n,) for _, n, _ in counts}
        groups |= {tuple(sorted(st.config["ladder"]["players"])) for st in stores
                   if "ladder" in st.config}
        votes = {g: sum(games for _, n, games in counts if n in g) for g in groups}
        if not any(votes.values()):
            return (), None
        players = max(sorted(votes), key=lambda g: (votes[g], len(g)))
    players = tuple(sorted(players))

    def most(votes):
        return max(votes, key=lambda k: votes[k]) if votes else None

    votes: dict = {}
    for rules, n, games in counts:
        if n in players:
            key = json.dumps({k: v for k, v in rules.items() if k != "three_player"})
            votes[key] = votes.get(key, 0) + games
    reference = most(votes)
    if reference is None:
        return players, None
    reference = json.loads(reference)
    setups: dict = {}
    for rules, n, games in counts:
        if n == 3 and n in players and all(rules[k] == v for k, v in reference.items()):
            setups[rules["three_player"]] = setups.get(rules["three_player"], 0) + games
    if setups:
        reference["three_player"] = most(setups)
    return players, reference


def _left_out(st: _StoreData, players: tuple, reference: dict | None) -> tuple[set, list[str]]:
    """(player counts of the store's games that the list takes, a reason per count it leaves)."""
    taken, reasons = set(), []
    asked = ",".join(str(p) for p in players)
    for n in sorted(int(n) for n in st.games["n_players"].unique()):
        rules = _rules(st, n)
        if n not in players:
            reasons.append(f"{n}-player games (this list: {asked}-player; --players "
                           f"{','.join(str(p) for p in sorted(set(players) | {n}))} pools them "
                           "together)")
        elif reference is None or any(rules.get(k, v) != v for k, v in reference.items()):
            reasons.append(_rule_difference(rules, reference or rules))
        else:
            taken.add(n)
    return taken, reasons


# --------------------------------------------------------------------------------------------------
# The list
# --------------------------------------------------------------------------------------------------


def rating_list(paths, *, players=None, anchor=None, n_boot: int = 1000, seed: int = 0
                ) -> RatingList:
    """Pool the games of the tournament folders in or under `paths` and rate them (docs/ratings.md).
    players: the player counts to pool (default: the most played one); anchor: None (mean 0) or
    (name, Elo). PoolError (one line, and the notes) when nothing can be rated or the anchor names
    no rated entrant."""
    stores, skipped = _readable(paths)
    players, reference = _choose(stores, players)
    sources: list[Source] = []
    result_rows: list[pd.DataFrame] = []
    failed: list[pd.DataFrame] = []
    keys: dict[tuple, int] = {}  # (label, digest) -> entrant number
    identities: dict[int, dict | None] = {}  # entrant number -> identity
    seen_blocks: dict[tuple, Path] = {}  # block key (`_new_blocks`) -> folder that pooled it
    for st in stores:
        taken, reasons = _left_out(st, players, reference)
        if not taken:
            skipped.append((str(st.folder), "; ".join(reasons)))
            continue
        source, rows, seated = _pool(st, len(sources), taken, keys, identities)
        rows, again, where = _new_blocks(st, rows, seen_blocks, len(sources))
        if again:
            reasons.append(f"{again} games also in {where} (the same blocks: the same "
                           "deals, seatings, code and play settings), counted once")
            source.pooled = int(rows["game"].nunique())
        if rows.empty:
            skipped.append((str(st.folder), "; ".join(reasons)))
            continue
        if reasons:
            source.note = (f"{source.pooled} of its {source.stored} games pooled; left out: "
                           + "; ".join(reasons))
        sources.append(source)
        result_rows.append(rows)
        failed.append(seated)
    if not result_rows:
        raise PoolError("nothing to rate: no complete block of finished games in "
                        + ", ".join(str(p) for p in paths),
                        [f"skipped {f}: {r}" for f, r in skipped])
    results = pd.concat(result_rows, ignore_index=True)
    entrants = _entrants(results, pd.concat(failed, ignore_index=True), list(keys), identities)
    results["entrant"] = np.array([e.name for e in entrants], dtype=object)[results["key"]]
    out = RatingList(entrants=entrants, los=None, sources=sources, skipped=skipped,
                     players=players, rules=reference, anchor=anchor, n_boot=n_boot)
    _rate(out, results, seed)
    out.evaluation = evaluation.rating_list_view(out, seed)
    return out


def _readable(paths) -> tuple[list[_StoreData], list]:
    """The stores with finished games under `paths`, each tournament once; (folder, reason) for
    the rest."""
    folders, skipped = find_tournaments(paths)
    stores: list[_StoreData] = []
    seen: dict[str, _StoreData] = {}
    for folder in folders:
        try:
            st = _read(folder)
        except _store.StoreError as exc:
            skipped.append((str(folder), str(exc)))
            continue
        if st.results.empty:
            skipped.append((str(folder), _incomplete(st) if len(st.games) else
                            "no games stored"))
            continue
        if "tune" in st.config:
            skipped.append((str(folder), "a tune: its theta+ and theta- play other values in "
                                         "every iteration"))
            continue
        # a copy, or a re-run with the same seed, code and play (and seed secret), holds the
        # same games: keep the one with the most. A folder's games are its blocks' (the tables
        # a ladder chose depend on how its chunks went; the blocks are also compared one by one)
        key = json.dumps([st.tournament, st.blocks, sorted(st.digests.items(), key=str),
                          st.made_by], sort_keys=True)
        if key in seen:
            other = seen[key]
            keep, drop = (st, other) if len(st.games) > len(other.games) else (other, st)
            seen[key] = keep
            stores[stores.index(other)] = keep
            skipped.append((str(drop.folder), f"the same games as {keep.folder} (the same "
                                              "tournament, seed, code and play settings): "
                                              "counted once"))
            continue
        seen[key] = st
        stores.append(st)
    return stores, skipped


def _incomplete(st: _StoreData) -> str:
    """Why a folder with games has nothing to rate: no block played in every seat rotation."""
    n = len(st.games)
    return (f"no complete block: its {n} game{'s' * (n != 1)} {'are' if n != 1 else 'is'} "
            "not yet a block played in every seat rotation (ratings count whole blocks only)")


def _pool(st: _StoreData, index: int, taken: set, keys: dict, identities: dict):
    """(Source, result rows, failed seats) of the games of `st` with a player count in `taken`.
    Rows: game and block numbered for the pool, key (the entrant's number in `keys`, which gains
    the store's (label, digest) pairs), rank, folder, date."""
    games = st.games[st.games["n_players"].isin(taken)]
    rows = st.results[st.results["n_players"].isin(taken)]
    # the games stored before the code was recorded (by the time they finished): code unknown
    ordered = st.games.sort_values(["finished_at", "game"], kind="stable")
    unknown = rows["game"].isin(ordered["game"].head(st.recorded_after)).to_numpy()
    codes, labels = pd.factorize(rows["entrant"])
    key = np.empty(len(rows), dtype=np.int64)
    for known in (True, False):
        part = unknown != known
        number = np.zeros(len(labels), dtype=np.int64)
        for c in np.unique(codes[part]):
            label = str(labels[c])
            digest = st.digests.get(label) if known else None
            number[c] = keys.setdefault((label, digest), len(keys))
            if digest:
                identities.setdefault(int(number[c]), st.identities.get(label))
        key[part] = number[codes[part]]
    base = np.int64(index) << _SHIFT
    date = st.games.set_index("game")["finished_at"]
    pooled = pd.DataFrame({"game": base + rows["game"].to_numpy(np.int64),
                           "block": base + rows["block"].to_numpy(np.int64), "key": key,
                           "seat": rows["seat"].to_numpy(),
                           "rank": rows["rank"].to_numpy(), "folder": index,
                           "date": date.reindex(rows["game"]).to_numpy()})
    old = set(ordered["game"].head(st.recorded_after))
    fails = st.failed[st.failed["game"].isin(games["game"])]
    seated = [keys.get((str(e), None if g in old else st.digests.get(str(e))))
              for g, e in zip(fails["game"], fails["entrant"])]
    failed = pd.DataFrame({"game": base + fails["game"].to_numpy(np.int64), "key": seated},
                          dtype=object).dropna().astype(np.int64)  # no finished game: not listed
    source = Source(folder=st.folder, kind="sprt" if "sprt" in st.config else "run",
                    description=_describe(st), stored=int(len(st.games)),
                    pooled=int(pooled["game"].nunique()), first=games["finished_at"].min(),
                    last=games["finished_at"].max(), code=_code_text(st),
                    version=st.config.get("kdtourney_version"))
    return source, pooled, failed


def _new_blocks(st: _StoreData, rows: pd.DataFrame, seen: dict, index: int):
    """(rows without the blocks that an earlier folder pooled already, how many games they were,
    the folder that pooled the first of them). A block is the same when its games' deal seeds,
    game numbers (the bots' seeds derive from the seed and the game number), seatings and
    entrants' code (`key`) are, and what made them (the seed secret, the play settings:
    `made_by`): each block is reduced to a 64-bit hash of those (vectorised: a list of 100,000
    games stays fast); `seen` gains this folder's blocks."""
    if rows.empty:
        return rows, 0, None
    local = rows["game"].to_numpy(np.int64) - (np.int64(index) << _SHIFT)
    deal = st.games.set_index("game")["seed"].reindex(local).to_numpy(np.int64)
    with np.errstate(over="ignore"):
        h = _mix(_mix(_mix(local, rows["seat"].to_numpy(np.int64)),
                      rows["key"].to_numpy(np.int64)), deal)
    per_block = pd.Series(h, index=rows["block"].to_numpy()).groupby(level=0).sum()  # wraps
    counts = rows.groupby("block")["game"].nunique().reindex(per_block.index)
    seed, made_by = st.tournament.get("seed"), st.made_by
    drop, first = [], None
    for block, value, n in zip(per_block.index.tolist(), per_block.tolist(), counts.tolist()):
        key = (seed, made_by, value, n)
        if key in seen:
            drop.append(block)
            first = first or seen[key]
        else:
            seen[key] = st.folder
    if not drop:
        return rows, 0, None
    kept = rows[~rows["block"].isin(drop)]
    return kept, int(rows["game"].nunique() - kept["game"].nunique()), first


def _mix(a, b):
    """A 64-bit hash of two int64 arrays (splitmix64's finaliser over their combination)."""
    x = a.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ b.astype(np.uint64)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    return x


def _entrants(results: pd.DataFrame, failed: pd.DataFrame, keys: list, identities: dict
              ) -> list[Entrant]:
    """An Entrant per key, in key order, with the names of the list: a label with several codes
    keeps it for the code that played last; the others are label@digest (as short as stays
    unique) and label@unknown."""
    by_key = results.groupby("key")
    games = by_key["game"].nunique()
    first, last = by_key["date"].min(), by_key["date"].max()
    folders = by_key["folder"].unique()
    failed_games = failed.groupby("key")["game"].nunique()
    entrants = [Entrant(name=label, label=label, digest=digest, identity=identities.get(k),
                        games=int(games[k]), folders=sorted(int(f) for f in folders[k]),
                        first=first[k], last=last[k], failed=int(failed_games.get(k, 0)))
                for k, (label, digest) in enumerate(keys)]
    versions: dict = {}
    for e in entrants:
        versions.setdefault(e.label, []).append(e)
    for label, group in versions.items():
        if len(group) == 1:
            continue
        known = sorted((e for e in group if e.digest), key=lambda e: (e.last, e.digest))
        for e in group:
            if e.digest is None:
                e.name = f"{label}@{UNKNOWN}"
            elif e is not known[-1]:
                e.name = f"{label}@{_short(e.digest, [o.digest for o in known if o is not e])}"
    return entrants


def _short(digest: str, others) -> str:
    """The first 6 characters of `digest`, more if another digest starts the same."""
    n = 6
    while n < len(digest) and any(o.startswith(digest[:n]) for o in others):
        n += 1
    return digest[:n]


def _rate(out: RatingList, results: pd.DataFrame, seed: int) -> None:
    """Rate every group of entrants that games connect, each on its own scale (the anchor in
    its group), group 1 the one with the most pairwise encounters; an entrant that met no other
    gets the reason it is unrated. PoolError if none can be rated."""
    pc = ratings.pair_counts(results)
    _, meetings = pc.totals()
    parent = list(range(pc.n_entrants))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(pc.pair_i, pc.pair_j):
        parent[root(int(i))] = root(int(j))
    weight: dict = {}
    for i, m in zip(pc.pair_i, meetings):
        weight[root(int(i))] = weight.get(root(int(i)), 0.0) + m
    by_name = {e.name: e for e in out.entrants}
    if not weight:
        for e in out.entrants:
            e.unrated = "no game against another entrant"
        raise PoolError("nothing to rate: no game between two different entrants", out.notes())
    groups = sorted(weight, key=lambda r: (-weight[r], r))
    members = {r: [n for k, n in enumerate(pc.entrants) if root(k) == r] for r in groups}
    for k, name in enumerate(pc.entrants):
        if root(k) not in weight:
            by_name[name].unrated = "no game against another entrant"
    rated = [n for r in groups for n in members[r]]
    anchor = out.anchor
    if anchor is not None and anchor[0] not in rated:
        if anchor[0] in by_name:
            raise PoolError(f"cannot anchor at {anchor[0]}: it is unrated "
                            f"({by_name[anchor[0]].unrated})")
        shown = ", ".join(rated[:8]) + (", ..." if len(rated) > 8 else "")
        raise PoolError(f"anchor entrant {anchor[0]!r} is not in the list (rated: {shown})")
    results = results[results["entrant"].isin(rated)]
    out.n_games = int(results["game"].nunique())
    out.n_blocks = ratings.pair_counts(results).n_blocks
    out.n_folders = int(results["folder"].nunique())
    out.results = results
    ranked, los = {}, pd.DataFrame(np.nan, index=rated, columns=rated)
    for g, r in enumerate(groups, 1):
        group = ratings.pair_counts(results[results["entrant"].isin(members[r])])
        table = ratings.bootstrap_elo(group, n_boot=out.n_boot, seed=seed,
                                      anchor=anchor if anchor and anchor[0] in members[r] else None)
        for rank, (name, row) in enumerate(table.iterrows()):  # ratings.rank_key's order
            e = by_name[name]
            e.elo, e.lo, e.hi = float(row["elo"]), float(row["lo"]), float(row["hi"])
            e.record, e.group = row["record"], g
            ranked[name] = (g, rank)
        within = ratings.los_matrix(table)  # none between groups
        los.loc[within.index, within.columns] = within
    out.los = los
    out.entrants.sort(key=lambda e: (e.unrated is not None, ranked.get(e.name, (0, 0)), e.name))
