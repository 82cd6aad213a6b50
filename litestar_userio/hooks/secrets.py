"""Hook secrets at rest: AES-256-GCM with a key from the configuration, bound to their project and name.

The project id and the secret's name are the associated data, so a ciphertext copied to another project or name
does not open. Values are never returned by the API nor logged; text a hook produces (console, errors) has them
masked before anyone sees it (`mask`).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["MASK", "SECRET_NAME", "SecretBox", "mask"]

SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
"""What a secret may be called: a JavaScript identifier, so `ctx.secrets.NAME` works."""
MASK = "[secret]"
_MIN_MASKED = 4  # shorter values would mask ordinary text; docs/hooks.md says so


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
    """`text` with every secret value (of at least four characters) replaced by `[secret]`."""
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= _MIN_MASKED and value in text:
            text = text.replace(value, MASK)
    return text


def mask_console(console: list[dict[str, str]], secrets: Mapping[str, str]) -> list[dict[str, str]]:
    """A run's console with secret values masked."""
    if not secrets:
        return console
    values = list(secrets.values())
    return [{**entry, "message": mask(entry.get("message", ""), values)} for entry in console]
