"""The bundle a lent GPU machine needs: what it lacks for `gpu-lease`, installable offline, under 64 MiB.

    python -m gpuvisit gpu-bundle --out BUNDLE                # here, with PyPI
    bash BUNDLE/install.sh                                     # there, offline
    . BUNDLE/env.sh && python3 -m gpuvisit gpu-lease --deadline-min 25 --out OUT

The GPU machine has Python 3.12, NumPy, CuPy, the CUDA toolkit (nvcc) and no network. The
bundle holds:

* `wheels/`: Kernel Tuner 1.5.0 and what the lease imports of its dependencies and of the
  project's, as wheels for CPython 3.12 on manylinux x86_64 (pip download, binary only), each
  at the version this project pins (pyproject.toml) or has installed, found by following every
  wheel's Requires-Dist (markers evaluated for the target) from ROOTS. Left out: what the GPU
  machine has (PRESENT) and what the lease never imports (EXCLUDED, each with the reason; Kernel
  Tuner imports them only in other strategies or for multi-objective results): SciPy,
  scikit-learn and pymoo with its plotting stack, the bulk of the wheels otherwise.
* `project.tar.gz`: the project's files the lease reads (analysis/, gpuvisit/, workflow/kernels/, the
  benchmark report the plan quotes, pyproject.toml), unpacked to `src/` by the installer.
* `install.sh`: `pip install --no-index --no-deps --target site wheels/*.whl` (or, without pip,
  unpacking the wheels, which is all a pure install of them does), the project into `src/`,
  `env.sh` setting PYTHONPATH, then `check.py`: imports everything the lease imports with the
  EXCLUDED packages blocked, and checks NumPy >= 2 and that CuPy imports.
* `visit.sh OUT MINUTES [PACKS...]`: a whole visit as one command (install, `gpu-lease` with
  the minutes left after the install, resuming PACKS, or the bundle's own `packs/` where none are
  given), its output in `OUT/visit.log`, the packs in `OUT/packs/`, and the work folder's shards in
  `OUT/work.tar.gz` where the lease packed nothing.
* `packs/` (with `--packs DIR`): the published visits' packs, each under its path in DIR.
* `manifest.json`: every file with its size and sha256, the resolution (who required what),
  the target, and the total.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from email.parser import Parser
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.tags import compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

from analysis.errors import InputError
from analysis.sweep.spec import ROOT
from gpuvisit.cache import LeaseError
from gpuvisit.pack import read_pack

LIMIT = 64 * 2**20
ROOTS = ("kernel_tuner", "PyYAML", "ml_dtypes", "pandas", "nvidia-ml-py")
PRESENT = {"numpy": "on the GPU machine (CuPy is built against it); Kernel Tuner needs >= 2.0 (checked by check.py)",
           "cupy": "on the GPU machine", "cupy-cuda12x": "on the GPU machine", "cupy-cuda13x": "on the GPU machine"}
EXCLUDED = {
    "scipy": "Kernel Tuner imports it only in other strategies (dual annealing, minimize, basinhopping, Bayesian "
             "optimisation) and latin hypercube sampling; the lease's brute force does not",
    "scikit-learn": "Kernel Tuner's Bayesian optimisation strategy only",
    "pymoo": "Kernel Tuner's pymoo strategies and multi-objective results only (the lease has one objective)",
}
NVML_VERSION = "13.615.71"  # nvidia-ml-py (pynvml) for Kernel Tuner's NVML observer; the project does not install it
PROJECT_PATHS = ("analysis", "gpuvisit", "workflow/kernels", "pyproject.toml",
                 "benchmarks/reports/bench_gpu_lease.json", "benchmarks/bench_gpu_lease.py")
DEFAULT_PLATFORMS = ("manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64", "linux_x86_64")


class BundleError(InputError):
    """The bundle cannot be built as asked."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_pins(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """name -> version of the project's `name==version` dependencies."""
    text = pyproject.read_text()
    return {canonical(m.group(1)): m.group(2) for m in re.finditer(r'"([A-Za-z0-9_.\-]+)==([^"\s;]+)"', text)}


