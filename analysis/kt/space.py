"""Input of the simulation engine: one search space with its exhaustive Kernel Tuner cache."""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import logging
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from kernel_tuner import util as kt_util

from analysis.errors import InputError
from analysis.spaces import constraints as cons
from analysis.spaces.definition import read_definition

logger = logging.getLogger(__name__)

DIRECTIONS = ("min", "max")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic cyclic garbage collection while a space's long-lived data is built.

    Parsing a cache and preparing its entries, constraint solution and neighbour index allocate
    hundreds of thousands of containers that all stay alive; each automatic collection on the way
    traverses all of them again, which was a third of a space's preparation. Nothing is freed
    late: what became garbage is collected at the next collection after the block. Nested use keeps
    the outermost block's state.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

# Kernel Tuner's read_cache turns these strings into error markers under "__error__".
_ERROR_MARKERS = {
    "ErrorConfig": kt_util.ErrorConfig,
    "InvalidConfig": kt_util.InvalidConfig,
    "CompilationFailedConfig": kt_util.CompilationFailedConfig,
    "RuntimeFailedConfig": kt_util.RuntimeFailedConfig,
}


@dataclass
class KernelTunerSpace:
    """A search space: tunable parameters, constraints, brute-force cache and objectives."""

    tune_params: dict[str, list]
    restrictions: list[str]
    cache: dict
    objectives: list[str]
    directions: list[str]
    source: str | None = None  # the file the restrictions were read from, for error messages
    # per-process memo (parsed entries, neighbour queries); treat the fields as read-only once used
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the restrictions (restricted parser) and that the objective list and directions agree.

        Kernel Tuner's Searchspace compiles restriction strings into Python code; every string
        that reaches it passes analysis.spaces.constraints first, wherever it was read from.
        """
        check_restrictions(self.restrictions, list(self.tune_params), self.source)
        if not self.objectives:
            raise ValueError("KernelTunerSpace needs at least one objective")
        if len(self.objectives) != len(self.directions):
            raise ValueError(f"{len(self.objectives)} objectives but {len(self.directions)} directions")
        bad = [d for d in self.directions if d not in DIRECTIONS]
        if bad:
            raise ValueError(f"directions must be one of {DIRECTIONS}, got {bad}")

    @property
    def higher_is_better(self) -> list[bool]:
        """Kernel Tuner's objective_higher_is_better list."""
        return [d == "max" for d in self.directions]

    def cache_entries(self) -> dict[str, dict]:
        """Cache entries keyed like Kernel Tuner, with `__error__` markers set; parsed once per object."""
        if "entries" not in self._memo:
            with gc_paused():
                self._memo["entries"] = prepare_entries(self.cache, list(self.tune_params), self.source)
        return self._memo["entries"]

    def neighbour_memo(self) -> dict:
        """Memo of neighbour look-ups (and the repair's scaled coordinates) shared by all simulated runs on this
        space in this process."""
        return self._memo.setdefault("neighbours", {})

    @classmethod
    def from_cache_file(
        cls,
        cache_path: str | Path,
        t1_path: str | Path | None,
        objectives: list[str],
        directions: list[str] | None = None,
    ) -> KernelTunerSpace:
        """Load a (.json or .json.gz) Kernel Tuner cache, constraints from a T1 file, default directions."""
        cache = load_cache_file(cache_path)
        restrictions = read_t1_restrictions(t1_path) if t1_path is not None else []
        if directions is None:
            directions = [default_direction(o) for o in objectives]
        tune_params = {k: list(cache["tune_params"][k]) for k in cache["tune_params_keys"]}
        return cls(tune_params, restrictions, cache, list(objectives), list(directions),
                   source=None if t1_path is None else str(t1_path))


