"""The papers' numbers come from data/literature/*.csv, each with its citation, checked on reading."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from test_constraint_aware_tables import _space_scores

from analysis import cli, paths
from analysis.errors import InputError
from analysis.tables import literature
from helpers import REPO


def test_every_literature_file_is_read_with_its_citation():
    files = sorted(paths.LITERATURE.glob("*.csv"))
    assert [f.stem for f in files] == sorted(literature.FILES)
    for file in files:
        frame = literature.read(file)
        assert len(frame) and frame["citation"].str.len().min() > 0, file
    citations = {f.stem: set(literature.read(f)["citation"]) for f in files}
    assert all("Table 2" in c for c in citations["thesis_table2"])
    thesis = ("thesis_table2", "thesis_table4", "thesis_table5")
    assert all("Blommaert" in c for name in thesis for c in citations[name])
    assert all("Constraint-aware" in c for name in ("seed001_gains", "seed001_density") for c in citations[name])


def test_the_thesis_tables_pair_nsga2_and_nsga3_per_key_in_the_files_order():
    table2 = literature.thesis(2)
    assert list(table2) == [50, 100, 150, 200] and all(isinstance(b, int) for b in table2)
    frame = pd.read_csv(literature.path("thesis_table2"))
    row = frame[(frame["setting"] == "nsga3") & (frame["budget"] == 200)].iloc[0]
    assert table2[200][1] == (row["mean_pct"], row["sd_pct"])
    table4 = literature.thesis(4)
    assert list(table4) == list(dict.fromkeys(pd.read_csv(literature.path("thesis_table4"))["kernel"]))
    assert all(len(pair) == 2 and all(len(v) == 2 for v in pair) for pair in table4.values())


def _copy(tmp_path, name):
    folder = tmp_path / "literature"
    folder.mkdir(exist_ok=True)
    shutil.copy(literature.path(name), folder / f"{name}.csv")
    return folder, folder / f"{name}.csv"


@pytest.mark.parametrize("edit, field", [
    (lambda f: f.drop(columns="citation"), "citation"),
    (lambda f: f.assign(citation=[""] + list(f["citation"][1:])), "citation"),
    (lambda f: f.assign(sd_pct=["n/a"] + list(f["sd_pct"][1:])), "sd_pct"),
    (lambda f: f.assign(budget=["50.5"] + list(f["budget"][1:])), "budget"),
    (lambda f: pd.concat([f, f.iloc[[0]]]), "budget"),
    (lambda f: f.iloc[1:], "setting"),  # budget 50 has NSGA-III only
])
def test_a_bad_thesis_file_is_refused_naming_the_file_and_the_field(tmp_path, edit, field):
    folder, file = _copy(tmp_path, "thesis_table2")
    edit(pd.read_csv(file, dtype=str, keep_default_na=False)).to_csv(file, index=False)
    with pytest.raises(InputError) as err:
        literature.thesis(2, folder)
    assert err.value.path == str(file) and err.value.field == field


def test_a_file_of_no_known_table_is_refused(tmp_path):
    file = tmp_path / "thesis_table9.csv"
    shutil.copy(literature.path("thesis_table2"), file)
    with pytest.raises(InputError, match="no literature table of this name"):
        literature.read(file)


def test_the_constraint_aware_gains_table_sets_seed_001s_gains_from_the_file_it_is_given(tmp_path):
    folder, gains = _copy(tmp_path, "seed001_gains")
    frame = pd.read_csv(gains)
    frame.loc[frame["algorithm"] == "pso", "gain"] = 0.123
    frame.to_csv(gains, index=False)
    score = tmp_path / "s.parquet"
    _space_scores("a/x", 0.5, "g", 0.1).to_parquet(score)
    curve = tmp_path / "curve.parquet"
    pd.DataFrame({"space": ["a/x"], "time_fraction": [0.0], "score": [0.0]}).to_parquet(curve)
    args = ["ca-tables", "--scores", str(score), "--curves", str(curve), "--out-dir", str(tmp_path),
            "--curves-out", str(tmp_path / "curves.parquet"), "--bootstrap-resamples", "50"]
    for given, expected in (([], literature.values("seed001_gains")["pso"]), (["--seed001-gains", str(gains)], 0.123)):
        cli.main(args + given)
        table = pd.read_csv(tmp_path / "constraint_aware_gains.csv")
        assert set(table.loc[table["algorithm"] == "pso", "seed001_gain"]) == {expected}


def test_no_paper_number_is_typed_into_the_tables_code():
    # the values of the literature files do not appear as literals in the modules that quote them
    readme = sorted((REPO / "analysis/tables/readme").rglob("*.py")) + sorted(
        (REPO / "analysis/tables/readme/templates").glob("*.tmpl"))
    code = "\n".join(f.read_text() for f in [*readme, REPO / "analysis/tables/constraint_aware.py"])
    for file in paths.LITERATURE.glob("*.csv"):
        frame = pd.read_csv(file, dtype=str)
        for column in literature.FILES[file.stem][1]:
            for value in frame[column]:
                if len(value.replace(".", "").lstrip("0")) >= 3:  # 0.801, 11.19, ...: not 5 or 0.5
                    assert value not in code, f"{value} of {file.name} typed into the code"
