"""The check of the config's `sweeps` section (config.validate calls it)."""

from __future__ import annotations

from typing import Any

from analysis.errors import ConfigError, InputError
from analysis.sweep.configs import resolve_tune_params
from analysis.sweep.spec import list_kernels, load_spec


def check_sweeps(config: dict[str, Any], source: str) -> None:
    """Sweeps name existing kernels, valid slices, and no (target, device, kernel) or space twice."""
    seen: set[tuple[str, str, str]] = set()
    spaces = {(s["device"], s["kernel"]) for s in config["spaces"]}
    for i, sw in enumerate(config["sweeps"]):
        where = f"sweeps[{i}]"
        if sw["kernel"] not in list_kernels():
            raise ConfigError(source, f"unknown kernel '{sw['kernel']}' (known: {', '.join(list_kernels())})",
                              field=f"{where}.kernel")
        key = (sw["target"], sw["device"], sw["kernel"])
        if key in seen:
            raise ConfigError(source, f"sweep {'/'.join(key)} is listed twice", field=where)
        seen.add(key)
        if sw["space"] and (sw["device"], sw["kernel"]) in spaces:
            raise ConfigError(source, f"space {sw['device']}/{sw['kernel']} is also listed under spaces", field=where)
        spaces.add((sw["device"], sw["kernel"]))
        sw["size"] = sw["size"] or ("cpu" if sw["target"] == "cpu" else "gpu")
        try:
            spec = load_spec(sw["kernel"])
            spec.size(sw["size"])
            resolve_tune_params(spec, sw["target"], sw["tune_params"])
        except InputError as exc:
            field = f"{where}.{'size' if exc.field == 'sizes' else 'tune_params'}"
            raise ConfigError(source, exc.detail, field=field) from None