def pinned_version(name: str, pins: dict[str, str]) -> str | None:
    """The version to bundle: the project's pin, else the installed one, else None (pip picks)."""
    if canonical(name) in pins:
        return pins[canonical(name)]
    if canonical(name) == "nvidia-ml-py":
        return NVML_VERSION
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def marker_environment(python_version: str) -> dict[str, str]:
    return {"python_version": python_version, "python_full_version": f"{python_version}.0", "os_name": "posix",
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
            "platform_python_implementation": "CPython", "implementation_name": "cpython", "extra": ""}


def wheel_metadata(path: Path) -> tuple[str, str, list[str]]:
    """(name, version, Requires-Dist lines) of a wheel."""
    with zipfile.ZipFile(path) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        msg = Parser().parsestr(z.read(meta).decode())
    return msg["Name"], msg["Version"], msg.get_all("Requires-Dist") or []


def _download(requirements: Sequence[str], dest: Path, python_version: str, platforms: Sequence[str]) -> None:
    abi = "cp" + python_version.replace(".", "")
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
           "--only-binary=:all:", "--python-version", python_version, "--implementation", "cp",
           "--abi", abi, "--abi", "abi3", "--abi", "none", *[x for p in platforms for x in ("--platform", p)],
           "--dest", str(dest), *requirements]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BundleError(None, f"pip download {' '.join(requirements)} failed:\n{proc.stderr[-3000:]}")


def resolve(dest: Path, python_version: str = "3.12", platforms: Sequence[str] | None = None,
            roots: Iterable[str] = ROOTS) -> dict[str, dict[str, Any]]:
    """Download ROOTS and everything their wheels require (less PRESENT and EXCLUDED) into `dest`.

    Returns canonical name -> {version, wheel, required_by, requirement}; PRESENT and EXCLUDED
    requirements are recorded with `left_out` and the reason.
    """
    platforms = list(platforms or DEFAULT_PLATFORMS)
    env = marker_environment(python_version)
    pins = project_pins()
    dest.mkdir(parents=True, exist_ok=True)
    found: dict[str, dict[str, Any]] = {}
    queue: list[tuple[str, str, str]] = [(r, "", "") for r in roots]  # (name, required by, requirement text)
    while queue:
        todo: dict[str, tuple[str, str, str]] = {}
        for name, by, text in queue:
            c = canonical(name)
            if c in PRESENT or c in EXCLUDED:
                rec = found.setdefault(c, {"left_out": PRESENT.get(c) or EXCLUDED[c], "required_by": []})
                rec["required_by"].append(f"{by} ({text})" if by else "root")
                continue
            if c in found:
                found[c]["required_by"].append(f"{by} ({text})" if by else "root")
                continue
            if c not in todo:
                todo[c] = (name, by, text)
        queue = []
        if not todo:
            break
        before = set(dest.glob("*.whl"))
        reqs = []
        for name, _, text in todo.values():
            version = pinned_version(name, pins)
            if version is not None and text:
                spec = Requirement(text).specifier
                if spec and not spec.contains(version, prereleases=True):
                    version = None  # the installed version does not satisfy this requirement: let pip choose
            reqs.append(f"{name}=={version}" if version else (Requirement(text).name + str(Requirement(text).specifier)
                                                               if text else name))
        _download(reqs, dest, python_version, platforms)
        wheels = {canonical(wheel_metadata(w)[0]): w for w in dest.glob("*.whl")}
        for c, (name, by, text) in todo.items():
            if c not in wheels:
                raise BundleError(None, f"pip download brought no wheel of {name} (new: "
                                        f"{sorted(p.name for p in set(dest.glob('*.whl')) - before)})")
            w = wheels[c]
            _, version, requires = wheel_metadata(w)
            found[c] = {"version": version, "wheel": w.name, "required_by": [f"{by} ({text})" if by else "root"]}
            for line in requires:
                r = Requirement(line)
                if r.marker is not None and not r.marker.evaluate(env):
                    continue
                queue.append((r.name, f"{c} {version}", line))
    return found


