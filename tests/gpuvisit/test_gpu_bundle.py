"""The GPU machine's bundle (gpuvisit.bundle). NEEDS NETWORK: it downloads wheels from PyPI
(about 19 MiB per Python version, once per test session; pip's own cache makes reruns quick)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from analysis.sweep.harness import nvcc_available
from gpuvisit import bundle as gpu_bundle

LOCAL = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture(scope="session")
def bundles(tmp_path_factory):
    """Bundles built once per session: python version -> (folder, manifest)."""
    made: dict[str, tuple[Path, dict]] = {}

    def get(version: str):
        if version not in made:
            root = tmp_path_factory.mktemp(f"bundle{version.replace('.', '')}")
            manifest = gpu_bundle.build(root / "bundle", python_version=version, wheel_cache=root / "wheels")
            made[version] = (root / "bundle", manifest)
        return made[version]

    return get


def test_bundle_for_the_gpu_machine(bundles):
    folder, manifest = bundles("3.12")
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total == manifest["bytes"] <= gpu_bundle.LIMIT == 64 * 2**20
    wheels = sorted((folder / "wheels").glob("*.whl"))
    names = {gpu_bundle.canonical(gpu_bundle.wheel_metadata(w)[0]): gpu_bundle.wheel_metadata(w)[1] for w in wheels}
    assert names["kernel-tuner"] == "1.5.0"
    assert {"pyyaml", "ml-dtypes", "pandas", "nvidia-ml-py", "python-constraint2", "jsonschema"} <= set(names)
    assert not {"numpy", "cupy", "scipy", "scikit-learn", "pymoo", "matplotlib"} & set(names)
    for w in wheels:
        assert gpu_bundle.installs_on(w.name, "3.12"), f"{w.name} does not install on CPython 3.12 manylinux x86_64"
    # closure: every requirement of every wheel (for the target) is bundled or left out with a reason
    from packaging.requirements import Requirement

    env = gpu_bundle.marker_environment("3.12")
    for w in wheels:
        for line in gpu_bundle.wheel_metadata(w)[2]:
            r = Requirement(line)
            if r.marker is None or r.marker.evaluate(env):
                c = gpu_bundle.canonical(r.name)
                assert c in names or manifest["left_out"][c]["left_out"], (w.name, line)
                if c in names:
                    assert r.specifier.contains(names[c], prereleases=True), (w.name, line, names[c])
    assert set(manifest["left_out"]) >= {"numpy", "scipy", "scikit-learn", "pymoo"}
    for rel, rec in manifest["files"].items():
        assert (folder / rel).stat().st_size == rec["bytes"]
    with tarfile.open(folder / "project.tar.gz") as tar:
        members = set(tar.getnames())
    assert {"gpuvisit/lease.py", "gpuvisit/cli.py", "analysis/cli.py", "workflow/kernels/bessel/kernel.cu",
            "workflow/kernels/common/precision.h", "pyproject.toml"} <= members
    assert not any("__pycache__" in m for m in members)


@pytest.mark.slow  # over 20 s in a clean-clone .ci/run (benchmarks/reports/ci_suite.csv, ebb2563)
def test_bundle_installs_offline_and_runs_the_lease_commands(bundles, tmp_path):
    """The same builder for this interpreter's version, installed with install.sh (pip --no-index), then
    `gpu-lease --plan` and `--compile-only` run from the install with SciPy, scikit-learn and pymoo blocked."""
    folder, _ = bundles(LOCAL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHON"] = sys.executable
    proc = subprocess.run(["bash", str(folder / "install.sh")], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    check = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
    assert check["ok"] and check["kernel_tuner"] == "1.5.0"
    assert (folder / "env.sh").read_text().count(str(folder / "site")) == 1
    blocker = ("import importlib.abc, sys\n"
               "class B(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] in ('scipy', 'sklearn', 'pymoo', 'matplotlib'):\n"
               "            raise ImportError(name)\n"
               "sys.meta_path.insert(0, B())\n"
               "from gpuvisit.cli import main\n"
               "import kernel_tuner, analysis\n"
               "assert kernel_tuner.__file__.startswith(sys.argv[1]), kernel_tuner.__file__\n"
               "assert analysis.__file__.startswith(sys.argv[2]), analysis.__file__\n"
               "sys.exit(main(sys.argv[3:]))\n")
    run_env = {**env, "PYTHONPATH": f"{folder / 'src'}:{folder / 'site'}"}
    cmd = [sys.executable, "-c", blocker, str(folder / "site"), str(folder / "src")]
    plan = subprocess.run([*cmd, "gpu-lease", "--plan"], capture_output=True, text=True, env=run_env,
                          cwd=folder / "src", timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "convolution2d" in plan.stdout and "170,252" in plan.stdout
    if nvcc_available():
        comp = subprocess.run([*cmd, "gpu-lease", "--compile-only", "--kernels", "invk", "--max-configs", "2",
                               "--jobs", "0", "--out", str(tmp_path / "modules")], capture_output=True, text=True,
                              env=run_env, cwd=folder / "src", timeout=300)
        assert comp.returncode == 0, comp.stderr[-3000:]
        assert json.loads(comp.stdout.strip().splitlines()[-1])["failed"] == []


def test_visit_script_installs_runs_the_lease_and_keeps_its_log_without_a_gpu(bundles, tmp_path):
    """visit.sh, the whole visit as one command, on this machine (no GPU): it installs the bundle, hands the
    lease the minutes left, and where the lease packs nothing (here: no CuPy, a clear error) says so, brings
    back the work folder, keeps the log and exits with the lease's status."""
    folder, _ = bundles(LOCAL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHON=sys.executable, TSB_LEASE_WORK=str(tmp_path / "work"))
    (tmp_path / "work" / "shards").mkdir(parents=True)
    (tmp_path / "work" / "lease.log").write_text("an earlier run of this visit\n")
    proc = subprocess.run(["bash", str(folder / "visit.sh"), "out", "5", "earlier"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    log = (tmp_path / "out" / "visit.log").read_text()
    assert proc.returncode not in (0, 3), log[-3000:]
    assert "minutes left for the lease" in log and "a lease measures on a GPU through CuPy" in log
    assert "the lease wrote no pack" in log and "visit: done after" in log
    with tarfile.open(tmp_path / "out" / "work.tar.gz") as tar:
        assert "./lease.log" in tar.getnames()
    assert (tmp_path / "out" / "packs").is_dir() and not list((tmp_path / "out" / "packs").iterdir())
    assert f"visit: resuming from {tmp_path / 'earlier'}" in log


PACKS = Path(__file__).resolve().parents[2] / "data" / "sweeps" / "cuda" / "nvidia-h200" / "packs"


def test_copy_packs_keeps_each_pack_under_its_own_path_and_refuses_junk(tmp_path):
    copied = gpu_bundle.copy_packs(PACKS, tmp_path / "packs")
    published = sorted(p.relative_to(PACKS) for p in PACKS.rglob("*.tar"))
    assert [Path(c) for c in copied] == published and len(published) >= 2
    for rel in published:  # byte for byte, two packs of one name in folders of their own
        assert (tmp_path / "packs" / rel).read_bytes() == (PACKS / rel).read_bytes()
    junk = tmp_path / "junk"
    (junk / "7").mkdir(parents=True)
    (junk / "7" / "lease-x.tar").write_bytes(b"not a tar")
    with pytest.raises(gpu_bundle.BundleError, match=r"junk/7/lease-x\.tar.*is not a lease pack"):
        gpu_bundle.copy_packs(junk, tmp_path / "packs2")
    (tmp_path / "empty").mkdir()
    with pytest.raises(gpu_bundle.BundleError, match="empty: field '--packs': holds no lease pack"):
        gpu_bundle.copy_packs(tmp_path / "empty", tmp_path / "packs3")
    with pytest.raises(gpu_bundle.BundleError, match="is not a folder of lease packs"):
        gpu_bundle.copy_packs(tmp_path / "missing", tmp_path / "packs4")


def test_visit_script_resumes_from_the_bundles_packs(bundles, tmp_path):
    """With no PACKS given, visit.sh resumes from the packs `gpu-bundle --packs` carried, and says so."""
    import shutil

    folder, _ = bundles(LOCAL)
    shutil.copytree(folder, tmp_path / "bundle")
    gpu_bundle.copy_packs(PACKS, tmp_path / "bundle" / "packs")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHON=sys.executable, TSB_LEASE_WORK=str(tmp_path / "work"))
    subprocess.run(["bash", str(tmp_path / "bundle" / "visit.sh"), "out", "5"], capture_output=True, text=True,
                   env=env, cwd=tmp_path, timeout=600)
    log = (tmp_path / "out" / "visit.log").read_text()
    n = len(list(PACKS.rglob("*.tar")))
    assert f"visit: resuming from {tmp_path / 'bundle' / 'packs'} ({n} pack files)" in log, log[-3000:]


def test_unpack_without_pip_gives_the_same_tree(bundles, tmp_path):
    folder, _ = bundles("3.12")
    wheels = sorted((folder / "wheels").glob("*.whl"))
    subprocess.run([sys.executable, str(folder / "unpack_wheels.py"), str(tmp_path), *map(str, wheels)], check=True)
    assert (tmp_path / "kernel_tuner" / "interface.py").is_file()
    assert (tmp_path / "pynvml.py").is_file() or (tmp_path / "pynvml").is_dir()
    with zipfile.ZipFile(next(w for w in wheels if w.name.startswith("pyyaml"))) as z:
        assert all((tmp_path / n).exists() for n in z.namelist() if not n.endswith("/"))
