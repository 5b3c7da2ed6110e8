"""The sentences a report page puts beside figures that would otherwise seem to disagree.

    record_notes(rows, verdict)   per perfect record: its one-sided bound against the headline's
                                  or the "vs leader" figure of the same entrant
    sprt_note(test)               the SPRT's stopping-corrected estimate against the standings' fit
"""

from __future__ import annotations

from kdtourney.report.fmt import RECORDS, finite, fmt_bound, fmt_elo


def record_notes(rows: list[dict], verdict: dict | None) -> list[str]:
    """One sentence per entrant of the standings `rows` with a perfect record (won or lost every
    comparison), saying why its bound and the fit's figures are both true."""
    notes = []
    for row in rows:
        record = row.get("record") or ""
        if record not in RECORDS:
            continue
        bound = fmt_bound(record, row.get("elo_lo"), row.get("elo_hi"))
        words, _ = RECORDS[record]
        if verdict and row["name"] in (verdict["leader"], verdict["second"]):
            other = verdict["second"] if row["name"] == verdict["leader"] else verdict["leader"]
            figure = (f"the headline's {fmt_elo(verdict['diff'])} Elo between it and {other}")
        elif finite(row.get("delta")):
            figure = f"its {fmt_elo(row['delta'])} vs leader"
        else:
            figure = "its Elo"
        side = "at least" if record == "won all" else "at most"
        notes.append(
            f"{row['name']} {words} ({row['blocks']} blocks): a perfect record has no finite "
            f"estimate, so its Elo column shows a one-sided 95% bound, {bound} ({side} that). "
            f"{figure[0].upper()}{figure[1:]} is the fit's estimate, which a perfect record "
            f"pushes as far as the fit's prior lets it: not a measurement, and no contradiction "
            f"of the bound.")
    return notes


def sprt_note(test: dict) -> str:
    """Why the SPRT's estimate and interval differ from the candidate's in the standings."""
    return (f"The Elo of the verdict is the candidate's advantage over {test['baseline']} from the "
            "test's block scores, corrected for stopping (a test that stops when the LLR crosses "
            "a bound stops more often after lucky games; the correction removes that bias and "
            "widens the interval, unbounded on a side the test did not reach). The standings "
            "below fit every entrant from the same games, pairwise inside each game, with a "
            "block bootstrap and no correction: their interval is narrower and centred on the "
            "raw result. Both are right for what they measure; for the decision, read the LLR.")


__all__ = ["record_notes", "sprt_note"]
