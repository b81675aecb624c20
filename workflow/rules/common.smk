# Shared set-up: config validation, the path scheme, wildcard constraints, input helpers.
import json
import os
import shlex
import sys
from pathlib import Path

sys.path.insert(0, workflow.basedir)

from analysis import config as study_config
from analysis.hyperparams import selection as hyperparams
from analysis.spaces.compile_cost import provenance_path
from analysis.figures import registry as study_figures
from analysis.tables import registry as study_tables
from analysis.tables import summary as study_summary
from analysis.tables import literature
from analysis.tables.readme import sources as readme_sources
from analysis.errors import ConfigError
from analysis.objectives import headline_set
from analysis.simulate.registry import strategy_source
from analysis.simulate import constraint_aware, leaderboard
from analysis.simulate import archive
from analysis.hyperparams import single_objective as so_tuning

try:
    study_config.check_workflow_config(config, workflow.configfiles, workflow.basedir)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
# The config file each simulate job's budget errors name: the one that sets the field (study_config.field_labels).
_budget_labels = study_config.field_labels(workflow.configfiles, ("simulation.budgets", "hyperparameters.budgets"))

from snakemake.settings.types import DeploymentMethod

# With --use-conda, jobs run the `python` of environment.yml; otherwise the interpreter running
# Snakemake. Either way the library is imported from this checkout.
ENV = "../../environment.yml"
_py = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable
CLI = f"PYTHONPATH={shlex.quote(workflow.basedir)}${{PYTHONPATH:+:$PYTHONPATH}} {shlex.quote(_py)} -m analysis.cli"
ROOT = study_config.output_prefix(config["output_root"])
RESULTS = f"{ROOT}results"
LOGS = f"{ROOT}logs"
TABLES = f"{ROOT}tables"
FIGURES = f"{ROOT}figures"
SPACES = {(s["device"], s["kernel"]): s for s in config["spaces"]}
SWEEPS = {(s["target"], s["device"], s["kernel"]): s for s in config["sweeps"]}


def sweep_dir(target, device, kernel):
    """Folder of a sweep's shards and merged output (cache.json.gz, definition.yaml, provenance.json)."""
    return f"{RESULTS}/sweeps/{target}/{device}/{kernel}"


# A sweep with `space: true` becomes the space {device}/{kernel}, read from its merged output.
for (_t, _d, _k), _s in SWEEPS.items():
    if _s["space"]:
        SPACES[(_d, _k)] = study_config.sweep_space(_s, sweep_dir(_t, _d, _k))
# A space with `excluded: <reason>` is imported and tabulated, but neither study runs on it.
EXCLUDED = study_config.excluded_spaces(config)
STUDIED = [key for key in SPACES if f"{key[0]}/{key[1]}" not in EXCLUDED]
SIM = config["simulation"]
SETTINGS = SIM["algorithms"]  # the comparison
HP = config["hyperparameters"]
HP_BUDGETS = HP["budgets"] or SIM["budgets"]
TRAINING = [key for key in STUDIED if key[1] in HP["kernels"]]
# The hyperparameter grid's settings, run only where training spaces exist.
GRID_SETTINGS = hyperparams.expand(HP["grids"]) if TRAINING else {}
ALL_SETTINGS = {**SETTINGS, **GRID_SETTINGS}
# The constraint-aware study: its spaces and each strategy with and without awareness.
CA = config["constraint_aware"]
CA_SPACES = constraint_aware.study_spaces(STUDIED, CA)
CA_STRATEGIES = constraint_aware.study_strategies(CA)
# The leaderboard (docs/leaderboard.md): its entries, on the constraint-aware study's spaces tuned on time.
LB = config["leaderboard"]
try:
    LB_ENTRIES = leaderboard.entries(LB, CA_STRATEGIES)
except ValueError as exc:
    raise WorkflowError(f"{workflow.configfiles[-1]}: {exc}") from None
