"""Where a `userio` command connects: flags, then the resumed run's header, then USERIO_* variables, then a profile.

Why this order: a flag is what the person typed now; a resumed run must go where it started (an exported
`USERIO_PROJECT=demo` must not send the rest of a `trial` migration to `demo`); variables and the profile
file (`~/.config/userio/profiles.toml`) are standing defaults.

    [default]
    url = "https://auth.example.com"
    project = "acme"
    key = "~/.userio/acme-admin-key.pem"

    [staging]
    url = "https://staging.example.com"
    project = "acme-staging"
    host = "auth.staging.example.com"
    key = "~/keys/staging.pem"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["DEFAULT_PROJECT", "DEFAULT_URL", "ConnectionSettings", "ProfileError", "profiles_path", "resolve"]

DEFAULT_URL: Final = "https://localhost:8443"
DEFAULT_PROJECT: Final = "demo"
_KEYS: Final = ("url", "project", "host", "key", "cacert", "insecure")
_ENV: Final = {
    "url": ("USERIO_URL",),
    "project": ("USERIO_PROJECT",),
    "host": ("USERIO_HOST",),
    "key": ("USERIO_KEY",),
    "cacert": ("USERIO_CACERT",),
}


class ProfileError(Exception):
    """A profile file or profile name that cannot be used."""


def profiles_path() -> Path:
    """`$XDG_CONFIG_HOME/userio/profiles.toml`, default `~/.config/userio/profiles.toml`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "userio" / "profiles.toml"


def _profile(name: str | None) -> dict[str, Any]:
    path = profiles_path()
    if not path.exists():
        if name is not None:
            raise ProfileError(f"no profile {name!r}: {path} does not exist")
        return {}
    try:
        profiles = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"cannot read {path}: {exc}") from exc
    chosen = name or "default"
    profile = profiles.get(chosen)
    if profile is None:
        if name is not None:
            raise ProfileError(f"no profile [{name}] in {path} (it has: {', '.join(sorted(profiles)) or 'none'})")
        return {}
    if not isinstance(profile, dict):
        raise ProfileError(f"[{chosen}] in {path} must be a table")
    unknown = sorted(set(profile) - set(_KEYS))
    if unknown:
        raise ProfileError(f"[{chosen}] in {path}: unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    return profile


@dataclass(frozen=True)
class ConnectionSettings:
    """The resolved connection of one command."""

    url: str
    project: str
    host: str | None
    key: Path | None
    """Admin private key (None: `$USERIO_HOME/<project>-admin-key.pem`, or a token is used)."""
    cacert: Path | None
    insecure: bool


def resolve(
    flags: Mapping[str, Any], *, profile: str | None, recorded: Mapping[str, Any] | None = None
) -> ConnectionSettings:
    """Each setting from the first of: flag, `recorded` (a resumed run's header), USERIO_* variable, profile."""
    layers: list[Mapping[str, Any]] = [{k: v for k, v in flags.items() if v not in (None, False)}]
    if recorded:
        layers.append({k: v for k, v in recorded.items() if k in _KEYS and v not in (None, False)})
    layers.append({k: os.environ[names[0]] for k, names in _ENV.items() if os.environ.get(names[0])})
    layers.append(_profile(profile or os.environ.get("USERIO_PROFILE") or None))

    def pick(name: str) -> Any:
        return next((layer[name] for layer in layers if layer.get(name) not in (None, "")), None)

    key, cacert = pick("key"), pick("cacert")
    return ConnectionSettings(
        url=str(pick("url") or DEFAULT_URL),
        project=str(pick("project") or DEFAULT_PROJECT),
        host=pick("host") or None,
        key=Path(key).expanduser() if key else None,
        cacert=Path(cacert).expanduser() if cacert else None,
        insecure=bool(pick("insecure")),
    )
