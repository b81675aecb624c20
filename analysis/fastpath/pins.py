"""The pin table: every library function the fast path replicates, by the sha256 of its source.

One row per replicated function: the fast-path group that applies it, the upstream function
(`module:qualname` in the pinned release), the sha256 of its source (`inspect.getsource`, as
installed from the version in PINNED), and the replica that stands in for it. At the first use of a
group in a process, `check_group` compares the installed sources with the pins and refuses the group
on a mismatch (run with TSB_STOCK=1 meanwhile); `python -m analysis.cli fastpath --diff` shows, for
each mismatch, the difference between the pinned release's source and the installed one.

The pinned sources are not copied into this repository: `pinned_source` reads them from the
installed package when its version is the pinned one, and otherwise from the pinned release's wheel,
downloaded once with pip into a cache folder (`TSB_UPSTREAM_CACHE`, default ~/.cache/tsb-upstream).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# the releases the replicas follow (pyproject.toml pins the same versions)
PINNED = {"kernel_tuner": "1.5.0", "pymoo": "0.6.2", "autotuning_methodology": "1.1.0", "sklearn": "1.9.1"}
# the distribution (pip's name) of an imported package, where the two differ
DISTRIBUTIONS = {"sklearn": "scikit-learn"}


def distribution(package: str) -> str:
    """pip's name of an imported top-level package."""
    return DISTRIBUTIONS.get(package, package)


class PinMismatch(RuntimeError):
    """An installed library function differs from the release its fast-path replica follows."""


@dataclass(frozen=True)
class Pin:
    """One replicated library function."""

    group: str  # the fast-path group (analysis.fastpath.GROUPS) that applies the replica, or a HARNESS_GROUPS one
    upstream: str  # "module:qualname" of the library function
    sha256: str  # of its source in the pinned release
    replica: str  # "module:qualname" of what stands in for it (or applies the stand-in, or relies on it)

    @property
    def package(self) -> str:
        return self.upstream.split(".", 1)[0]