LB_SPACES = leaderboard.spaces(CA_SPACES, CA) if LB_ENTRIES else []
CA_SETTINGS = {
    key: CA[key]
    for key in ("cutoff_percentile", "cutoff_percentile_start", "cutoff_margin", "time_resolution", "confidence_level")
}
# Seed 003's tuning of single-objective strategies (docs/hyperparameters-so.md): on when grids and training are given.
SO = config["hyperparameters_so"]
SO_SCOPES = (
    so_tuning.spaces(SO, [key for key in STUDIED if key[1] not in CA["thresholds"]]) if so_tuning.enabled(SO) else {}
)
SO_CONFIGS = {a: so_tuning.configurations(g) for a, g in SO["grids"].items()} if SO_SCOPES else {}
SO_CHUNKS = so_tuning.chunks(SO) if SO_SCOPES else {}
SO_FINAL = [key for scope in so_tuning.SCOPES for key in SO_SCOPES.get(scope, [])]
SO_FINAL_KEYS = [f"{a}/{role}" for a in SO_CHUNKS for role in so_tuning.ROLES]


def _choices(values):
    return "|".join(sorted({v.replace(".", r"\.") for v in values}))


wildcard_constraints:
    device=_choices(d for d, _ in SPACES),
    kernel=_choices(k for _, k in SPACES),
    objective_set=_choices(config["objective_sets"]),
    setting=_choices(ALL_SETTINGS),
    budget=r"\d+",
    group="comparison|grid",
    strategy=_choices(CA_STRATEGIES) or "none",


def repo_path(path):
    """A path from the config, resolved against the repository."""
    return str(Path(workflow.basedir) / path)


def get_space(wildcards):
    """The config entry of the space {device}/{kernel}."""
    return SPACES[(wildcards.device, wildcards.kernel)]


def get_space_inputs(wildcards):
    """Source file, definition file (if any) and per-configuration compile times (if any) of a space."""
    s = get_space(wildcards)
    where = (lambda p: p) if s.get("from_sweep") else repo_path  # sweep outputs: in the working directory
    inputs = {"source": where(s["source"])}
    if s["definition"]:
        inputs["definition"] = where(s["definition"])
    if s.get("compile_times"):
        inputs["compile_times"] = [repo_path(p) for p in s["compile_times"]]
    return inputs


def import_options(wildcards, input):
    """import-space's optional arguments: --definition and --compile-times, only when the space has them."""
    words = []
    if "definition" in input.keys():
        words += ["--definition", shlex.quote(input.definition)]
    if "compile_times" in input.keys():
        words += ["--compile-times", *(shlex.quote(p) for p in input.compile_times)]
    return " ".join(words)


def space_ids():
    """Every space as (device, kernel), in config order, excluded ones included."""
    return list(SPACES)


def studied_space_ids():
    """The spaces the studies run on (every space but the excluded ones), in config order."""
    return list(STUDIED)


def compile_cost_space_ids():
    """The spaces with per-configuration compile measurements (`compile_times:`), as (device, kernel)."""
    return [key for key, s in SPACES.items() if s.get("compile_times")]


def compile_provenance_files():
    """The provenance beside the source and the compile measurements of the spaces with `compile_times:`: where
    each was measured (tables/compile_sensitivity.csv), those that exist."""
    paths = []
    for key in compile_cost_space_ids():
        s = SPACES[key]
        for p in [s["source"], *s["compile_times"]]:
            prov = provenance_path(p if s.get("from_sweep") else repo_path(p))
            if prov.is_file():
                paths.append(str(prov))
    return paths


def expand_spaces(pattern):
    """`pattern` with {device} and {kernel} filled in for every space."""
    return [pattern.format(device=d, kernel=k) for d, k in space_ids()]


def json_arg(obj):
    """A JSON value quoted for the shell."""
    return shlex.quote(json.dumps(obj))


def space_objective_sets(device, kernel):
    """Objective sets the comparison runs optimise on one space."""
    return SPACES[(device, kernel)]["objective_sets"] or SIM["objective_sets"]


def comparison_cells():
    """(device, kernel, objective set, setting, budget) of every comparison run file."""
    return [
        (d, k, objective_set, setting, budget)
        for d, k in studied_space_ids()
        for objective_set in space_objective_sets(d, k)
        for setting in SETTINGS
        for budget in SIM["budgets"]
    ]


def grid_cells():
    """The same for the hyperparameter grid's runs on the training spaces."""
    return [
        (d, k, spec["objective_set"], setting, budget)
        for d, k in TRAINING
        for setting, spec in GRID_SETTINGS.items()
        for budget in HP_BUDGETS
    ]


