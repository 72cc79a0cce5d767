"""`DialogSession`: one emotional-support dialogue, the async core of every layer above it.

A `DialogConfig` says how dialogues are set up (simulator, mood rules, think-then-say,
reward mode, the agent's system prompt); `config.session(persona, rng)` opens one. The
single-agent and vector envs, the rollout engine, the PettingZoo env, replays, the
trainer adapters and the reference trainers all drive their dialogues through this
module, so the mechanics (think parsing, mood updates, endings, rewards, error handling)
live in one place.

Layering: this module sits above `simulators` (and `personas`, `mood`) and below `envs`,
`episodes`, `rollout` and everything else; it imports nothing from the layers above.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from dialog_gym._options import check_names, did_you_mean
from dialog_gym.mood import MoodRules, MoodUpdate, TerminalReason, get_rules, is_goodbye, mood_bucket
from dialog_gym.personas import Persona
from dialog_gym.simulators import DEFAULT_SIMULATOR, DEFAULT_STYLE, make_simulator, simulator_entry, style_option
from dialog_gym.simulators.base import Appraisal, Response, Simulator
from dialog_gym.text_guard import ReplyGuard
from dialog_gym.types import Message, Usage

REWARD_MODES = ("terminal", "dense")
F = TypeVar("F", bound=Callable[..., Any])

AGENT_SYSTEM_PROMPTS = {
    "en": (
        "You are a warm, perceptive friend. The user wants to talk about something that is "
        "weighing on them. Reply the way a caring person would in a chat: naturally, briefly, "
        "and in response to what they actually said."
    ),
    "zh": "你是一位温暖、敏锐的朋友。对方想和你聊聊让他困扰的事情。请像一个真正关心他的人那样在聊天中回复：自然、简短，并回应他真正说的话。",
}
THINK_INSTRUCTIONS = {
    "en": " First think privately inside <think>...</think>, then write your reply after the closing tag.",
    "zh": "先在<think>...</think>中私下思考，然后在结束标签之后写出你的回复。",
}

_THINK = re.compile(r"^\s*<think>(.*?)</think>(.*)$", re.DOTALL)
_THINK_TAGS = re.compile(r"</?think>")


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator in exactly the state of `rng`."""
    clone = np.random.Generator(type(rng.bit_generator)())
    clone.bit_generator.state = rng.bit_generator.state
    return clone


def agent_system_prompt(language: str, think: bool) -> str:
    prompt = AGENT_SYSTEM_PROMPTS[language]
    return prompt + THINK_INSTRUCTIONS[language] if think else prompt


def parse_think(action: str) -> tuple[str | None, str, bool]:
    """Split `<think>thought</think>reply`; returns `(thought, reply, format_ok)`.

    A well-formed action has one think block first and a non-empty reply after it. A broken
    one (no block, unclosed or repeated tags, empty reply) has its tags stripped and is
    passed on whole as the reply, with `format_ok=False`.
    """
    match = _THINK.match(action)
    if match and "<think>" not in match.group(2) and "</think>" not in match.group(2) and match.group(2).strip():
        return match.group(1).strip(), match.group(2).strip(), True
    return None, _THINK_TAGS.sub("", action).strip(), False


@dataclass
class TurnRecord:
    """One agent reply and the simulated user's reaction to it."""

    turn: int
    action: str  # the agent's raw output
    reply: str  # what reached the simulator (the action without its thought)
    thought: str | None
    format_ok: bool
    user_reply: str  # empty when the simulator failed
    requested_delta: int
    delta: int
    mood: int
    reasoning: str
    clamped: bool
    wants_to_end: bool
    usage: Usage = field(default_factory=Usage)
    errors: tuple[str, ...] = ()
    raw: tuple[str, ...] = ()
    reply_cut: bool = False  # the reply was longer than the config's `reply_guard` lets through
    action_repaired: bool = False  # the action held text UTF-8 cannot encode, replaced by U+FFFD