PINS: tuple[Pin, ...] = (
    Pin("runner", "kernel_tuner.strategies.common:CostFunc._run_configs",
        "5e382f8ebd7172d622671cfb652c71cd57dbf88465f5923284242ab227cb92b9",
        "analysis.fastpath.runner:_run_configs"),
    Pin("runner", "kernel_tuner.runners.simulation:SimulationRunner.run",
        "b88226cc60297e113017ade6f6f30d57db45b24a6cbaaedceca16df1f03342ed",
        "analysis.fastpath.runner:simulation_runner_run"),
    Pin("runner", "kernel_tuner.util:print_config_output",
        "54b74556fdadc5cefb1a8e0af1707878c9fc7aa8de3c69b9f5f7f1b59c6ee643",
        "analysis.fastpath.runner:quiet_config_output"),
    Pin("snapping", "kernel_tuner.strategies.common:unscale_and_snap_to_nearest",
        "a5461e1d49c576a1249333a4e979efa47833a23b87a53338a0ac01dc91676c95",
        "analysis.fastpath.snapping:unscale_and_snap_to_nearest"),
    Pin("snapping", "kernel_tuner.strategies.common:unscale_and_snap_to_nearest_valid",
        "18bfa21764f1bd23cb323663dc3c6d1bad0b390b0d77ed515176788d3275d006",
        "analysis.fastpath.snapping:unscale_and_snap_to_nearest_valid"),
    Pin("snapping", "kernel_tuner.strategies.common:scale_from_params",
        "9d9df668dd21132c5a449dd89c69b2697f6073685108718d88e449107b717d4c",
        "analysis.fastpath.snapping:scaled_positions"),
    Pin("neighbours", "kernel_tuner.searchspace:Searchspace.get_neighbors_indices_no_cache",
        "9ac2cd7041c98e5f42558b4b917fe79cd689eb6bc464df3ddfd348a19062431c",
        "analysis.fastpath.neighbours:memoise_neighbours"),
    Pin("neighbours", "kernel_tuner.searchspace:Searchspace._Searchspace__get_neighbors_indices_hamming",
        "26d73fba88e11b903fcde01cb0532412a626f92c216c5ee3e175df54e2274dcb",
        "analysis.fastpath.neighbours:HammingIndex"),
    Pin("neighbours", "kernel_tuner.searchspace:Searchspace._Searchspace__get_neighbors_indices_strictlyadjacent",
        "e505e22287277269a6df54493df44bc2b96088ed0deb0b25fa877139ee102e41",
        "analysis.fastpath.neighbours:StrictlyAdjacentIndex"),
    Pin("neighbours", "kernel_tuner.searchspace:Searchspace._Searchspace__get_neighbors_indices_adjacent",
        "d86c1d1b8227b4a76ec4a0b8263c045f33e494a7762b2ad39ff8b00ea665260f",
        "analysis.fastpath.neighbours:AdjacentIndex"),
    Pin("searchspace", "kernel_tuner.searchspace:Searchspace.__init__",
        "7ffbdd77ff50a3a7d9cd2c23d6084dc9912001ef4c68dacc5038040ca5a22519",
        "analysis.fastpath.searchspace:copied_searchspace"),
    Pin("searchspace", "kernel_tuner.searchspace:Searchspace._Searchspace__prepare_neighbors_index",
        "faaa281ee1d9f4c6dd3bc8e000fb8560baa5041adfb63d5a0301787075b1dad1",
        "analysis.fastpath.searchspace:build_index_arrays"),
    Pin("lhs", "kernel_tuner.searchspace:Searchspace.get_LHS_sample_indices",
        "3ed82471dc61ccedac5d76c7fa1880ee2082aef1b5e3ae879ba4ce2d92977d89",
        "analysis.fastpath.lhs:lhs_sample_indices"),
    Pin("lhs", "kernel_tuner.searchspace:Searchspace._Searchspace__calc_sum_of_index_differences",
        "b39a892394736d5d682e2562d2e39a5a86ed99d35835ba4a1cecb9a99cd364ab",
        "analysis.fastpath.lhs:lhs_sample_indices"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:differential_evolution",
        "d2cc622a6de173189a03beb71bcb01701adc51f2eb49ce39441f983abf6b1c73",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:random_draw",
        "7f5099d06d753d8522aafbbdaa4ca6d4ca7bcff5ebe9df6efc64bbb776e6f499",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:values_to_indices",
        "dec59aabf6421d8af84ff74805829ce4d4b78facaeea2cc1d475289b5189156c",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:indices_to_values",
        "851ca89af6511cf82313514a14f601ea2d57f270c1d6b155802f39135d0bb27b",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:round_and_clip",
        "1330255bfddf02b65104bac653573710c85869f3f644a608b5261b31162d39e5",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:mutate_de_1",
        "8a864d5672bda55b2e2544522e4b7e053c072a66140a9d7266179f68d3b0f8f1",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:mutate_de_2",
        "bd7aac1aa626124730b9505b16f610d200425a21a814d3076df5b457e7e4b452",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:mutate_currenttobest1",
        "e9a70c69604c0b21e07636aa9336ab3d65fd46cc6fcdb1c737851adc8f1afd76",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:mutate_randtobest1",
        "e1a22121ee80f497f4515d505794eb5cd72a298e9554799455296ccc7201e6a5",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:binomial_crossover",
        "2706d9f49e143385f93db72bd8aa926f7eb525732cbdcde086067be8868baafb",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("diff_evo", "kernel_tuner.strategies.diff_evo:exponential_crossover",
        "204d76f7b6d4fa930124b1bcd72c11b1bbc711caa792266a17d1deef4a3a026e",
        "analysis.fastpath.diff_evo:differential_evolution"),
    Pin("mating", "kernel_tuner.strategies.pymoo_minimize:TuningParamConfigNeighborhoodMutation._do",
        "39d05122bf823c61f372d5f885a2aa8dd26f7df3189cd94db77686c49bcc5e9e",
        "analysis.fastpath.kt_operators:mutations"),
    Pin("mating", "kernel_tuner.strategies.pymoo_minimize:TuningParamConfigRepair._do",
        "4843eaf74d0f39a8f5d1acf4721a48251350b88f62f11e971a519b3dc25d021a",
        "analysis.fastpath.kt_operators:repairs"),
    Pin("mating", "pymoo.core.infill:InfillCriterion.do",
        "bbf6406cd89d8f9ea042936b12e8ad414a6cfa88b26f42ffe98469f52df76e42",
        "analysis.fastpath.mating:ArrayMating.do"),
    Pin("mating", "pymoo.core.mating:Mating._do",
        "989e2f7c65936e83e10769265845973c6f031fb70463990b451bddd9bffc7956",
        "analysis.fastpath.mating:ArrayMating"),
    Pin("mating", "pymoo.operators.selection.tournament:TournamentSelection._do",
        "f5080bc33dc778ca7e3c302fa95e496ff5abd5bf959921a08f3405389ec8534b",
        "analysis.fastpath.mating:_Tournament"),
    Pin("mating", "pymoo.algorithms.moo.nsga2:binary_tournament",
        "76be7adf1ee8cc1f67ef837fb438e2d331dc59bc1956228b16c815e8378d9a1a",
        "analysis.fastpath.mating:_Tournament"),
    Pin("mating", "pymoo.algorithms.moo.nsga3:comp_by_cv_then_random",
        "dcaa297bb253b479f7baad209d9be0f1d41c841d016e7cfcceec225d2bc739e0",
        "analysis.fastpath.mating:_Tournament"),
    Pin("mating", "pymoo.operators.crossover.pntx:PointCrossover._do",
        "40e57ae83b37266abdaca1446fadc596f8c94b2eb4e666f992102d17dad40124",
        "analysis.fastpath.mating:_point_crossover"),
    Pin("mating", "pymoo.operators.crossover.ux:UniformCrossover._do",
        "fc287961d0296ba37cecf8a65840fc0fa59a7f50e5ab314d19f8c2520c74d1d9",
        "analysis.fastpath.mating:_uniform_crossover_masks"),
    Pin("mating", "pymoo.operators.mutation.pm:PolynomialMutation._do",
        "41b93c2b311fdf9d717020651f04fe81e9f9fd6af0ce1f7ec2e40b2222062230",
        "analysis.fastpath.mating:_RowMating"),
    Pin("mating", "pymoo.operators.mutation.pm:mut_pm",
        "2281c830bcb5dcde8a584e4acba54160ccbd404d1de59ddbad745371bb39624f",
        "analysis.fastpath.mating:_RowMating"),
    Pin("mating", "pymoo.operators.repair.rounding:RoundingRepair._do",
        "42f565e55e9737db7cf68691e678dc11e71a4c42e138f962ced4b48e5312cb14",
        "analysis.fastpath.mating:_RowMating"),
    Pin("mating", "pymoo.algorithms.base.genetic:GeneticAlgorithm.__init__",
        "b833e65f1f3deb01762f749efcbdd714bcc48591beaa6976a9196c2cd2cef651",
        "analysis.fastpath.mating:array_mating_in_genetic_algorithms"),
    Pin("duplicates", "kernel_tuner.strategies.pymoo_minimize:TuningParamConfigDuplicateElimination.is_equal",
        "b9bed5006f3cbba70aa6303f9b6c2deb2623224224aef01fbf8ec7db97a2f1ab",
        "analysis.fastpath.duplicates:HashedDuplicateElimination"),
    Pin("duplicates", "pymoo.core.duplicate:ElementwiseDuplicateElimination._do",
        "6143b8ea59684e5fcb7fb603e2ba2b7c5a54a3e155fe32d66198ca992d293ecd",
        "analysis.fastpath.duplicates:HashedDuplicateElimination"),
    Pin("duplicates", "pymoo.core.duplicate:DefaultDuplicateElimination._do",
        "e73009572e4fb66af78ce07af6ac4680153e9c5a44bd605560a848382dc187ab",
        "analysis.fastpath.duplicates:ExactDuplicateElimination"),
    Pin("population", "pymoo.core.population:Population.get",
        "1c99e570c018c9d3ed2e13ef91573ee310e422cc436d666a29300c83f8da6524",
        "analysis.fastpath.population:population_get"),
    Pin("population", "pymoo.core.individual:Individual.get",
        "83eb313614668b19db47269504170b30b3103083dd7f8cba2321264515e8e788",
        "analysis.fastpath.population:population_get"),
    Pin("portable", "pymoo.algorithms.moo.nsga3:get_nadir_point",
        "fff56e5dcb68e966017c1c0e56e3727215de9127baf861077333d8980eb7d11c",
        "analysis.fastpath.portable:portable_hyperplane"),
    Pin("scoring", "autotuning_methodology.runner:write_results",
        "1af3cc4a6f4d9c60bb108461db62e2ee00fb4597f9d9a5be7d9f371fcc8313da",
        "analysis.indicators.methodology:results_arrays"),
    Pin("scoring", "autotuning_methodology.caching:ResultsDescription._ResultsDescription__write_to_file",
        "f449c238d561000e78225241abca5bf4ca09d00cf8ff033066dcfdc869944af4",
        "analysis.indicators.methodology:uncompressed_result_files"),
    Pin("bagging", "autotuning_methodology.curves:Curve.get_isotonic_curve",
        "dc9aab034fb13042558e0b588a64cbc8752b680f53880b0b0d23947de90de564",
        "analysis.fastpath.bagging:get_isotonic_curve"),
    Pin("bagging", "autotuning_methodology.curves:Curve.get_isotonic_regressor",
        "c53fecea3a4495921d0789b3addd6566570bcda325c93e4bd4dc99933573523e",
        "analysis.fastpath.bagging:SortedPoints.fit"),
    Pin("bagging", "autotuning_methodology.curves:StochasticOptimizationAlgorithm._get_prediction_interval_bagging",
        "a0d5063deeacad5c0227ca3df0ccfcd5047c7c84ba2b65881ed7aff66ef7cf45",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
    Pin("bagging", "sklearn.isotonic:isotonic_regression",
        "9979f48e92e168d05711081c4aaafde832e4cfaa0fd5762ab2214f75d1e860e9",
        "analysis.fastpath.bagging:SortedPoints.fit"),
    Pin("bagging", "sklearn.isotonic:IsotonicRegression.fit",
        "adb479a8133008b6ed3a114e5e9bc132434239208e78ea8c508cf4e817967163",
        "analysis.fastpath.bagging:SortedPoints.fit"),
    Pin("bagging", "sklearn.isotonic:IsotonicRegression._build_y",
        "f963f3f33d8e25e1a6c007079c91f0c6b58b3a63b8e4e16801a657ba5e20c897",
        "analysis.fastpath.bagging:SortedPoints.fit"),
    Pin("bagging", "sklearn.isotonic:IsotonicRegression._build_f",
        "21750e0d74298e38e5f03edce654f7749ea2d7d8e804f4e5ec383afd0da29909",
        "analysis.fastpath.bagging:IsotonicFit"),
    Pin("bagging", "sklearn.isotonic:IsotonicRegression._transform",
        "4bfe8e3d1071367b943257775ff3a2ab830a1ca3f9fd4c5c3babefda0751c089",
        "analysis.fastpath.bagging:IsotonicFit.predict"),
    Pin("bagging", "sklearn.isotonic:IsotonicRegression.predict",
        "07ca464b92f3fb8a84dc238d5358aa1744a58c4cec26b2071c0c0ea3349a213b",
        "analysis.fastpath.bagging:IsotonicFit.predict"),
    Pin("bagging", "sklearn.ensemble._bagging:BaseBagging.fit",
        "2a4de2570088e8b18b29a59ff993b4f2d67eac8e29a560379caedab9774b1fa9",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
    Pin("bagging", "sklearn.ensemble._bagging:BaseBagging._fit",
        "4c8712f8aaff2a829071aee321b76963810941702a7da09653b94b8b8b0894de",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
    Pin("bagging", "sklearn.ensemble._bagging:_parallel_build_estimators",
        "2abff8c3c8a8eb09b3cc0267a8421399026b797d9e5b8377bf46e3188c095c85",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
    Pin("bagging", "sklearn.ensemble._bagging:BaggingRegressor.predict",
        "ff9f14d6ceced4643ceb79d9f739d01a0510d18a09fa54640f5939e4ab8af234",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
    Pin("bagging", "sklearn.ensemble._bagging:_parallel_predict_regression",
        "d8419aba3a475b9070f7aa822d44ccc13068cff8c2b637459c0cf3edcc44bd12",
        "analysis.fastpath.bagging:get_prediction_interval_bagging"),
)

# Library internals the study's own code relies on (not replicas: TSB_STOCK cannot turn them off). The
# engine's run set-up follows tune_kernel's (private option tables, the Searchspace's modified
# restrictions), the constraint-unaware strategies compose pymoo_minimize.tune's pieces (its private
# option table and algorithm map), and the "expected_rank" baseline overrides one private method.
# Each is checked (`check_once`) where it is relied on, the first time in a process: "setup" at a run's
# set-up, "unaware" when an unaware strategy runs, "baseline" when the expected-rank baseline is built (so
# that a simulate job never imports autotuning_methodology only to check a pin).
HARNESS_GROUPS = ("setup", "unaware", "baseline")
HARNESS_PINS: tuple[Pin, ...] = (
    Pin("setup", "kernel_tuner.interface:tune_kernel",
        "877c61ee9e82f0c5c704af4d5850897a3dfb19f918288d4d4f575d6f0cbdeb1f",
        "analysis.simulate.setup:build_setup"),
    Pin("unaware", "kernel_tuner.strategies.pymoo_minimize:tune",
        "01f7780d38d8d14d53aa76c4248401747f250fb56189b4ffa293a391bdcb976d",
        "analysis.simulate.unaware:tune"),
    Pin("baseline", "autotuning_methodology.baseline:RandomSearchCalculatedBaseline._redwhite_index",
        "4f843df13347ea8cd60385ee5c2af7822f5e8dff24691c12eb6a6ff4050bdfa9",
        "analysis.indicators.methodology:calculated_baseline"),
)
ALL_PINS = PINS + HARNESS_PINS


def _lookup(dotted: str) -> Any:
    """The object named by "module:qualname", looking through decorators that hide the function in a closure."""
    module, qualname = dotted.split(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    name = qualname.rsplit(".", 1)[-1]
    if getattr(obj, "__name__", name) != name:
        for cell in getattr(obj, "__closure__", None) or ():
            if getattr(cell.cell_contents, "__name__", None) == name:
                return cell.cell_contents
    return obj


def upstream_object(pin: Pin) -> Any:
    return _lookup(pin.upstream)


def replica_object(pin: Pin) -> Any:
    return _lookup(pin.replica)


def sha256_of(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def installed_source(pin: Pin) -> str:
    return inspect.getsource(upstream_object(pin))


def installed_version(package: str) -> str:
    import importlib.metadata  # imported here: a run checks its pins without it

    return importlib.metadata.version(distribution(package))


def mismatches(pins: tuple[Pin, ...] = ALL_PINS) -> list[Pin]:
    """The pins whose installed source is not the pinned one."""
    return [pin for pin in pins if sha256_of(installed_source(pin)) != pin.sha256]


def check_group(group: str) -> None:
    """Raise PinMismatch if any function `group` replicates differs from the pinned release."""
    bad = mismatches(tuple(pin for pin in ALL_PINS if pin.group == group))
    if not bad:
        return
    harness = group in HARNESS_GROUPS
    lines = [f"  {pin.upstream} (pinned {pin.package} {PINNED[pin.package]}, installed "
             f"{installed_version(pin.package)}), {'relied on' if harness else 'replicated'} by {pin.replica}"
             for pin in bad]
    if harness:
        head = "the study's own code relies on library internals that have changed:"
        advice = ("TSB_STOCK cannot avoid these: see `python -m analysis.cli fastpath --diff`, check the code that "
                  "relies on them, and update the pins in analysis/fastpath/pins.py.")
    else:
        head = f"the fast path's group {group!r} replicates library code that has changed:"
        advice = (f"Run with TSB_STOCK=1 (or TSB_STOCK={group}) to use the library as installed, see the difference "
                  "with `python -m analysis.cli fastpath --diff`, mend the replica and update its pin in "
                  "analysis/fastpath/pins.py.")
    raise PinMismatch("\n".join([head, *lines, advice]))


_checked: set[str] = set()


def check_once(group: str) -> None:
    """`check_group` the first time `group` is asked for in this process."""
    if group not in _checked:
        check_group(group)
        _checked.add(group)


def _source_in_file(text: str, qualname: str) -> str:
    """The source of `qualname` (with its decorators, as inspect.getsource gives it) in a module's text."""
    import ast

    tree = ast.parse(text)
    body: list[ast.stmt] = tree.body
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
    cls = None
    for part in qualname.split("."):
        if cls is not None and part.startswith(f"_{cls}__"):
            part = part[len(cls) + 1:]  # a private name, mangled by the class
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise KeyError(qualname)
        cls = node.name if isinstance(node, ast.ClassDef) else None
        body = getattr(node, "body", [])
    assert node is not None  # a qualname has at least one part
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    lines = text.splitlines(keepends=True)
    return "".join(lines[start - 1: node.end_lineno])


def _wheel(package: str, version: str) -> Path:
    import subprocess
    import sys

    cache = Path(os.environ.get("TSB_UPSTREAM_CACHE", Path.home() / ".cache" / "tsb-upstream"))
    cache.mkdir(parents=True, exist_ok=True)
    package = distribution(package)
    stem = package.replace("-", "_").lower()
    found = [p for p in cache.glob("*.whl") if p.name.lower().startswith(f"{stem}-{version}-")]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "-d", str(cache), f"{package}=={version}"], check=True, capture_output=True)
        found = [p for p in cache.glob("*.whl") if p.name.lower().startswith(f"{stem}-{version}-")]
    return found[0]


def pinned_source(pin: Pin) -> str:
    """The upstream function's source in the pinned release."""
    import zipfile

    version = PINNED[pin.package]
    module, qualname = pin.upstream.split(":")
    if installed_version(pin.package) == version:
        source = inspect.getsourcefile(importlib.import_module(module))
        assert source is not None, module  # a pinned module is a .py file
        text = Path(source).read_text()
    else:
        with zipfile.ZipFile(_wheel(pin.package, version)) as wheel:
            name = module.replace(".", "/")
            member = next(m for m in (f"{name}.py", f"{name}/__init__.py") if m in wheel.namelist())
            text = wheel.read(member).decode()
    return _source_in_file(text, qualname)


def diff(pin: Pin) -> str:
    """A unified diff from the pinned release's source of `pin.upstream` to the installed one."""
    import difflib

    version = PINNED[pin.package]
    return "".join(difflib.unified_diff(
        pinned_source(pin).splitlines(keepends=True), installed_source(pin).splitlines(keepends=True),
        fromfile=f"{pin.upstream} ({pin.package} {version})",
        tofile=f"{pin.upstream} (installed {installed_version(pin.package)})"))


def report(show_diff: bool = False) -> tuple[str, bool]:
    """The pin table as text (group, upstream, replica, ok or CHANGED with the installed source's sha256), with
    diffs if asked; and whether all match."""
    bad = set(mismatches())
    rows = [f"{pin.group:<12} {'CHANGED' if pin in bad else 'ok':<8} {pin.upstream}  ->  {pin.replica}"
            + (f"\n{'':<21} installed sha256 {sha256_of(installed_source(pin))}" if pin in bad else "")
            for pin in ALL_PINS]
    versions = ", ".join(f"{p} {v} (installed {installed_version(p)})" for p, v in PINNED.items())
    text = f"pinned releases: {versions}\n" + "\n".join(rows) + "\n"
    if show_diff:
        text += "".join(diff(pin) for pin in ALL_PINS if pin in bad)
    return text, not bad
