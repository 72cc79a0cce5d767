"""`LLMSimulator`: a language model plays the user, SAGE-style (appraise, then respond).

Each agent reply costs two backend calls, the two halves of the `Simulator` protocol:

1. **Appraise** (`appraise`, JSON requested): what the agent meant, how it fits the hidden need, the
   character's inner reaction and feeling, then the signed mood change. The output is
   parsed strictly (`parse_appraisal`): a JSON object with an integer `change`, or, as a
   repair, a JSON object buried in prose or code fences, sloppy JSON, or tagged sections
   (`change: +5`). Unparseable output is sent back with the problem named and retried
   (`max_appraisal_attempts` in all); when the reasoning is there but the change is not
   (weak models ramble until the token budget runs out), the change alone is asked for,
   prefilled with `{"change": ` on backends that continue an assistant message, and joined
   to the salvaged reasoning; a final failure raises `SimulatorError` with every
   raw output, so the episode ends with `terminal_reason="simulator_error"` and no score
   is ever invented. A change outside the preset's clamp is flagged in `errors` (the
   session clamps it and records `clamped`); a change beyond ±100 is cut to ±100.
2. **Respond** (`respond`): the in-character message, conditioned on the mood *bucket*
   after the session applied the change, and on the appraisal's inner reaction and
   feeling. It is cleaned (`clean_reply`) of leaked reasoning, role prefixes and quotes;
   an empty result is retried once. At bucket S or F the user says goodbye.

Callers that only need the judgement (re-scoring, the PettingZoo judge) call `appraise`
alone and save the second call. Backend retries (429, timeouts...) happen inside the
backend; they and parse repairs are listed in the `Appraisal`'s or `Response`'s `errors`,
and their tokens in its `usage`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from dialog_gym.backends.base import Backend, BackendError, Completion
from dialog_gym.mood import MoodRules, is_goodbye, mood_bucket
from dialog_gym.personas import Persona
from dialog_gym.simulators import prompts
from dialog_gym.simulators.base import Appraisal, Response, SimulatorError
from dialog_gym.text_guard import repair_unencodable
from dialog_gym.types import Message, Usage

PROMPT_VERSION = 1
CHANGE_PREFILL = '{"change": '  # starts the answer to a change-only repair where the backend allows
MAX_ABS_CHANGE = 100
_SIMULATOR_KEYS = {
    "style", "language", "temperature", "appraisal_temperature", "max_tokens_appraisal", "max_tokens_reply",
    "max_appraisal_attempts", "max_reply_attempts", "request_json",
}


# -- parsing the appraisal ----------------------------------------------------------------
class AppraisalParseError(ValueError):
    """The appraisal output holds no usable integer `change` (the message names why)."""


@dataclass(frozen=True)
class ParsedAppraisal:
    """What `parse_appraisal` read from one appraisal output."""

    change: int
    fields: dict[str, str]  # intent, need_fit, inner_reaction, feeling (those present)
    repaired: str | None  # None: strict JSON; otherwise what had to be repaired

    @property
    def reasoning(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.fields.items() if v)


def appraisal_summary(appraisal: Appraisal) -> str:
    """The inner reaction and feeling of an appraisal, for the response prompt."""
    parts = [str(appraisal.detail.get(k, "")) for k in ("inner_reaction", "feeling")]
    return " ".join(p for p in parts if p) or appraisal.reasoning


_FIELD_KEYS = tuple(k for k in prompts.APPRAISAL_KEYS if k != "change")
_CODE_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PLUS_NUMBER = re.compile(r'("change"\s*:\s*)\+(\d)')
_TAGGED_CHANGE = re.compile(r"""["']?(?:change|变化|情绪变化)["']?\s*[:：=]\s*["']?([+-]?\s*\d+)(?![.\d])""", re.IGNORECASE)
_TAGGED_FIELD = re.compile(r"""^\s*(?:\d+[.)]\s*)?["']?(intent|need_fit|inner_reaction|feeling)["']?\s*[:：]\s*(.+?)\s*,?$""",
                           re.IGNORECASE | re.MULTILINE)
_INT_TEXT = re.compile(r"^\s*([+-]?)\s*(\d+)\s*$")


