"""The baseline archive: every simulated run of a published study, compact, and restored exactly.

A run file (rule simulate, ca_run or lb_run) holds one row per proposal a strategy made, with the
configuration's parameter values, what the simulation looked up for it (objectives, validity, the
charged clock) and per-run facts (repetition, seed, stop reason). Nearly all of it follows from the
space and the order of the configurations, so an archive keeps:

- `config`: the configuration as one integer (`store_configs`): its row of the space's table on a first
  visit, its mixed-radix code over the space's declared values past the table's rows for a proposal
  outside the table, a back-reference for a repeat of a proposal outside the table, and for a repeat of a
  configuration of the table only whether that configuration is valid: which one it was is not kept (the
  archive's form of a run file, `archived_form`: its parameters and objectives are missing there);
- every column that is neither a parameter nor derived (repetition, seed, stop reason, ...), as it is;
  they are constant along a run and cost next to nothing in Parquet's run-length encoding;
- the columns that `DERIVED` rebuilds (step, first visit, budget used, validity, the space's objectives,
  the charged clock) are dropped only where the rebuilt column equals the run file's own bit for bit
  (checked when packing); elsewhere they are kept as they are.

One archive is one Parquet file: a row per proposal (`part` says which run file and, in a leaderboard
file, which space), and in the file's metadata (gzip-compressed JSON, `META_GZIP_KEY`) each run file's path
under results/, the job that made it, its Arrow schema, parts (space, fingerprint, derived and kept columns) and side
files (the constraint-aware study's `.budget.json`). `restore` writes run files back and `read_run_file` gives
one, each in the archive's form of the run file (`archived_form`: the run file's schema and values, but a repeat
of a configuration of the table without its parameters and objectives). docs/baselines.md documents it.
"""

from __future__ import annotations

import base64
import datetime
import functools
import gzip
import hashlib
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analysis.errors import ArchiveError
from analysis.io import atomic_path
from analysis.manifest import record_measured
from analysis.objectives import EVALUATION_TIME_COLUMNS
from analysis.spaces.space import STATUS_OK, Space

# 2: a repeat of a configuration of the table keeps only its validity (`archived_form`); 1 kept every repeat's
# configuration (a back-reference) and is still read
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
META_KEY = b"tsb_archive"  # format 1: the metadata as JSON
META_GZIP_KEY = b"tsb_archive.json.gz.b64"  # format 2: the JSON gzip-compressed, in base64 (a twentieth the size)
PARAM = "param."
OBJECTIVE = "objective."
# columns a run's rows are grouped by: a leaderboard file holds every space of an entry
RUN_KEYS = ("space", "repetition")


@dataclass
class SpaceCodes:
    """A space's configurations as mixed-radix codes over its declared parameter values."""

    names: list[str]
    values: list[list]
    radices: np.ndarray  # the place value of each parameter
    table_codes: np.ndarray  # the code of each row of the space's table
    fingerprint: str

    @classmethod
    def of(cls, space: Space) -> SpaceCodes:
        names = list(space.parameters)
        values = [list(space.parameters[n]) for n in names]
        sizes = [len(v) for v in values]
        if float(np.prod([float(s) for s in sizes])) >= 2**62:
            raise ArchiveError(space.origin or f"{space.device}/{space.kernel}",
                               "too many configurations for a 63-bit code", field="parameters")
        radices = np.ones(len(sizes), dtype=np.int64)
        for i in range(len(sizes) - 2, -1, -1):
            radices[i] = radices[i + 1] * sizes[i + 1]
        table_codes = _encode(space.table[names], names, values, radices, space.origin or "space")
        return cls(names, values, radices, table_codes, fingerprint(space))

    def encode(self, frame: pd.DataFrame, where: str) -> np.ndarray:
        """The code of each row of `frame` (its `param.<name>` columns)."""
        missing = [n for n in self.names if PARAM + n not in frame]
        if missing:
            raise ArchiveError(where, "no column for this parameter of the space", field=PARAM + missing[0])
        cols = frame[[PARAM + n for n in self.names]].set_axis(self.names, axis=1)
        return _encode(cols, self.names, self.values, self.radices, where)

    def decode(self, codes: np.ndarray) -> dict[str, np.ndarray]:
        """Each parameter's values of `codes`, as the space declares them (an object array each)."""
        out = {}
        rest = np.asarray(codes, dtype=np.int64)
        for name, values, radix in zip(self.names, self.values, self.radices):
            position, rest = np.divmod(rest, radix)
            lookup = np.empty(len(values), dtype=object)
            lookup[:] = values
            out[name] = lookup[position]
        return out

    @functools.cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.table_codes, kind="stable")
        return self.table_codes[order], order

    def space_rows(self, codes: np.ndarray) -> np.ndarray:
        """The space's table row of each code; -1 where the configuration is not in the table."""
        ordered, order = self._sorted
        if not len(ordered):
            return np.full(len(codes), -1, dtype=np.int64)
        at = np.clip(np.searchsorted(ordered, codes), 0, len(ordered) - 1)
        return np.where(ordered[at] == codes, order[at], -1).astype(np.int64)


