"""The export's CSV cells: formula escaping, quoting by Go's rule. The user's document is `users/exported.py`."""

from __future__ import annotations

from typing import Any

from litestar_userio.users.exported import build_document, encode_sorted, totp_uri

__all__ = ["FORMULA_STARTS", "LEADING_SPACE", "build_document", "csv_cell", "csv_quote", "csv_text", "totp_uri"]

_encode_sorted = encode_sorted


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as a formula at the start of a cell; `escape_formulas` puts `'` before it."""


def csv_cell(value: Any, *, escape_formulas: bool = False) -> str:
    """A value as CSV text (docs/reference.md#export-file-format), quoted only when it must be.

    Strings as is, booleans `true`/`false`, numbers plainly, null or absent empty, arrays and objects compact
    JSON with sorted keys.
    """
    if isinstance(value, str):
        text = "'" + value if escape_formulas and value.startswith(FORMULA_STARTS) else value
    else:
        text = csv_text(value)
    return csv_quote(text)


def csv_text(value: Any) -> str:
    """The unquoted text of a cell whose value is not a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return _encode_sorted(value).decode()


LEADING_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Go's unicode.IsSpace, as a regex class body: a cell starting with one is quoted. Python's `\\s` also takes
U+001C..U+001F, Go does not."""
_LEADING_SPACES = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
)
"""The same characters as a set."""


def csv_quote(text: str) -> str:
    r"""Go's encoding/csv rule, as the reference writes.

    Quote a cell holding `,`, `"`, CR or LF, or starting with white space (or one that is exactly `\.`);
    double the quotes inside. Substring tests rather than a regex: a third of the time of a quoted column went to
    the regex (measured: 2.0 us for a user's `identities` cell).
    """
    if text and (
        '"' in text or "," in text or "\n" in text or "\r" in text or text[0] in _LEADING_SPACES or text == "\\."
    ):
        return '"' + text.replace('"', '""') + '"'
    return text
