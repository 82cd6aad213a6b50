"""The committed console build matches its TypeScript source (no Node.js needed to check).

`npm run build` in `console/` writes `source.sha256`, the hash of the source tree it built from
(console/scripts/stamp.mjs); the same hash computed here must match, so a source change without a rebuild fails.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from litestar_userio.web.console import STATIC_DIR

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "console"
TOPS = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts", "src"]


def source_hash() -> str:
    files = []
    for top in TOPS:
        path = SOURCE / top
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in sorted(files, key=lambda p: p.relative_to(SOURCE).as_posix()):
        digest.update(file.relative_to(SOURCE).as_posix().encode() + b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_committed_assets_were_built_from_the_current_source():
    recorded = (STATIC_DIR / "source.sha256").read_text().strip()

    assert recorded == source_hash(), "console/ changed since the last build: run `npm ci && npm run build` in console/"


def test_built_page_names_only_assets_that_exist():
    html = (STATIC_DIR / "index.html").read_text()
    names = re.findall(r'(?:src|href)="\./assets/([^"]+)"', html)

    assert names
    assert all((STATIC_DIR / "assets" / name).is_file() for name in names)


def test_built_assets_stay_within_their_size_budget():
    sizes = {p.name: p.stat().st_size for p in (STATIC_DIR / "assets").iterdir()}
    main_script = next(size for name, size in sizes.items() if name.startswith("index-") and name.endswith(".js"))

    assert main_script < 100_000, "the imports and exports pages load without the editor"
    assert sum(sizes.values()) < 14_000_000
