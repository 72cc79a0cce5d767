"""An env id's set-up outside Gymnasium: the `DialogConfig` and personas `gym.make` would build.

The verifiers environment and the OpenEnv server run dialogues without an `EmpathyDialogEnv`,
but must play exactly the episodes `gym.make(env_id, **options)` plays: the same simulator,
mood rules and agent settings from the env id's spec, the same persona set, and the same
generator per seed (`env.reset(seed=s)` seeds `np_random` with `seeding.np_random(s)`).
`DialogSetup` is that set-up; `dialog_setup(env_id, ...)` builds it, from the env id's own
`config` mapping changed by the fields given, through the one resolution every entry point
uses (`dialog_gym.session.takes_dialog_config`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium.utils import seeding

from dialog_gym.envs.empathy import select_personas
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, agent_system_prompt, takes_dialog_config

ENV_FAMILY = "RLVER-Empathy"


def newest_env_id(family: str = ENV_FAMILY) -> str:
    """The registered `<family>-vN` id with the highest N (`RLVER-Empathy-v2` while v1 is newest)."""
    # The bundled ids are registered: importing this module imported the `dialog_gym` package.
    pattern = re.compile(rf"^{re.escape(family)}-v(\d+)$")
    versions = sorted((int(m.group(1)), env_id) for env_id in gym.registry if (m := pattern.match(env_id)))
    if not versions:
        raise LookupError(f"no {family}-vN env id is registered (is dialog_gym imported?)")
    return versions[-1][1]


@dataclass(frozen=True)
class DialogSetup:
    """The dialogues of one env id: how they are played and with whom.

    Attributes:
        env_id: the Gymnasium id the set-up was read from.
        config: simulator, mood rules and agent settings (see `DialogConfig`).
        personas: the personas episodes are drawn from (after the split/language filters).
    """

    env_id: str
    config: DialogConfig
    personas: PersonaSet

    def persona(self, persona_id: str) -> Persona:
        try:
            return self.personas.get(persona_id)
        except KeyError:
            raise KeyError(
                f"persona {persona_id!r} is not in the {self.env_id} persona set ({len(self.personas)} personas; "
                "check the personas/split/language options)"
            ) from None

    def session(self, persona_id: str, seed: int) -> DialogSession:
        """The dialogue `gym.make(env_id).reset(seed=seed, options={"persona_id": persona_id})` starts."""
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        return self.config.session(self.persona(persona_id), seeding.np_random(seed)[0])

    def describe(self) -> str:
        """One line for logs and metadata: the id, the simulator, the rules, the personas."""
        identity = self.config.simulator.identity()
        simulator = ", ".join(f"{k}={v}" for k, v in identity.items()) if isinstance(identity, dict) else str(identity)
        return f"{self.env_id} ({simulator}; {self.config.rules.name} mood rules; {len(self.personas)} personas)"

    def system_prompt(self, persona: Persona) -> str:
        """The agent's system message for dialogues with `persona` (as `DialogSession` sets it)."""
        return self.config.system_prompt or agent_system_prompt(persona.language, self.config.think)


def env_spec(env_id: str | None) -> gym.envs.registration.EnvSpec:
    """The spec of `env_id` (None: the newest `RLVER-Empathy-vN`); a ValueError naming an unknown id."""
    env_id = env_id or newest_env_id()
    try:
        return gym.spec(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown env id {env_id!r}: {exc}") from None


def spec_config(arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `DialogConfig` fields the spec of `arguments["env_id"]` states (its `config` mapping)."""
    return dict(env_spec(arguments.get("env_id")).kwargs.get("config") or {})


@takes_dialog_config(base=spec_config)
def dialog_setup(
    env_id: str | None = None,
    config: DialogConfig | Mapping[str, Any] | None = None,
    *,
    personas: Any = None,
    split: str | None = None,
    language: str | None = None,
) -> DialogSetup:
    """The set-up `gym.make(env_id, ...)` would build, without the env.

    Arguments:
        env_id: a registered id (None: the newest `RLVER-Empathy-vN`).
        config: a `DialogConfig`, which replaces the env id's own set-up; or the config's
            fields as keyword arguments (`simulator`, `simulator_options`, `rules`, ...),
            which change the env id's set-up, as `gym.make(env_id, think=True)` does.
        personas, split, language: the persona set, as for `gym.make` (None: the env id's
            own; `split="all"` is gym.make's `split=None`, every split).
    """
    spec = env_spec(env_id)
    spec_kwargs = dict(spec.kwargs or {})
    if split is None:
        split = spec_kwargs.get("split", "train")  # EmpathyDialogEnv's default
    pool = select_personas(
        personas if personas is not None else spec_kwargs.get("personas"),
        None if split == "all" else split,
        language if language is not None else spec_kwargs.get("language"),
    )
    return DialogSetup(spec.id, config, pool)
