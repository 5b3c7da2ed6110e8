"""Hostile text for the report tests: an entrant label, a fault message and a bot module that put
markup where the pages must escape it. Imported by tests/report/conftest.py and its tests (a
module of its own: `from conftest import` would find whichever conftest was imported first)."""

import textwrap

EVIL_TEXT = "<script>alert(1)</script>"
EVIL_ENTRANT = f"evil:note={EVIL_TEXT}"
EVIL_MESSAGE = "<img src=x onerror=alert(2)> went wrong"

EVIL_MODULE = textwrap.dedent(f'''
    from kdtourney.bots.random_bot import RandomBot


    class EvilBot(RandomBot):
        """A random bot with hostile text in its parameter and in its errors."""

        name = "evil"

        def __init__(self, note="quiet"):
            super().__init__()
            self.note = note

        def setup(self, seat, rules, seed):
            super().setup(seat, rules, seed)
            self._fail = seed % 3 == 0

        def act(self, view):
            if self._fail and view.round >= 2:
                raise RuntimeError({EVIL_MESSAGE!r})
            return super().act(view)
''')