GROUP_CELLS = {"comparison": comparison_cells, "grid": grid_cells}


def indicator_files(kind, group):
    """The indicator files (kind curve or final) of a group of runs, one per (space, objective set)."""
    keys = dict.fromkeys((d, k, o) for d, k, o, _, _ in GROUP_CELLS[group]())
    return [f"{RESULTS}/indicators/{d}/{k}/{o}/{group}.{kind}.parquet" for d, k, o in keys]


def group_run_files(wildcards):
    """The run files of one (space, objective set) in a group."""
    return [
        f"{RESULTS}/runs/{d}/{k}/{o}/{s}/b{b}.parquet"
        for d, k, o, s, b in GROUP_CELLS[wildcards.group]()
        if (d, k, o) == (wildcards.device, wildcards.kernel, wildcards.objective_set)
    ]


def setting_repetitions(setting):
    """Repetitions of a setting: the grid's or the comparison's."""
    return HP["repetitions"] if setting in GRID_SETTINGS else SIM["repetitions"]


def tuned_inputs(wildcards):
    """The hyperparameter table, for a comparison setting whose options come from a grid."""
    spec = SETTINGS.get(wildcards.setting, {})
    return {"tuned": f"{TABLES}/hyperparameters.csv"} if spec.get("tuned") else {}


def strategy_inputs(algorithm):
    """A user strategy's own file (under the working directory), so that editing it reruns its runs."""
    source = strategy_source(algorithm)
    return {"strategy": source} if source else {}


def budget_field(wildcards):
    """The config field a simulate job's budgets come from."""
    grid = wildcards.setting in GRID_SETTINGS and HP["budgets"]
    return "hyperparameters.budgets" if grid else "simulation.budgets"


def simulate_inputs(wildcards):
    """A simulate job's inputs besides the space: the grid's picks (tuned settings), the strategy's file."""
    return {**tuned_inputs(wildcards), **strategy_inputs(ALL_SETTINGS[wildcards.setting]["algorithm"])}


def ca_run_inputs(wildcards):
    """A constraint-aware run's inputs besides the space and its budget: a user strategy's file."""
    return strategy_inputs(CA_STRATEGIES[wildcards.strategy]["algorithm"])


def comparison_algorithms():
    """Comparison setting label -> algorithm."""
    return {label: spec["algorithm"] for label, spec in SETTINGS.items()}


def selection_spaces():
    """The spaces ('device/kernel') the hyperparameters of the comparison's tuned settings were selected on: the
    training spaces where a comparison setting takes a grid's picks, else none. The held-out scopes of the
    tables leave them out."""
    if not any(spec.get("tuned") for spec in SETTINGS.values()):
        return []
    return [f"{d}/{k}" for d, k in TRAINING]


def summary_settings():
    """The comparison settings summarised against the baselines (RS, NSGA-II, NSGA-III): every other one."""
    return study_summary.summary_settings(comparison_algorithms())


def table_files():
    """The study tables (CSV and Markdown) the comparison settings imply."""
    names = study_tables.implied_tables(comparison_algorithms())
    return {name: (f"{TABLES}/{name}.csv", f"{TABLES}/{name}.md") for name in names}


def get_final_outputs():
    """Everything `rule all` builds, from the config alone."""
    outputs = [f"{TABLES}/spaces.csv", f"{TABLES}/spaces.md", f"{RESULTS}/summary/curves.parquet"]
    if compile_cost_space_ids():
        outputs += [f"{TABLES}/compile_cost.csv", f"{TABLES}/compile_cost.md"]
    outputs += [f for pair in table_files().values() for f in pair]
    outputs += [f"{TABLES}/compile_sensitivity.csv", f"{TABLES}/compile_sensitivity.md"]
    outputs += [f"{TABLES}/summary/{setting}.{ext}" for setting in summary_settings() for ext in ("csv", "md")]
    if GRID_SETTINGS:
        outputs += [f"{TABLES}/hyperparameters.csv", f"{TABLES}/hyperparameters.md"]
    outputs += [f"{sweep_dir(*key)}/cache.json.gz" for key in SWEEPS]
    if CA_SPACES:
        outputs += [f"{TABLES}/constraint_aware_{name}.{ext}" for name in ("scores", "gains") for ext in ("csv", "md")]
        outputs.append(f"{TABLES}/constraint_aware_runs.csv")
    if LB_SPACES:
        outputs += [f"{TABLES}/{name}.{ext}" for name in LB_TABLES for ext in ("csv", "md")]
    if SO_SCOPES:
        outputs += [f"{TABLES}/{name}.{ext}" for name in so_table_names() for ext in ("csv", "md")]
    outputs.append(f"{RESULTS}/report/glance.html")
    return outputs


