"""An env id's set-up outside Gymnasium: the `DialogConfig` and personas `gym.make` would build.

The verifiers environment and the OpenEnv server run dialogues without an `EmpathyDialogEnv`,
but must play exactly the episodes `gym.make(env_id, **options)` plays: the same simulator,
mood rules and agent settings from the env id's spec, the same persona set, and the same
generator per seed (`env.reset(seed=s)` seeds `np_random` with `seeding.np_random(s)`).
`DialogSetup` is that set-up; `dialog_setup(env_id, **options)` builds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium.utils import seeding

from dialog_gym.envs.empathy import select_personas
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, agent_system_prompt

ENV_FAMILY = "RLVER-Empathy"
PERSONA_OPTIONS = ("personas", "split", "language")
# What `EmpathyDialogEnv` takes besides the persona options and simulator keyword arguments.
DIALOG_OPTIONS = ("simulator", "rules", "style", "think", "reward_mode", "format_penalty", "system_prompt", "reply_guard")
_NOT_DIALOG = ("render_mode",)


def newest_env_id(family: str = ENV_FAMILY) -> str:
    """The registered `<family>-vN` id with the highest N (`RLVER-Empathy-v2` while v2 is newest)."""
    import dialog_gym  # noqa: F401  (registers the bundled ids)

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


def dialog_setup(
    env_id: str | None = None,
    *,
    config: DialogConfig | None = None,
    **options: Any,
) -> DialogSetup:
    """The set-up `gym.make(env_id, **options)` would build, without the env.

    Arguments:
        env_id: a registered id (None: the newest `RLVER-Empathy-vN`).
        config: a ready `DialogConfig`; then `options` may only hold the persona options.
        **options: what `gym.make(env_id, ...)` takes: the persona options (`personas`,
            `split`, `language`; `split="all"` is gym.make's `split=None`, every split) and,
            without `config`, the dialogue options (`simulator`,
            `rules`, `style`, `think`, `reward_mode`, `format_penalty`, `system_prompt`,
            `reply_guard`) plus keyword arguments for the simulator (`model`, `base_url`, ...).
            An option left out (or None) keeps the env id's spec value.
    """
    env_id = env_id or newest_env_id()
    try:
        spec = gym.spec(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown env id {env_id!r}: {exc}") from None
    bad = sorted(set(options) & set(_NOT_DIALOG))
    if bad:
        raise TypeError(f"option(s) {bad} do not apply outside gym.make (there is nothing to render)")
    given = {k: v for k, v in options.items() if v is not None}
    merged: dict[str, Any] = {**dict(spec.kwargs or {}), **given}
    persona_options = {k: merged.pop(k, None) for k in PERSONA_OPTIONS}
    if "split" not in given and "split" not in dict(spec.kwargs or {}):
        persona_options["split"] = "train"  # EmpathyDialogEnv's default
    if persona_options["split"] == "all":
        persona_options["split"] = None  # no split filter (gym.make's split=None)
    if config is not None:
        if not isinstance(config, DialogConfig):
            raise TypeError(f"config must be a DialogConfig, got {type(config).__name__}")
        extra = sorted(set(given) - set(PERSONA_OPTIONS))
        if extra:
            raise TypeError(f"pass either config= or the dialogue options {extra}, not both")
    else:
        config = DialogConfig.create(**merged)
    personas = select_personas(persona_options["personas"], persona_options["split"], persona_options["language"])
    return DialogSetup(env_id, config, personas)
