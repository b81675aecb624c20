"""The Snakemake DAG: dry runs list the expected jobs; the tiny config runs every stage that exists."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.figures.registry import EXTENSIONS, FIGURES
from analysis.hyperparams.single_objective import configurations
from analysis.scheduling import job_counts
from analysis.simulate import leaderboard
from helpers import REPO

# Snakemake on the repository's configs: dry runs of the full study, runs of the tiny one
pytestmark = pytest.mark.slow


def snakemake(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """Run snakemake with this interpreter on the repository's Snakefile."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(cwd), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def planned_jobs(*args: str, cwd: Path) -> Counter:
    out = snakemake("-n", "--quiet", "rules", *args, cwd=cwd)
    assert out.returncode == 0, out.stderr + out.stdout
    return Counter(job_counts(out.stdout))


def test_dry_run_full_config(tmp_path):
    jobs = planned_jobs(cwd=tmp_path)
    # benchmark_hub (12) and benchmark_hub_more (13 studied, 1 excluded) spaces (time), and the mixed-precision
    # kernels' spaces (O3, O5): 9 host-CPU sweeps and 1 CUDA sweep (nvidia-h200/kmeans)
    hub, excluded, cpu = 12 + 13, 1, 9 + 1
    sets = hub + 2 * cpu  # (space, objective set) pairs
    runs = sets * 5  # x settings; one job runs all four budgets of a setting
    grid = 3 * (9 + 6)  # training spaces (bessel, convolution2d, mriq) x grid settings
    spaces = hub + excluded + cpu
    # the leaderboard: a run and a score of each Kernel Tuner strategy and pyATF technique, a score of each of the
    # 4 x 2 constraint-aware strategies (random search's runs are random_sample's), its tables and figures
    own = len(leaderboard.kernel_tuner_strategies()) + len(leaderboard.pyatf_techniques())
    assert jobs == Counter(lb_run=own, lb_score=own + 4 * 2, lb_tables=1, figure_leaderboard=1,
                           import_space=spaces, true_fronts=spaces, spaces_table=1, compile_cost_table=1, simulate=runs,
                           simulate_grid=grid,
                           indicators=sets + 3 * 2, hyperparameters=1, summary=1, study_tables=1, compile_sensitivity=1,
                           figure_anytime=sets, figure_anytime_grid=3, figure_tradeoff=cpu, figure_hyperparameters=1,
                           ca_budget=hub + cpu, ca_run=(hub + cpu) * (4 * 2 + 1), ca_score=hub + cpu, ca_tables=1,
                           ca_resample=(hub + cpu) * (4 * 2 + 1),
                           figure_constraint_aware=1, figure_constraint_aware_spaces=1,
                           # one summary page per setting that is not a baseline: nsga2_unaware, nsga3_unaware
                           summary_table=2, figure_summary=2, report_pages=1, all=1)


def test_an_excluded_mixed_precision_space_gets_no_tradeoff_figure(tmp_path):
    """A partial CUDA sweep is imported and listed but excluded; its trade-off cloud is not the space's, so no
    figure is made of it (the full config with nvidia-h200/kmeans marked excluded)."""
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    (entry,) = [s for s in cfg["spaces"] if s["device"] == "nvidia-h200" and s["kernel"] == "kmeans"]
    entry["excluded"] = "a test: as if its sweep were partial"
    (tmp_path / "excluded.yaml").write_text(yaml.safe_dump({"spaces": cfg["spaces"]}))
    full = planned_jobs(cwd=tmp_path)
    jobs = planned_jobs("--configfile", str(tmp_path / "excluded.yaml"), cwd=tmp_path)
    assert jobs["figure_tradeoff"] == full["figure_tradeoff"] - 1
    assert jobs["import_space"] == full["import_space"] and jobs["spaces_table"] == 1
    out = snakemake("-n", "--configfile", str(tmp_path / "excluded.yaml"), cwd=tmp_path)
    assert "tradeoff/amd-epyc-vm/kmeans" in out.stdout and "tradeoff/nvidia-h200/kmeans" not in out.stdout