@dataclass(frozen=True)
class DialogConfig:
    """How every dialogue of an env or a rollout is set up: everything but persona and RNG.

    Every entry point takes one as `config`: the single-agent env, the vector env, the
    PettingZoo env, the rollout engine, the evaluation runner, the trainer adapters (TRL,
    verl) and the reference trainers. Each also takes the arguments of `DialogConfig.create`
    as keyword arguments, a convenience that builds the config (`takes_dialog_config`).

    `DialogConfig()` is the default set-up (the calibrated judge, the `rlver` preset);
    `DialogConfig.create(...)` builds a simulator by name with its options.

    Attributes:
        simulator: appraises each agent reply and answers in character (a name is built
            with its default options).
        rules: the mood mechanics (start, clamp, endings, max turns), or a preset name.
        think: agent actions are `<think>...</think>reply`; only the reply is passed on.
        reward_mode: `"terminal"` (final mood / 100 on the last step, RLVER) or `"dense"`
            (additionally the applied change / 100 on every step).
        format_penalty: subtracted from a step's reward when a think action is malformed.
        system_prompt: the agent's system message; None: a default per persona language.
        reply_guard: what of each action may reach the simulator (`dialog_gym.text_guard.ReplyGuard`,
            or a mapping of its fields): at most 8,000 characters by default, an optional
            token budget, and an error naming the action for text UTF-8 cannot encode.
    """

    simulator: Simulator = DEFAULT_SIMULATOR  # type: ignore[assignment]  # a name is resolved on creation
    rules: MoodRules = "rlver"  # type: ignore[assignment]  # a preset name is resolved on creation
    think: bool = False
    reward_mode: str = "terminal"
    format_penalty: float = 0.0
    system_prompt: str | None = None
    reply_guard: ReplyGuard = field(default_factory=ReplyGuard)

    def __post_init__(self) -> None:
        if self.reward_mode not in REWARD_MODES:
            raise ValueError(f"unknown reward_mode {self.reward_mode!r}; expected one of {REWARD_MODES}")
        if isinstance(self.simulator, str):
            object.__setattr__(self, "simulator", make_simulator(self.simulator))
        if isinstance(self.rules, str):
            object.__setattr__(self, "rules", get_rules(self.rules))
        if not isinstance(self.rules, MoodRules):
            raise TypeError(f"rules must be a MoodRules or a preset name (see dialog_gym.mood.PRESETS), got {type(self.rules).__name__}")
        object.__setattr__(self, "format_penalty", float(self.format_penalty))
        object.__setattr__(self, "reply_guard", ReplyGuard.resolve(self.reply_guard))

    @classmethod
    def create(
        cls,
        simulator: str | Simulator = DEFAULT_SIMULATOR,
        rules: str | MoodRules = "rlver",
        *,
        simulator_options: Mapping[str, Any] | None = None,
        style: str = DEFAULT_STYLE,
        think: bool = False,
        reward_mode: str = "terminal",
        format_penalty: float = 0.0,
        system_prompt: str | None = None,
        reply_guard: ReplyGuard | Mapping[str, Any] | None = None,
    ) -> DialogConfig:
        """A config with its names resolved.

        Arguments:
            simulator: a registered simulator's name (`"calibrated"`, `"rule"`, `"openai"`,
                `"transformers"`, `"replay"`, ...; see `dialog_gym.simulators`) or a
                `Simulator` instance.
            rules: a preset name (`"rlver"`, `"sage"`, or one added with
                `dialog_gym.mood.register_rules`) or a `MoodRules`.
            simulator_options: the options of a simulator built by name (`{"model": ...,
                "base_url": ...}` for `"openai"`, `{"judge": PATH}` for `"calibrated"`),
                checked against those it declares; an unknown one raises a `TypeError`
                naming the closest.
            style: `"vanilla"` or `"challenging"`, for a simulator built by name (one that
                declares no `style` option plays vanilla only).
            think, reward_mode, format_penalty, system_prompt, reply_guard: the attributes.
        """
        if isinstance(simulator, str):
            options = dict(simulator_options or {})
            if "style" in options:
                raise ValueError("style is a DialogConfig argument: pass style=..., not simulator_options={'style': ...}")
            built = make_simulator(simulator, **style_option(simulator, style), **options)
        else:
            built = make_simulator(simulator, **dict(simulator_options or {}))
        return cls(
            built, get_rules(rules), think=think, reward_mode=reward_mode, format_penalty=format_penalty,
            system_prompt=system_prompt, reply_guard=reply_guard,
        )

    @classmethod
    def resolve(
        cls,
        config: "DialogConfig | Mapping[str, Any] | None" = None,
        fields: Mapping[str, Any] | None = None,
        *,
        defaults: Mapping[str, Any] | None = None,
    ) -> "DialogConfig":
        """The one way an entry point turns what it was given into a config.

        `config` is a `DialogConfig` (used as it is), a mapping of `create`'s arguments (how
        an env id's YAML spec, or a verl config block, states its set-up), or None. `fields`
        are `create`'s arguments given beside it: they update a mapping, and cannot be
        combined with a `DialogConfig` (change one with `dataclasses.replace`). `defaults`
        are the entry point's own defaults, below both.
        """
        fields = dict(fields or {})
        if isinstance(config, DialogConfig):
            if fields:
                raise TypeError(
                    f"config is a DialogConfig, so {', '.join(sorted(fields))} cannot be given beside it: set them "
                    "in the config (DialogConfig.create(...), or dataclasses.replace(config, ...))"
                )
            return config
        if config is None:
            given: dict[str, Any] = {}
        elif isinstance(config, Mapping):
            given = dict(config)
            check_names(given, CONFIG_FIELDS, what="DialogConfig field", where="in the config mapping")
        else:
            hint = f"; did you mean simulator={config!r}?" if isinstance(config, str) else ""
            raise TypeError(f"config must be a DialogConfig or a mapping of its fields, got {type(config).__name__}{hint}")
        return cls.create(**{**dict(defaults or {}), **given, **fields})

    def session(self, persona: Persona, rng: np.random.Generator) -> "DialogSession":
        """A new dialogue with `persona`, every random choice drawn from `rng`."""
        return DialogSession(self, persona, rng)

    async def aclose(self) -> None:
        """Close the simulator's connections (HTTP clients, model workers), if it holds any."""
        aclose = getattr(self.simulator, "aclose", None)
        if aclose is not None:
            await aclose()

    async def open_group(self, persona: Persona, rng: np.random.Generator, size: int) -> list["DialogSession"]:
        """Open a GRPO group: `size` started dialogues with `persona` that share the opening
        line and the generator state after it.

        The first member draws the opening with `rng` itself; every other member starts
        from that line with its own copy of `rng` in the state after it. So, given the same
        replies, the members play identical episodes, and what differs between them is only
        what the agent says. A failed opening ends every member at once as a
        `simulator_error` episode (see `DialogSession.start`), never an exception.
        """
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"a group needs a positive int size, got {size!r}")
        leader = self.session(persona, rng)
        opening = await leader.start()
        group = [leader]
        for _ in range(size - 1):
            member = self.session(persona, copy_generator(rng))
            if leader.done:
                member._fail_opening(leader.error or "opening failed", Usage())
            else:
                await member.start(opening)
            group.append(member)
        return group


