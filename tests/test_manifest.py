"""data/MANIFEST.csv lists every data file with its provenance and sha256."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pandas as pd

from analysis.manifest import MANIFEST, check, update
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


def test_add_data_records_a_copied_dataset_from_the_command_line(tmp_path):
    """`analysis.cli add-data` (docs/extending.md) records every file of the folder; a second dataset keeps the
    first's rows; bad input names the folder and the field and writes nothing."""
    data = tmp_path / "data"
    for name, files in (("hub", ["a.json", "t1/a_T1.json"]), ("other", ["b.json.gz"])):
        for f in files:
            (data / name / f).parent.mkdir(parents=True, exist_ok=True)
            (data / name / f).write_text(f"{name}/{f}")

    def add(folder, *extra):
        return subprocess.run([sys.executable, "-m", "analysis.cli", "add-data", folder, "--data", str(data),
                               "--source", "https://example.org/hub", "--licence", "MIT", "--citation", "A. B., 2026",
                               *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120)

    done = add("data/hub")
    assert done.returncode == 0, done.stderr
    assert "2 file(s) recorded" in done.stdout and "hub/t1/a_T1.json" in done.stdout
    assert add("other").returncode == 0  # a folder named relative to data/
    rows = pd.read_csv(data / MANIFEST, dtype=str)
    assert list(rows["path"]) == ["hub/a.json", "hub/t1/a_T1.json", "other/b.json.gz"]
    assert set(rows["licence"]) == {"MIT"} and check(data) == []
    before = (data / MANIFEST).read_bytes()
    for folder, extra, message in (("data/none", [], "data/none: field 'folder': no such folder"),
                                   (str(tmp_path), [], "field 'folder': not a folder inside"),
                                   ("data/hub", ["--licence", " "], "data/hub: field 'licence': the licence is empty")):
        failed = add(folder, *extra)
        assert failed.returncode != 0 and message in failed.stderr, failed.stderr
    assert (data / MANIFEST).read_bytes() == before
    empty = data / "empty"
    empty.mkdir()
    assert "field 'folder': holds no file" in add("data/empty").stderr
