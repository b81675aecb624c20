"""The figure registry agrees with the figure modules, the CLI, the rules and the report captions."""

from __future__ import annotations

import re

import pytest

from analysis import cli
from analysis.figures import registry
from analysis.figures.registry import FIGURES, Study
from helpers import REPO

REPORT = REPO / "workflow" / "report"
RULES = REPO / "workflow" / "rules" / "figures.smk"

# a study that implies every figure: two spaces, one mixed-precision, and every study on
EVERYTHING = Study(spaces={("A100", "convolution"): ["time"], ("host-cpu", "bessel"): ["time", "O3"]},
                   summary_settings=["ga_aware"], mixed_precision=[("host-cpu", "bessel")], grid=True,
                   constraint_aware=True, leaderboard=True, seed_003=True)


def test_every_figure_has_its_module_and_captions():
    for figure in FIGURES.values():
        assert (REPO / "analysis" / "figures" / f"{figure.module}.py").is_file(), figure.name
        for out in figure.outputs:
            assert (REPORT / out.caption).is_file(), (figure.name, out.caption)


def test_every_figure_caption_belongs_to_a_registered_figure():
    used = {out.caption for figure in FIGURES.values() for out in figure.outputs}
    assert {p.name for p in REPORT.glob("figure_*.rst")} == used


def test_the_registry_and_the_cli_name_the_same_figure_commands():
    figure_commands = {c for c in cli.commands() if c.startswith("figure-")}
    assert figure_commands == {f.command for f in FIGURES.values()}


def test_every_figure_rule_is_registered_and_every_figure_has_a_rule():
    rules = set(re.findall(r"^\s*rule figure_(\w+):", RULES.read_text(), flags=re.M))
    assert rules == set(FIGURES)
    for name in FIGURES:
        assert f'**figure_files("{name}")' in RULES.read_text(), f"rule figure_{name} takes its outputs elsewhere"


def test_a_study_with_everything_implies_every_figure_and_unique_files():
    files = registry.implied_files(EVERYTHING)
    assert len(files) == len(set(files))
    for figure in FIGURES.values():
        assert figure.files(EVERYTHING), figure.name
    assert "anytime/host-cpu/bessel/O3.png" in files and "anytime/all_O3.pdf" in files
    assert "tradeoff/host-cpu/bessel/mre.png" in files and "summary/ga_aware.pdf" in files


def test_the_switches_turn_their_figures_off():
    bare = Study(spaces={("A100", "convolution"): ["time"]})
    implied = {name for name, figure in FIGURES.items() if figure.files(bare)}
    assert implied == {"anytime", "anytime_grid"}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_labels_name_only_the_wildcards_of_their_stem(name):
    for out in FIGURES[name].outputs:
        wildcards = set(re.findall(r"{(\w+)}", out.stem))
        for value in out.labels.values():
            assert set(re.findall(r"{(\w+)}", value)) <= wildcards, (name, value)