def load_cache_file(path: str | Path) -> dict:
    """Parse a Kernel Tuner cache file, gzip-compressed or not, tolerating an unclosed file.

    What `json.loads` of the file's text gives, only faster: orjson parses it (the same
    values and types, floats correctly rounded, the last of repeated keys kept), except where it
    would differ or refuse: integers beyond 64 bits (which orjson turns into floats; any run of 19
    or more digits sends the file to json) and the NaN and Infinity that Kernel Tuner's json.dump
    writes (orjson rejects them, json reads them). A malformed file is an InputError naming it, with
    json's own message.
    """
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    if b"\r" in data:  # universal newlines, as a text-mode read
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    data = data.strip()
    if data and data[-3:] not in (b"}\n}", b"}}}"):
        # an unfinished cache, as Kernel Tuner leaves it while tuning
        data = data.rstrip(b",") + b"}\n}"
    with gc_paused():
        if data.translate(_DIGITS_AS_NINES).find(b"9" * 19) < 0:
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass  # NaN, Infinity or malformed: json reads the former and explains the latter
        try:
            return json.loads(data.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(path, f"not a readable Kernel Tuner cache (JSON): {error}") from None


# a byte table mapping every ASCII digit to b"9" and everything else to b" " (for finding long digit runs)
_DIGITS_AS_NINES = bytes(57 if 48 <= b <= 57 else 32 for b in range(256))


def check_restrictions(restrictions: Any, names: list[str], source: str | None) -> None:
    """Every restriction is a string the restricted parser accepts; else an InputError naming the source."""
    if not isinstance(restrictions, list):
        raise InputError(source, "restrictions must be a list of expression strings", field="restrictions")
    for i, r in enumerate(restrictions):
        if not isinstance(r, str):
            raise InputError(source, f"expected an expression string, found {type(r).__name__}",
                             field=f"restrictions[{i}]")
        try:
            cons.parse(r, names)
        except cons.ConstraintSyntaxError as exc:
            raise InputError(source, str(exc), field=f"restrictions[{i}]") from None


def read_t1_restrictions(path: str | Path) -> list[str]:
    """The constraint expressions of a T1 kernel description (read and checked by the space store)."""
    return read_definition(path).constraints


def default_direction(objective: str) -> str:
    """Kernel Tuner's default direction for a known objective name."""
    if objective not in kt_util.objective_default_map:
        raise ValueError(f"no default direction for objective {objective!r}; pass directions")
    return "max" if kt_util.objective_default_map[objective] else "min"


def prepare_entries(cache: dict, param_names: list[str], source: str | None = None) -> dict[str, dict]:
    """Copy the cache entries and mark failed ones the way Kernel Tuner's read_cache does.

    Every entry but an InvalidConfig one needs finite, non-negative evaluation times (the
    simulated clock adds them up; one NaN would make every later point of a run NaN): else an
    InputError naming `source`, the entry and the field.
    """
    keys = list(cache.get("tune_params_keys", param_names))
    if keys != param_names:
        raise ValueError(f"cache parameter order {keys} differs from tune_params order {param_names}")
    entries: dict[str, dict] = {}
    for key, entry in cache["cache"].items():
        entry = dict(entry)
        error: Any = None
        for value in entry.values():
            if isinstance(value, str) and value in _ERROR_MARKERS:
                error = _ERROR_MARKERS[value]()
        if error is not None:
            entry["__error__"] = error
            if not isinstance(error, kt_util.InvalidConfig):
                _check_times(entry, key, source)
        elif not _plain_times(entry.get("compile_time"), entry.get("verification_time"), entry.get("benchmark_time")):
            _check_times(entry, key, source)
        entries[key] = entry
    logger.debug("prepared %d cache entries", len(entries))
    return entries


EVALUATION_TIME_FIELDS = ("compile_time", "verification_time", "benchmark_time")
_LARGEST_FLOAT = sys.float_info.max


def _plain_times(*times: Any) -> bool:
    """All are finite non-negative floats (the common case, decided without `_check_times`)."""
    for value in times:
        if type(value) is not float or not 0.0 <= value <= _LARGEST_FLOAT:
            return False
    return True


def _check_times(entry: dict, key: str, source: str | None) -> None:
    for name in EVALUATION_TIME_FIELDS:
        value = entry.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            what = "lacks its evaluation time" if name not in entry else f"has evaluation time {value!r}"
            raise InputError(source, f"cache entry '{key}' {what}; it must be a finite, non-negative number",
                             field=f"cache.{key}.{name}")
