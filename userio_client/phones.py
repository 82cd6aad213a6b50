"""`--phone-region`: national and spaced phone numbers become E.164 on the client, each change reported.

Both numbers a record may hold are converted: the login id (`phone_number`) and the MFA one (`mfa.phone_number`).

Why on the client: the server takes E.164 only (docs/reference.md#import-records) and cannot guess a number's country;
the person running the migration knows it. A number that does not parse as a valid number of the region is sent as is
(the server then fails it with its own cause), never guessed at.
"""

from __future__ import annotations

from typing import Any

import phonenumbers

from userio_client.client import TransferError

__all__ = ["PhoneFixer", "check_region"]


def check_region(region: str) -> str:
    """The region code in upper case; a `TransferError` for one phonenumbers does not know."""
    code = region.strip().upper()
    if code not in phonenumbers.SUPPORTED_REGIONS:
        raise TransferError(f"--phone-region {region!r} is not a region code such as GB, US or DE")
    return code


class PhoneFixer:
    """Rewrites `phone_number` of records to E.164 for one region."""

    def __init__(self, region: str) -> None:
        self.region = check_region(region)

    @staticmethod
    def may_change(body: bytes) -> bool:
        """Whether a record's bytes may hold a phone number (only those are decoded)."""
        return b'"phone_number"' in body

    def fix(self, record: dict[str, Any], warnings: list[dict[str, str]]) -> bool:
        """Rewrite the record's numbers that are valid national or spaced ones; True if one changed."""
        changed = self._fix(record, "phone_number", warnings)
        mfa = record.get("mfa")
        if isinstance(mfa, dict):
            changed = self._fix(mfa, "mfa.phone_number", warnings) or changed
        return changed

    def _fix(self, holder: dict[str, Any], name: str, warnings: list[dict[str, str]]) -> bool:
        """`holder["phone_number"]` in E.164 if it is a valid national or spaced number; `name` says where."""
        value = holder.get("phone_number")
        if not isinstance(value, str):
            return False
        try:
            parsed = phonenumbers.parse(value, self.region)
        except phonenumbers.NumberParseException:
            return False
        if not phonenumbers.is_valid_number(parsed):
            return False
        e164 = phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)
        if e164 == value:
            return False
        holder["phone_number"] = e164
        warnings.append(
            {
                "kind": "phone_number_converted",
                "message": f"{name} {value!r} sent as {e164!r} (--phone-region {self.region})",
            }
        )
        return True
