"""Cross-references into the documentation resolve: every `docs/<file>.md#anchor` and every
`docs/<file>.md, "Heading"` in the repository's code, configs and Markdown names a heading that
exists, and every relative Markdown link names a file (and heading) that exists. docs/history is
left out: it keeps the text of earlier versions as it was."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md"}
FOLDERS = ["analysis", "workflow", "config", "docs", "tests", "benchmarks", "examples", "data", "tables"]
ROOT_FILES = ["README.md", "CHANGELOG.md", "Snakefile"]
# earlier versions kept as they were, and benchmark output (ignored by git)
SKIPPED = (REPO / "docs" / "history", REPO / "benchmarks" / "out")

# a path of the repository's docs folder, with an anchor or a quoted heading
DOC_ANCHOR = re.compile(r"\bdocs/([\w.-]+\.md)#([\w-]+)")
DOC_HEADING = re.compile(r'\bdocs/([\w.-]+\.md),\s+"([^"\n]+)"')
DOC_FILE = re.compile(r"\bdocs/([\w.-]+\.md)\b")
# an inline Markdown link's target (not an image's, not an absolute URL's)
MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# the section sign of the study's notes outside the repository, spelt so that this file does not cite them
OUTSIDE = "STUDY " + "\u00a7"


def repository_files() -> list[Path]:
    """The text files that may refer to the docs: code, configs and Markdown, outside hidden folders and
    SKIPPED."""
    files = [REPO / f for f in ROOT_FILES if (REPO / f).is_file()]
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*")):
            rel = path.relative_to(REPO).parts
            if (path.suffix in SUFFIXES and path.is_file() and not any(path.is_relative_to(s) for s in SKIPPED)
                    and not any(p.startswith(".") or p == "__pycache__" for p in rel)):
                files.append(path)
    return files


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: link targets and markup dropped, lower case, characters other
    than letters, digits, `_`, `-` and spaces removed, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def headings(path: Path) -> tuple[set[str], set[str]]:
    """A Markdown file's headings (their text) and anchors (with GitHub's -1, -2, ... suffixes for
    repeated ones); lines inside fenced code blocks are no headings."""
    texts, anchors, seen = set(), set(), {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            texts.add(m.group(2))
            base = slug(m.group(2))
            n = seen.get(base, 0)
            anchors.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
    return texts, anchors


def test_slug_follows_github():
    assert slug("The multi-objective spaces (tables/spaces.csv)") == "the-multi-objective-spaces-tablesspacescsv"
    assert slug("Compile cost of a host-CPU configuration") == "compile-cost-of-a-host-cpu-configuration"
    assert slug("`nsga2_unaware` and [its twin](x.md)") == "nsga2_unaware-and-its-twin"


def test_headings_skip_code_and_number_repeats(tmp_path):
    md = tmp_path / "a.md"
    md.write_text("# Top\n\n```bash\n# not a heading\n```\n\n## Part\n\n## Part\n")
    texts, anchors = headings(md)
    assert texts == {"Top", "Part"}
    assert anchors == {"top", "part", "part-1"}


def broken_references(text: str, docs: Path = REPO / "docs") -> list[str]:
    """The references of `text` to the docs folder `docs` that name no file or no heading there."""
    bad = []
    for name in DOC_FILE.findall(text):
        if not (docs / name).is_file():
            bad.append(f"docs/{name}: no such file")
    for name, anchor in DOC_ANCHOR.findall(text):
        if (docs / name).is_file() and anchor not in headings(docs / name)[1]:
            bad.append(f"docs/{name}#{anchor}: no such heading")
    for name, heading in DOC_HEADING.findall(text):
        # a generated heading with a varying title ("What moved: <release>") is cited by its fixed part
        if (docs / name).is_file() and not any(h == heading or h.startswith(f"{heading}:")
                                               for h in headings(docs / name)[0]):
            bad.append(f'docs/{name}, "{heading}": no such heading')
    # the study's notes (a STUDY.md beside the repository) are not part of it; docs/study.md is
    if OUTSIDE in text:
        bad.append(f"{OUTSIDE}: a reference outside the repository (docs/study.md has the headings)")
    return bad


def broken_links(path: Path) -> list[str]:
    """The relative links of Markdown file `path` (outside code blocks) to a missing file or heading."""
    bad = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        for target in MD_LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                bad.append(f"{target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in headings(dest)[1]:
                bad.append(f"{target}: no such heading")
    return bad


def test_the_checks_find_broken_references(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Tables\n\n## What moved: a release\n\n[ok](#tables) [gone](#figures)\n"
                               "[ok](a.md#a) [missing](b.md) ![image](x.png)\n\n```\n[in code](c.md)\n```\n")
    d = "docs/"  # joined here, so that this file's scan does not take the made-up names for references
    good = f'{d}a.md#tables, {d}a.md, "Tables", {d}a.md, "What moved"'
    assert broken_references(good, docs) == []
    assert len(broken_references(f'{d}a.md#figures {d}a.md, "Figures" {d}b.md', docs)) == 3
    assert broken_references(OUTSIDE + "4", docs) != []
    assert broken_links(docs / "a.md") == ["#figures: no such heading", "b.md: no such file"]


FILES = repository_files()
MARKDOWN = [p for p in FILES if p.suffix == ".md"]


def test_the_scan_sees_the_references():
    """The scan covers the files that cite the docs (a guard against an empty, vacuous scan)."""
    names = {p.relative_to(REPO).as_posix() for p in FILES}
    assert {"README.md", "config/config.yaml", "workflow/schemas/config.schema.yaml", "docs/study.md"} <= names
    assert not any(n.startswith("docs/history/") for n in names)
    assert sum(len(DOC_HEADING.findall(p.read_text(encoding="utf-8"))) for p in FILES) > 0
    assert sum(len(DOC_ANCHOR.findall(p.read_text(encoding="utf-8"))) for p in FILES) > 0


def test_references_to_docs_resolve():
    bad = [f"{p.relative_to(REPO)}: {b}" for p in FILES for b in broken_references(p.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_markdown_links_resolve():
    bad = [f"{p.relative_to(REPO)}: {b}" for p in MARKDOWN for b in broken_links(p)]
    assert not bad, "\n".join(bad)