def project_files(root: Path = ROOT, paths: Sequence[str] = PROJECT_PATHS) -> list[str]:
    """The project's files under `paths`: git's tracked and untracked-not-ignored files that exist."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-co", "--exclude-standard", "--", *paths],
                             capture_output=True, text=True, check=True).stdout
        names = sorted({n for n in out.split("\0") if n})
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file but caches
        names = sorted(str(p.relative_to(root)) for base in paths for p in
                       ([root / base] if (root / base).is_file() else (root / base).rglob("*")) if p.is_file())
    return [n for n in names if (root / n).is_file() and "__pycache__" not in n and not n.endswith(".pyc")]


def project_tarball(dest: Path, root: Path = ROOT) -> list[str]:
    files = project_files(root)
    with tarfile.open(dest, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in files:
            info = tar.gettarinfo(str(root / name), arcname=name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with open(root / name, "rb") as f:
                tar.addfile(info, f)
    return files


INSTALL_SH = r"""#!/usr/bin/env bash
# Offline install of the GPU lease bundle (no network needed): wheels into ./site, the project into ./src.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
"$PY" - <<'EOF'
import sys
want = tuple(int(x) for x in "@PYTHON_VERSION@".split("."))
if sys.version_info[:2] != want:
    print(f"warning: the bundle's wheels are for Python @PYTHON_VERSION@, this is {sys.version.split()[0]}",
          file=sys.stderr)
