"""The code cites only documents in the repository, by anchors that exist (issue 31).

Pure and fast: reads files, no database. The anchors follow GitHub's rule for headings, so a citation that works
here works on GitHub.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE_SUFFIXES = {".py", ".ts", ".js"}
OLD_CITATION = re.compile(r"\b(?:SPEC|DECISIONS) \d")
DOC_CITATION = re.compile(r"\bdocs/([A-Za-z0-9_./-]+\.md)#([A-Za-z0-9_-]+)")
RELATIVE_LINK = re.compile(r"\]\(([A-Za-z0-9_./-]+\.md)#([A-Za-z0-9_-]+)\)")
MODULE_PATH = re.compile(r"`(litestar_userio/[A-Za-z0-9_./-]+)`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def source_files() -> Iterator[Path]:
    """The package and the hook authors' TypeScript side: where code cites documents."""
    for base in (ROOT / "litestar_userio", ROOT / "plugins"):
        for path in sorted(base.rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file() and "static" not in path.relative_to(ROOT).parts:
                yield path


def citing_files() -> Iterator[Path]:
    """Every file whose `docs/<file>.md#<anchor>` citations must resolve."""
    yield from source_files()
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a Markdown document's headings (outside code fences), repeated ones numbered as GitHub does."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def old_citations(text: str) -> list[str]:
    """The lines that still cite "SPEC n" or "DECISIONS n", documents the repository does not hold."""
    return [line.strip() for line in text.splitlines() if OLD_CITATION.search(line)]


def broken_citations(path: Path, text: str) -> list[str]:
    """`docs/<file>.md#<anchor>` (and, in docs/, relative `file.md#anchor` links) naming no file or no heading."""
    cited = [(ROOT / "docs" / name, anchor, f"docs/{name}#{anchor}") for name, anchor in DOC_CITATION.findall(text)]
    if path.suffix == ".md" and path.parent.is_relative_to(ROOT / "docs"):
        cited += [(path.parent / name, anchor, f"{name}#{anchor}") for name, anchor in RELATIVE_LINK.findall(text)]
    broken = []
    for target, anchor, shown in cited:
        if not target.is_file():
            broken.append(f"{shown}: no such file")
        elif anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{shown}: no such heading")
    return broken


def index_modules(architecture: str) -> list[str]:
    """The module paths named in the behaviour -> module index of docs/architecture.md."""
    section = architecture.split("## Behaviour -> module index", 1)[1].split("\n## ", 1)[0]
    return MODULE_PATH.findall(section)


def test_no_spec_or_decisions_citation_is_left() -> None:
    left = {
        str(path.relative_to(ROOT)): lines
        for path in citing_files()
        if (lines := old_citations(path.read_text(encoding="utf-8")))
    }
    assert left == {}


def test_every_cited_anchor_exists() -> None:
    broken = {
        str(path.relative_to(ROOT)): problems
        for path in citing_files()
        if (problems := broken_citations(path, path.read_text(encoding="utf-8")))
    }
    assert broken == {}


def test_the_package_cites_the_reference() -> None:
    cited = {
        anchor
        for path in source_files()
        for name, anchor in DOC_CITATION.findall(path.read_text(encoding="utf-8"))
        if name == "reference.md"
    }
    assert len(cited) >= 30
    for section in ("import", "export", "hooks", "errors", "limits"):
        assert section in anchors((ROOT / "docs" / "reference.md").read_text(encoding="utf-8"))


def test_the_behaviour_index_names_existing_modules() -> None:
    modules = index_modules((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert len(modules) >= 40
    assert [module for module in modules if not (ROOT / module).is_file()] == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Import: login ids", "import-login-ids"),
        ("The export's consistent read", "the-exports-consistent-read"),
        ("Lazy migration: `user.password_migration`", "lazy-migration-userpassword_migration"),
        ("Behaviour -> module index", "behaviour---module-index"),
    ],
)
def test_anchors_follow_githubs_rule(heading: str, anchor: str) -> None:
    assert github_anchor(heading) == anchor


def test_the_checks_catch_an_old_citation_and_a_missing_anchor(tmp_path: Path) -> None:
    assert old_citations('"""The update rules (SPEC 2.4)."""') != []
    assert old_citations('"""Fail closed (DECISIONS 5)."""') != []
    assert old_citations('"""The update rules (docs/reference.md#import-updates)."""') == []
    source = tmp_path / "cites.py"
    assert broken_citations(source, "(docs/reference.md#import-updates)") == []
    assert broken_citations(source, "(docs/reference.md#no-such-section)") == [
        "docs/reference.md#no-such-section: no such heading"
    ]
    assert broken_citations(source, "(docs/missing.md#import)") == ["docs/missing.md#import: no such file"]
    assert anchors("## Limits\n```\n# not a heading\n```\n## Limits\n") == {"limits", "limits-1"}
