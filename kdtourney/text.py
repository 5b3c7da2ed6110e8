"""Text that bots wrote (an import error, a stderr line, a name given at hello), shown to people:
its control characters escaped, so that a bot's escape sequences cannot move the cursor, clear or
retitle the organiser's terminal, nor forge a line on a terminal or a page."""

from __future__ import annotations

import unicodedata

_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))  # reorder the text around them


def shown(text, keep: str = "") -> str:
    """`text` with every control character (C0, DEL, C1) and every bidirectional override
    written as an escape (`\\x1b`, `\\u202e`), but those in `keep` (a page keeps line breaks).
    Escaping twice changes nothing more."""
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for char in text:
        code = ord(char)
        if char in keep or not (unicodedata.category(char) == "Cc" or code in _BIDI):
            out.append(char)
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


__all__ = ["shown"]
