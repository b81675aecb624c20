"""Measuring on the GPU: batches of whole precision combinations, the float64 references computed ahead in a
worker, and Kernel Tuner's CuPy backend over the precompiled modules (`KTCupyMeasurer`)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from kernel_tuner import tune_kernel
from kernel_tuner.accuracy import Tunable
from kernel_tuner.observers.nvml import NVMLObserver, nvml

from analysis.io import write_json
from analysis.sweep import cachefile, harness, progress
from analysis.sweep import device_metrics as dm
from analysis.sweep.kt_setup import cuda_options, kernel_tuner_scratch
from analysis.sweep.shard import reference_check
from analysis.sweep.spec import KernelSpec
from gpuvisit import cuda_modules
from gpuvisit.cache import SIZE, LeaseError, cache_names, config_key, source_hash
from gpuvisit.guard import DeadlineReached, Guard, deadline_budget
from gpuvisit.records import nvidia_smi

log = logging.getLogger(__name__)

BATCH_MIN = 256  # configurations per tune_kernel call (whole precision combinations)
# Energy is off by default: Kernel Tuner 1.5.0 benchmarks a configuration continuously for max(1 s, the window)
# when a continuous observer (NVML's energy) is present (core.py, DeviceInterface.benchmark), so energy costs at
# least a second per configuration: 0.99 configurations/s on kmeans on an H200 (visit 20261126T021416Z).
ENERGY_WINDOW_S = 0.0


@dataclass
class Batch:
    """Configurations measured by one tune_kernel call: whole precision combinations, their chunks."""

    configs: list[dict[str, Any]]
    chunks: list[cuda_modules.Chunk]


def batches(spec: KernelSpec, chunks: Sequence[cuda_modules.Chunk], batch_min: int = BATCH_MIN) -> list[Batch]:
    """Consecutive precision combinations (in chunk order) gathered until a batch has `batch_min` configurations."""
    out: list[Batch] = []
    current = Batch([], [])
    last_key = None
    for ch in chunks:
        key = cuda_modules.precision_key(spec, ch.configs[0])
        if key != last_key and len(current.configs) >= batch_min:
            out.append(current)
            current = Batch([], [])
        current.configs += ch.configs
        current.chunks.append(ch)
        last_key = key
    if current.configs:
        out.append(current)
    return out


def narrowed_params(spec: KernelSpec, configs: Sequence[Mapping[str, Any]]) -> dict[str, list]:
    """The cuda tune_params narrowed to the values the configurations take (same names, spec order)."""
    full = spec.tune_params("cuda")
    return {p: [v for v in values if any(c[p] == v for c in configs)] for p, values in full.items()}


class ReferencePool:
    """The float64 references at the lease's size, computed ahead in a worker process into .npy files."""

    def __init__(self, folder: Path, size_name: str, workers: int = 1):
        self.folder = folder
        self.size_name = size_name
        # spawned: the parent holds a CUDA context; a multiprocessing pool, which close() can terminate
        # (a reference still being computed at the deadline, minutes of NumPy, must not hold up the exit)
        self.pool = multiprocessing.get_context("spawn").Pool(workers) if workers else None
        self.futures: dict[str, Any] = {}

    def prefetch(self, kernel: str) -> None:
        if self.pool is not None and kernel not in self.futures:
            self.futures[kernel] = self.pool.apply_async(_save_reference, (kernel, self.size_name, str(self.folder)))

    def get(self, kernel: str) -> tuple[dict[str, np.ndarray], float]:
        """(output name -> float64 reference, seconds it took to compute)."""
        if kernel in self.futures:
            files, seconds = self.futures[kernel].get()
        else:
            files, seconds = _save_reference(kernel, self.size_name, str(self.folder))
        return {name: np.load(path, mmap_mode="r") for name, path in files.items()}, seconds

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def _save_reference(kernel: str, size_name: str, folder: str) -> tuple[dict[str, str], float]:
    """The kernel's float64 reference at the size as .npy files in `folder`: (output name -> path, seconds).

    A record beside the files (`<kernel>.reference.json`: size, sources' sha256, files, seconds) lets a run
    that continues the visit's work folder reuse them; it then takes 0 s.
    """
    record_path = Path(folder) / f"{kernel}.reference.json"
    key = {"kernel": kernel, "size": size_name, "source_sha256": source_hash(kernel)}
    if record_path.is_file():
        try:
            record = json.loads(record_path.read_text())
        except json.JSONDecodeError:
            record = {}
        files = record.get("files") or {}
        if {k: record.get(k) for k in key} == key and files and all(Path(f).is_file() for f in files.values()):
            log.info("%s: float64 reference reused from %s (computed in %.1f s)", kernel, record_path,
                     record.get("seconds", float("nan")))
            return dict(files), 0.0
    start = time.perf_counter()
    ref = harness.reference_outputs(kernel, size_name)
    seconds = time.perf_counter() - start
    out = {}
    for name, arr in ref.items():
        path = Path(folder) / f"{kernel}.{name}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.ascontiguousarray(arr, dtype=np.float64))
        out[name] = str(path)
    write_json({**key, "files": out, "seconds": round(seconds, 3)}, record_path)
    return out, seconds


