"""Webhook signatures, as Standard Webhooks sign them: `webhook-id`, `webhook-timestamp`
and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the
secret), so that a receiver checks them with that specification's libraries.

A subscription's secret is derived from the service's signing key, the subscription's id
and the secret's version (HMAC-SHA256): shown once, when it is made, and never stored; a
new version (`POST .../secret`) is a new secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
import uuid

#: How a secret is shown: Standard Webhooks' prefix, then its bytes in base64.
PREFIX = "whsec_"


class Signer:
    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("the webhook signing key must be 32 bytes")
        self._key = key

    def secret(self, subscription: uuid.UUID | str, version: int) -> bytes:
        message = f"geocatalog webhook secret\0{subscription}\0{version}".encode()
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def shown(self, subscription: uuid.UUID | str, version: int) -> str:
        """The secret as its owner is shown it (once)."""
        return PREFIX + base64.b64encode(self.secret(subscription, version)).decode()

    def headers(self, subscription: uuid.UUID | str, version: int, event_id: str,
                body: bytes, timestamp: int | None = None) -> dict[str, str]:
        """The signature headers of one message."""
        when = int(time.time()) if timestamp is None else timestamp
        signed = f"{event_id}.{when}.".encode() + body
        digest = hmac.new(self.secret(subscription, version), signed, hashlib.sha256).digest()
        return {"webhook-id": event_id, "webhook-timestamp": str(when),
                "webhook-signature": "v1," + base64.b64encode(digest).decode()}
