"""The files the README's text reads are those analysis.tables.readme.sources lists, and rule readme_results
declares them: its inputs are what the rendering reads, its outputs the documents it writes; a config that does not
publish into the repository (the tiny one) has no such rule."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.tables import literature
from analysis.tables.readme import documents, sources
from helpers import REPO

CONFIG = REPO / "config/config.yaml"


def snakemake(*args: str) -> subprocess.CompletedProcess:
    """A dry run of the repository's Snakefile in the repository (where the full study publishes)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(REPO), "-n", "--nolock", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def files_read(monkeypatch) -> set[Path]:
    """Every file that rendering the committed documents from the committed tables reads (CSV or text)."""
    read: set[Path] = set()
    read_csv, read_text = pd.read_csv, Path.read_text

    def csv(path, *args, **kwargs):
        read.add(Path(path).resolve())
        return read_csv(path, *args, **kwargs)

    def text(self, *args, **kwargs):
        read.add(self.resolve())
        return read_text(self, *args, **kwargs)

    literature.thesis.cache_clear()
    literature.values.cache_clear()
    monkeypatch.setattr(pd, "read_csv", csv)
    monkeypatch.setattr(Path, "read_text", text)
    documents.expected(sources.README, sources.RESULTS, REPO / "tables", CONFIG, sources.FINDINGS)
    return read


def declared() -> set[Path]:
    return {Path(p).resolve() for p in sources.table_files(REPO / "tables")} | {
        p.resolve() for p in sources.repository_files()}


def test_the_rendering_reads_exactly_the_files_it_declares(monkeypatch):
    read = files_read(monkeypatch)
    templates = {p.resolve() for p in (REPO / "analysis/tables/readme/templates").glob("*.tmpl")}
    documents_ = {p.resolve() for p in sources.DOCUMENTS}
    assert read - templates - documents_ - {CONFIG.resolve()} == declared()
    assert {p for p in read if p.parent == (REPO / "tables").resolve()} == {
        (REPO / "tables" / f"{name}.csv").resolve() for name in sources.TABLES}


def _job(out: str, rule: str) -> dict[str, list[str]]:
    """The input and output files of the one job of `rule` in a dry run's output."""
    block = out.split(f"rule {rule}:", 1)[1].split("jobid:", 1)[0]
    found = {}
    for key in ("input", "output"):
        line = re.search(rf"^\s+{key}: (.*)$", block, re.MULTILINE).group(1)
        found[key] = [f.removesuffix(" (update)") for f in line.split(", ")]
    return found


@pytest.mark.slow
def test_the_rule_declares_what_the_rendering_reads_and_writes():
    out = snakemake("-f", "readme_results", "--allowed-rules", "readme_results")
    assert out.returncode == 0, out.stderr + out.stdout
    job = _job(out.stdout, "readme_results")
    assert {(REPO / p).resolve() for p in job["input"]} == declared() | {CONFIG.resolve()}
    assert [os.path.relpath(p, REPO) for p in sources.DOCUMENTS] == job["output"]
    # the tiny config writes under .test-output/: it renders into no document of the repository
    out = snakemake("readme_results", "--configfile", str(REPO / "config/test.yaml"))
    assert out.returncode != 0 and "readme_results" in out.stderr + out.stdout
