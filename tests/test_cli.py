"""The command line: `--help` lists every command in exactly one stage, and bad input a user can fix ends
with a one-line message naming the option or file and exit status 2."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from analysis import cli
from analysis.errors import ArgumentError, InputError, json_argument, summary
from helpers import REPO, check_bad_arguments, one_error_line


def listing_lines(text: str) -> dict[str, list[str]]:
    """The command lines of each stage block of the `--help` listing: stage -> command names, in order."""
    body = text.split("commands by stage", 1)[1].split("where things go:", 1)[0]
    groups: dict[str, list[str]] = {}
    stage = None
    for line in body.splitlines():
        if re.match(r"^\S.*: ", line) and not line.startswith(" "):
            stage = line.split(": ", 1)[0]
            groups[stage] = []
        elif line.startswith("  ") and line.strip():
            groups[stage].append(line.split()[0])
    return groups


def test_every_command_is_in_exactly_one_stage_of_the_help():
    commands = cli.commands()
    assert set(cli.COMMAND_STAGES) == set(commands), "COMMAND_STAGES and the parser's commands differ"
    assert set(cli.COMMAND_STAGES.values()) <= set(cli.STAGES)
    groups = listing_lines(cli.parser().format_help())
    listed = [name for names in groups.values() for name in names]
    assert sorted(listed) == sorted(commands)  # each command once: none left out, none twice
    assert list(groups) == [s for s in cli.STAGES if s in set(cli.COMMAND_STAGES.values())]
    assert cli.OTHER_STAGE not in groups
    for stage, names in groups.items():
        assert all(cli.COMMAND_STAGES[n] == stage for n in names)


def test_a_command_without_a_stage_is_still_listed(monkeypatch):
    stages = dict(cli.COMMAND_STAGES)
    del stages["fronts"]
    monkeypatch.setattr(cli, "COMMAND_STAGES", stages)
    groups = listing_lines(cli.parser().format_help())
    assert groups[cli.OTHER_STAGE] == ["fronts"] and "fronts" not in groups["spaces"]


def test_each_command_has_a_one_line_summary_that_fits():
    text = cli.parser().format_help()
    for name, sub in cli.commands().items():
        assert sub.description and "\n" not in sub.description, name
        (line,) = [ln for ln in text.splitlines() if ln.startswith(f"  {name} ")]
        assert line.endswith(sub.description) and len(line) <= 100, line


def test_where_things_go_names_paths_that_exist():
    paths = re.findall(r"(?:analysis|workflow|docs)/[\w/<>.-]*", cli.WHERE_THINGS_GO)
    assert len(paths) >= 8
    for path in paths:
        path = path.split("<")[0].rstrip(".")
        assert (REPO / path).exists(), path


def test_help_runs_as_a_newcomer_types_it():
    out = subprocess.run([sys.executable, "-m", "analysis.cli", "--help"], capture_output=True, text=True, cwd=REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "commands by stage" in out.stdout and "where things go:" in out.stdout
    assert "sweep-shard" in out.stdout and "figure-summary" in out.stdout


@pytest.mark.parametrize(("argv", "message"), [
    (["ca-score", "--space-parquet", "s.parquet", "--space-meta", "s.json", "--strategies", '{"a": {}, "b": {}}',
      "--runs", "a.parquet", "--scores", "x", "--curves", "y"], "argument --runs: 1 run file(s) for the 2 strategies"),
    (["ca-score", "--space-parquet", "s.parquet", "--space-meta", "s.json", "--strategies", '["a"]', "--runs",
      "a.parquet", "--scores", "x", "--curves", "y"], "argument --strategies: not a JSON object"),
    (["spaces-table", "--meta", "a.json", "b.json", "--fronts", "a.f.json", "--csv", "x", "--md", "y"],
     "argument --fronts: 1 file(s) for the 2 of --meta"),
    (["spaces-table", "--meta", "a.json", "--fronts", "a.f.json", "--space-parquets", "a", "b", "--csv", "x", "--md",
      "y"], "argument --space-parquets: 2 file(s) for the 1 of --meta"),
    (["fronts", "--space-parquet", "s.parquet", "--space-meta", "s.json", "--objective-sets", "{time: [time]}",
      "--parquet", "f", "--json", "j"], "argument --objective-sets: not JSON"),
    (["simulate", "--space-parquet", "s.parquet", "--space-meta", "s.json", "--objective-set", "time", "--objectives",
      '["time"]', "--algorithm", "rs", "--budget", "10", "20", "--repetitions", "1", "--out", "a"],
     "argument --out: 2 budget(s) [10, 20] but 1 output file(s)"),
    (["sweep-merge", "--kernel", "bessel", "--target", "cpu", "--size", "tiny", "--tune-params", "[1]", "--shards",
      "a", "--cache", "c", "--definition", "d", "--provenance", "p"], "argument --tune-params: not a JSON object"),
    (["lb-score", "--spaces", "s.parquet", "s.json", "b.json", "--name", "x", "--source", "run", "--runs", "r",
      "--repetitions", "2", "--resamples", "0", "--scores", "x", "--curves", "y"],
     "argument --source: 'run' is not one of runs, constraint_aware, hyperparameters_so"),
    (["figure-anytime", "--curves", "c.parquet", "--device", "d", "--kernel", "k", "--objective-set", "time",
      "--objectives", '"time"', "--pdf", "a.pdf", "--png", "a.png"], "argument --objectives: not a JSON list"),
])
def test_bad_arguments_end_with_one_line_and_status_2(argv, message, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, and relative outputs would land here
    check_bad_arguments(cli.main, argv, message, tmp_path, capfd)


def test_a_missing_input_file_names_the_file(tmp_path, capfd):
    curves = tmp_path / "curves.parquet"
    assert cli.main(["figure-anytime-grid", "--curves", str(curves), "--objective-set", "time", "--pdf",
                     str(tmp_path / "a.pdf"), "--png", str(tmp_path / "a.png")]) == 2
    assert f"{curves}: no such file" in one_error_line(capfd.readouterr().err)


def test_argument_errors_are_input_errors_naming_the_option():
    err = ArgumentError("--out", "two budgets, one file")
    assert isinstance(err, InputError) and err.path is None and err.field == "--out"
    assert str(err) == "argument --out: two budgets, one file"
    assert json_argument("--x", "") is None and json_argument("--x", '{"a": [1]}') == {"a": [1]}
    with pytest.raises(ArgumentError, match="argument --x: not a list: {}"):
        json_argument("--x", "{}", lambda v: isinstance(v, list), "a list")
    with pytest.raises(ArgumentError, match="argument --x: not JSON"):
        json_argument("--x", "{'a': 1}")


# the file that may end the process itself: the entry point's `__main__` guard (gpuvisit's commands:
# tests/gpuvisit/test_gpuvisit_cli.py)
EXITS_ALLOWED = {"analysis/cli.py"}


def test_the_library_never_exits_the_process():
    """Bad input is an InputError that `main` reports; no library code ends the process or prints usage."""
    for path in sorted((REPO / "analysis").rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(REPO).as_posix()
        assert "raise SystemExit" not in text and "parser.error(" not in text, rel
        assert rel in EXITS_ALLOWED or "sys.exit(" not in text, rel


def test_a_failed_check_is_status_1_not_an_input_error(tmp_path, capfd):
    readme = tmp_path / "README.md"
    readme.write_text((REPO / "workflow/kernels/README.md").read_text().replace("| bessel |", "| Bessel |", 1))
    before = readme.read_text()
    assert cli.main(["kernel-sizes", "--readme", str(readme), "--check"]) == 1
    assert readme.read_text() == before
    assert "differs" in capfd.readouterr().out


def test_an_unexpected_error_ends_with_its_last_line_and_where_a_strategy_raised_it(tmp_path, capfd):
    """Any other exception: its traceback for the log, then one line naming it and the innermost frame of strategy
    code (a user's file here, not the library code that called it)."""
    strategy = tmp_path / "mine.py"
    strategy.write_text("def tune():\n    return helper()\n\n\n"
                        "def helper():\n    raise KeyError('no such parameter')\n")
    namespace: dict = {}
    exec(compile(strategy.read_text(), str(strategy), "exec"), namespace)
    try:
        namespace["tune"]()
    except KeyError as exc:
        assert summary(exc) == f"KeyError: 'no such parameter' (raised at {strategy}:6, in helper)"
    try:
        json_argument("--options", "{", dict)
    except InputError as exc:  # raised in this package, called from code outside it: that caller is named
        assert summary(exc).endswith(f"(raised at {__file__}:{exc.__traceback__.tb_lineno}, in "
                                     "test_an_unexpected_error_ends_with_its_last_line_and_where_a_strategy_raised_it)")


def test_the_command_line_turns_an_unexpected_error_into_status_1_and_one_last_line(monkeypatch, capfd):
    def raising(args):
        raise RuntimeError("something unforeseen")

    monkeypatch.setattr(cli, "_fronts", raising)
    status = cli.main(["fronts", "--space-parquet", "p", "--space-meta", "m", "--objective-sets", "{}",
                       "--parquet", "f", "--json", "j"])
    captured = capfd.readouterr()
    err = captured.err.strip().splitlines()
    assert status == 1 and "Traceback" in "\n".join(err)
    assert err[-1].startswith("error: RuntimeError: something unforeseen (raised at ") and "in raising)" in err[-1]
    # the line on stdout too, which a rule leaves on Snakemake's console while its stderr goes to the log
    assert captured.out.strip().splitlines()[-1] == err[-1]