def report_tables():
    """Every published table the HTML report shows: its CSV -> (category, caption, label), in the report's order."""
    tables = {f"{TABLES}/spaces.csv": ("Search spaces", "../report/spaces.rst", "spaces")}
    if compile_cost_space_ids():
        tables[f"{TABLES}/compile_cost.csv"] = ("Search spaces", "../report/compile_cost.rst", "compile_cost")
    for name, (csv, _) in table_files().items():
        tables[csv] = ("Tables", f"../{study_tables.TABLES[name].caption}", name)
    tables[f"{TABLES}/compile_sensitivity.csv"] = (
        "Tables",
        "../report/tables/compile_sensitivity.rst",
        "compile_sensitivity",
    )
    for setting in summary_settings():
        tables[f"{TABLES}/summary/{setting}.csv"] = ("Tables", "../report/tables/summary.rst", f"summary {setting}")
    if GRID_SETTINGS:
        tables[f"{TABLES}/hyperparameters.csv"] = ("Tables", "../report/hyperparameters.rst", "hyperparameters")
    if CA_SPACES:
        for name in ("scores", "gains"):
            caption = f"../report/tables/constraint_aware_{name}.rst"
            tables[f"{TABLES}/constraint_aware_{name}.csv"] = ("Tables", caption, f"constraint_aware_{name}")
    if LB_SPACES:
        for name in ("leaderboard", "leaderboard_pairs", "pyatf_comparison"):
            tables[f"{TABLES}/{name}.csv"] = ("Tables", f"../report/tables/{name}.rst", name)
    if SO_SCOPES:
        for name in so_table_names():
            tables[f"{TABLES}/{name}.csv"] = ("Tables", f"../report/tables/{name}.rst", name)
    return tables


def report_page(csv):
    """The HTML page of a published table in the report (rule report_pages)."""
    relative = os.path.relpath(csv, os.path.dirname(TABLES) or ".").removesuffix(".csv")
    return f"{RESULTS}/report/{relative}.html"


def glance_figure():
    """The figure of the report's results at a glance, README's (analysis.tables.readme.glance_figure): every space's
    anytime IGD+ under the headline objective set."""
    studied = {o for d, k in studied_space_ids() for o in space_objective_sets(d, k)}
    headline = headline_set(config["objective_sets"], studied)
    return [f"{FIGURES}/anytime/all_{headline}.png"] if headline else []


def report_config():
    """The config fields the results at a glance read (analysis.tables.readme.Tables)."""
    return {
        "objective_sets": config["objective_sets"],
        "hyperparameters": {"kernels": config.get("hyperparameters", {}).get("kernels") or []},
        "spaces": [{"device": s["device"], "kernel": s["kernel"], "source": s["source"]} for s in config["spaces"]],
        "leaderboard": {"seed_001": LB["seed_001"]},
    }


# README.md and docs/ rendered from the published tables (readme_results in tables.smk): only a config that writes the
# repository's own tables/ (the full study) renders into the repository's documents.
PUBLISHES = Path(TABLES).resolve() == (Path(workflow.basedir) / "tables").resolve()


def readme_tables():
    """The published tables the README's text reads (analysis.tables.readme.sources.TABLES) that this config makes
    or the folder has (the leaderboard's and seed 003's only where they run)."""
    made = set(get_final_outputs())
    return [p for p in readme_sources.table_files(TABLES) if p in made or os.path.isfile(p)]


def readme_file(path):
    """A file of the repository that the README's text reads or writes, as the workflow names it (relative to the
    working directory)."""
    return os.path.relpath(path)


