"""Register every env spec in the top-level `envs/*.yaml` folder with Gymnasium.

A spec's `kwargs` are the env's arguments; its `config` is a mapping of `DialogConfig`
fields (simulator, rules, style, think, reward_mode, ...), so `gym.make(ID, config=...)`
replaces the whole set-up and `gym.make(ID, think=True)` changes one field of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

from dialog_gym._options import check_names
from dialog_gym._resources import data_dir
from dialog_gym.session import CONFIG_FIELDS

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
    config = spec.get("kwargs", {}).get("config", {})
    if not isinstance(config, dict):
        raise ValueError(f"{path}: 'kwargs.config' must be a mapping of DialogConfig fields")
    try:
        check_names(config, CONFIG_FIELDS, what="DialogConfig field", where=f"in {path}")
    except TypeError as exc:
        raise ValueError(str(exc)) from None
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
