"""Numbers as the report shows them (the page's template filters and the plots' labels):
a true minus sign, a dash for an unknown value, no sign on zero."""

import json
import math

MINUS = "\u2212"
DASH = "\u2014"


def finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def fmt_num(x, digits: int = 1) -> str:
    return f"{float(x):.{digits}f}".replace("-", MINUS) if finite(x) else DASH


def fmt_signed(x, digits: int = 1) -> str:
    if not finite(x):
        return DASH
    s = f"{float(x):+.{digits}f}"
    if float(s) == 0:
        s = f"{0:.{digits}f}"
    return s.replace("-", MINUS)


def fmt_elo(x) -> str:
    return fmt_signed(x, 0)


def fmt_pct(x, digits: int = 1) -> str:
    return f"{100 * float(x):.{digits}f}%" if finite(x) else DASH


def fmt_ci(lo, hi, kind: str = "num", digits: int = 1) -> str:
    """'lo to hi' in the given format, or '' when the interval is unknown."""
    if not (finite(lo) and finite(hi)):
        return ""
    f = {"num": lambda v: fmt_num(v, digits), "signed": lambda v: fmt_signed(v, digits),
         "elo": fmt_elo, "pct": lambda v: fmt_pct(v, digits)}[kind]
    return f"{f(lo)} to {f(hi)}"


def fmt_time(seconds) -> str:
    """A duration in s / ms / µs, 3 significant digits."""
    if not finite(seconds):
        return DASH
    s = float(seconds)
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} \u00b5s"


def fmt_value(v) -> str:
    """A config value as text: JSON for lists and dicts, plain otherwise."""
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, sort_keys=True)
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


#: What the list says of an entrant with a perfect record (`ratings` column `record`), and the
#: side its one-sided bound is on.
RECORDS = {"won all": ("won every comparison", "\u2265"), "lost all": ("lost every comparison",
                                                                       "\u2264")}


def elo_text(elo, lo, hi, record: str = "") -> str:
    """An Elo with its 95% interval as the terminal shows it, '+120 [+80, +161]'; for a perfect
    record, its one-sided bound, as short: '>= +317 (won all)' (the comparisons: the pages say
    it in full)."""
    if record in RECORDS:
        bound = lo if record == "won all" else hi
        return f"{'>=' if record == 'won all' else '<='} {bound:+.0f} ({record})"
    return f"{elo:+.0f} [{lo:+.0f}, {hi:+.0f}]"


def fmt_bound(record: str, lo, hi) -> str:
    """'≥ +317' (won all) or '≤ −317' (lost all), as the page shows a one-sided bound."""
    _, sign = RECORDS[record]
    return f"{sign} {fmt_elo(lo if record == 'won all' else hi)}"