def ca_threshold(wildcards):
    """JSON of the accuracy threshold of a constraint-aware study space (null: tuned on time)."""
    return json_arg(CA["thresholds"].get(wildcards.kernel))


def ca_group(wildcards):
    """JSON of the configured group of a constraint-aware study space (null: ca-score picks the default)."""
    return json_arg(get_space(wildcards)["group"])


# Leaderboard (workflow/rules/simulate.smk, indicators.smk, tables.smk)
LB_TABLES = ("leaderboard", "leaderboard_spaces", "pyatf_comparison")
SO_TABLES = so_tuning.TABLES[:2]  # rule so_tables's (so_meta makes the third)


def space_triples(keys):
    """Each space's parquet, meta and budget (the constraint-aware study's), space by space: the --spaces of the
    leaderboard's and the seed 003 tuning's commands."""
    return [
        f"{RESULTS}/{part}"
        for d, k in keys
        for part in (
            f"spaces/{d}/{k}/space.parquet",
            f"spaces/{d}/{k}/space.json",
            f"constraint_aware/budgets/{d}/{k}.json",
        )
    ]


def is_so_table(path):
    """Whether a published table is one of seed 003's tuning (not from archived runs: rule tables leaves it out)."""
    return Path(path).name.split(".")[0] in so_tuning.TABLES


def so_grid_files(kind, algorithm):
    """One of an algorithm's grid outputs (runs, scores, resamples), chunk by chunk."""
    chunks = range(len(SO_CHUNKS[algorithm]))
    return [f"{RESULTS}/hyperparameters_so/grid/{kind}/{algorithm}/{i}.parquet" for i in chunks]


def so_final_files(kind):
    """One of the final outputs (runs, scores, resamples, curves) of every algorithm and role, in SO_FINAL_KEYS order."""
    return [f"{RESULTS}/hyperparameters_so/final/{kind}/{key}.parquet" for key in SO_FINAL_KEYS]


def so_lb_final_indices():
    """The positions in SO_FINAL_KEYS of the final configurations that join the leaderboard (rule so_lb_table)."""
    return [i for i, key in enumerate(SO_FINAL_KEYS) if key.split("/")[1] in so_tuning.LEADERBOARD_ROLES]


def so_lb_files():
    """The leaderboard scores of those configurations (rule so_lb_score), in the same order."""
    return [f"{RESULTS}/hyperparameters_so/leaderboard/{SO_FINAL_KEYS[i]}.parquet" for i in so_lb_final_indices()]


def so_table_names():
    """The published tables of seed 003's tuning in this study (the leaderboard's only where it has one)."""
    return [name for name in so_tuning.TABLES if LB_SPACES or name != so_tuning.LEADERBOARD_TABLE]


def so_chunk_configs(wildcards):
    """JSON of the configurations (name -> options) of one grid job."""
    names = SO_CHUNKS[wildcards.so_algorithm][int(wildcards.chunk)]
    return json_arg({n: SO_CONFIGS[wildcards.so_algorithm][n] for n in names})


def lb_space_files():
    """Every leaderboard space's parquet, meta and budget, space by space (lb-run's and lb-score's --spaces)."""
    return space_triples(LB_SPACES)


def lb_run_inputs(wildcards):
    """A leaderboard entry's runs: its own (rule lb_run), or the constraint-aware study's of each space."""
    entry = LB_ENTRIES[wildcards.entry]
    if entry["source"] == "runs":
        return [f"{RESULTS}/leaderboard/runs/{wildcards.entry}.parquet"]
    name = wildcards.entry.removeprefix("ca_")
    return [f"{RESULTS}/constraint_aware/runs/{d}/{k}/{name}.parquet" for d, k in LB_SPACES]


def ca_run_files(wildcards):
    """Every strategy's runs on one space of the constraint-aware study, in CA_STRATEGIES order."""
    return [
        f"{RESULTS}/constraint_aware/runs/{wildcards.device}/{wildcards.kernel}/{name}.parquet"
        for name in CA_STRATEGIES
    ]


def output_folder(wildcards, output):
    """The folder of a rule's first output (an --out-dir), inferred from the output rather than hard-coded."""
    return os.path.dirname(output[0])


# Sweeps (workflow/rules/sweep.smk)
def get_sweep(wildcards):
    """The config entry of the sweep {target}/{device}/{kernel}."""
    return SWEEPS[(wildcards.target, wildcards.device, wildcards.kernel)]


