"""Import results of the SAGE ("Sentient") benchmark as `Episode` records.

A SAGE result file (one per evaluated model) holds one JSON object per scenario: the RLVER
test profile (`id`, `player`, `scene`, `character`, `task`, `topic`, ...), the final
`emo_point` and `emo_state`, and `history`, alternating user / assistant messages that
start with the user. Every user message carries `emotion-point`, the simulator's mood
after the previous assistant reply (40 on the opening line), and from the second one on
`planning` (a dict of appraisal sections) and `thinking` (the response plan).

How a SAGE dialogue maps onto an episode:

- the first user message is the opening; each assistant reply followed by a user message
  is one turn whose requested change is the difference of the two emotion points; the
  appraisal text (`planning` and `thinking`) is the turn's reasoning, and both are also
  kept verbatim in `raw`;
- SAGE stops at mood >= 100, mood < 10, or when the agent has written 10 replies; the 10th
  reply is never appraised, so at most 9 replies move the mood. Such a trailing reply is
  kept in `extra["unappraised_reply"]`, not as a turn;
- SAGE has no goodbye rule (its simulator says goodbye at the end buckets, which the mood
  thresholds already end), so the recorded rules are `SAGE_RECORDED_RULES`: the `sage`
  preset (whose `max_turns` is 9) with `end_on_goodbye=False`. Replaying an imported episode
  under these rules reproduces the recorded final `emo_point` exactly.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialog_gym._async import run_sync
from dialog_gym._jsonl import iter_jsonl
from dialog_gym.session import agent_system_prompt
from dialog_gym.episodes.record import Episode
from dialog_gym.mood import SAGE, MoodRules, is_goodbye
from dialog_gym.personas.rlver import persona_from_rlver

SAGE_RECORDED_RULES: MoodRules = SAGE.with_overrides(end_on_goodbye=False)
SAGE_SIMULATOR = {"simulator": "sage", "model": "deepseek-v3-2024-12-27", "source": "SAGE benchmark result file"}
# SAGE's planning sections, in the order the simulator writes them.
_PLANNING_ORDER = ("activity", "TargetCompletion", "content", "analyse", "change")


class SageImportError(ValueError):
    """A SAGE record that cannot be imported; names the file, line and field."""


def _reasoning(message: Mapping[str, Any]) -> str:
    planning = message.get("planning") or {}
    parts: list[str] = []
    if isinstance(planning, Mapping):
        keys = [k for k in _PLANNING_ORDER if k in planning] + [k for k in planning if k not in _PLANNING_ORDER]
        parts.extend(f"[{key}] {planning[key]}" for key in keys)
    elif planning:
        parts.append(str(planning))
    if message.get("thinking"):
        parts.append(f"[thinking] {message['thinking']}")
    return "\n".join(parts)


def _point(message: Mapping[str, Any], where: str) -> int:
    try:
        return int(message["emotion-point"])
    except (KeyError, TypeError, ValueError):
        raise SageImportError(f"{where}: user message without a numeric 'emotion-point'") from None


def episode_from_sage(record: Mapping[str, Any], *, model: str, where: str = "<record>") -> Episode:
    """One SAGE result record as an `Episode` (see the module docstring for the mapping)."""
    if not isinstance(record, Mapping):
        raise SageImportError(f"{where}: a SAGE record is a JSON object, got {type(record).__name__}")
    history = record.get("history")
    if not isinstance(history, list) or not history:
        raise SageImportError(f"{where}: history: missing or empty")
    for i, message in enumerate(history):
        expected = "user" if i % 2 == 0 else "assistant"
        if not isinstance(message, Mapping):
            raise SageImportError(f"{where}: history[{i}]: a message is a JSON object, got {type(message).__name__}")
        if message.get("role") != expected:
            raise SageImportError(f"{where}: history[{i}]: expected a {expected} message, got {message.get('role')!r}")
    profile = {
        "id": record.get("id"),
        "player": record.get("player"),
        "scene": record.get("scene"),
        "main_cha": record.get("character"),
        "cha_group": record.get("cha_group", []),
        "task": record.get("task"),
        "first_talk": history[0]["content"],
    }
    persona = persona_from_rlver(profile, split="test", where=where)
    rules = SAGE_RECORDED_RULES
    start = _point(history[0], f"{where}: history[0]")
    if start != rules.start:
        raise SageImportError(f"{where}: history[0]: starts at emotion-point {start}, SAGE starts at {rules.start}")

    turns: list[dict[str, Any]] = []
    mood = start
    for i in range(1, len(history) - 1, 2):
        agent, user = history[i], history[i + 1]
        point = _point(user, f"{where}: history[{i + 1}]")
        update = rules.apply(mood, point - mood)
        if update.mood != point:
            raise SageImportError(
                f"{where}: history[{i + 1}]: emotion-point {point} cannot follow {mood} under the sage rules"
            )
        raw = json.dumps({"planning": user.get("planning"), "thinking": user.get("thinking")}, ensure_ascii=False)
        turns.append(
            {
                "turn": len(turns) + 1,
                "action": agent["content"],
                "reply": agent["content"],
                "thought": None,
                "format_ok": True,
                "user_reply": user["content"],
                "requested_delta": point - mood,
                "delta": update.delta,
                "mood": update.mood,
                "reasoning": _reasoning(user),
                "clamped": False,
                "wants_to_end": is_goodbye(user["content"]),
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0},
                "errors": [],
                "raw": [raw],
            }
        )
        mood = update.mood
    if "emo_point" not in record:
        raise SageImportError(f"{where}: emo_point: missing (the recorded final mood)")
    final = int(record["emo_point"])
    reason = rules.terminal_reason(mood, len(turns), False)
    extra = {k: record[k] for k in ("emo_point", "emo_state", "topic", "target") if k in record}
    if len(history) % 2 == 0:  # ends with an agent reply that was never appraised
        extra["unappraised_reply"] = history[-1]["content"]
    messages = [{"role": "system", "content": agent_system_prompt("zh", False)}]
    messages += [{"role": m["role"], "content": m["content"]} for m in history[: 1 + 2 * len(turns)]]
    return Episode(
        persona_id=persona.id,
        language=persona.language,
        hidden_need=persona.hidden_need.value,
        character_type=persona.character_type.value,
        preset="sage",
        opening=history[0]["content"],
        messages=messages,
        turns=turns,
        final_mood=final,
        reward=rules.reward(final),
        terminal_reason=reason,
        seed=None,
        episode_id=f"sage:{model}:{record.get('id')}",
        simulator=dict(SAGE_SIMULATOR),
        agent={"name": model},
        usage={"prompt_tokens": 0, "completion_tokens": 0, "calls": 0},
        start_mood=start,
        rules=dataclasses.asdict(rules),
        persona=persona.to_dict(),
        source=f"sage:{model}",
        extra=extra,
        created_at=0.0,
    )


def import_sage(path: str | Path, *, model: str | None = None) -> list[Episode]:
    """All records of one SAGE result file; `model` defaults to the file's stem."""
    path = Path(path)
    model = model or path.stem
    return [episode_from_sage(record, model=model, where=where) for where, record in iter_jsonl(path, SageImportError)]


