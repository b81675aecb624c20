"""data/MANIFEST.csv lists every data file with its provenance and sha256."""

from __future__ import annotations

import shutil

from analysis.manifest import check, update
from helpers import REPO


def test_repository_manifest_is_complete_and_current():
    assert check(REPO / "data") == []


def test_manifest_detects_changes(tmp_path):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "a.json").write_text("{}")
    update(tmp_path, "set", "here", "MIT", "me")
    assert check(tmp_path) == []
    (tmp_path / "set" / "a.json").write_text("{ }")
    (tmp_path / "set" / "b.json").write_text("{}")
    problems = check(tmp_path)
    assert any("a.json: sha256" in p for p in problems) and any("b.json: not in" in p for p in problems)
    shutil.rmtree(tmp_path / "set")
    assert any("absent" in p for p in check(tmp_path))
