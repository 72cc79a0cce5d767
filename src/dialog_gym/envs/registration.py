"""Register every env spec in the top-level `envs/*.yaml` folder with Gymnasium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

from dialog_gym._resources import data_dir

ENTRY_POINT = "dialog_gym.envs.empathy:EmpathyDialogEnv"
VECTOR_ENTRY_POINT = "dialog_gym.envs.vector:EmpathyVectorEnv"
_SPEC_KEYS = {"id", "description", "kwargs"}


def load_spec(path: Path) -> dict[str, Any]:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(spec, dict) or "id" not in spec:
        raise ValueError(f"{path}: an env spec must be a mapping with an 'id'")
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {sorted(unknown)}; expected {sorted(_SPEC_KEYS)}")
    if not isinstance(spec.get("kwargs", {}), dict):
        raise ValueError(f"{path}: 'kwargs' must be a mapping")
    return spec


def env_specs() -> list[dict[str, Any]]:
    """The bundled env specs, in file-name order."""
    return [load_spec(p) for p in sorted(data_dir("envs").glob("*.yaml"))]


def register_envs() -> list[str]:
    """Register (or re-register) every bundled env id; returns the ids."""
    ids = []
    for spec in env_specs():
        gym.register(
            id=spec["id"],
            entry_point=ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs=dict(spec.get("kwargs", {})),
        )
        ids.append(spec["id"])
    return ids