def sweep_shard_files(wildcards, kind="json"):
    """The shard outputs a merge needs."""
    n = get_sweep(wildcards)["shards"]
    base = sweep_dir(wildcards.target, wildcards.device, wildcards.kernel)
    suffix = "json" if kind == "json" else "provenance.json"
    return [f"{base}/shards/{i}-of-{n}.{suffix}" for i in range(n)]


def sweep_shard_cores(wildcards):
    """Cores the shard's configurations use at once (analysis.sweep.configs.shard_cores)."""
    from analysis.sweep.configs import shard_cores

    s = get_sweep(wildcards)
    return shard_cores(
        wildcards.kernel, wildcards.target, s["tune_params"] or None, (int(wildcards.shard), int(wildcards.shards))
    )


# Simulated runs (workflow/rules/simulate.smk)
def run_files(budgets):
    """The per-budget run files of one job, with {device}, {kernel}, {objective_set}, {setting} left open."""
    pattern = f"{RESULTS}/runs/{{device}}/{{kernel}}/{{objective_set}}/{{setting}}/b{{budget}}.parquet"
    return expand(pattern, budget=budgets, allow_missing=True)


# Figures (workflow/rules/figures.smk; each described once in analysis/figures/registry.py)
def mixed_precision_spaces():
    """Studied spaces whose kernel has a sweep spec in workflow/kernels/ (the mixed-precision kernels); an
    excluded one (a partial sweep) gets no trade-off figure: its cloud is not the space's."""
    kernels = Path(workflow.basedir) / "workflow" / "kernels"
    return [(d, k) for d, k in studied_space_ids() if (kernels / k / "spec.yaml").is_file()]


def figure_study():
    """What the config implies for the figures (analysis.figures.registry.Study)."""
    return study_figures.Study(
        spaces={(d, k): space_objective_sets(d, k) for d, k in studied_space_ids()},
        summary_settings=summary_settings(),
        mixed_precision=mixed_precision_spaces(),
        grid=bool(GRID_SETTINGS),
        constraint_aware=bool(CA_SPACES),
        leaderboard=bool(LB_SPACES),
        seed_003=bool(SO_SCOPES),
    )


def figure_outputs():
    """Every figure (PDF and PNG) the config implies: the registry's (analysis.figures.registry.implied_files)."""
    return [f"{FIGURES}/{path}" for path in study_figures.implied_files(figure_study())]


def figure_files(name):
    """The outputs of figure_<name> (its rule), from the registry: each drawing's PDF and PNG, in the order its command
    writes them, marked for the report (the PNG with its caption under workflow/report/). A figure of one drawing
    names them pdf and png, one of several <drawing>_pdf and <drawing>_png."""
    figure = study_figures.FIGURES[name]
    files = {}
    for out in figure.outputs:
        key = "" if len(figure.outputs) == 1 else f"{Path(out.stem).name}_"
        for ext in study_figures.EXTENSIONS:
            files[f"{key}{ext}"] = report(
                f"{FIGURES}/{out.stem}.{ext}",
                category=study_figures.PNG_CATEGORY if ext == "png" else study_figures.PDF_CATEGORY,
                subcategory=figure.subcategory,
                labels=dict(out.labels),
                caption=f"../report/{out.caption}" if ext == "png" else None,
            )
    return files


# The baseline archive (workflow/rules/simulate.smk: rules archive and restore_runs; docs/baselines.md)
BASELINES = config["baselines"]
ARCHIVE_DIR = repo_path(BASELINES["archive"])
ARCHIVE_STUDIES = ("comparison", "constraint_aware", "leaderboard")


def _file_digest(algorithm):
    """sha256 of a user strategy's file (None for a registered or installed one)."""
    source = strategy_source(algorithm)
    return archive.file_digest(source) if source else None


def tuned_grid(name):
    """What a tuned setting's picks follow from: its grid, the training kernels, the grid's repetitions and budgets."""
    if not name:
        return None
    return {
        "grid": name,
        **HP["grids"][name],
        "kernels": HP["kernels"],
        "repetitions": HP["repetitions"],
        "budgets": HP_BUDGETS,
    }