@dataclass
class SageFileCheck:
    """How one SAGE result file replays."""

    path: str
    model: str
    episodes: int
    exact: int  # replayed final mood == recorded emo_point
    recorded_mean: float
    replayed_mean: float
    mismatches: list[str] = field(default_factory=list)  # episode ids


def check_sage_file(path: str | Path, *, rules: "str | MoodRules | None" = None) -> SageFileCheck:
    """Import a SAGE file and replay every dialogue through a `DialogSession` with the
    recorded reactions; compare each final mood with the recorded `emo_point`.

    `rules=None` replays under the recorded rules (`SAGE_RECORDED_RULES`); pass `"sage"`
    to replay under the stock preset instead.
    """
    from dialog_gym.episodes.replay import areplay

    path = Path(path)
    episodes = import_sage(path)

    async def replay_all() -> list[Episode]:
        return [await areplay(ep, rules=rules) for ep in episodes]

    replayed = run_sync(replay_all())
    recorded = [int(ep.extra["emo_point"]) for ep in episodes]
    finals = [ep.final_mood for ep in replayed]
    mismatches = [ep.episode_id or "" for ep, r, f in zip(episodes, recorded, finals) if r != f]
    n = len(episodes)
    return SageFileCheck(
        path=str(path),
        model=path.stem,
        episodes=n,
        exact=n - len(mismatches),
        recorded_mean=sum(recorded) / n if n else float("nan"),
        replayed_mean=sum(finals) / n if n else float("nan"),
        mismatches=mismatches,
    )