def _encode(frame: pd.DataFrame, names: list[str], values: list[list], radices: np.ndarray, where: str
            ) -> np.ndarray:
    codes = np.zeros(len(frame), dtype=np.int64)
    for name, vals, radix in zip(names, values, radices):
        position = {v: i for i, v in enumerate(vals)}
        column = frame[name]
        distinct = pd.unique(column)
        missing = [v for v in distinct if v not in position]
        if missing:
            raise ArchiveError(where, f"value {missing[0]!r} is not among the space's values {vals}",
                               field=PARAM + name)
        mapping = {v: position[v] for v in distinct}
        codes += radix * column.map(mapping).to_numpy(dtype=np.int64)
    return codes


def fingerprint(space: Space) -> str:
    """A digest of what a run's columns follow from: the space's parameters and their values, constraints,
    objectives and table (values, times, status), not where it was read from."""
    digest = hashlib.sha256()
    meta = space.metadata()
    core = {k: meta[k] for k in ("kernel", "device", "parameters", "constraints", "objectives")}
    digest.update(json.dumps(core, sort_keys=True, default=str).encode())
    digest.update(pd.util.hash_pandas_object(space.table, index=False).to_numpy().tobytes())
    return digest.hexdigest()


# --- the stored form of the configurations -----------------------------------------------------------------
#
# A piece's configurations are codes (`Context.codes`): the mixed-radix code of a configuration (>= 0), or one
# of the negative codes below. `config` holds, per proposal, one of: the row of the space's table (a first visit
# of a configuration the space measured: 0 <= value < rows); rows + code (a first visit of a configuration
# outside the table, e.g. a constraint-unaware proposal); -1 / -2 (a repeat of a valid / an invalid configuration
# of the table, which one not kept); -(3 + r) (a repeat of the configuration outside the table first visited r
# distinct visits before the latest one of its run); null (a placeholder row of a run that did not run: every
# parameter null). Format 1 stored every repeat as -(1 + r).

PLACEHOLDER = -1  # a placeholder row of a run that did not run
REPEAT_VALID = -2  # a repeat of a valid configuration of the table; which one, the archive does not keep
REPEAT_INVALID = -3  # a repeat of an invalid configuration of the table (a failed compile or run); which one, ditto
NOT_KEPT = (REPEAT_VALID, REPEAT_INVALID)
_STORED_REPEAT = {REPEAT_VALID: -1, REPEAT_INVALID: -2}
_FIRST_BACK_REFERENCE = -3  # format 2: -(3 + r); format 1: -(1 + r)


def store_configs(codes: np.ndarray, runs: np.ndarray, rows: np.ndarray, table_rows: int) -> pa.Array:
    """The stored form of `codes` (a code, PLACEHOLDER or one of NOT_KEPT) of one space's rows; `rows`: their table
    rows."""
    placeholder = codes == PLACEHOLDER
    keyed = pd.DataFrame({"run": runs, "code": codes})
    first = ~keyed.duplicated().to_numpy() & (codes >= 0)
    visits = np.cumsum(first)  # first visits up to and including each row
    position = np.arange(len(codes))
    first_row = keyed.assign(pos=position).groupby(["run", "code"], sort=False)["pos"].transform("first").to_numpy()
    value = np.where(first, np.where(rows >= 0, rows, table_rows + codes),
                     _FIRST_BACK_REFERENCE - (visits - visits[first_row]))
    for code, stored in _STORED_REPEAT.items():
        value = np.where(codes == code, stored, value)
    return pa.array(value, pa.int64(), mask=placeholder)


def load_configs(stored: pa.Array, table_codes: np.ndarray, version: int = FORMAT_VERSION) -> np.ndarray:
    """The codes of `store_configs`' output (PLACEHOLDER for a placeholder row; NOT_KEPT codes in format 2)."""
    placeholder = stored.is_null().to_numpy(zero_copy_only=False)
    value = stored.fill_null(0).to_numpy()
    first = (value >= 0) & ~placeholder
    table_rows = len(table_codes)
    first_codes = np.where(value < table_rows, table_codes[np.clip(value, 0, max(table_rows - 1, 0))],
                           value - table_rows)[first]
    visits = np.cumsum(first)
    codes = np.empty(len(value), dtype=np.int64)
    codes[first] = first_codes
    repeat = ~first & ~placeholder
    if version >= 2:
        for code, kept in _STORED_REPEAT.items():
            codes[value == kept] = code
        repeat &= value <= _FIRST_BACK_REFERENCE
        offset = 2  # value = -(3 + r): visits + value + 2 = visits - (1 + r), the earlier one's ordinal
    else:
        offset = 0  # value = -(1 + r)
    codes[repeat] = first_codes[visits[repeat] + value[repeat] + offset]
    codes[placeholder] = PLACEHOLDER
    return codes