def _first_object(text: str) -> str | None:
    """The first balanced `{...}` in `text` (string-aware), or None."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def _as_change(value: Any) -> int:
    if isinstance(value, bool):
        raise AppraisalParseError(f"'change' must be a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        match = _INT_TEXT.match(value)
        if match:
            return int(match.group(1) + match.group(2))
    raise AppraisalParseError(f"'change' must be a whole number, got {value!r:.40}")


def _from_object(data: Any) -> tuple[int, dict[str, str]]:
    if not isinstance(data, dict):
        raise AppraisalParseError(f"expected a JSON object, got {type(data).__name__}")
    if "change" not in data:
        raise AppraisalParseError("the JSON object has no 'change' key")
    fields = {k: str(data[k]).strip() for k in _FIELD_KEYS if data.get(k) is not None}
    return _as_change(data["change"]), fields


_JSON_FIELD = re.compile(r'"(intent|need_fit|inner_reaction|feeling)"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)


def salvage_fields(text: str) -> dict[str, str]:
    """The appraisal's text fields from output that has no usable change (possibly cut off)."""
    fields: dict[str, str] = {}
    for match in _JSON_FIELD.finditer(text):
        value = match.group(2).strip()
        if value and match.group(1) not in fields:
            fields[match.group(1)] = value
    return fields


def parse_appraisal(text: str) -> ParsedAppraisal:
    """Parse an appraisal output; raises `AppraisalParseError` naming what is wrong.

    Strict: the whole output is one JSON object with an integer `change`. Repairs, flagged
    in `ParsedAppraisal.repaired`: a code fence or prose around the object, trailing commas, a
    `+5` number, a numeric string, or tagged sections (`change: +5`) without JSON.
    """
    stripped = text.strip()
    if not stripped:
        raise AppraisalParseError("the output is empty")
    try:
        data = json.loads(stripped)
    except ValueError:
        pass
    else:
        change, fields = _from_object(data)  # valid JSON: its 'change' must be usable
        strict = type(data["change"]) is int
        return ParsedAppraisal(change, fields, None if strict else "a non-integer JSON number or string for 'change'")
    fenced = _CODE_FENCE.search(stripped)
    candidate = _first_object(fenced.group(1) if fenced else stripped)
    problem = "no JSON object found"
    if candidate is not None:
        for label, fixed in (
            ("extra text around the JSON object", candidate),
            ("sloppy JSON (trailing commas or a '+' sign)", _PLUS_NUMBER.sub(r"\1\2", _TRAILING_COMMA.sub(r"\1", candidate))),
        ):
            try:
                change, fields = _from_object(json.loads(fixed))
                return ParsedAppraisal(change, fields, label)
            except AppraisalParseError:
                raise  # valid JSON without a usable change: no guessing from the prose
            except ValueError as exc:
                problem = f"invalid JSON ({exc})"
    tagged = _TAGGED_CHANGE.search(stripped)
    if tagged:
        change = int(tagged.group(1).replace(" ", ""))
        fields = {m.group(1).lower(): m.group(2).strip().strip('"') for m in _TAGGED_FIELD.finditer(stripped)}
        return ParsedAppraisal(change, fields, "tagged sections instead of JSON")
    raise AppraisalParseError(problem if candidate is not None else "no JSON object and no 'change: N' line found")


# -- cleaning the reply -------------------------------------------------------------------
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FINAL_LABEL = re.compile(
    r"(?:^|\n)\s*\**(?:final(?: message| reply| version)?|rewrite|rewritten|(?:your )?(?:next |first )?(?:reply|message)|"
    r"最终(?:回复|消息)?|改写后?|回复|你的(?:下一条|第一条)?消息)\**\s*[:：]\s*",
    re.IGNORECASE,
)
_LEAK_LINE = re.compile(
    r"^\s*[\*#(（\[]*\s*(?:attitude|plan|goal|tone|content|draft|reasoning|analysis|appraisal|note|thoughts?|mood(?: level)?|"
    r"态度|目标|语气|内容|草稿|分析|评估|备注|注|心情等级)\s*[\*)）\]]*\s*[:：]", re.IGNORECASE
)
_OTHER_SPEAKER = re.compile(r"^\s*\**(?:supporter|assistant|agent|倾听者|助手)\**\s*[:：]", re.IGNORECASE)
_QUOTE_PAIRS = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), ("*", "*"))


