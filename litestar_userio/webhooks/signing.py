"""A webhook's secret and the signatures of a delivery: the reference's body signature and Standard Webhooks'.

The secret is 32 random bytes, base64 (shown once). `x-authgear-body-signature` is the hex HMAC-SHA256 of the body
keyed with the secret's text, as the reference signs; `webhook-id`, `webhook-timestamp` and `webhook-signature`
(`v1,<base64>`) are made by the `standardwebhooks` package itself, keyed with the secret's bytes, so a receiver
verifies them with that package (or any Standard Webhooks library) and refuses replays by the timestamp.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

__all__ = ["SECRET_BYTES", "new_secret", "signed_headers"]

SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh secret: base64 of 32 bytes from the operating system's CSPRNG."""
    return base64.b64encode(os.urandom(SECRET_BYTES)).decode()


def signed_headers(secret: str, message_id: str, body: bytes, sent_at: datetime) -> list[tuple[str, str]]:
    """The headers of one attempt: content type, both signatures, the message id and the attempt's time."""
    body_signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    timestamp = sent_at.astimezone(UTC)
    standard = Webhook(secret).sign(message_id, timestamp, body.decode())
    return [
        ("content-type", "application/json"),
        ("x-authgear-body-signature", body_signature),
        ("webhook-id", message_id),
        ("webhook-timestamp", str(int(timestamp.timestamp()))),
        ("webhook-signature", standard),
        ("user-agent", "litestar-userio-webhooks"),
    ]