class UsesDialogConfig:
    """The simulator and mood rules of the `DialogConfig` an object holds as `config`
    (the envs, the trainer adapters and every session)."""

    config: DialogConfig

    @property
    def simulator(self) -> Simulator:
        return self.config.simulator

    @property
    def rules(self) -> MoodRules:
        return self.config.rules


# The arguments of `DialogConfig.create`: what every entry point also takes by keyword.
_CREATE_PARAMETERS: tuple[inspect.Parameter, ...] = tuple(
    p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
    for name, p in inspect.signature(DialogConfig.create).parameters.items()
    if name != "cls"
)
CONFIG_FIELDS: tuple[str, ...] = tuple(p.name for p in _CREATE_PARAMETERS)


def takes_dialog_config(
    function: F | None = None,
    /,
    *,
    closes: bool = False,
    base: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    **defaults: Any,
) -> Any:
    """Let an entry point taking `config` also take `DialogConfig.create`'s arguments by keyword.

    `function(..., config=None, ...)` gets the signature of its own parameters followed by
    `create`'s (keyword-only, so `help` and `inspect.signature` show them all) and receives
    `config` resolved by `DialogConfig.resolve`: the given `DialogConfig`, or one built from
    a mapping and the keyword arguments. `defaults` change `create`'s defaults for this
    entry point (`rules="sage"` for the benchmark).

    A keyword that is neither the entry point's nor `create`'s raises a `TypeError` naming
    the closest spelling. One that the simulator declares as an option (the old way to pass
    them, `gym.make(..., simulator="openai", model=...)`) still works, with a
    `DeprecationWarning`: pass `simulator_options={...}`.

    `closes=True` (one-shot async entry points): a simulator the call built from a name is
    closed when the call ends; a `DialogConfig` passed in is left open.

    `base(arguments)`: a mapping of config fields below those given, read from the call's
    other arguments (the spec of the env id an entry point serves, as `gym.make` does).
    """

    def decorate(function: F) -> F:
        own = inspect.signature(function)
        if "config" not in own.parameters or any(p.kind is p.VAR_KEYWORD for p in own.parameters.values()):
            raise TypeError(f"{function.__qualname__} needs a 'config' parameter and no **kwargs to take a DialogConfig's fields")
        parameters = [p.replace(default=defaults[p.name]) if p.name in defaults else p for p in _CREATE_PARAMETERS]
        signature = own.replace(parameters=[*own.parameters.values(), *parameters])
        owner = function.__qualname__.removesuffix(".__init__")

        def resolve(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[inspect.BoundArguments, bool]:
            fields = {name: kwargs.pop(name) for name in list(kwargs) if name in CONFIG_FIELDS}
            unknown = {name: kwargs.pop(name) for name in list(kwargs) if name not in own.parameters}
            bound = own.bind(*args, **kwargs)
            config = bound.arguments.get("config")
            if base is not None and not isinstance(config, DialogConfig):
                config = {**base(bound.arguments), **dict(config or {})}
            if unknown:
                _legacy_simulator_options(owner, signature, config, unknown, fields, defaults)
            bound.arguments["config"] = DialogConfig.resolve(config, fields, defaults=defaults)
            return bound, not isinstance(config, DialogConfig) and _named_simulator(config, fields, defaults)

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def async_entry(*args: Any, **kwargs: Any) -> Any:
                bound, built = resolve(args, kwargs)
                try:
                    return await function(*bound.args, **bound.kwargs)
                finally:
                    if closes and built:
                        await bound.arguments["config"].aclose()

            entry: Any = async_entry
        else:

            @functools.wraps(function)
            def entry(*args: Any, **kwargs: Any) -> Any:
                bound, _ = resolve(args, kwargs)
                return function(*bound.args, **bound.kwargs)

        entry.__signature__ = signature
        return entry  # type: ignore[return-value]

    return decorate(function) if function is not None else decorate


def _named_simulator(config: Any, fields: Mapping[str, Any], defaults: Mapping[str, Any]) -> bool:
    """Whether the simulator of a config built from these arguments was built from a name."""
    given = {**defaults, **(dict(config) if isinstance(config, Mapping) else {}), **fields}
    return isinstance(given.get("simulator", DEFAULT_SIMULATOR), str)


def _closest(name: str, own: Collection[str], options: Collection[str]) -> str:
    """The name with its closest spelling among the entry point's own keywords, else the simulator's options."""
    hint = did_you_mean(name, own)
    return hint if hint != repr(name) else did_you_mean(name, options)


def _legacy_simulator_options(
    owner: str, signature: inspect.Signature, config: Any, unknown: dict[str, Any],
    fields: dict[str, Any], defaults: Mapping[str, Any],
) -> None:
    """Move simulator options passed as plain keywords (`unknown`) into
    `fields["simulator_options"]` (deprecated), or raise naming the keyword that fits nowhere."""
    given = {**defaults, **(dict(config) if isinstance(config, Mapping) else {}), **fields}
    simulator = given.get("simulator", DEFAULT_SIMULATOR)
    declared = simulator_entry(simulator).options if isinstance(simulator, str) else frozenset()
    known = [name for name in signature.parameters if name != "self"]
    strays = [name for name in unknown if name not in declared]
    if strays:
        hints = ", ".join(_closest(name, known, declared) for name in strays)
        where = ""
        if isinstance(simulator, str):
            takes = ", ".join(sorted(declared)) or "none"
            where = f"; options of the {simulator!r} simulator go in simulator_options={{...}} (it takes: {takes})"
        raise TypeError(
            f"{owner}() got unknown keyword argument{'s' if len(strays) > 1 else ''} {hints}; "
            f"its keyword arguments are: {', '.join(known)}{where}"
        )
    options = dict(given.get("simulator_options") or {})
    moved = dict(unknown)
    twice = sorted(set(moved) & set(options))
    if twice:
        raise TypeError(f"{owner}(): {', '.join(twice)} given both as keywords and in simulator_options")
    warnings.warn(
        f"{owner}(): passing simulator options as keywords ({', '.join(sorted(moved))}) is deprecated; "
        f"pass simulator_options={{{', '.join(f'{k!r}: ...' for k in sorted(moved))}}}",
        DeprecationWarning,
        stacklevel=4,
    )
    fields["simulator_options"] = {**options, **moved}


@dataclass(frozen=True)
class StepOutcome:
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class DialogSession(UsesDialogConfig):
    """One dialogue between an agent and a simulated user; open it with `config.session(persona, rng)`.

    Arguments:
        config: the simulator, the mood rules and the agent-side settings (see `DialogConfig`).
        persona: who the simulated user is.
        rng: the generator for every random choice of this dialogue.

    `system_prompt` is the config's, or a default in the persona's language.
    """

    def __init__(self, config: DialogConfig, persona: Persona, rng: np.random.Generator):
        self.config = config
        self.persona = persona
        self.rng = rng
        self.system_prompt = config.system_prompt or agent_system_prompt(persona.language, config.think)
        self.mood = config.rules.start
        self.turns: list[TurnRecord] = []
        self.history: list[Message] = []  # without the system prompt
        self.terminal_reason: TerminalReason | None = None
        self.error: str | None = None
        self.usage = Usage()
        self.opening: str | None = None

    # -- state ----------------------------------------------------------------------------
    @property
    def think(self) -> bool:
        return self.config.think

    @property
    def turn(self) -> int:
        return len(self.turns)

    @property
    def done(self) -> bool:
        return self.terminal_reason is not None

    @property
    def messages(self) -> list[Message]:
        """The conversation from the agent's side, system prompt first (chat-template ready)."""
        return [{"role": "system", "content": self.system_prompt}, *self.history]

    @property
    def reward(self) -> float:
        """The episode's terminal reward: final mood / 100 (0 after a simulator error)."""
        return 0.0 if self.terminal_reason == "simulator_error" else self.rules.reward(self.mood)

    # -- the dialogue ---------------------------------------------------------------------
    async def start(self, opening: str | None = None) -> str:
        """The simulated user's opening line.

        `opening`, when given, is used instead of asking the simulator (the members of a
        GRPO group share one, see `DialogConfig.open_group`). If the simulator fails, the
        episode ends at once like a failed step: `terminal_reason="simulator_error"`, the
        error in `error`, no reward, and the opening line is `""`.
        """
        if self.opening is not None:
            raise RuntimeError("DialogSession.start() called twice; create a new session per episode")
        if opening is not None and not isinstance(opening, str):
            raise TypeError(f"opening must be a str, got {type(opening).__name__}")
        if opening is None:
            try:
                opening = await self.simulator.open(self.persona, self.rng)
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:  # recorded as a simulator_error episode, never a crash
                self._fail_opening(f"opening failed: {type(exc).__name__}: {exc}", getattr(exc, "usage", None) or Usage())
                return ""
        self.opening = opening
        self.history.append({"role": "user", "content": opening})
        return opening

    def _fail_opening(self, error: str, usage: Usage) -> None:
        self.opening = ""
        self.error = error
        self.usage.add(usage)
        self.terminal_reason = "simulator_error"

    async def step(self, action: str) -> StepOutcome:
        """The agent says `action`: the simulator appraises it, the mood rules move the mood,
        the simulator answers at the new mood."""
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the agent's reply), got {type(action).__name__}")
        if self.opening is None:
            raise RuntimeError("step() before reset(): call reset() to start an episode")
        if self.done:
            raise RuntimeError(
                f"step() after the episode ended ({self.terminal_reason} at turn {self.turn}); call reset()"
            )
        action, repaired = self.config.reply_guard.encodable(action)  # raises naming the action, or repairs it
        thought, reply, format_ok = parse_think(action) if self.think else (None, action, True)
        reply, cut = self.config.reply_guard.cap(reply)
        history = tuple(self.history)
        appraisal: Appraisal | None = None
        try:
            appraisal = await self.simulator.appraise(self.persona, self.mood, history, reply, rules=self.rules, rng=self.rng)
            update = self.rules.apply(self.mood, appraisal.delta)  # the one place mood rules are applied
            response = await self.simulator.respond(self.persona, history, reply, appraisal, mood=update.mood, rng=self.rng)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a simulator or backend failure ends the episode cleanly
            return self._fail(action, reply, thought, format_ok, exc, appraisal, reply_cut=cut, action_repaired=repaired)
        return self._advance(action, reply, thought, format_ok, appraisal, update, response, reply_cut=cut, action_repaired=repaired)

    def _advance(
        self, action: str, reply: str, thought: str | None, format_ok: bool,
        appraisal: Appraisal, update: MoodUpdate, response: Response, *, reply_cut: bool = False,
        action_repaired: bool = False,
    ) -> StepOutcome:
        self.mood = update.mood
        goodbye = response.wants_to_end or is_goodbye(response.text)
        usage = appraisal.usage + response.usage
        self.turns.append(
            TurnRecord(
                turn=self.turn + 1,
                action=action,
                reply=reply,
                thought=thought,
                format_ok=format_ok,
                user_reply=response.text,
                requested_delta=update.requested_delta,
                delta=update.delta,
                mood=update.mood,
                reasoning=appraisal.reasoning,
                clamped=update.clamped,
                wants_to_end=goodbye,
                usage=usage,
                errors=appraisal.errors + response.errors,
                raw=appraisal.raw + response.raw,
                reply_cut=reply_cut,
                action_repaired=action_repaired,
            )
        )
        self.usage.add(usage)
        self.history.append({"role": "assistant", "content": reply})
        self.history.append({"role": "user", "content": response.text})
        self.terminal_reason = self.rules.terminal_reason(self.mood, self.turn, goodbye)
        reward = update.delta / 100.0 if self.config.reward_mode == "dense" else 0.0
        if self.done:
            reward += self.reward
        if not format_ok:
            reward -= self.config.format_penalty
        return StepOutcome(response.text, reward, self.done, False, self.info())

    def _fail(
        self, action: str, reply: str, thought: str | None, format_ok: bool,
        exc: BaseException, appraisal: Appraisal | None, *, reply_cut: bool = False,
        action_repaired: bool = False,
    ) -> StepOutcome:
        """Record the failed turn (with whatever the appraisal spent) and end the episode."""
        self.error = f"{type(exc).__name__}: {exc}"
        usage = (appraisal.usage if appraisal else Usage()) + (getattr(exc, "usage", None) or Usage())
        recovered = (appraisal.errors if appraisal else ()) + tuple(getattr(exc, "errors", ()))
        raw = (appraisal.raw if appraisal else ()) + tuple(getattr(exc, "raw_outputs", ()))
        self.turns.append(
            TurnRecord(
                turn=self.turn + 1, action=action, reply=reply, thought=thought, format_ok=format_ok,
                user_reply="", requested_delta=0, delta=0, mood=self.mood, reasoning="",
                clamped=False, wants_to_end=False, usage=usage, errors=(*recovered, self.error), raw=raw,
                reply_cut=reply_cut, action_repaired=action_repaired,
            )
        )
        self.usage.add(usage)
        self.history.append({"role": "assistant", "content": reply})
        self.terminal_reason = "simulator_error"
        # Not a real end of the task: report it as a truncation, with no invented reward.
        return StepOutcome("", 0.0, False, True, self.info())

    def info(self) -> dict[str, Any]:
        """The `info` dict of the latest reset or step (see `EmpathyDialogEnv`)."""
        last = self.turns[-1] if self.turns else None
        return {
            "messages": self.messages,
            "turn": self.turn,
            "mood": self.mood,
            "mood_bucket": mood_bucket(self.mood),
            "emotion_delta": last.delta if last else 0,
            "terminal_reason": self.terminal_reason,
            "format_ok": last.format_ok if last else True,
            "reply_cut": last.reply_cut if last else False,
            "action_repaired": last.action_repaired if last else False,
            "persona_id": self.persona.id,
            "language": self.persona.language,
            "usage": self.usage.to_dict(),
            "error": self.error,
            "privileged": {
                "hidden_need": self.persona.hidden_need.value,
                "character_type": self.persona.character_type.value,
                "reasoning": last.reasoning if last else "",
                "requested_delta": last.requested_delta if last else 0,
                "clamped": last.clamped if last else False,
                "thought": last.thought if last else None,
                "simulator_errors": list(last.errors) if last else [],
            },
        }
