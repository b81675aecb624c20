"""verify-space: one space's published rows rerun from data/ and compared, row by row."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from analysis import config as study_config
from analysis import verify_space as verify
from helpers import REPO

CONFIG = {
    "output_root": ".test-output",  # verify-space writes under --work; the config check wants a safe root
    "objective_sets": {"time": ["time"]},
    "spaces": [{"kernel": "convolution", "device": "A100",
                "source": "data/benchmark_hub/cachefiles/convolution_milo/A100.json.gz",
                "definition": "data/benchmark_hub/kernels/convolution_milo.json"}],
    "simulation": {"repetitions": 2, "budgets": [12, 16], "objective_sets": ["time"],
                   "algorithms": {"rs": {"algorithm": "rs"}, "nsga2": {"algorithm": "nsga2", "tuned": "nsga2"}}},
    "hyperparameters": {"kernels": ["convolution"], "repetitions": 2,
                        "grids": {"nsga2": {"algorithm": "nsga2", "objective_set": "time",
                                            "options": {"popsize": [6, 10], "mutation_prob": [0.1, 0.2]}}}},
}
# The grid's picks, as the hyperparameters rule writes them: the rerun reads them instead of running the grid.
PICKS = pd.DataFrame({"grid": "nsga2", "algorithm": "nsga2", "objective_set": "time", "budget": [12, 16],
                      "mutation_prob": [0.2, 0.1], "popsize": [6, 10], "y1": 0.1, "y2": 0.1, "front_size": 1,
                      "grid_size": 4, "coin": "none (odd front)", "coin_seed": 1,
                      "setting": ["hp_nsga2__popsize_6__mutation_prob_0.2", "hp_nsga2__popsize_10__mutation_prob_0.1"]})


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis.cli", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600)


def test_rerun_matches_itself_and_a_tampered_row_is_reported(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    published = tmp_path / "tables"
    published.mkdir()
    PICKS.to_csv(published / "hyperparameters.csv", index=False)
    # what the rules would publish for this space, made with the same functions
    work = tmp_path / "work"
    made = verify.rerun(study_config.load(cfg), "A100/convolution", published / "hyperparameters.csv", work)
    assert set(made) == {"indicators", "significance", "speedup_to_rs_spaces"}
    runs = pd.read_parquet(work / "runs/time/nsga2/b16.parquet")
    assert runs["repetition"].nunique() == 2 and (runs.groupby("repetition")["first_visit"].sum() == 16).all()
    for name in made:
        shutil.copy(work / f"{name}.csv", published / f"{name}.csv")
    # another space's rows in the published table are not compared
    ind = pd.read_csv(published / "indicators.csv")
    other = ind.iloc[[0]].assign(device="A4000")
    # tamper with one published cell of this space
    ind.loc[(ind["setting"] == "nsga2") & (ind["budget"] == 16), "igd_median"] += 1e-12
    pd.concat([ind, other]).to_csv(published / "indicators.csv", index=False)

    out = cli("verify-space", "--space", "A100/convolution", "--config", str(cfg), "--tables", str(published))
    assert out.returncode == 1, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "indicators: time 16 nsga2: MISMATCH" in lines
    assert "indicators: time 16 rs: match" in lines and "indicators: time 12 nsga2: match" in lines
    assert any(line.strip().startswith("igd_median: published") for line in lines)
    assert lines[-1].startswith("A100/convolution: MISMATCH: ")
    assert "indicators 3/4" in lines[-1] and "significance 2/2" in lines[-1]


def test_compare_reports_missing_and_unpublished_rows():
    pub = pd.DataFrame({"device": "d", "kernel": "k", "budget": ["1", "2"], "setting": "a", "x": ["0.5", "0.25"]})
    rep = pd.DataFrame({"device": "d", "kernel": "k", "budget": ["2", "3"], "setting": "a", "x": ["0.25", "1"]})
    check = verify.compare("t", pub, rep)
    assert [r["status"] for r in check.rows] == ["missing from the rerun", "match", "not published"]
    assert check.mismatches == 2
    text = verify.report([check], "d/k")
    assert text.splitlines()[-1] == "d/k: MISMATCH: 1 of 3 published rows reproduced exactly (t 1/3)"


def test_a_space_without_committed_data_is_refused():
    out = cli("verify-space", "--space", "host-cpu/bessel", "--config", "config/test.yaml", "--tables", "tables")
    assert out.returncode == 2 and "no committed data" in out.stderr


def test_an_excluded_space_is_refused_with_its_reason():
    from analysis.errors import InputError

    config = study_config.load(REPO / "config" / "test.yaml", workdir=REPO)
    with pytest.raises(InputError, match=r"'A4000/convolution' is excluded from the studies \(CI: ") as exc:
        verify.rerun(config, "A4000/convolution", REPO / "tables" / "hyperparameters.csv", REPO / ".unused")
    assert exc.value.field == "--space"