EOF
rm -rf "$HERE/site" "$HERE/src"
mkdir -p "$HERE/site" "$HERE/src"
if "$PY" -m pip --version >/dev/null 2>&1; then
  "$PY" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --no-compile \
    --target "$HERE/site" "$HERE"/wheels/*.whl
else
  "$PY" "$HERE/unpack_wheels.py" "$HERE/site" "$HERE"/wheels/*.whl
fi
tar -xzf "$HERE/project.tar.gz" -C "$HERE/src"
cat > "$HERE/env.sh" <<EOF
export PYTHONPATH="$HERE/src:$HERE/site\${PYTHONPATH:+:\$PYTHONPATH}"
cd "$HERE/src"
EOF
PYTHONPATH="$HERE/src:$HERE/site${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$HERE/check.py" "$HERE/site"
echo "installed; now: . $HERE/env.sh && $PY -m gpuvisit gpu-lease --deadline-min 25 --out OUT --resume PACKS"
"""

VISIT_SH = r"""#!/usr/bin/env bash
# One visit of a lent GPU machine as one command: install the bundle offline, sweep until the
# deadline, and leave in OUT everything that must come back.
#   usage: BUNDLE/visit.sh OUT MINUTES [PACKS...]
#   OUT      the folder that comes back: packs/ (the lease's pack files) and visit.log; work.tar.gz
#            (the work folder's shard caches and log) only where the lease wrote no pack
#   MINUTES  minutes from now until everything, install and packing included, must be done
#   PACKS    earlier visits' pack files or folders of them, to resume from (default: the bundle's
#            packs/ folder, where `gpu-bundle --packs` put the published packs)
# Environment: PYTHON (default python3), TSB_LEASE_WORK (the work folder), TSB_LEASE_ARGS (more options)
# Exit status: the lease's (0: it packed what it measured).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 2 ]; then echo "usage: $0 OUT MINUTES [PACKS...]" >&2; exit 2; fi
T0=$(date +%s)
mkdir -p "$1/packs"
OUT="$(cd "$1" && pwd)"
MINUTES="$2"
shift 2
RESUME=()
for p in "$@"; do RESUME+=("$(realpath "$p")"); done
[ ${#RESUME[@]} -eq 0 ] && [ -d "$HERE/packs" ] && RESUME=("$HERE/packs")
PY="${PYTHON:-python3}"
WORK="${TSB_LEASE_WORK:-${TMPDIR:-/tmp}/tsb-gpu-lease-visit}"
export PYTHONUNBUFFERED=1

visit() {
  echo "visit: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $MINUTES minutes, work folder $WORK"
  nvidia-smi || echo "visit: nvidia-smi did not answer"
  bash "$HERE/install.sh" || { echo "visit: the bundle did not install"; return 3; }
  . "$HERE/env.sh"
  local left
  left=$("$PY" -c "import sys, time; print(f'{float(sys.argv[1]) - (time.time() - int(sys.argv[2])) / 60:.2f}')" \
         "$MINUTES" "$T0")
  echo "visit: $left minutes left for the lease"
  local args=(--deadline-min "$left" --out "$OUT/packs" --work "$WORK")
  for p in "${RESUME[@]}"; do
    echo "visit: resuming from $p ($(find "$p" -name '*.tar' 2>/dev/null | wc -l) pack files)"
  done
  [ ${#RESUME[@]} -gt 0 ] && args+=(--resume "${RESUME[@]}")
  # TSB_LEASE_ARGS: more gpu-lease options (e.g. "--reserve-s 20 --kernels kmeans")
  # shellcheck disable=SC2206
  [ -n "${TSB_LEASE_ARGS:-}" ] && args+=(${TSB_LEASE_ARGS})
  # the lease stops itself before its deadline; this only ends one that does not (90 s later)
  timeout -k 10 "$("$PY" -c "import sys; print(int(float(sys.argv[1]) * 60 + 90))" "$left")" \
    "$PY" -m gpuvisit gpu-lease "${args[@]}"
  local rc=$?
  if ! compgen -G "$OUT/packs/*.tar" >/dev/null; then
    echo "visit: the lease wrote no pack (exit $rc); bringing back its work folder's shards and log"
    [ -d "$WORK" ] && tar -czf "$OUT/work.tar.gz" -C "$WORK" --exclude=./modules --exclude=./refs \
      --exclude=./scratch . || echo "visit: no work folder"
  fi
  echo "visit: done after $(( $(date +%s) - T0 )) s, exit $rc"
  return $rc
}

visit 2>&1 | tee -a "$OUT/visit.log"
exit "${PIPESTATUS[0]}"
"""

UNPACK_PY = '''"""Install wheels without pip: a wheel is a zip of the import tree (plus *.data/purelib|platlib)."""
import shutil, sys, zipfile
from pathlib import Path

site = Path(sys.argv[1])
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    for data in site.glob("*.data"):
        for part in ("purelib", "platlib"):
            for item in (data / part).glob("*") if (data / part).is_dir() else []:
                shutil.move(str(item), str(site / item.name))
        shutil.rmtree(data)
'''

CHECK_PY = '''"""Import what the GPU lease imports, with the packages the bundle leaves out blocked; report versions."""
import importlib, importlib.abc, json, sys
from pathlib import Path

BLOCKED = @BLOCKED@
site = Path(sys.argv[1]).resolve()


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is left out of the bundle and must not be needed")
        return None


sys.meta_path.insert(0, Block())
import numpy
if int(numpy.__version__.split(".")[0]) < 2:
    sys.exit(f"NumPy {numpy.__version__} is too old: Kernel Tuner 1.5.0 needs NumPy >= 2")
modules = ["kernel_tuner", "kernel_tuner.interface", "kernel_tuner.core", "kernel_tuner.backends.cupy",
           "kernel_tuner.observers.nvml", "kernel_tuner.strategies.brute_force", "kernel_tuner.runners.sequential",
           "kernel_tuner.searchspace", "kernel_tuner.accuracy", "pynvml", "yaml", "ml_dtypes", "pandas",
           "analysis.cli", "gpuvisit.cli", "gpuvisit.lease", "gpuvisit.merge", "gpuvisit.cuda_modules",
           "analysis.sweep.device_metrics", "analysis.sweep.shard", "analysis.sweep.merge"]
for m in modules:
    importlib.import_module(m)
import kernel_tuner
if not Path(kernel_tuner.__file__).resolve().is_relative_to(site):
    sys.exit(f"kernel_tuner comes from {kernel_tuner.__file__}, not from the bundle's {site}")
from kernel_tuner.searchspace import Searchspace
space = Searchspace({"block_size_x": [32, 64], "T": ["half", "float"]}, [lambda p: p["block_size_x"] > 32], 1024)
assert space.size == 2, space.size
try:
    import cupy
    cupy_version = cupy.__version__
except Exception as exc:  # the lease needs it; --plan and --compile-only do not
    cupy_version = f"not importable ({type(exc).__name__}: {exc})"
print(json.dumps({"ok": True, "python": sys.version.split()[0], "numpy": numpy.__version__,
                  "kernel_tuner": getattr(kernel_tuner, "__version__", "?"), "cupy": cupy_version}))
'''


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_packs(packs: str | Path, dest: Path) -> list[str]:
    """Copy every lease pack (`*.tar`) under `packs` into `dest`, each under its path relative to `packs`
    (two runs of one visit write packs of the same name, in folders of their own); a file that is not a
    lease pack is refused, naming it. Returns the copied paths, relative to `dest`."""
    packs = Path(packs)
    if not packs.is_dir():
        raise BundleError(packs, "is not a folder of lease packs", field="--packs")
    found = sorted(packs.rglob("*.tar"))
    if not found:
        raise BundleError(packs, "holds no lease pack (*.tar)", field="--packs")
    out = []
    for f in found:
        try:
            read_pack(f)
        except LeaseError as exc:
            raise BundleError(f, f"is not a lease pack: {exc}", field="--packs") from None
        rel = f.relative_to(packs)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest / rel)
        out.append(str(rel))
    return out


def build(out: str | Path, *, python_version: str = "3.12", platforms: Sequence[str] | None = None,
          wheel_cache: str | Path | None = None, limit: int = LIMIT, packs: str | Path | None = None
          ) -> dict[str, Any]:
    """Build the bundle in `out` (replacing what is there); returns the manifest.

    `wheel_cache`: a folder of already downloaded wheels to take from (tests); pip download fills it.
    `packs`: a folder of earlier visits' packs (e.g. data/sweeps/cuda/<gpu>/packs) to carry in `packs/`,
    which visit.sh resumes from when it is given none.
    """
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "wheels").mkdir(parents=True)
    cache = Path(wheel_cache) if wheel_cache else Path(tempfile.mkdtemp(prefix="tsb-bundle-wheels-"))
    resolution = resolve(cache, python_version, platforms)
    for rec in resolution.values():
        if "wheel" in rec:
            shutil.copy2(cache / rec["wheel"], out / "wheels" / rec["wheel"])
    files = project_tarball(out / "project.tar.gz")
    blocked = sorted({"scipy", "sklearn", "pymoo", "matplotlib"})
    (out / "install.sh").write_text(INSTALL_SH.replace("@PYTHON_VERSION@", python_version))
    (out / "install.sh").chmod(0o755)
    (out / "visit.sh").write_text(VISIT_SH)
    (out / "visit.sh").chmod(0o755)
    (out / "unpack_wheels.py").write_text(UNPACK_PY)
    (out / "check.py").write_text(CHECK_PY.replace("@BLOCKED@", repr(blocked)))
    carried = copy_packs(packs, out / "packs") if packs is not None else []
    contents: dict[str, dict[str, Any]] = {str(p.relative_to(out)): {"bytes": p.stat().st_size, "sha256": _sha256(p)}
                                           for p in sorted(out.rglob("*")) if p.is_file()}
    total = sum(int(v["bytes"]) for v in contents.values())
    manifest: dict[str, Any] = {"target": {"python": python_version, "implementation": "cp",
                                           "platforms": list(platforms or DEFAULT_PLATFORMS)},
                                "built": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                                "wheels": {c: r for c, r in sorted(resolution.items()) if "wheel" in r},
                                "left_out": {c: r for c, r in sorted(resolution.items()) if "left_out" in r},
                                "blocked_in_check": blocked, "project_files": len(files), "packs": carried,
                                "files": contents, "bytes": total,
                                "limit_bytes": limit}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total += (out / "manifest.json").stat().st_size
    manifest["bytes"] = total
    if total > limit:
        raise BundleError(out, f"the bundle has {total} bytes, more than {limit}")
    return manifest


def wheel_tags(name: str) -> set[str]:
    """The tags of a wheel file name (python-abi-platform)."""
    return {str(t) for t in parse_wheel_filename(name)[3]}


def installs_on(name: str, python_version: str = "3.12", platforms: Sequence[str] = DEFAULT_PLATFORMS) -> bool:
    """Whether pip on CPython `python_version`, manylinux x86_64, would take this wheel."""
    v = tuple(int(x) for x in python_version.split("."))
    supported = {str(t) for t in cpython_tags(v, platforms=list(platforms))}
    supported |= {str(t) for t in compatible_tags(v, platforms=list(platforms))}
    return bool(wheel_tags(name) & supported)


__all__ = ["build", "installs_on", "resolve", "EXCLUDED", "PRESENT", "ROOTS"]