def run_jobs():
    """Every run file the config implies (path under results/) -> (study, what its job's runs follow from)."""
    jobs = {}
    cells = [cell for group in GROUP_CELLS.values() for cell in group()]
    for d, k, o, s, b in cells:
        spec = ALL_SETTINGS[s]
        jobs[f"runs/{d}/{k}/{o}/{s}/b{b}.parquet"] = (
            "comparison",
            {
                "rule": "simulate",
                "algorithm": spec["algorithm"],
                "options": spec["options"],
                "tuned": tuned_grid(SETTINGS[s].get("tuned")) if s in SETTINGS else None,
                "objectives": config["objective_sets"][o],
                "repetitions": setting_repetitions(s),
                "proposal_cap": SIM["proposal_cap"],
                "purpose": "selection" if s in GRID_SETTINGS else "comparison",
                "file": _file_digest(spec["algorithm"]),
            },
        )
    for d, k in CA_SPACES:
        for name, spec in CA_STRATEGIES.items():
            jobs[f"constraint_aware/runs/{d}/{k}/{name}.parquet"] = (
                "constraint_aware",
                {
                    "rule": "ca_run",
                    **spec,
                    "threshold": CA["thresholds"].get(k),
                    "repetitions": CA["repetitions"],
                    "settings": CA_SETTINGS,
                    "proposal_cap": CA["proposal_cap"],
                    "file": _file_digest(spec["algorithm"]),
                },
            )
    for name, entry in LB_ENTRIES.items():
        if entry["source"] == "runs":
            jobs[f"leaderboard/runs/{name}.parquet"] = (
                "leaderboard",
                {
                    "rule": "lb_run",
                    **entry,
                    "spaces": [f"{d}/{k}" for d, k in LB_SPACES],
                    "settings": CA_SETTINGS,
                    "proposal_cap": CA["proposal_cap"],
                    "file": _file_digest(entry["algorithm"]),
                },
            )
    return jobs


RUN_JOBS = run_jobs()


def results_folder(wildcards, input):
    """The results folder of rule archive, from its first run file (the file's path less its path under it)."""
    first = next(iter(RUN_JOBS))
    return str(Path(input.runs[0]).parents[len(Path(first).parts) - 1])


def archive_path(study):
    return f"{ARCHIVE_DIR}/{study}.parquet"


def _space_settled(key):
    """Whether a space is known before the run: imported from a file, or from a sweep already merged (a sweep still
    to run measures a new space, whose runs are simulated)."""
    s = SPACES[key]
    return not s.get("from_sweep") or Path(s["source"]).is_file()


def restorable_runs():
    """The run files (paths under results/) to restore from the archive rather than simulate: where
    baselines.restore is set, those the archive holds with this config's job (archive.restorable), on settled
    spaces (restore_runs checks each space against the archive's fingerprint)."""
    if not BASELINES["restore"]:
        return []
    settled = {f"{d}/{k}" for d, k in SPACES if _space_settled((d, k))}
    lb_spaces = [f"{d}/{k}" for d, k in LB_SPACES]
    jobs = {rel: job for rel, job in RUN_JOBS.items() if settled.issuperset(archive.run_file_spaces([rel], lb_spaces))}
    found = []
    for study in ARCHIVE_STUDIES:
        path = archive_path(study)
        if Path(path).is_file():
            wanted = {rel: job for rel, (s, job) in jobs.items() if s == study}
            found += archive.restorable(path, wanted)
    return found


RESTORED = restorable_runs()


def restored_outputs():
    """What restore_runs writes (the restored run files, and a constraint-aware run's budget file beside each)."""
    out = [f"{RESULTS}/{rel}" for rel in RESTORED]
    out += [
        f"{RESULTS}/{rel.removesuffix('.parquet')}.budget.json"
        for rel in RESTORED
        if rel.startswith("constraint_aware/")
    ]
    return out


def restored_spaces():
    """The spaces of the restored run files (parquet and meta of each)."""
    keys = dict.fromkeys(archive.run_file_spaces(RESTORED, [f"{d}/{k}" for d, k in LB_SPACES]))
    return [f"{RESULTS}/spaces/{key}/space.{ext}" for key in keys for ext in ("parquet", "json")]
