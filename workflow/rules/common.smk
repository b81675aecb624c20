# Shared set-up: config validation, the path scheme, wildcard constraints, input helpers.
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, workflow.basedir)

from analysis import config as study_config
from analysis.errors import ConfigError

_config_label = ", ".join(str(p) for p in workflow.configfiles) or "config"
try:
    study_config.validate(config, _config_label)
    study_config.check_files(config, workflow.basedir, _config_label)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

from snakemake.settings.types import DeploymentMethod

# With --use-conda, jobs run the `python` of environment.yml; otherwise the interpreter running
# Snakemake. Either way the library is imported from this checkout.
ENV = "../../environment.yml"
_py = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable
CLI = f"PYTHONPATH={shlex.quote(workflow.basedir)}${{PYTHONPATH:+:$PYTHONPATH}} {shlex.quote(_py)} -m analysis.cli"
_root = config["output_root"].rstrip("/")
ROOT = "" if _root in ("", ".") else f"{_root}/"
RESULTS = f"{ROOT}results"
LOGS = f"{ROOT}logs"
TABLES = f"{ROOT}tables"
SPACES = {(s["device"], s["kernel"]): s for s in config["spaces"]}
SIM = config["simulation"]
SETTINGS = SIM["algorithms"]


def _choices(values):
    return "|".join(sorted({v.replace(".", r"\.") for v in values}))


wildcard_constraints:
    device=_choices(d for d, _ in SPACES),
    kernel=_choices(k for _, k in SPACES),
    objective_set=_choices(config["objective_sets"]),
    setting=_choices(SETTINGS),
    budget=r"\d+",


def repo_path(path):
    """A path from the config, resolved against the repository."""
    return str(Path(workflow.basedir) / path)


def get_space(wildcards):
    """The config entry of the space {device}/{kernel}."""
    return SPACES[(wildcards.device, wildcards.kernel)]


def get_space_inputs(wildcards):
    """Source file and (if any) definition file of a space."""
    s = get_space(wildcards)
    inputs = {"source": repo_path(s["source"])}
    if s["definition"]:
        inputs["definition"] = repo_path(s["definition"])
    return inputs


def space_ids():
    """Every space as (device, kernel), in config order."""
    return list(SPACES)


def expand_spaces(pattern):
    """`pattern` with {device} and {kernel} filled in for every space."""
    return [pattern.format(device=d, kernel=k) for d, k in space_ids()]


def json_arg(obj):
    """A JSON value quoted for the shell."""
    return shlex.quote(json.dumps(obj))


def run_files():
    """Every simulated-run file of the study."""
    return [
        f"{RESULTS}/runs/{d}/{k}/{objective_set}/{setting}/b{budget}.parquet"
        for d, k in space_ids()
        for objective_set in SIM["objective_sets"]
        for setting in SETTINGS
        for budget in SIM["budgets"]
    ]


def get_final_outputs():
    """Everything `rule all` builds, from the config alone."""
    return [f"{TABLES}/spaces.csv", f"{TABLES}/spaces.md", *run_files()]