class KTCupyMeasurer:
    """Measures batches with Kernel Tuner's CuPy backend on the GPU (needs cupy and a CUDA device).

    `xp`, `loader` and `backend` replace cupy, cupy.RawModule and Kernel Tuner's CupyFunctions in tests.
    """

    def __init__(self, *, size_name: str = SIZE, iterations: int = 7, energy_window: float | None = ENERGY_WINDOW_S,
                 xp: Any = None, loader: Callable[[str], Any] | None = None, backend: type[Any] | None = None,
                 device: Mapping[str, Any] | None = None, energy: Mapping[str, Any] | None = None,
                 gate: Callable[..., dict[str, float]] | None = None):
        if xp is None:
            try:
                # lazy: CuPy is only on the GPU machine (--plan and --compile-only run without it)
                import cupy

                cupy.cuda.runtime.getDeviceCount()
                xp = cupy
            except Exception as exc:  # ImportError, or CuPy's CUDARuntimeError where there is no device
                raise LeaseError(None, f"a lease measures on a GPU through CuPy, and here {type(exc).__name__}: {exc} "
                                       "(--plan and --compile-only need no GPU)") from None
        self.xp = xp
        self.loader = loader or (lambda path: xp.RawModule(path=path))
        self.backend = backend
        self.size_name = size_name
        self.iterations = iterations
        self.energy_window = energy_window
        self.device = dict(device) if device is not None else self._device()
        self.energy = dict(energy) if energy is not None else self._energy_status()
        self.gate = gate
        self.ctx: dict[str, Any] = {}

    # -- the device -----------------------------------------------------------------------------------------------
    def _device(self) -> dict[str, Any]:
        xp = self.xp
        props = xp.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        cc = f"{props['major']}{props['minor']}"
        return {"name": name, "compute_capability": cc, "arch": f"sm_{cc}",
                "cuda_driver_version": xp.cuda.runtime.driverGetVersion(),
                "cuda_runtime_version": xp.cuda.runtime.runtimeGetVersion(),
                "memory_bytes": int(props.get("totalGlobalMem", 0))}

    def _energy_status(self) -> dict[str, Any]:
        if not self.energy_window:
            return {"recorded": False, "reason": "not asked for (--energy-window 0, the default): Kernel Tuner 1.5.0's "
                                                 "NVML energy benchmarks each configuration for at least 1 s"}
        try:
            probe = nvml(device_id=0)
            probe.pwr_limit_default = None  # never write the GPU's settings back
            energy, power = probe.energy_usage(), probe.pwr_usage()
            if not energy or not power:
                return {"recorded": False, "reason": f"NVML answers 0 (energy {energy} mJ, power {power} mW)"}
        except Exception as exc:  # pynvml missing, no NVML, not supported on this GPU
            return {"recorded": False, "reason": f"NVML does not answer: {type(exc).__name__}: {exc}"}
        return {"recorded": True, "observer": "kernel_tuner.observers.nvml.NVMLObserver(['nvml_energy'])",
                "window_s": self.energy_window,
                "definition": "median NVML instant power over the window times the configuration's mean time "
                              "(Kernel Tuner's nvml_energy, J per kernel run)"}

    @property
    def arch(self) -> str:
        return self.device["arch"]

    def environment(self) -> dict[str, Any]:
        return {**self.device, "nvidia_smi": nvidia_smi()}

    # -- one kernel -----------------------------------------------------------------------------------------------
    def prepare(self, spec: KernelSpec, configs: Sequence[Mapping[str, Any]], chunks: Sequence[cuda_modules.Chunk],
                builder: cuda_modules.ModuleBuilder, reference: Mapping[str, np.ndarray], guard: Guard
                ) -> dict[str, float]:
        """Run the correctness gate and put the kernel's arguments and references on the device."""
        if self.gate is not None:
            gate = self.gate(spec, "cuda", self.size_name, reference=reference)
        else:  # Kernel Tuner's run_kernel on the CuPy backend, its kernel string compiled by nvcc alone
            folder = Path(getattr(builder, "folder", tempfile.gettempdir())) / "gate" / spec.name
            gate = reference_check(spec, "cuda", self.size_name, reference=reference, lang="CUPY",
                                   compilation=cuda_modules.nvcc_compilation(spec, folder, self.arch, self.loader,
                                                                             self.backend))
        xp = self.xp
        inputs = harness.make_inputs(spec.name, self.size_name)
        types = {p: sorted({c[p] for c in configs}, key=spec.precision[p].index) for p in spec.precision}
        args: list[Any] = []
        outputs: dict[int, Any] = {}
        refs: dict[int, dm.DeviceReference] = {}
        answer: list[Any] = []
        for i, a in enumerate(spec.arguments):
            if a.role == "scalar":
                scalar: Callable[[Any], Any] = harness.NP_SCALARS[a.type]
                args.append(scalar(spec.scalar_value(a, self.size_name)))
                answer.append(None)
                continue
            shape = spec.shape(a, self.size_name)
            n = int(np.prod(shape))
            typed = a.type in spec.precision
            if a.role == "input":
                values = np.asarray(inputs[a.name]).reshape(shape).ravel()
                arrays = {t: xp.asarray(dm.storage(values, t)) for t in (types[a.type] if typed else [a.type])}
                answer.append(None)
            else:
                arrays = {t: xp.empty(n, dtype=dm.STORAGE.get(t, t)) for t in (types[a.type] if typed else [a.type])}
                outputs[i] = arrays
                refs[i] = dm.DeviceReference(xp, reference[a.name])
                answer.append(np.zeros(1))  # marks an output; the observer compares with the device reference
            args.append(Tunable(a.type, arrays) if typed else arrays[a.type])

        def poison(params: Mapping[str, Any]) -> None:
            dm.poison(xp, [arrays[spec.arg_type(spec.arguments[i], params)] if spec.arguments[i].type in spec.precision
                           else arrays[spec.arguments[i].type] for i, arrays in outputs.items()])

        modules = cuda_modules.PrecompiledModules(spec, chunks, builder, self.loader, names=cache_names(spec),
                                                  before_check=poison, wait_timeout=lambda: max(guard.left(), 0.001))
        self.ctx = {"spec": spec, "args": args, "answer": answer, "outputs": outputs, "refs": refs,
                    "modules": modules, "observer": dm.make_observer(refs)}
        return gate

    def measure(self, spec: KernelSpec, batch: Batch, cache: Path, guard: Guard,
                tracker: progress.Progress | None = None) -> None:
        """One tune_kernel call over the batch's configurations into the (new) Kernel Tuner cache `cache`."""
        ctx = self.ctx
        names = cache_names(spec)
        keys = {config_key(c, names) for c in batch.configs}

        def restriction(p):
            return config_key(p, names) in keys

        restriction.__code__ = restriction.__code__.replace(co_filename="<gpu lease restriction>")
        modules: cuda_modules.PrecompiledModules = ctx["modules"]
        observers: list[Any] = [ctx["observer"]]
        if tracker is not None:
            observers.append(progress.observer(tracker))
        metrics: dict[str, Any] = {"memory": lambda p: spec.memory_bytes(p, self.size_name),
                                   "library_build_time": modules.build_time_ms,
                                   "library_variants": modules.variant_count}
        opts = cuda_options(spec)
        opts["lang"] = "CUPY"

        def tune(observers: list[Any], metrics: dict[str, Any]) -> None:
            with cachefile.atomic_rewrites(), warnings.catch_warnings(), kernel_tuner_scratch(cache), \
                    cuda_modules.precompiled_compilation(modules, self.backend), deadline_budget(guard):
                warnings.filterwarnings("ignore", message="Argument at position", category=UserWarning)
                tune_kernel(spec.function, str(spec.folder / "kernel.cu"), spec.problem_size(self.size_name),
                            ctx["args"], narrowed_params(spec, batch.configs), restrictions=[restriction],
                            answer=ctx["answer"], observers=observers, metrics=metrics, cache=str(cache.resolve()),
                            iterations=self.iterations, strategy="brute_force", quiet=True, verbose=False, **opts)

        if not self.energy.get("recorded"):
            tune(observers, metrics)
            return
        try:
            tune([*observers, energy_observer(self.energy_window)],
                 {**metrics, "energy": lambda p: p.get("nvml_energy", float("nan"))})
        except (DeadlineReached, TimeoutError):
            raise
        except Exception as exc:  # NVML answered the probe but its observer fails: measure on, without energy
            log.exception("%s: Kernel Tuner's NVML observer failed; measuring without energy from here on", spec.name)
            why = (f"Kernel Tuner's NVML observer failed in a batch of {spec.name} ({type(exc).__name__}: {exc}); no "
                   "energy from then on (entries measured before keep theirs)")
            self.energy = {"recorded": False, "reason": why}
            cache.unlink(missing_ok=True)
            guard.new_batch()
            tune(observers, metrics)

    def metrics_seconds(self) -> tuple[float, int, int]:
        obs = self.ctx.get("observer")
        return (obs.seconds, obs.count, obs.host_outputs) if obs is not None else (0.0, 0, 0)

    def finish(self, spec: KernelSpec, chunks: Sequence[cuda_modules.Chunk]) -> None:
        """Free the kernel's device memory and modules."""
        modules = self.ctx.get("modules")
        if modules is not None:
            modules.release(chunks)
        self.ctx = {}
        pool = getattr(self.xp, "get_default_memory_pool", None)
        if pool is not None:
            pool().free_all_blocks()


def energy_observer(window: float | None) -> Any:
    """Kernel Tuner's NVML observer of `nvml_energy` over `window` seconds, never writing the GPU's settings back."""
    class EnergyObserver(NVMLObserver):
        def register_device(self, dev):
            super().register_device(dev)
            self.nvml.pwr_limit_default = None  # the lease changes no setting, so it restores none

    return EnergyObserver(["nvml_energy"], continuous_duration=window)
