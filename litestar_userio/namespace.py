"""The plugin's handlers resolve their annotations in their own names, never in the host's.

Litestar resolves a handler's postponed annotations in the app's `signature_namespace` merged over the handler's
module, so a host name there (its own `UserService`, `Services`, ...) would shadow ours; the plugin adds nothing
there. Each of our controllers carries its module's names as its own `signature_namespace` (the innermost layer
wins), and the DI providers have evaluated annotations (`dependencies.py` does not postpone them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["own_names"]


def own_names(module_globals: Mapping[str, Any]) -> dict[str, Any]:
    """A controller's `signature_namespace`: the types and type aliases of its module (`own_names(globals())`)."""
    return {name: value for name, value in module_globals.items() if _is_type(value)}


def _is_type(value: Any) -> bool:
    """A class, a generic alias (`NamedDependency`, `FromPath[str]`) or a typing special form."""
    return isinstance(value, type) or hasattr(value, "__origin__") or type(value).__module__ == "typing"
