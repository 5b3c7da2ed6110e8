"""A ladder's entrants: each a spec and the code that plays for it, in versions.

    Found                     an entrant the folders hold now: spec, code digest, identity, origin
    update_entrants(...)      the changes to the stored entrants a look at the folders brings
    stored_entrants(folder)   {label: row} as stored; pending_blocks: the blocks left to play
    label_for(spec, version)  SPEC, SPEC@v2, SPEC@v3, ...: a new label per code

A changed entrant's old version is superseded (kept, with its games) and the new one enters; an
entrant gone from the folders is retired; the same code coming back is active again.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdtourney import store

ACTIVE, SUPERSEDED, RETIRED = "active", "superseded", "retired"


@dataclass(frozen=True)
class Found:
    """An entrant found in the folders or references: its spec and the code that plays for it."""

    spec: str
    digest: str
    identity: dict
    origin: str


def label_for(spec: str, version: int) -> str:
    return spec if version == 1 else f"{spec}@v{version}"


def update_entrants(entrants: dict, found: dict, when: str) -> tuple[list[dict], list[str]]:
    """The changes to the ladder's entrants ({label: row} as stored) now that `found` ({spec:
    Found}) is what the folders hold: (rows to write, one line per change). New spec: version 1
    enters; changed code: the active version is superseded and a new version enters (or a retired
    version with this code returns); gone: the active version is retired."""
    rows, events = [], []
    by_spec: dict = {}
    for row in entrants.values():
        by_spec.setdefault(row["spec"], []).append(row)

    def change(row, status, note):
        rows.append(dict(row, status=status, changed=when, note=note))
        events.append(f"{row['label']}: {note}")

    for spec, now in found.items():
        versions = by_spec.get(spec, [])
        active = [r for r in versions if r["status"] == ACTIVE]
        if active and active[0]["digest"] == now.digest:
            continue
        for row in active:
            change(row, SUPERSEDED, f"superseded (its code changed: {now.digest[:12]})")
        same = [r for r in versions if r["digest"] == now.digest and r["status"] != ACTIVE]
        if same:
            change(same[-1], ACTIVE, "back with the same code")
            continue
        version = max((r["version"] for r in versions), default=0) + 1
        row = dict(label=label_for(spec, version), spec=spec, version=version,
                   digest=now.digest, origin=now.origin, added=when)
        change(row, ACTIVE, "entered" if version == 1 else f"entered as version {version}")
    for spec, versions in by_spec.items():
        if spec not in found:
            for row in versions:
                if row["status"] == ACTIVE:
                    change(row, RETIRED, "retired (no longer in the folders)")
    return rows, events


def stored_entrants(folder) -> dict:
    """{label: row} of the ladder's entrants as stored."""
    return {r["label"]: r for r in store.load_ladder_entrants(folder).to_dict("records")}


def pending_blocks(blocks, entrants: dict, played: set):
    """(the block records scheduled with games still to play whose entrants are all active; the
    blocks to cancel: some entrant left)."""
    pending, cancel = [], []
    for b in blocks.to_dict("records"):
        first, n = int(b["first_game"]), int(b["n_players"])
        if b["cancelled"] or all(g in played for g in range(first, first + n)):
            continue
        if all(entrants.get(s, {}).get("status") == ACTIVE for s in b["seats"]):
            pending.append(dict(block=int(b["block"]), first_game=first, n_players=n,
                                seats=list(b["seats"]), entrants=dict(b["entrants"])))
        else:
            cancel.append(int(b["block"]))
    return pending, cancel


__all__ = ["ACTIVE", "SUPERSEDED", "RETIRED", "Found", "label_for", "update_entrants",
           "stored_entrants", "pending_blocks"]