def test_sweep_shards_with_two_thread_configurations_take_both_cores(tmp_path):
    """config/sweeps-cpu.yaml: the shards of two-thread configurations declare 2 threads (never run beside another)."""
    out = snakemake("-n", "--forceall", "--cores", "2", "--configfile", str(REPO / "config/config.yaml"),
                    str(REPO / "config/sweeps-cpu.yaml"), "--",
                    ".sweep-output/results/sweeps/cpu/amd-epyc-vm/bessel/cache.json.gz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    threads = {}
    for job in out.stdout.split("rule sweep_shard:")[1:]:
        shard = re.search(r"shard=(\d+), shards=4", job).group(1)
        m = re.search(r"threads: (\d+)", job.split("rule ")[0])
        threads[int(shard)] = int(m.group(1)) if m else 1
    assert threads == {0: 1, 1: 2, 2: 2, 3: 2}


def test_dry_run_tiny_config(tmp_path):
    jobs = planned_jobs("--configfile", str(REPO / "config/test.yaml"), cwd=tmp_path)
    # 2 imported spaces + the swept host-cpu/bessel (2 shards, 1 merge) x 6 settings, and the 2 x 2
    # grid on the one training space; the excluded A4000/convolution is imported, with its fronts, and no more;
    # a summary page for each of the 3 settings that are not baselines (nsga2_unaware, ga_aware, optuna); the
    # leaderboard's own runs of every Kernel Tuner strategy and pyATF technique, and a score for each of them and for
    # the 3 x 2 constraint-aware strategies (random search's runs are random_sample's); seed 003's tuning
    own = len(leaderboard.kernel_tuner_strategies()) + len(leaderboard.pyatf_techniques()) + 1  # + optuna, a user's
    assert jobs == Counter(lb_run=own, lb_score=own + 3 * 2, lb_tables=1, figure_leaderboard=1,
                           sweep_shard=2, sweep_merge=1, import_space=4, true_fronts=4, spaces_table=1,
                           simulate=3 * 6, simulate_grid=1 * 4, indicators=3 + 1, hyperparameters=1, summary=1,
                           study_tables=1, compile_sensitivity=1, summary_table=3, figure_summary=3,
                           figure_tradeoff=1, figure_hyperparameters=1, figure_anytime=3, figure_anytime_grid=1,
                           ca_budget=2, ca_run=2 * (3 * 2 + 1), ca_score=2, ca_resample=2 * (3 * 2 + 1), ca_tables=1,
                           figure_constraint_aware=1,
                           figure_constraint_aware_spaces=1, report_pages=1,
                           # seed 003's tuning: 2 + 1 DE and 2 + 1 PSO configurations, 2 a job; best, worst, default;
                           # the best and worst of each on the leaderboard
                           so_run=2 + 2, so_score=2 + 2, so_final_run=2 * 3, so_final_score=2 * 3, so_tables=1,
                           so_meta=1, figure_hyperparameters_so=1, so_lb_score=2 * 2, so_lb_table=1, all=1)


def test_dry_run_full_config_with_seed_003(tmp_path):
    """config/seed003.yaml adds the tuning's jobs to the full study's and changes none of them: a grid job per
    `configs_per_job` configurations (the grid's and the default), each algorithm's best, worst and default, and the
    best's and the worst's leaderboard scores with their table."""
    section = yaml.safe_load((REPO / "config/seed003.yaml").read_text())["hyperparameters_so"]
    chunks = sum(math.ceil((math.prod(len(v) for v in grid.values()) + 1) / section["configs_per_job"])
                 for grid in section["grids"].values())
    full = planned_jobs(cwd=tmp_path)
    jobs = planned_jobs("--configfile", str(REPO / "config/config.yaml"), str(REPO / "config/seed003.yaml"),
                        cwd=tmp_path)
    roles = 3 * len(section["grids"])
    added = Counter(so_run=chunks, so_score=chunks, so_final_run=roles, so_final_score=roles, so_tables=1,
                    so_meta=1, figure_hyperparameters_so=1, so_lb_score=2 * len(section["grids"]), so_lb_table=1)
    assert chunks == 10 + 1 + 11 + 9
    assert jobs == full + added


def job_files(stdout: str, field: str = "output") -> dict[str, list[list[str]]]:
    """The planned jobs of a dry run's listing: rule -> each job's files of `field` (output or input), in the
    rule's order."""
    jobs: dict[str, list[list[str]]] = {}
    for job in re.split(r"\n(?=(?:local)?rule \w+:)", stdout):
        head = re.match(r"(?:local)?rule (\w+):", job)
        files = re.search(rf"^\s+{field}: (.*)$", job, flags=re.M)
        if head:
            jobs.setdefault(head.group(1), []).append(files.group(1).split(", ") if files else [])
    return jobs


def test_dry_run_figure_jobs_are_the_registrys(tmp_path):
    """The tiny config implies every registered figure: each figure job is a registered figure's rule and writes
    its registered outputs (PDF then PNG, drawing by drawing), and the figures the default target asks for are
    exactly the figure jobs' outputs."""
    out = snakemake("-n", "--configfile", str(REPO / "config/test.yaml"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    jobs = job_files(out.stdout)
    figure_jobs = {rule.removeprefix("figure_"): files for rule, files in jobs.items() if rule.startswith("figure_")}
    assert set(figure_jobs) == set(FIGURES)
    written = set()
    for name, outputs in figure_jobs.items():
        patterns = [re.sub(r"\\{\w+\\}", "[^/]+", re.escape(f"{out.stem}.{ext}"))
                    for out in FIGURES[name].outputs for ext in EXTENSIONS]
        for files in outputs:
            relative = [f.split("/figures/", 1)[1] for f in files]
            assert len(relative) == len(patterns) and all(map(re.fullmatch, patterns, relative)), (name, relative)
            written.update(files)
    (wanted,) = job_files(out.stdout, "input")["all"]
    assert {f for f in wanted if "/figures/" in f} == written


def test_excluded_space_is_imported_and_tabulated_but_never_run(tmp_path):
    """config/test.yaml's A4000/convolution, excluded: no comparison, grid (its kernel trains) or constraint-aware
    job."""
    out = snakemake("-n", "-p", "--configfile", str(REPO / "config/test.yaml"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", out.stdout)
    touching = Counter(re.match(r"(?:local)?rule (\w+):", j).group(1) for j in jobs if "A4000" in j)
    # and the report's pages, which read the config's list of spaces (where each was measured)
    assert touching == Counter(import_space=1, true_fronts=1, spaces_table=1, report_pages=1)
    table_job = next(j for j in jobs if j.startswith("rule spaces_table:"))
    assert """--excluded '{"A4000/convolution": "CI: a space kept out of both studies""" in table_job
    # the constraint-aware study passes each space's group: configured, or null for ca-score's default
    groups = re.findall(r"ca-score .*?--group (\S+)", out.stdout)
    assert sorted(groups) == sorted(["'\"benchmark_hub\"'", "null"])


def test_the_constraint_aware_tables_get_the_configured_minimum_budget(tmp_path):
    """ca-tables flags the spaces under constraint_aware.min_budget_evaluations: 20 by default, else as configured."""
    def ca_tables_job(config):
        out = snakemake("-n", "-p", "--forceall", "--configfile", str(config), "--", ".test-output/tables/"
                        "constraint_aware_gains.csv", cwd=tmp_path)
        assert out.returncode == 0, out.stderr + out.stdout
        return next(line for line in out.stdout.splitlines() if " ca-tables " in line)

    assert "--min-budget-evaluations 20 " in ca_tables_job(REPO / "config/test.yaml")
    text = (REPO / "config/test.yaml").read_text()
    assert "\n  time_resolution: 100\n" in text
    config = tmp_path / "minimum.yaml"
    config.write_text(text.replace("\n  time_resolution: 100\n",
                                   "\n  time_resolution: 100\n  min_budget_evaluations: 7\n"))
    assert "--min-budget-evaluations 7 " in ca_tables_job(config)


def test_each_strategys_runs_are_resampled_as_configured_and_the_tables_read_them(tmp_path):
    """One ca-resample job per space and strategy, with constraint_aware.score_resamples (4 in config/test.yaml); the
    tables job reads every one of their outputs."""
    out = snakemake("-n", "-p", "--forceall", "--configfile", str(REPO / "config/test.yaml"), "--",
                    ".test-output/tables/constraint_aware_gains.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    jobs = [line for line in out.stdout.splitlines() if " ca-resample " in line]
    assert len(jobs) == 2 * (3 * 2 + 1) and all("--resamples 4 " in job for job in jobs)
    tables_job = next(line for line in out.stdout.splitlines() if " ca-tables " in line)
    assert tables_job.count("constraint_aware/resamples/") == len(jobs)


def test_config_typo_stops_the_workflow_naming_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "config/test.yaml").read_text() + "objectve_sets: {}\n")
    out = snakemake("-n", "--configfile", str(bad), cwd=tmp_path)
    assert out.returncode != 0
    assert "unknown key 'objectve_sets'" in out.stdout + out.stderr


BOOM = '''"""A strategy that raises on its first step."""
_options = {"constraint_aware": ("unused", True)}


def tune(searchspace, runner, tuning_options):
    raise ValueError("boom in the strategy")
'''


def test_a_raising_strategy_is_named_on_the_console_with_its_file_and_line(tmp_path):
    """Snakemake's console, not only the job's log, shows the exception's last line and the strategy's file:line."""
    strategy = tmp_path / "boom.py"
    strategy.write_text(BOOM)
    line = BOOM.splitlines().index('    raise ValueError("boom in the strategy")') + 1
    overlay = tmp_path / "boom.yaml"
    overlay.write_text(f"constraint_aware:\n  strategies:\n    boom: {{algorithm: {strategy}}}\n")
    target = ".test-output/results/constraint_aware/runs/A100/dedispersion/boom_aware.parquet"
    out = snakemake("--cores", "1", target, "--configfile", str(REPO / "config/test.yaml"), str(overlay), cwd=tmp_path)
    assert out.returncode != 0
    console = out.stdout + out.stderr
    assert f"error: ValueError: boom in the strategy (raised at {strategy}:{line}, in tune)" in console, console
    log = (tmp_path / ".test-output/logs/constraint_aware/runs/A100/dedispersion/boom_aware.log").read_text()
    assert "Traceback" in log and "boom in the strategy" in log


def test_comparison_runs_are_not_the_selection_runs(tiny_run):
    """On the training space, no comparison run of the tuned setting repeats a grid run that picked it."""
    runs = tiny_run / ".test-output/results/runs/A100/convolution/time"
    comparison = pd.read_parquet(runs / "nsga2/b20.parquet")
    grid = pd.concat([pd.read_parquet(f) for f in runs.glob("hp_nsga2__*/b20.parquet")])
    assert len(grid) and len(comparison)
    assert not set(comparison["seed"]) & set(grid["seed"])
    params = [c for c in comparison.columns if c.startswith("param.")]
    picked = [tuple(map(tuple, r[params].values)) for _, r in comparison.groupby("repetition")]
    trained = [tuple(map(tuple, r[params].values)) for _, r in grid.groupby(["seed"])]
    assert not set(picked) & set(trained)


def test_the_tuned_configurations_join_the_leaderboard_beside_its_own_rows(tiny_run):
    """tables/hyperparameters_so_leaderboard.csv: the leaderboard's own rows as tables/leaderboard.csv has them (each
    entry is scored alone), and each grid's best and worst with the options of the configuration its final runs ran."""
    root = tiny_run / ".test-output"
    board = pd.read_csv(root / "tables/leaderboard.csv").set_index("entry")
    joined = pd.read_csv(root / "tables/hyperparameters_so_leaderboard.csv").set_index("entry")
    added = [f"so_{a}_{r}" for a in ("diff_evo", "pso") for r in ("best", "worst")]
    assert sorted(joined.index) == sorted([*board.index, *added])
    own = ["display", "family", "options", "runs_per_space", "n_spaces", "failed_runs", "mean_score", "ci_low",
           "ci_high"]
    pd.testing.assert_frame_equal(joined.loc[board.index, own], board[own], check_dtype=False)
    assert (joined.loc[added, "family"] == "seed 003 tuning").all()
    grids = yaml.safe_load((REPO / "config/test.yaml").read_text())["hyperparameters_so"]["grids"]
    for name in added:
        algorithm, role = name.removeprefix("so_").rsplit("_", 1)
        final = root / f"results/hyperparameters_so/final/runs/{algorithm}/{role}.parquet"
        configuration = pd.read_parquet(final, columns=["configuration"])["configuration"].iloc[0]
        assert json.loads(joined.loc[name, "options"]) == configurations(grids[algorithm])[configuration]
    # ranks count every entry: one rank per entry on the one space
    assert sorted(joined["mean_rank"]) == sorted(joined["mean_rank"].rank(method="average"))


def test_tiny_config_runs_every_stage(tiny_run, tmp_path):
    # the run itself is the session's fixture (conftest.tiny_run), shared with test_slurm
    # a local run drops Snakemake's default job-rate limit (analysis/scheduling.py)
    assert "Local run: Snakemake's default job-rate limit is off" in (tiny_run / "snakemake.out").read_text()
    root = tiny_run / ".test-output"
    table = pd.read_csv(root / "tables/spaces.csv")
    assert table["space"].tolist() == ["A100/convolution", "A100/dedispersion", "A4000/convolution", "host-cpu/bessel"]
    assert table["constrained_size"].tolist() == [4362, 11130, 4362, 24]
    assert table["failed_runtime"].tolist() == [155, 0, 155, 0]
    # the excluded space is tabulated with its reason, and no run was made on it
    assert table["excluded"].fillna("").str.startswith("CI: ").tolist() == [False, False, True, False]
    assert "CI: a space kept out of both studies" in (root / "tables/spaces.md").read_text()
    assert (root / "results/spaces/A4000/convolution/fronts.json").exists()
    assert not any((root / "results" / d / "A4000").exists() for d in ("runs", "indicators", "constraint_aware/runs"))
    # the Bessel slice was swept here, through Kernel Tuner's C backend, into a space with five objectives
    sweep = root / "results/sweeps/cpu/host-cpu/bessel"
    provenance = json.loads((sweep / "provenance.json").read_text())
    assert provenance["configurations"] == 24
    # each shard passed the correctness gate before measuring; no output held NaN or infinity
    assert all(s["correctness_gate"]["nrmse"] < 1e-12 and s["nonfinite_configurations"] == 0
               for s in provenance["shards"])
    assert table["invalid_output"].tolist() == [0, 0, 0, 0]
    shard_log = (root / "logs/sweeps/cpu/host-cpu/bessel/shard-0-of-2.log").read_text()
    assert "correctness gate passed" in shard_log and re.search(r": 12/12 configurations .* left", shard_log)
    bessel = table.iloc[3]
    assert 0 < bessel["time_ms_min"] and bessel["memory_bytes_min"] == 2048 * 4 and bessel["mre_min"] < 1e-15
    assert (root / "tables/spaces.md").read_text().startswith("# Search spaces")
    fronts = json.loads((root / "results/spaces/A100/convolution/fronts.json").read_text())
    assert fronts["optimum"]["time"]["value"] == pytest.approx(table["time_ms_min"][0])
    runs = pd.read_parquet(root / "results/runs/A100/dedispersion/time/nsga2/b20.parquet")
    assert sorted(runs["repetition"].unique()) == [0, 1, 2] and runs["seed"].nunique() == 3
    assert (runs.groupby("repetition")["first_visit"].sum() == 20).all()
    # the tuned nsga2 setting ran with the options picked by the grid
    pick = pd.read_csv(root / "tables/hyperparameters.csv").iloc[0]
    log = (root / "logs/runs/A100/dedispersion/time/nsga2.log").read_text()
    assert f"'popsize': {pick['popsize']}" in log and f"'mutation_prob': {pick['mutation_prob']}" in log
    grid = pd.read_csv(root / "results/hyperparameters/grid.csv")
    assert len(grid) == 4 and grid["picked"].sum() == 1
    curves = pd.read_parquet(root / "results/summary/curves.parquet")
    assert set(curves["setting"]) == {"rs", "nsga2", "nsga3", "nsga2_unaware", "ga_aware", "optuna"}
    assert (curves["k"].max(), curves["n_runs"].min()) == (20, 3)
    t2 = pd.read_csv(root / "tables/improvement_over_rs.csv")
    assert set(t2["setting"]) == {"nsga2", "nsga3", "nsga2_unaware", "ga_aware", "optuna"}
    # NSGA-III against NSGA-II (Table 3), which the tiny config has since it runs both
    assert set(pd.read_csv(root / "tables/nsga3_over_nsga2.csv")["scope"]) == {"all", "all held-out"}
    # one objective set: nothing to pool apart but `all`, and its held-out twin without the grid's training space
    # (A100/convolution: NSGA-II takes its picks); one pair per space
    by_scope = t2.groupby("scope")
    assert set(by_scope.groups) == {"all", "all held-out"}
    assert (by_scope["n_pairs"].max().to_dict(), by_scope["n_spaces"].max().to_dict()) == (
        {"all": 3, "all held-out": 2}, {"all": 3, "all held-out": 2})
    speed = pd.read_csv(root / "tables/speedup_to_rs.csv")
    assert set(speed["kernel"]) == {"convolution", "dedispersion", "bessel"} and speed["status"].notna().all()
    # one pair per kernel here: every Table 4 mean rests on fewer than 3 pairs, and says so
    assert (speed["n"] == speed["n_reached"]).all() and (speed["n_flag"] == "n < 3").all()
    assert speed.set_index("kernel")["n_spaces_held_out"].to_dict() == {"convolution": 0, "dedispersion": 1,
                                                                        "bessel": 1}
    assert "cluster bootstrap over spaces" in (root / "tables/improvement_over_rs.md").read_text()
    assert (root / "tables/aware_over_unaware.md").read_text().startswith("# Constraint-aware")
    # the constraint-aware study: time-limited runs, scored; Bessel on time with the decay penalty
    ca = pd.read_csv(root / "tables/constraint_aware_runs.csv")
    assert len(ca) == 2 * 7 and (ca["runs"] == 3).all() and ca["score"].notna().all()
    assert set(ca["objective"]) == {"time", "time_decay"}
    assert ca.loc[ca["space"] == "host-cpu/bessel", "threshold"].eq(-3.5).all()
    ca_runs = pd.read_parquet(root / "results/constraint_aware/runs/A100/dedispersion/de_aware.parquet")
    limit = json.loads((root / "results/constraint_aware/runs/A100/dedispersion/de_aware.budget.json").read_text())
    assert set(ca_runs["stop_reason"]) <= {"time_limit", "strategy", "proposal_cap"}
    last = ca_runs.groupby("repetition")["sim_time_ms"].max()
    assert (last[ca_runs.groupby("repetition")["stop_reason"].first() == "time_limit"] > limit["time_limit_ms"]).all()
    gains = pd.read_csv(root / "tables/constraint_aware_gains.csv")
    assert set(gains["algorithm"]) == {"genetic_algorithm", "diff_evo", "kernel_tuner.strategies.simulated_annealing",
                                       "rs"}
    # the configured group, and the default of a thresholded space; one GPU space, so no GPU row set
    assert set(gains["group"]) == {"all", "benchmark_hub", "accuracy threshold"}
    ca_groups = pd.read_csv(root / "tables/constraint_aware_scores.csv").groupby("space")["group"].first()
    assert ca_groups.to_dict() == {"A100/dedispersion": "benchmark_hub", "host-cpu/bessel": "accuracy threshold"}
    # a space whose budget is under constraint_aware.min_budget_evaluations (20) is flagged and in no mean
    per_space = pd.read_csv(root / "tables/constraint_aware_scores.csv").groupby("space").agg(
        budget=("budget_evaluations", "first"), out=("excluded", lambda e: e.notna().any()))
    assert (per_space["out"] == (per_space["budget"] < 20)).all() and not per_space.loc["A100/dedispersion", "out"]
    assert (ca.groupby("space")["excluded"].apply(lambda e: e.notna().all()) == per_space["out"]).all()
    assert (gains.loc[gains["group"] == "all", "spaces"] == (~per_space["out"]).sum()).all()
    # a user's strategy (config/test.yaml: Optuna's TPE from examples/, by its file path) is in every table and
    # figure the built-in settings are in, and has a summary page against the baselines
    for name in ("indicators", "improvement_over_rs", "significance", "eval_time", "speedup_to_rs_spaces"):
        assert "optuna" in set(pd.read_csv(root / f"tables/{name}.csv")["setting"]), name
    assert set(pd.read_csv(root / "tables/speedup_to_rs.csv")["setting"]) >= {"optuna"}
    summary = pd.read_csv(root / "tables/summary/optuna.csv")
    assert len(summary) == 3 and set(summary["budget"]) == {20}
    for stem in ("summary/optuna", "summary/nsga2_unaware", "summary/ga_aware"):
        assert (root / f"figures/{stem}.png").stat().st_size > 10_000, stem
    assert not (root / "tables/summary/rs.csv").exists() and not (root / "tables/summary/nsga2.csv").exists()
    optuna_log = (root / "logs/runs/A100/dedispersion/time/optuna.log").read_text()
    assert "'n_startup_trials': 5" in optuna_log
    for fig in ("score_over_time", "spaces"):
        assert (root / f"figures/constraint_aware/{fig}.png").stat().st_size > 10_000
    for log in ("runs/A100/dedispersion/time/nsga2.log", "spaces/A100/convolution/space.log",
                "spaces/A100/convolution/fronts.log", "tables/spaces.log",
                "indicators/A100/dedispersion/time/comparison.log", "summary/summary.log", "tables/study.log",
                "tables/hyperparameters.log"):
        assert (root / "logs" / log).stat().st_size > 0, log
    # a published space checks out: verify-space reruns it from data/ alone (tuned options from the
    # published hyperparameters.csv, no grid) and finds every row of it in the DAG's tables
    out = subprocess.run([sys.executable, "-m", "analysis.cli", "verify-space", "--space", "A100/dedispersion",
                          "--config", str(REPO / "config/test.yaml"), "--tables", str(root / "tables")],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert out.stdout.splitlines()[-1].startswith("A100/dedispersion: MATCH: ")
    # the HTML report gathers every table and figure marked for it, with its caption (--nolock: the run is
    # shared, and another xdist worker may be copying it; a lock file would come and go under it)
    out = snakemake("--configfile", str(REPO / "config/test.yaml"), "--report", str(tmp_path / "report.html"),
                    "--nolock", cwd=tiny_run)
    assert out.returncode == 0, out.stderr[-3000:]
    html = (tmp_path / "report.html").read_text()
    # the tables as HTML pages (shown on the page, not only offered as downloads), the figures as PNG (and PDF to
    # download), and the results at a glance
    for name in ("glance.html", "spaces.html", "hyperparameters.html", "improvement_over_rs.html",
                 "constraint_aware_gains.html", "leaderboard.html", "optuna.html", "fronts.png", "fronts.pdf",
                 "score_over_time.png", "all_time.png", "critical_difference.png"):
        assert name in html, name
    assert "Results at a glance" in html and "Figures as PDF" in html
    page = (tiny_run / ".test-output/results/report/tables/improvement_over_rs.html").read_text()
    assert page.count("<tr>") == len(pd.read_csv(root / "tables/improvement_over_rs.csv")) + 1


def test_bad_source_fails_cleanly_and_keeps_other_results(tmp_path):
    cfg = (REPO / "config/test.yaml").read_text()
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes((REPO / "data/benchmark_hub/cachefiles/dedispersion_milo/A100.json.gz").read_bytes()[:5000])
    cfg = cfg.replace("source: data/benchmark_hub/cachefiles/dedispersion_milo/A100.json.gz",
                      f"source: {broken}")
    (tmp_path / "c.yaml").write_text(cfg)
    out = snakemake("--cores", "1", "--keep-going", "--configfile", str(tmp_path / "c.yaml"), cwd=tmp_path)
    assert out.returncode != 0
    root = tmp_path / ".test-output"
    log = (root / "logs/spaces/A100/dedispersion/space.log").read_text()
    assert "broken.json.gz" in log and "corrupt or truncated gzip" in log
    assert not (root / "results/spaces/A100/dedispersion/space.parquet").exists()
    assert (root / "results/spaces/A100/convolution/fronts.json").exists()
