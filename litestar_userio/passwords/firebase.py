"""Firebase Authentication's modified scrypt (github.com/firebase/scrypt).

Firebase derives a key with standard scrypt (password; the user's salt followed by the project's salt separator;
N = 2^mem_cost, r = rounds, p = 1; 64 bytes) and stores the project's signer key encrypted with AES-256-CTR under
the first 32 bytes of that key, with a zero counter block. scrypt is the standard library's; the AES step, the one
piece written here, is `cryptography`'s AES in CTR mode, tested with Firebase's published vectors.
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

__all__ = ["FirebaseHashConfig", "firebase_scrypt", "firebase_scrypt_memory"]


class FirebaseHashConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The hash config Firebase shows once per project ("Password Hash Parameters"); keys and separator base64."""

    signer_key: str
    salt_separator: str
    rounds: int
    mem_cost: int


def firebase_scrypt_memory(rounds: int, mem_cost: int) -> int:
    """Bytes one verification holds (scrypt's 128 * N * r)."""
    return 128 * rounds * (1 << mem_cost)


def firebase_scrypt(
    password: bytes, salt: bytes, separator: bytes, signer_key: bytes, rounds: int, mem_cost: int
) -> bytes:
    """The hash Firebase stores for `password` (compare it with `hmac.compare_digest`)."""
    key = hashlib.scrypt(
        password,
        salt=salt + separator,
        n=1 << mem_cost,
        r=rounds,
        p=1,
        dklen=64,
        maxmem=firebase_scrypt_memory(rounds, mem_cost) + (1 << 20),
    )
    encryptor = Cipher(algorithms.AES(key[:32]), modes.CTR(bytes(16))).encryptor()
    return encryptor.update(signer_key) + encryptor.finalize()


def firebase_scrypt_matches(
    password: bytes, expected: bytes, salt: bytes, separator: bytes, signer_key: bytes, rounds: int, mem_cost: int
) -> bool:
    """Whether `password` gives `expected`, in constant time."""
    return hmac.compare_digest(firebase_scrypt(password, salt, separator, signer_key, rounds, mem_cost), expected)