def clean_reply(text: str, speaker_names: Sequence[str] = ()) -> str:
    """The words the simulated user sends, without leaked reasoning, role prefixes or quotes."""
    text = _THINK_BLOCK.sub("", text).strip()
    obj = _first_object(text) if text.startswith("{") else None
    if obj is not None:
        try:
            data = json.loads(obj)
            for key in ("reply", "response", "message", "content", "text"):
                if isinstance(data, dict) and isinstance(data.get(key), str):
                    text = data[key]
                    break
        except ValueError:
            pass
    finals = list(_FINAL_LABEL.finditer(text))
    if finals:
        text = text[finals[-1].end() :]
    lines = []
    for line in text.splitlines():
        if _OTHER_SPEAKER.match(line):
            break  # the model went on to write the supporter's turn
        if _LEAK_LINE.match(line):
            continue
        lines.append(line)
    text = " ".join(part.strip() for part in lines if part.strip())
    names = [re.escape(n) for n in (*speaker_names, "you", "user", "me", "seeker", "help-seeker", "用户", "我", "你", "倾诉者")]
    prefix = re.compile(rf"^\s*\**(?:{'|'.join(names)})\**\s*[:：]\s*", re.IGNORECASE)
    previous = None
    while previous != text:
        previous = text
        text = prefix.sub("", text).strip()
        for left, right in _QUOTE_PAIRS:
            if len(text) >= 2 and text.startswith(left) and text.endswith(right) and left not in text[1:-1]:
                text = text[1:-1].strip()
    return re.sub(r"\s+", " ", text).strip()


