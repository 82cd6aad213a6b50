"""Everything a host uses is importable from `litestar_userio`, and the package says it is typed."""

from __future__ import annotations

from pathlib import Path

import litestar_userio


def test_every_exported_name_resolves():
    missing = [name for name in litestar_userio.__all__ if getattr(litestar_userio, name, None) is None]

    assert missing == []
    assert {"UserService", "TokenService", "ProjectService", "Services", "TokenResponse", "SignInRefused"} <= set(
        litestar_userio.__all__
    )


def test_the_package_ships_py_typed():
    assert (Path(litestar_userio.__file__).parent / "py.typed").is_file()
