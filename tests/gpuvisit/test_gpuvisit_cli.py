"""The GPU visit's commands, `python -m gpuvisit <command>`: each runs with --help, and bad input a user can fix
ends with a one-line message naming the option and exit status 2 (as `python -m analysis.cli`'s do)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analysis import cli as study_cli
from gpuvisit import cli
from helpers import REPO, check_bad_arguments

COMMANDS = ["gpu-lease", "gpu-lease-merge", "gpu-bundle", "gpu-plan-doc", "cuda-compile-cost"]


def subcommands() -> dict:
    sub = next(a for a in cli.parser()._actions if a.dest == "command")  # argparse keeps its sub-parsers there
    return dict(sub.choices)


def test_the_commands_are_gpuvisits_not_the_studys():
    assert sorted(subcommands()) == sorted(COMMANDS)
    assert not set(COMMANDS) & set(study_cli.commands())


def test_help_runs_as_a_visitor_types_it():
    out = subprocess.run([sys.executable, "-m", "gpuvisit", "--help"], capture_output=True, text=True, cwd=REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m gpuvisit") and all(c in out.stdout for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: python -m gpuvisit {command}") and subcommands()[command].description in \
        " ".join(text.split())


@pytest.mark.parametrize(("argv", "message"), [
    (["gpu-lease", "--compile-only"], "argument --compile-only: needs --kernels and --out"),
    (["gpu-lease", "--out", "x"], "argument --deadline-min: a lease needs --deadline-min and --out"),
    (["cuda-compile-cost", "--kernel", "bessel", "--cache", "c.json", "--publish", "p.json.gz"],
     "argument --publish: needs --provenance"),
])
def test_bad_arguments_end_with_one_line_and_status_2(argv, message, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, and relative outputs would land here
    check_bad_arguments(cli.main, argv, message, tmp_path, capfd)


def test_an_unexpected_error_is_status_1_and_one_last_line(monkeypatch, capfd):
    def raising(args):
        raise RuntimeError("something unforeseen")

    monkeypatch.setattr(cli, "_plan_doc", raising)
    monkeypatch.setattr(cli, "add_commands", _with_handler(cli.add_commands, "gpu-plan-doc", raising))
    status = cli.main(["gpu-plan-doc", "--check"])
    err = capfd.readouterr().err.strip().splitlines()
    assert status == 1 and "Traceback" in "\n".join(err)
    assert err[-1].startswith("error: RuntimeError: something unforeseen (raised at ")


def _with_handler(add, command, handler):
    def add_commands(sub):
        add(sub)
        sub.choices[command].set_defaults(func=handler)
    return add_commands


# the files of gpuvisit that may end the process themselves: the entry point (`python -m gpuvisit`), and the
# install check script that the bundle writes for the GPU machine (a text, run there on its own)
EXITS_ALLOWED = {"gpuvisit/__main__.py", "gpuvisit/bundle.py"}


def test_the_package_never_exits_the_process():
    for path in sorted((REPO / "gpuvisit").rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(REPO).as_posix()
        assert "raise SystemExit" not in text and "parser.error(" not in text, rel
        assert rel in EXITS_ALLOWED or "sys.exit(" not in text, rel
