"""The study's spaces as its config lists them: which are studied, excluded or tuned on time, and the check of
the `spaces` section's own rules (config.validate calls it; analysis.config re-exports the names it always had)."""

from __future__ import annotations

from typing import Any

from analysis.errors import ConfigError

# Row sets of the constraint-aware gains table that are no space group (analysis.tables.constraint_aware's ALL_GROUP
# and GPU_GROUP; not imported from there, which would load pandas wherever a config is read).
RESERVED_GROUPS = ("all", "GPU tuned on time")


def study_kernels(config: dict[str, Any], studied_only: bool = False) -> list[str]:
    """Kernels of the study's spaces: listed ones and sweeps that become spaces; with `studied_only`, only
    those of spaces that are not excluded."""
    listed = [s for s in config["spaces"] if not (studied_only and s.get("excluded"))]
    kernels = [s["kernel"] for s in listed] + [s["kernel"] for s in config["sweeps"] if s.get("space", True)]
    return sorted(set(kernels))


def excluded_spaces(config: dict[str, Any]) -> dict[str, str]:
    """"device/kernel" -> reason, for every space kept out of both studies (its `excluded`), in config order."""
    return {f"{s['device']}/{s['kernel']}": s["excluded"] for s in config["spaces"] if s.get("excluded")}


def studied_space_keys(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(device, kernel) of every space the studies run on, in the workflow's order (the Snakefile's STUDIED): the
    listed spaces, then each sweep that makes a space (`space: true`), without the excluded ones."""
    keys = dict.fromkeys((s["device"], s["kernel"]) for s in config["spaces"])
    keys.update(dict.fromkeys((s["device"], s["kernel"]) for s in config.get("sweeps") or [] if s.get("space")))
    excluded = excluded_spaces(config)
    return [key for key in keys if f"{key[0]}/{key[1]}" not in excluded]


def time_space_keys(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(device, kernel) of every studied space tuned on time (its kernel has no accuracy threshold of the
    constraint-aware study), in the workflow's order: where seed 003's tuning may train and test."""
    thresholds = config["constraint_aware"]["thresholds"]
    return [key for key in studied_space_keys(config) if key[1] not in thresholds]


def check_spaces_section(config: dict[str, Any], source: str) -> None:
    """No space is listed twice; no space group takes the name of a row set of the gains table; at least one space
    is studied."""
    seen: set[tuple[str, str]] = set()
    for i, s in enumerate(config["spaces"]):
        key = (s["device"], s["kernel"])
        if key in seen:
            raise ConfigError(source, f"space {s['device']}/{s['kernel']} is listed twice", field=f"spaces[{i}]")
        seen.add(key)
    for i, s in enumerate(config["spaces"]):
        if s.get("group") in RESERVED_GROUPS:
            raise ConfigError(source, f"'{s['group']}' names a row set of tables/constraint_aware_gains.csv "
                                      f"({', '.join(RESERVED_GROUPS)}), not a group of spaces; choose another label",
                              field=f"spaces[{i}].group")
    swept = [s for s in config["sweeps"] if s.get("space", True)]
    if not swept and all(s.get("excluded") for s in config["spaces"]):
        raise ConfigError(source, "every space is excluded, so neither study would have a space; leave at least "
                                  "one without `excluded`", field="spaces")