# --- derived columns ---------------------------------------------------------------------------------------


def _run_starts(frame: pd.DataFrame) -> np.ndarray:
    """Whether each row starts a run (a change of any `RUN_KEYS` column from the row before)."""
    start = np.zeros(len(frame), dtype=bool)
    if len(frame):
        start[0] = True
    for key in RUN_KEYS:
        if key in frame:
            col = frame[key].to_numpy()
            start[1:] |= col[1:] != col[:-1]
    return start


def _segment_cumsum(values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Running sum of `values` restarting at each run start, added left to right (numpy's cumsum is sequential)."""
    out = np.empty(len(values), dtype=values.dtype)
    bounds = np.r_[np.flatnonzero(start), len(values)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        out[a:b] = np.cumsum(values[a:b])
    return out


@dataclass
class Context:
    """What rebuilding a space's rows of a file needs: codes (-1: placeholder), run starts, space rows."""

    codes: np.ndarray
    start: np.ndarray
    rows: np.ndarray  # space row of each proposal, -1 outside the table
    space: Space

    @functools.cached_property
    def runs(self) -> np.ndarray:
        return np.cumsum(self.start) - 1

    @functools.cached_property
    def first(self) -> np.ndarray:
        keyed = pd.DataFrame({"run": self.runs, "code": self.codes})
        return ~keyed.duplicated().to_numpy() & (self.codes >= 0)


def _step(ctx: Context) -> np.ndarray:
    starts = np.flatnonzero(ctx.start)
    return np.arange(len(ctx.codes)) - starts[ctx.runs]


def _valid(ctx: Context) -> np.ndarray:
    status = ctx.space.table["status"].to_numpy()
    known = ctx.rows >= 0
    return (known & (status[np.where(known, ctx.rows, 0)] == STATUS_OK)) | (ctx.codes == REPEAT_VALID)


def _budget_used(ctx: Context) -> np.ndarray:
    return _segment_cumsum(ctx.first.astype(np.int64), ctx.start)


def _charged(ctx: Context) -> np.ndarray:
    """The simulated clock: each first visit of a configuration in the space charges its compile, verification
    and benchmark time (added in that order), a repeat or a proposal outside the space nothing."""
    table = ctx.space.table
    known = ctx.rows >= 0
    safe = np.where(known, ctx.rows, 0)
    parts = [table[c].to_numpy(dtype=float)[safe] for c in EVALUATION_TIME_COLUMNS.values()]
    cost = parts[0]
    for p in parts[1:]:
        cost = cost + p
    return _segment_cumsum(np.where(known & ctx.first, cost, 0.0), ctx.start)


def _objective(name: str) -> Callable[[Context], np.ndarray]:
    def rebuild(ctx: Context) -> np.ndarray:
        column = ctx.space.objective(name).column  # KeyError: not one of the space's objectives
        values = ctx.space.table[column].to_numpy(dtype=float)
        known = ctx.rows >= 0
        return np.where(known, values[np.where(known, ctx.rows, 0)], np.nan)
    return rebuild


DERIVED: dict[str, Callable[[Context], np.ndarray]] = {
    "step": _step,
    "first_visit": lambda ctx: ctx.first,
    "budget_used": _budget_used,
    "valid": _valid,
    "sim_time_ms": _charged,
}


def _rebuilder(column: str) -> Callable[[Context], np.ndarray] | None:
    if column in DERIVED:
        return DERIVED[column]
    if column.startswith(OBJECTIVE):
        return _objective(column[len(OBJECTIVE):])
    return None


# --- one run file ------------------------------------------------------------------------------------------

SpaceOf = Callable[[str], Space]  # space key ("device/kernel") -> the space


def space_key_of(relative: str) -> str | None:
    """The space of a run file from its path under results/ (None: a leaderboard file, spaces per row)."""
    parts = Path(relative).parts
    if parts and parts[0] == "runs" and len(parts) == 6:
        return f"{parts[1]}/{parts[2]}"
    if parts[:2] == ("constraint_aware", "runs") and len(parts) == 5:
        return f"{parts[2]}/{parts[3]}"
    if parts[:2] == ("leaderboard", "runs") and len(parts) == 3:
        return None
    raise ArchiveError(relative, "not a run file of rule simulate, ca_run or lb_run (by its path under results/)")


def _params(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if f.name.startswith(PARAM)]


def _same(ours: pa.Array, theirs: pa.Array) -> bool:
    """Equal nulls and values, NaN equal to NaN (Arrow's `equals` holds NaN unequal to itself)."""
    if ours.type != theirs.type or len(ours) != len(theirs):
        return False
    if not pa.types.is_floating(ours.type):
        return ours.equals(theirs)
    nulls = ours.is_null().to_numpy(zero_copy_only=False)
    if not np.array_equal(nulls, theirs.is_null().to_numpy(zero_copy_only=False)):
        return False
    a = ours.fill_null(0).to_numpy()
    b = theirs.fill_null(0).to_numpy()
    numbers = ~np.isnan(a)
    return bool(np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a[numbers]), np.signbit(b[numbers])))


def _context(table: pa.Table, codes: np.ndarray, space: Space, coder: SpaceCodes) -> Context:
    keys = pd.DataFrame({c: table.column(c).to_numpy() for c in RUN_KEYS if c in table.column_names},
                        index=range(table.num_rows))
    return Context(codes, _run_starts(keys), coder.space_rows(codes), space)


def _rebuild(column: str, ctx: Context, placeholder: np.ndarray) -> pa.Array | None:
    """A derived column of a piece; null on placeholder rows; None where the space lacks its source."""
    rebuild = _rebuilder(column)
    if rebuild is None:
        return None
    try:
        values = rebuild(ctx)
    except KeyError:
        return None
    # a NaN becomes null, as pandas' NaN does when a run file is written
    return pa.array(values, mask=placeholder if placeholder.any() else None, from_pandas=True)


@dataclass
class Piece:
    """A block of a run file's rows on one space, in the archive's form."""

    columns: pa.Table  # config and the kept columns
    entry: dict[str, Any]  # space, fingerprint, rows, derived, kept


def _not_kept(table: pa.Table, codes: np.ndarray, space: Space, coder: SpaceCodes) -> tuple[np.ndarray, Context]:
    """Which rows of a piece are repeats of a configuration of the space's table, and the piece's context with
    those rows' codes replaced by REPEAT_VALID / REPEAT_INVALID (and no table row)."""
    ctx = _context(table, codes, space, coder)
    repeat = ~ctx.first & (ctx.rows >= 0)
    return repeat, Context(np.where(repeat, np.where(_valid(ctx), REPEAT_VALID, REPEAT_INVALID), codes), ctx.start,
                           np.where(repeat, -1, ctx.rows), space)


def _without(table: pa.Table, rows: np.ndarray) -> pa.Table:
    """`table` with its parameter and objective columns null on `rows`."""
    if not rows.any():
        return table
    keep = pa.array(~rows)
    for i, f in enumerate(table.schema):
        if f.name.startswith((PARAM, OBJECTIVE)):
            column = table.column(i).combine_chunks()
            table = table.set_column(i, f, pc.if_else(keep, column, pa.nulls(len(column), f.type)))
    return table


def _codes(table: pa.Table, where: str, key: str, coder: SpaceCodes) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code (PLACEHOLDER where every parameter is null) and which rows are placeholders."""
    params = _params(table.schema)
    own = [PARAM + n for n in coder.names]
    foreign = [p for p in params if p not in own]
    for p in foreign:
        if table.column(p).null_count != table.num_rows:
            raise ArchiveError(where, f"values on space {key}, which has no such parameter", field=p)
    placeholder = (np.logical_and.reduce([table.column(p).is_null().to_numpy(zero_copy_only=False)
                                          for p in params]) if params else np.zeros(table.num_rows, dtype=bool))
    codes = np.full(table.num_rows, PLACEHOLDER, dtype=np.int64)
    if (~placeholder).any():
        real = table.filter(pa.array(~placeholder)).select([p for p in params if p in own]).to_pandas()
        codes[~placeholder] = coder.encode(real, f"{where} (space {key})")
    return codes, placeholder


def archived_form(table: pa.Table, relative: str, space_of: SpaceOf) -> pa.Table:
    """A run file's table (`relative`: its path under results/) as an archive gives it back: each repeat of a
    configuration of the space's table with its parameters and objectives missing (null), all else as it is."""
    key = space_key_of(relative)
    blocks = [(key, 0, table.num_rows)] if key is not None else space_blocks(table, relative)
    pieces = []
    for space_key, a, b in blocks:
        block = table.slice(a, b - a)
        space = space_of(space_key)
        coder = SpaceCodes.of(space)
        codes, _ = _codes(block, relative, space_key, coder)
        pieces.append(_without(block, _not_kept(block, codes, space, coder)[0]))
    return pa.concat_tables(pieces) if pieces else table


def pack_piece(table: pa.Table, where: str, key: str, space: Space, coder: SpaceCodes) -> Piece:
    """Encode the rows of `table` (all on space `key`, whole runs); ArchiveError where the encoded form would not
    give back `archived_form` of them exactly."""
    params = _params(table.schema)
    codes, placeholder = _codes(table, where, key, coder)
    repeat, ctx = _not_kept(table, codes, space, coder)
    table = _without(table, repeat)
    derived = [c for c in table.column_names
               if (rebuilt := _rebuild(c, ctx, placeholder)) is not None
               and _same(rebuilt.cast(table.schema.field(c).type), table.column(c).combine_chunks())]
    kept = [c for c in table.column_names if c not in derived and c not in params]
    stored = store_configs(ctx.codes, ctx.runs, ctx.rows, len(space.table))
    columns = pa.table({"config": stored, **{c: table.column(c) for c in kept}})
    piece = Piece(columns, {"space": key, "fingerprint": coder.fingerprint, "rows": table.num_rows,
                            "derived": derived, "kept": kept})
    restored = decode_piece(columns, piece.entry, table.schema, space, coder, FORMAT_VERSION)
    bad = [c for c in table.column_names
           if not _same(restored.column(c).combine_chunks(), table.column(c).combine_chunks())]
    if bad:
        raise ArchiveError(where, f"the archive's form would not restore column {bad[0]} of space {key} exactly")
    return piece


def decode_piece(columns: pa.Table, entry: Mapping[str, Any], schema: pa.Schema, space: Space,
                 coder: SpaceCodes, version: int) -> pa.Table:
    """A piece's rows as the run file held them in the archive's form (`schema`: the run file's; `version`: the
    archive's format)."""
    n = columns.num_rows
    kept = set(entry["kept"])
    stored = columns.column("config").combine_chunks()
    placeholder = stored.is_null().to_numpy(zero_copy_only=False)
    codes = load_configs(stored, coder.table_codes, version)
    ctx = _context(columns, codes, space, coder)
    configured = codes >= 0
    decoded = coder.decode(codes[configured])
    arrays = []
    for f in schema:
        if f.name in kept:
            arrays.append(columns.column(f.name).combine_chunks().cast(f.type))
        elif f.name.startswith(PARAM):
            values = np.full(n, None, dtype=object)
            if f.name[len(PARAM):] in decoded:
                values[configured] = decoded[f.name[len(PARAM):]]
            arrays.append(pa.array(values.tolist(), type=f.type, from_pandas=True))
        else:
            rebuilt = _rebuild(f.name, ctx, placeholder) if f.name in entry["derived"] else None
            if rebuilt is None:
                raise ArchiveError(entry["space"], f"column {f.name} is neither kept nor derivable", field="derived")
            arrays.append(rebuilt.cast(f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def space_blocks(table: pa.Table, where: str) -> list[tuple[str, int, int]]:
    """(space, first row, end row) of each block of a leaderboard run file (its `space` column); each space in one
    block."""
    spaces = table.column("space").to_numpy(zero_copy_only=False)
    cuts = np.r_[0, np.flatnonzero(spaces[1:] != spaces[:-1]) + 1, len(spaces)]
    blocks = [(str(spaces[a]), int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    names = [b[0] for b in blocks]
    if len(set(names)) != len(names):
        raise ArchiveError(where, "a space's rows are not in one block", field="space")
    return blocks


# --- an archive --------------------------------------------------------------------------------------------

STRING_TYPES = (pa.string(), pa.large_string())
COMPRESSION_LEVEL = 19
ROW_GROUP_ROWS = 1 << 21


def _storage_type(t: pa.DataType) -> pa.DataType:
    """How a kept column is stored: a string column as a dictionary (a run's constant strings cost nothing)."""
    return pa.dictionary(pa.int32(), pa.large_string()) if t in STRING_TYPES else t


def storage_schema(schemas: Iterable[tuple[str, pa.Schema]]) -> pa.Schema:
    """The archive's columns: part, config, and every non-parameter column of the run files (null where a part
    derives it); ArchiveError where two run files give one column two types."""
    fields: dict[str, pa.DataType] = {}
    where: dict[str, str] = {}
    for path, schema in schemas:
        for f in schema:
            if f.name.startswith(PARAM):
                continue
            t = _storage_type(f.type)
            known = fields.setdefault(f.name, t)
            if known != t:
                numeric = [x for x in (known, t) if pa.types.is_integer(x) or pa.types.is_floating(x)]
                if len(numeric) != 2:
                    raise ArchiveError(path, f"type {f.type}, where {where[f.name]} has {known}", field=f.name)
                # a column that is integer in one file and float in another (a placeholder's null made it float):
                # stored as float, checked to give each file's values back (`write_archive`)
                fields[f.name] = pa.float64()
            where.setdefault(f.name, path)
    return pa.schema([pa.field("part", pa.int32()), pa.field("config", pa.int64()),
                      *(pa.field(n, t) for n, t in fields.items())])


def _read_blocks(path: Path, key: str | None, where: str) -> Iterable[tuple[str, pa.Table]]:
    """The run file's blocks (one per space), each read alone: a leaderboard file holds millions of rows."""
    if key is not None:
        yield key, pq.read_table(path)
        return
    for space, a, b in space_blocks(pq.read_table(path, columns=["space"]), where):
        block = pq.read_table(path, filters=[("space", "=", space)])
        if block.num_rows != b - a:
            raise ArchiveError(where, f"space {space}: {block.num_rows} rows read, {b - a} in its block", field="space")
        yield space, block


def write_archive(runs: Iterable[tuple[Path, str, Mapping[str, Any]]], space_of: SpaceOf, out: str | Path,
                  study: str, sidecar_of: Callable[[Path], Mapping[str, str]] | None = None,
                  provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Pack run files (path, path under results/, the job that made it) into one archive at `out`; returns its
    metadata.

    `sidecar_of(path)`: side files to keep with a run file ({path under results/: text})."""
    runs = list(runs)
    schema = storage_schema((str(p), pq.read_schema(p)) for p, _, _ in runs)
    coders: dict[str, SpaceCodes] = {}
    files: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []  # each piece's entry
    schemas: dict[str, int] = {}  # a run file's serialised schema -> its number
    pending: list[pa.Table] = []
    with atomic_path(out) as tmp:
        # statistics on `part` only: a reader of one run file skips the row groups of the others
        with pq.ParquetWriter(tmp, schema, compression="zstd", compression_level=COMPRESSION_LEVEL,
                              write_statistics=["part"]) as writer:
            for path, relative, job in runs:
                file_schema = base64.b64encode(pq.read_schema(path).serialize().to_pybytes()).decode()
                ids = []
                for key, block in _read_blocks(path, space_key_of(relative), str(path)):
                    if key not in coders:
                        coders[key] = SpaceCodes.of(space_of(key))
                    piece = pack_piece(block, str(path), key, space_of(key), coders[key])
                    ids.append(len(parts))
                    parts.append(piece.entry)
                    stored = _to_storage(piece.columns, len(parts) - 1, schema)
                    for c in piece.entry["kept"]:
                        back = stored.column(c).combine_chunks().cast(block.schema.field(c).type)
                        if not _same(back, piece.columns.column(c).combine_chunks()):
                            raise ArchiveError(path, f"values that the archive's type {schema.field(c).type} "
                                               "would change", field=c)
                    pending.append(stored)
                    if sum(t.num_rows for t in pending) >= ROW_GROUP_ROWS:
                        writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
                        pending = []
                files.append({"path": relative, "job": _normal(job),
                              "schema": schemas.setdefault(file_schema, len(schemas)),
                              "parts": ids, "sidecars": dict(sidecar_of(path)) if sidecar_of else {}})
            if pending:
                writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
            meta = {"format_version": FORMAT_VERSION, "study": study, "provenance": dict(provenance or {}),
                    "files": files, "parts": parts,
                    "schemas": list(schemas), "spaces": {k: c.fingerprint for k, c in sorted(coders.items())}}
            writer.add_key_value_metadata({META_GZIP_KEY: encode_meta(meta)})
    return meta


def _to_storage(columns: pa.Table, part: int, schema: pa.Schema) -> pa.Table:
    n = columns.num_rows
    arrays = []
    for f in schema:
        if f.name == "part":
            arrays.append(pa.array(np.full(n, part, dtype=np.int32)))
        elif f.name in columns.column_names:
            arrays.append(columns.column(f.name).combine_chunks().cast(f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def encode_meta(meta: Mapping[str, Any]) -> bytes:
    """An archive's metadata as its Parquet file stores it (key META_GZIP_KEY): JSON with sorted keys, gzip without a
    timestamp (the same metadata gives the same bytes), base64."""
    return base64.b64encode(gzip.compress(json.dumps(meta, sort_keys=True).encode(), compresslevel=9, mtime=0))


def read_meta(path: str | Path) -> dict[str, Any]:
    """An archive's metadata; ArchiveError naming the file where it is not an archive of this format."""
    try:
        kv = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as exc:
        raise ArchiveError(path, f"not a Parquet file ({exc})") from None
    if META_GZIP_KEY in kv:
        meta = json.loads(gzip.decompress(base64.b64decode(kv[META_GZIP_KEY])))
    elif META_KEY in kv:
        meta = json.loads(kv[META_KEY])
    else:
        raise ArchiveError(path, "no archive metadata", field=META_GZIP_KEY.decode())
    if meta.get("format_version") not in READ_VERSIONS:
        raise ArchiveError(path, f"unsupported format version {meta.get('format_version')}", field="format_version")
    return meta


class _Decoder:
    """Decodes an archive's parts, each space's codes and fingerprint check made once."""

    def __init__(self, archive: str | Path, meta: Mapping[str, Any], space_of: SpaceOf):
        self.archive = archive
        self.meta = meta
        self.space_of = space_of
        self.coders: dict[str, SpaceCodes] = {}

    def schema(self, entry: Mapping[str, Any]) -> pa.Schema:
        return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(self.meta["schemas"][entry["schema"]])))

    def coder(self, key: str, entry: Mapping[str, Any], recorded: str) -> SpaceCodes:
        if key not in self.coders:
            self.coders[key] = SpaceCodes.of(self.space_of(key))
        if self.coders[key].fingerprint != recorded:
            space = self.space_of(key)
            raise ArchiveError(space.origin or key, f"not the space the archived runs of {entry['path']} were made "
                               "on (its fingerprint differs)", field="fingerprint")
        return self.coders[key]

    def file(self, entry: Mapping[str, Any], parts: Mapping[int, pa.Table]) -> pa.Table:
        """A run file from its parts' stored rows (part id -> rows)."""
        schema = self.schema(entry)
        tables = []
        for pid in entry["parts"]:
            part = self.meta["parts"][pid]
            coder = self.coder(part["space"], entry, part["fingerprint"])
            columns = parts.get(pid, None)
            rows = 0 if columns is None else columns.num_rows
            if rows != part["rows"]:
                raise ArchiveError(self.archive, f"{rows} rows of {entry['path']} on {part['space']}, "
                                   f"{part['rows']} recorded", field="rows")
            tables.append(decode_piece(columns, part, schema, self.space_of(part["space"]), coder,
                                       self.meta["format_version"]))
        return pa.concat_tables(tables) if tables else schema.empty_table()


def read_run_file(archive: str | Path, meta: Mapping[str, Any], entry: Mapping[str, Any], space_of: SpaceOf
                  ) -> pa.Table:
    """One run file of an archive, in its archived form (`archived_form`); ArchiveError where a space is not the one
    the runs were made on."""
    stored = pq.read_table(archive, filters=[("part", "in", entry["parts"])])
    part_of = stored.column("part").to_numpy()
    return _Decoder(archive, meta, space_of).file(entry, {pid: stored.filter(pa.array(part_of == pid))
                                                           for pid in entry["parts"]})


def _stored_parts(archive: str | Path, wanted: set[int]) -> Iterable[tuple[int, pa.Table]]:
    """(part id, its stored rows) of the `wanted` parts, in part order, reading each row group at most once and
    skipping those without a wanted part (the parts are stored in order, each part's rows together)."""
    reader = pq.ParquetFile(archive)
    pending: dict[int, list[pa.Table]] = {}
    for g in range(reader.num_row_groups):
        stats = reader.metadata.row_group(g).column(0).statistics
        if stats is not None and stats.has_min_max and not any(stats.min <= w <= stats.max for w in wanted):
            continue
        group = reader.read_row_group(g)
        part_of = group.column("part").to_numpy()
        cuts = np.r_[0, np.flatnonzero(np.diff(part_of)) + 1, len(part_of)]
        for a, b in zip(cuts[:-1], cuts[1:]):
            pid = int(part_of[a])
            if pid in wanted:
                pending.setdefault(pid, []).append(group.slice(a, b - a))
        last = int(part_of[-1]) if len(part_of) else -1
        for pid in sorted(p for p in pending if p < last):
            yield pid, pa.concat_tables(pending.pop(pid))
    for pid in sorted(pending):
        yield pid, pa.concat_tables(pending.pop(pid))


def restore(archive: str | Path, results: str | Path, space_of: SpaceOf,
            select: Callable[[str], bool] = lambda relative: True) -> list[Path]:
    """Write the archive's run files (those `select` keeps) and their side files under `results`; returns the
    run files written. Each is written atomically, so an interrupted restore leaves no half-written file; the
    archive is read once, row group by row group."""
    meta = read_meta(archive)
    entries = [e for e in meta["files"] if select(e["path"])]
    owner = {pid: i for i, e in enumerate(entries) for pid in e["parts"]}
    remaining = {i: len(e["parts"]) for i, e in enumerate(entries)}
    collected: dict[int, dict[int, pa.Table]] = {}
    decoder = _Decoder(archive, meta, space_of)
    written = []

    def write(i: int) -> None:
        entry = entries[i]
        table = decoder.file(entry, collected.pop(i, {}))
        target = Path(results) / entry["path"]
        with atomic_path(target) as tmp:
            pq.write_table(table, tmp, compression="zstd")
        for relative, text in entry["sidecars"].items():
            with atomic_path(Path(results) / relative) as tmp:
                tmp.write_text(text)
        written.append(target)

    for pid, rows in _stored_parts(archive, set(owner)):
        i = owner[pid]
        collected.setdefault(i, {})[pid] = rows
        remaining[i] -= 1
        if remaining[i] == 0:
            write(i)
    for i in [i for i, n in remaining.items() if n > 0]:
        write(i)  # a part the archive lacks: the row count check names it
    return written


def _normal(obj: Any) -> Any:
    """A job description as JSON reads it back (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def file_digest(path: str | Path) -> str:
    """sha256 of a file (a user strategy's: its runs are restored only while the file is unchanged)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def restorable(archive: str | Path, wanted: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The run files of `wanted` (path under results/ -> its job) that the archive holds, made by the same job."""
    held = {entry["path"]: entry["job"] for entry in read_meta(archive)["files"]}
    return [rel for rel, job in wanted.items() if rel in held and held[rel] == _normal(job)]


def run_file_spaces(relatives: Iterable[str], leaderboard_spaces: Sequence[str]) -> list[str]:
    """The spaces ("device/kernel") the run files' rows lie on (a leaderboard file: every leaderboard space)."""
    keys: list[str] = []
    for rel in relatives:
        key = space_key_of(rel)
        keys += list(leaderboard_spaces) if key is None else [key]
    return list(dict.fromkeys(keys))


def results_space_of(results: str | Path) -> SpaceOf:
    """Spaces as rule import_space writes them under `results` (cached: a study's files share a few spaces)."""
    cache: dict[str, Space] = {}

    def space_of(key: str) -> Space:
        if key not in cache:
            base = Path(results) / "spaces" / key
            if not (base / "space.parquet").is_file():
                raise ArchiveError(base / "space.parquet", "no such space: import it first (rule import_space)")
            cache[key] = Space.load(base / "space.parquet", base / "space.json")
        return cache[key]
    return space_of


def budget_sidecar(results: str | Path) -> Callable[[Path], dict[str, str]]:
    """A constraint-aware run file's side file: the `.budget.json` rule ca_run writes beside it."""
    def sidecar_of(path: Path) -> dict[str, str]:
        side = Path(path).with_suffix(".budget.json")
        return {str(side.relative_to(results)): side.read_text()} if side.is_file() else {}
    return sidecar_of


def write_studies(jobs: Mapping[str, tuple[str, Mapping[str, Any]]], results: str | Path, out_dir: str | Path,
                  provenance: Mapping[str, Any], data_dir: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """One archive per study (`jobs`: path under results/ -> (study, job)) in `out_dir`; returns their metadata.

    Where `out_dir` lies under `data_dir` (the repository's data/), its files' manifest rows are refreshed."""
    space_of = results_space_of(results)
    metas = {}
    for study in dict.fromkeys(s for s, _ in jobs.values()):
        runs = [(Path(results) / rel, rel, job) for rel, (s, job) in jobs.items() if s == study]
        metas[study] = write_archive(runs, space_of, Path(out_dir) / f"{study}.parquet", study,
                                     budget_sidecar(results), provenance)
    if data_dir is not None:
        record_measured(data_dir, out_dir, source=f"packed by this suite from the study's runs (rule archive, commit "
                        f"{provenance.get('commit') or 'unknown'})")
    return metas


def restore_files(archives: Sequence[str | Path], results: str | Path, relatives: Sequence[str]) -> list[Path]:
    """Restore the run files `relatives` (paths under results/) from whichever of `archives` holds each; ArchiveError
    naming a file none holds."""
    wanted = set(relatives)
    space_of = results_space_of(results)
    written = []
    for path in archives:
        if Path(path).is_file():
            written += restore(path, results, space_of, select=lambda rel: rel in wanted)
    missing = wanted - {str(Path(p).relative_to(results)) for p in written}
    if missing:
        raise ArchiveError(sorted(missing)[0], "in none of the archives " + ", ".join(map(str, archives)))
    return written


def repack(old: str | Path, out: str | Path, results: str | Path, provenance: Mapping[str, Any]) -> dict[str, Any]:
    """Pack an archive (of any format this module reads) again in this format at `out`; returns its metadata.

    Each run file is restored under `results` (which holds the spaces), packed with the job the old archive
    records for it and removed again; ArchiveError, before anything is written, where one is there already.
    `provenance` (where the new archive was packed) gains the old one's as `repacked_from`."""
    meta = read_meta(old)
    present = [e["path"] for e in meta["files"] if (Path(results) / e["path"]).exists()]
    if present:
        raise ArchiveError(Path(results) / present[0], "would be overwritten: repack restores into a results folder "
                           "without run files")
    space_of = results_space_of(results)
    restore(old, results, space_of)
    runs = [(Path(results) / e["path"], e["path"], e["job"]) for e in meta["files"]]
    try:
        return write_archive(runs, space_of, out, meta["study"], budget_sidecar(results),
                             {**provenance, "repacked_from": meta["provenance"]})
    finally:
        for e in meta["files"]:
            for relative in [e["path"], *e["sidecars"]]:
                (Path(results) / relative).unlink(missing_ok=True)


def provenance(repository: str | Path) -> dict[str, Any]:
    """Where an archive was packed: the repository's commit (and whether its tree had changes) and the date."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(repository), *args], capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "packed": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")}