# -- the simulator ------------------------------------------------------------------------
class LLMSimulator:
    """A user simulator backed by a language model (see the module docstring).

    Arguments:
        backend: any `Backend` (`OpenAIBackend`, `TransformersBackend`, `CachedBackend`...).
        style: `"vanilla"` (expressive, forgiving, may hint at the need) or `"challenging"`
            (reserved, demanding, never hints).
        language: `"en"` or `"zh"` prompts; None (default) follows each persona's language.
        temperature: sampling temperature of the response call (and of the appraisal
            unless `appraisal_temperature` is set). Each call's seed is drawn from the
            episode's generator, so a seeded episode on a deterministic backend repeats.
        max_tokens_appraisal, max_tokens_reply: completion budgets of the two calls.
        max_appraisal_attempts: appraisal calls per turn before giving up (repairs included).
        max_reply_attempts: response calls per turn before giving up on empty replies.
        request_json: ask the backend for JSON mode on the appraisal call.
    """

    name = "llm"

    def __init__(
        self,
        backend: Backend,
        *,
        style: str = "vanilla",
        language: str | None = None,
        temperature: float = 0.7,
        appraisal_temperature: float | None = None,
        max_tokens_appraisal: int = 320,
        max_tokens_reply: int = 120,
        max_appraisal_attempts: int = 3,
        max_reply_attempts: int = 2,
        request_json: bool = True,
    ):
        prompts.check_style(style)
        if language is not None:
            prompts.texts(language)
        if max_appraisal_attempts < 1 or max_reply_attempts < 1:
            raise ValueError("max_appraisal_attempts and max_reply_attempts must be >= 1")
        self.backend = backend
        self.style = style
        self.language = language
        self.temperature = float(temperature)
        self.appraisal_temperature = float(temperature if appraisal_temperature is None else appraisal_temperature)
        self.max_tokens_appraisal = max_tokens_appraisal
        self.max_tokens_reply = max_tokens_reply
        self.max_appraisal_attempts = max_appraisal_attempts
        self.max_reply_attempts = max_reply_attempts
        self.request_json = request_json

    @classmethod
    def from_backend_name(cls, name: str, **kwargs: Any) -> "LLMSimulator":
        """Build the simulator and its backend from one flat set of keyword arguments.

        `name="openai"`: `OpenAIBackend(model=..., base_url=..., api_key=..., ...)`;
        `name="transformers"`: `TransformersBackend(model_path=..., ...)`. `cache=PATH`
        wraps the backend in a `CachedBackend`. The simulator's own arguments (`style`,
        `language`, `temperature`, ...) are taken out first; the rest go to the backend.
        """
        from dialog_gym.backends.factory import make_backend

        sim_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _SIMULATOR_KEYS}
        backend = make_backend(name, **kwargs)
        return cls(backend, **sim_kwargs)

    @staticmethod
    def options(backend_name: str) -> frozenset[str]:
        """The keyword arguments `from_backend_name(backend_name, ...)` takes: the simulator's
        own and those the registered backend declares (`cache` included)."""
        from dialog_gym.backends.factory import backend_entry

        return frozenset(_SIMULATOR_KEYS | backend_entry(backend_name).options)

    def __repr__(self) -> str:
        return f"LLMSimulator({self.backend!r}, style={self.style!r}, language={self.language!r})"

    def identity(self) -> dict[str, Any]:
        return {
            "simulator": "llm",
            "style": self.style,
            "language": self.language,
            "temperature": self.temperature,
            "appraisal_temperature": self.appraisal_temperature,
            "prompt_version": PROMPT_VERSION,
            "backend": self.backend.identity(),
        }

    async def aclose(self) -> None:
        aclose = getattr(self.backend, "aclose", None)
        if aclose is not None:
            await aclose()

    def _language(self, persona: Persona) -> str:
        return self.language or persona.language

    async def _call(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float, rng: np.random.Generator,
        json_mode: bool, usage: Usage, errors: list[str], raw: list[str],
    ) -> Completion:
        seed = int(rng.integers(0, 2**31 - 1))
        try:
            completion = await self.backend.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, json=json_mode)
        except BackendError as exc:
            usage.add(exc.usage)
            # Every failed attempt is recorded: the ones retried, then the one it gave up on.
            *retried, last = exc.errors or (str(exc),)
            errors.extend(f"backend retry: {e}" for e in retried)
            errors.append(f"backend gave up: {last}")
            raise SimulatorError(f"backend failed: {exc}", raw_outputs=raw, usage=usage, errors=errors) from exc
        usage.add(completion.usage)
        errors.extend(f"backend retry: {e}" for e in completion.errors)
        text = repair_unencodable(completion.text)
        if text is not completion.text:  # a server's `\ud83d`-style escape: no file or request could carry it
            errors.append("the backend's text held a lone surrogate (a broken \\u escape); replaced by U+FFFD")
            completion = dataclasses.replace(completion, text=text)
        raw.append(completion.text)
        return completion

    # -- the protocol ---------------------------------------------------------------------
    async def open(self, persona: Persona, rng: np.random.Generator) -> str:
        if persona.opening_line:
            return persona.opening_line
        language = self._language(persona)
        base = prompts.opening_messages(persona, style=self.style, language=language)
        messages, usage, errors, raw = list(base), Usage(), [], []
        for _ in range(self.max_reply_attempts):
            completion = await self._call(messages, max_tokens=self.max_tokens_reply, temperature=self.temperature,
                                          rng=rng, json_mode=False, usage=usage, errors=errors, raw=raw)
            opening = clean_reply(completion.text, (persona.name,))
            if opening:
                return opening
            errors.append("opening attempt empty after cleaning")
            messages = [*base, {"role": "assistant", "content": completion.text}, prompts.empty_reply_message(persona.name, language)]
        raise SimulatorError(
            f"no usable opening line after {self.max_reply_attempts} attempt(s)", raw_outputs=raw, usage=usage, errors=errors
        )

    async def appraise(
        self,
        persona: Persona,
        mood: int,
        history: Sequence[Message],
        reply: str,
        *,
        rules: MoodRules,
        rng: np.random.Generator,
    ) -> Appraisal:
        language = self._language(persona)
        usage, errors, raw = Usage(), [], []
        parsed = await self._ask_appraisal(persona, mood, history, reply, rules, rng, language, usage, errors, raw)
        delta = parsed.change
        if abs(delta) > MAX_ABS_CHANGE:
            errors.append(f"change {delta:+d} beyond ±{MAX_ABS_CHANGE}; cut to {MAX_ABS_CHANGE * (1 if delta > 0 else -1):+d}")
            delta = MAX_ABS_CHANGE if delta > 0 else -MAX_ABS_CHANGE
        update = rules.apply(mood, delta)  # only to flag a clamp; the session applies the change
        if update.clamped:
            errors.append(f"change {delta:+d} outside the {rules.name} preset's clamp; applied {update.delta:+d}")
        return Appraisal(
            delta=delta, fit="", reasoning=parsed.reasoning, usage=usage, errors=tuple(errors), raw=tuple(raw),
            detail=dict(parsed.fields),
        )

    async def respond(
        self,
        persona: Persona,
        history: Sequence[Message],
        reply: str,
        appraisal: Appraisal,
        *,
        mood: int,
        rng: np.random.Generator,
    ) -> Response:
        language = self._language(persona)
        usage, errors, raw = Usage(), [], []
        bucket = mood_bucket(mood)
        base = prompts.response_messages(
            persona, history, reply, bucket=bucket, appraisal=appraisal_summary(appraisal), style=self.style, language=language
        )
        messages = list(base)
        for attempt in range(1, self.max_reply_attempts + 1):
            completion = await self._call(messages, max_tokens=self.max_tokens_reply, temperature=self.temperature,
                                          rng=rng, json_mode=False, usage=usage, errors=errors, raw=raw)
            text = clean_reply(completion.text, (persona.name,))
            if text:
                break
            errors.append(f"reply attempt {attempt} empty after cleaning")
            messages = [*base, {"role": "assistant", "content": completion.text}, prompts.empty_reply_message(persona.name, language)]
        else:
            raise SimulatorError(
                f"no usable reply after {self.max_reply_attempts} attempt(s)", raw_outputs=raw, usage=usage, errors=errors
            )
        return Response(
            text, wants_to_end=bucket in ("S", "F") or is_goodbye(text), usage=usage, errors=tuple(errors), raw=tuple(raw)
        )

    async def _ask_appraisal(
        self, persona: Persona, mood: int, history: Sequence[Message], reply: str, rules: MoodRules,
        rng: np.random.Generator, language: str, usage: Usage, errors: list[str], raw: list[str],
    ) -> ParsedAppraisal:
        base = prompts.appraisal_messages(persona, mood, history, reply, rules=rules, style=self.style, language=language)
        messages = list(base)
        salvaged: dict[str, str] = {}
        for attempt in range(1, self.max_appraisal_attempts + 1):
            completion = await self._call(messages, max_tokens=self.max_tokens_appraisal, temperature=self.appraisal_temperature,
                                          rng=rng, json_mode=self.request_json, usage=usage, errors=errors, raw=raw)
            text = completion.text
            if messages[-1]["role"] == "assistant":  # a prefilled answer: the backend continued it
                text = messages[-1]["content"] + text
                raw[-1] = text
            try:
                appraisal = parse_appraisal(text)
            except AppraisalParseError as exc:
                errors.append(f"appraisal attempt {attempt} unparseable: {exc}")
                answer: Message = {"role": "assistant", "content": text}
                fields = salvage_fields(text)
                if fields:  # the reasoning is there, only the change is missing: ask for it alone
                    salvaged = fields
                    messages = [*base, answer, prompts.change_only_message(rules, language)]
                    if getattr(self.backend, "supports_prefill", False):
                        messages.append({"role": "assistant", "content": CHANGE_PREFILL})
                else:
                    messages = [*base, answer, prompts.repair_message(str(exc), language)]
                continue
            if salvaged and not appraisal.fields:
                appraisal = ParsedAppraisal(appraisal.change, salvaged, "the change was asked for separately from its reasoning")
            if appraisal.repaired:
                errors.append(f"appraisal attempt {attempt} repaired: {appraisal.repaired}")
            return appraisal
        raise SimulatorError(
            f"appraisal unparseable after {self.max_appraisal_attempts} attempt(s): {'; '.join(errors)}", raw_outputs=raw,
            usage=usage, errors=errors,
        )


def first_try_parsed(errors: Sequence[str]) -> bool:
    """Whether a turn's appraisal parsed strictly on the first attempt (from a turn's `errors`)."""
    return not any(e.startswith("appraisal attempt 1 ") or "appraisal unparseable" in e for e in errors)


_FAILED_ASK = re.compile(r"^(?:appraisal|reply|opening) attempt \d+ (?:unparseable|empty)")
_GAVE_UP_ASKING = ("appraisal unparseable after", "no usable reply after", "no usable opening line after")


def retries_in(errors: Sequence[str]) -> int:
    """Requests sent again within a turn, from its errors: backend retries (429, 5xx,
    timeouts...) and appraisal/reply re-asks. A turn that gave up lists every failed
    attempt; the last one, after which nothing more was asked, is no retry."""
    backend = sum(e.startswith("backend retry:") for e in errors)
    asks = sum(bool(_FAILED_ASK.match(e)) for e in errors)
    gave_up = sum(any(g in e for g in _GAVE_UP_ASKING) for e in errors)
    return backend + max(0, asks - gave_up)
