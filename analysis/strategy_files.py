"""A user's strategy module from its name: a path to a `.py` file or a dotted import path (docs/your-tuner.md).

Shared by the registry, which checks the module against Kernel Tuner's strategy convention, and by
`analysis.names`, which shows a user's strategy by the module's `display_name`; it imports neither, nor
Kernel Tuner, so that naming a strategy in a table or figure job loads only the strategy's own module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from analysis import paths

REPOSITORY = paths.REPO


def strategy_path(name: str) -> Path:
    """The file a `.py` strategy name means: an absolute path as it is; a relative one in the working directory,
    else in the repository (where the config's data paths are read from, so that `snakemake -d elsewhere` finds
    examples/ too). Neither the path nor the name as written enters a run's seed (`registry.seed_name`)."""
    path = Path(name).expanduser()
    if path.is_absolute() or path.is_file():
        return path.resolve()
    in_repository = REPOSITORY / path
    return in_repository.resolve() if in_repository.is_file() else path.resolve()


def import_strategy(name: str) -> ModuleType:
    """The module behind a user strategy name (a .py path or a dotted path), loaded once per process; ValueError
    naming it otherwise."""
    if name.endswith(".py"):
        resolved = strategy_path(name)
        if not resolved.is_file():
            raise ValueError(f"strategy file {name!r} does not exist (a relative path is read from the working "
                             f"directory, {Path.cwd()}, else from the repository, {REPOSITORY})")
        # one module per file, named after it and its location so that two files of one name never meet
        module_name = f"tsb_strategy_{resolved.stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:10]}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(module_name, resolved)
        if spec is None or spec.loader is None:
            raise ValueError(f"strategy file {name!r} cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ValueError(f"strategy file {name!r} failed to import: {type(exc).__name__}: {exc}") from exc
        return module
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise ValueError(f"strategy module {name!r} cannot be imported ({exc}); a dotted path must be importable "
                         "from the working directory or an installed package, a file path must end in .py") from exc
    except Exception as exc:
        raise ValueError(f"strategy module {name!r} failed to import: {type(exc).__name__}: {exc}") from exc
