"""The rules of record live in the project (docs/rules.md), cover every option the engine has, and
are what the code and tests cite; nothing points outside the project."""

import dataclasses
import re
from pathlib import Path

from kdtourney.engine import rules as rules_module
from kdtourney.engine.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
RULES_DOC = ROOT / "docs" / "rules.md"
SOURCES = [p for folder in ("kdtourney", "tests", "docs", "benchmarks", "examples", ".ci")
           for p in (ROOT / folder).rglob("*")
           if p.is_file() and p.suffix not in (".pyc", ".nbi", ".nbc")]
SOURCES.append(ROOT / "README.md")


def test_every_rules_option_and_value_is_documented():
    text = RULES_DOC.read_text(encoding="utf-8")
    choices = {"variant": rules_module.VARIANTS, "three_player": rules_module.THREE_PLAYER_SETUPS,
               "tiebreak": rules_module.TIEBREAKS, "first_picks": rules_module.FIRST_PICKS}
    for field in dataclasses.fields(Rules):
        if field.name == "players":
            continue
        for value in choices.get(field.name, [True]):
            setting = f'{field.name}="{value}"' if isinstance(value, str) else f"{field.name}=True"
            if value != field.default:
                assert setting in text, f"docs/rules.md does not describe {setting}"
            assert field.name in text


def test_the_code_cites_the_rules_of_the_project_and_nothing_outside_it():
    citing = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(ROOT)
        assert not re.search(r"\.\./shared|/work/share[d]|\bRULES\.md", text), \
            f"{where} points outside"
        if "docs/rules.md" in text:
            citing.append(str(where))
    assert {"kdtourney/engine/rules.py", "tests/naive.py", "tests/data/golden_kingdoms.txt",
            "tests/data/perft.txt", "README.md"} <= set(citing)
