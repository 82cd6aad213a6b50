"""Hook secrets at rest: AES-256-GCM with a key from the configuration, bound to their project and name.

The project id and the secret's name are the associated data, so a ciphertext copied to another project or name
does not open. Values are never returned by the API nor logged; whatever a hook produces (console, errors, a
refusal's title and reason, claims) has them masked, raw and encoded, before anyone sees it (`SecretMask`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["MASK", "SECRET_NAME", "SecretBox", "SecretMask", "mask", "mask_console"]

SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""What a secret may be called: a JavaScript identifier, so `ctx.secrets.NAME` works."""
MASK = "[secret]"
_MIN_MASKED = 4  # shorter values would mask ordinary text; docs/hooks.md says so
_MIN_BASE64 = 8  # base64 characters matched: every alignment of a value of 8 bytes or more (docs/limits.md)


class SecretBox:
    """Seals and opens secret values with one AES-256-GCM key."""

    def __init__(self, key: str) -> None:
        try:
            raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
        except (binascii.Error, ValueError) as exc:
            raise ValueError("the hook secrets key must be base64 of 32 bytes") from exc
        if len(raw) != 32:
            raise ValueError("the hook secrets key must be base64 of 32 bytes")
        self._aead = AESGCM(raw)

    @staticmethod
    def generate_key() -> str:
        """A fresh key for `HookConfig.secrets_key`."""
        return base64.urlsafe_b64encode(AESGCM.generate_key(bit_length=256)).decode()

    def seal(self, project_id: str, name: str, value: str) -> str:
        """The value encrypted for this project and name (base64 of nonce and ciphertext)."""
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, value.encode(), _bound(project_id, name))
        return base64.b64encode(nonce + sealed).decode()

    def open(self, project_id: str, name: str, sealed: str) -> str | None:
        """The value, or None when it does not open with this key (a rotated key, a copied row)."""
        try:
            data = base64.b64decode(sealed)
            return self._aead.decrypt(data[:12], data[12:], _bound(project_id, name)).decode()
        except (InvalidTag, ValueError, binascii.Error):
            return None


def _bound(project_id: str, name: str) -> bytes:
    return f"userio-hook-secret\0{project_id}\0{name}".encode()


def mask(text: str, values: Iterable[str]) -> str:
    """`text` with every secret value (of at least four characters), raw or encoded, replaced by `[secret]`.

    The one masking of what leaves a hook (`SecretMask`): the raw value, its JSON string form, URL encoding
    (either case of hex digits, `+` or `%20` for spaces), hex (either case) and base64 (standard and URL-safe,
    at each of the three alignments a value can have inside a longer encoded text).
    """
    return SecretMask(values).text(text)


class SecretMask:
    """Masks a project's secret values in text and in JSON values (keys included)."""

    def __init__(self, values: Iterable[str]) -> None:
        self._forms = _forms_of(frozenset(v for v in values if len(v) >= _MIN_MASKED))

    def text(self, text: str) -> str:
        """`text` with each secret, raw or encoded, replaced by `[secret]`."""
        for literal, pattern in self._forms:
            if literal in text:  # a plain search first: the regular expression runs only where it will match
                text = text.replace(literal, MASK) if pattern is None else pattern.sub(MASK, text)
        return text

    def value(self, value: Any) -> Any:
        """A JSON value with every string (and object key) masked."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


@lru_cache(maxsize=256)
def _forms_of(values: frozenset[str]) -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """Every form of every value, longest first, so that a longer form is masked whole.

    Each is the text it must contain and the expression of what is masked around it (None: just that text).
    """
    forms: dict[str, re.Pattern[str] | None] = {}
    for value in values:
        forms.update(_forms(value))
    return tuple(sorted(forms.items(), key=lambda form: len(form[0]), reverse=True))


def _forms(value: str) -> dict[str, re.Pattern[str] | None]:
    """`value` as it may be written out."""
    raw = value.encode()
    literal = {
        value,
        json.dumps(value)[1:-1],  # escapes, as JSON.stringify writes them
        json.dumps(value, ensure_ascii=False)[1:-1],
        raw.hex(),
        raw.hex().upper(),
    }
    for quoted in (quote(value, safe=""), quote_plus(value, safe="")):
        literal |= {quoted, re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quoted)}
    forms: dict[str, re.Pattern[str] | None] = {form: None for form in literal if len(form) >= _MIN_MASKED}
    # base64 at offset k in a longer text: the groups that hold only the value's bits are the same whatever
    # surrounds it; up to three characters each side carry some of its bits, so they go too.
    for offset in range(3):
        for encode, alphabet in ((base64.b64encode, "A-Za-z0-9+/"), (base64.urlsafe_b64encode, "A-Za-z0-9_-")):
            encoded = encode(b"\0" * offset + raw).decode()
            start = -(-offset * 4 // 3)  # characters touched by the padding bytes in front
            core = encoded[start : 4 * ((offset + len(raw)) // 3)]
            if len(core) >= _MIN_BASE64:
                forms[core] = re.compile(f"[{alphabet}]{{0,3}}{re.escape(core)}[{alphabet}]{{0,3}}=*")
    return forms


def mask_console(console: list[dict[str, str]], secrets: Mapping[str, str]) -> list[dict[str, str]]:
    """A run's console with secret values masked."""
    if not secrets:
        return console
    masker = SecretMask(secrets.values())
    return [{**entry, "message": masker.text(entry.get("message", ""))} for entry in console]
