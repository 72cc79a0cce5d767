"""What both verl adapters share: the set-up of their dialogues, and one dialogue per rollout."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from gymnasium.utils import seeding

from dialog_gym._options import warn_renamed
from dialog_gym.mood import get_rules
from dialog_gym.personas import PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, takes_dialog_config
from dialog_gym.simulators import is_offline


class VerlDialogs:
    """The simulator, preset and personas of a verl adapter; opens the dialogue of a dataset row.

    Arguments (the adapter's config block, as YAML gives it):
        config: the dialogue set-up, a `DialogConfig` or a mapping of its fields; or its
            fields themselves: `simulator` (`"calibrated"`, `"rule"`, `"openai"`, ... or an
            instance), `simulator_options` (for `"openai"`: model, base_url,
            max_concurrency, ...), `style` (`vanilla` / `challenging`), `rules` (the default
            preset; a row's `rules` overrides it), `think` (the policy writes
            `<think>...</think>reply`; only the reply reaches the user), `reply_guard`. The
            reward is the mood (`reward_mode` terminal, no `format_penalty`) and the system
            prompt is the row's.
        personas: a file or folder; None: the bundled sets.
        replay_opening: `"auto"` (for an offline judge only), true, false. The opening line
            comes from the prompt; replaying the simulator's opener on the episode's
            generator (its output is discarded) leaves the generator where
            `env.reset(seed=seed)` leaves it, so a dialogue equals the gym env's with the same
            seed and replies. It costs one simulator call per rollout.
    """

    @takes_dialog_config
    def __init__(
        self,
        config: DialogConfig | Mapping[str, Any] | None = None,
        *,
        personas: str | None = None,
        replay_opening: str | bool = "auto",
    ):
        assert isinstance(config, DialogConfig)  # resolved by takes_dialog_config
        if replay_opening not in ("auto", True, False):
            raise ValueError(f"replay_opening must be 'auto', true or false, got {replay_opening!r}")
        if config.reward_mode != "terminal" or config.format_penalty or config.system_prompt is not None:
            raise ValueError(
                "a verl dialogue's reward is its mood and its system prompt the dataset row's: reward_mode, "
                "format_penalty and system_prompt do not apply (shape the reward in a custom reward function)"
            )
        self.config = config
        self.personas = PersonaSet.load(personas)
        self.replay_opening = is_offline(config.simulator) if replay_opening == "auto" else bool(replay_opening)

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, owner: str) -> VerlDialogs:
        """The set-up a verl config block asks for (OmegaConf values made plain); errors name `owner`."""
        options = {key: plain(value) for key, value in options.items()}
        if "simulator_kwargs" in options:  # the name before simulator_options
            if "simulator_options" in options:
                raise TypeError(f"{owner}: give simulator_options only (simulator_kwargs is its old name)")
            warn_renamed("simulator_kwargs", "simulator_options", where=owner)
            options["simulator_options"] = options.pop("simulator_kwargs")
        try:
            return cls(**options)
        except TypeError as exc:
            raise TypeError(f"{owner}: {exc}") from None

    def session(self, episode: Mapping[str, Any] | None) -> DialogSession:
        """The dialogue of one rollout, from the row's ``interaction_kwargs``."""
        episode = dict(episode or {})
        if episode.get("persona_id") is None:
            raise ValueError(
                "the dataset row's extra_info.interaction_kwargs has no 'persona_id'; write the dataset with "
                "examples/verl/prepare_data.py (interaction_kwargs = {'name', 'persona_id', 'seed', 'rules'})"
            )
        persona_id = str(episode["persona_id"])
        try:
            persona = self.personas.get(persona_id)
        except KeyError:
            raise KeyError(f"persona {persona_id!r} is not in this adapter's persona set (option 'personas')") from None
        rules = episode.get("rules")
        config = self.config if rules is None else dataclasses.replace(self.config, rules=get_rules(str(rules)))
        return config.session(persona, seeding.np_random(int(episode.get("seed", 0)))[0])

    async def start(self, session: DialogSession, messages: Sequence[Mapping[str, Any]]) -> None:
        """Start `session` from the rollout's prompt: its system message and opening line."""
        session.system_prompt = first_text(messages, "system") or session.system_prompt
        opening = first_text(messages, "user")
        if opening is None:
            raise ValueError(
                "the rollout's prompt holds no user turn: it must end with the simulated user's opening line"
            )
        if self.replay_opening:
            await session.simulator.open(session.persona, session.rng)  # advances the generator only
        await session.start(opening)


_SHARED: dict[str, VerlDialogs] = {}


def shared_dialogs(options: Mapping[str, Any], *, owner: str) -> VerlDialogs:
    """One `VerlDialogs` per distinct config and process: verl builds an agent loop per rollout."""
    key = json.dumps(
        {k: plain(v) for k, v in options.items()}, sort_keys=True, default=lambda o: f"{type(o).__qualname__}@{id(o)}"
    )
    if key not in _SHARED:
        _SHARED[key] = VerlDialogs.from_options(options, owner=owner)
    return _SHARED[key]


def plain(value: Any) -> Any:
    """An OmegaConf node (how hydra hands YAML values to a constructor) as plain Python."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    return value


def first_text(messages: Sequence[Mapping[str, Any]], role: str) -> str | None:
    """The text of the first message with `role`, or None."""
    for message in messages:
        if message.get("role") == role:
            return message_text(message.get("content"))
    return None


def message_text(content: Any) -> str:
    """A message's text (verl may hand multimodal content lists)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def turn_scores(session: DialogSession) -> list[float]:
    """Applied delta / 100 per turn; NaN for the turn on which the simulator failed."""
    scores = [turn.delta / 100.0 for turn in session.turns]
    if session.terminal_reason == "simulator_error" and scores:
        scores[-1] = float("nan")
    return scores
