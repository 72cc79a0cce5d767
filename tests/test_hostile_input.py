"""Hostile input at the edges: overlong and unencodable replies, undecodable and malformed files.

Properties (hypothesis) over agent actions and over persona, episode and RLVER files, and
the concrete cases: a 1 MB reply, a lone surrogate, invalid UTF-8 in every reader.
"""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from functools import lru_cache
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dialog_gym  # noqa: F401  (registers the envs)
from dialog_gym.backends import BackendError
from dialog_gym.cli import main as cli
from dialog_gym.episodes.io import EpisodeFileError, TornLineWarning, iter_episode_dicts, write_episodes
from dialog_gym.episodes.sage import SageImportError, import_sage
from dialog_gym.personas import PersonaSet, PersonaValidationError, import_rlver, validate_file, validate_record
from dialog_gym.personas.rlver import RLVERImportError
from dialog_gym.testing import ScriptedOpenAIServer, tiny_chat_model
from dialog_gym.text_guard import (
    DEFAULT_MAX_REPLY_CHARS,
    ReplyGuard,
    UnencodableTextError,
    check_encodable,
    lone_surrogate,
    repair_unencodable,
    unencodable_path,
)

from eval_helpers import make_personas, play_many
from test_personas import _record as schema_valid_record

pytest.importorskip("openai", reason="the LLM-simulator cases need the openai package")
from dialog_gym.backends.openai_backend import OpenAIBackend  # noqa: E402

INVALID_UTF8 = b'{"id": "caf\xe9"}'  # latin-1 bytes where UTF-8 was expected
SURROGATE_ESCAPE_LINE = '{"id": "x", "profile": {"name": "\\ud800"}}'

# Any text, lone surrogates included (hypothesis leaves category Cs out unless asked).
any_text = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=60)
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def persona_record(i: int, **changes) -> dict:
    return schema_valid_record(id=f"h-{i}", **changes)


def rlver_profile(i: int = 1, **changes) -> dict:
    profile = {
        "id": f"p{i}",
        "player": "* 姓名：李雷\n* 年龄：30岁\n* 职业：工程师",
        "scene": "李雷的项目被领导否定了。\n####隐藏主题:你希望对方给出建议",
        "main_cha": "被动型",
        "cha_group": ["敏感", "要强"],
        "task": "你想获得能真正帮助自己解决当下困境的建议",
    }
    profile.update(changes)
    return profile


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


# -- the text guard -------------------------------------------------------------------------
def test_lone_surrogates_are_found_named_and_repaired():
    assert lone_surrogate("fine, 你好 😀") is None
    assert lone_surrogate("ab\ud800c") == 2
    with pytest.raises(UnencodableTextError, match=r"action holds a lone surrogate U\+D800 at index 0"):
        check_encodable("\ud800 hi", "action")
    assert repair_unencodable("\ud83d\ude00 and \udfff") == "😀 and \ufffd"  # a pair joins; a lone one goes
    text = "nothing to repair"
    assert repair_unencodable(text) is text
    assert unencodable_path({"turns": [{"reply": "ok"}, {"reply": "\udc80"}]}) == "turns.1.reply"
    assert unencodable_path({"a": ["fine"]}) is None


def test_reply_guard_cuts_to_the_character_limit_and_says_so():
    guard = ReplyGuard(max_chars=10)
    assert guard.apply("short") == guard.apply("short") and not guard.apply("short").cut
    long = guard.apply("0123456789abc")
    assert long.text == "0123456789" and long.cut and not long.repaired
    assert ReplyGuard(max_chars=None).apply("x" * 100_000).text == "x" * 100_000
    repaired = ReplyGuard(unencodable="repair").apply("\ud800 hi")
    assert repaired.text == "\ufffd hi" and repaired.repaired and not repaired.cut


def test_reply_guard_token_budget_keeps_the_longest_prefix_that_fits(tmp_path):
    words = ReplyGuard(max_tokens=3, tokenizer=lambda text: len(text.split()))
    assert words.apply("one two three four five").text == "one two three "
    _, tokenizer = tiny_chat_model()

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    reply = "I have had a rough week and I need to talk. 我这周真的太难熬了。" * 20
    cut = ReplyGuard(max_chars=500, max_tokens=12, tokenizer=tokenizer).apply(reply)
    assert cut.cut and reply.startswith(cut.text)
    assert count(cut.text) <= 12 < count(reply[: len(cut.text) + 1])  # one more character would not fit
    tokenizer.save_pretrained(tmp_path / "tok")
    assert ReplyGuard(max_chars=500, max_tokens=12, tokenizer=str(tmp_path / "tok")).apply(reply) == cut


def test_reply_guard_rejects_bad_settings_by_name():
    with pytest.raises(ValueError, match="max_chars must be a positive int"):
        ReplyGuard(max_chars=0)
    with pytest.raises(ValueError, match="max_tokens needs a tokenizer"):
        ReplyGuard(max_tokens=100)
    with pytest.raises(ValueError, match="unencodable must be one of"):
        ReplyGuard(unencodable="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown reply_guard field\(s\) \['max_char'\]"):
        ReplyGuard.resolve({"max_char": 10})
    with pytest.raises(TypeError, match="tokenizer must be"):
        ReplyGuard(max_tokens=5, tokenizer=42)
    assert ReplyGuard.resolve({"max_chars": 7}) == ReplyGuard(max_chars=7)


@PROPERTY
@given(text=any_text, max_chars=st.integers(1, 80))
def test_guarded_text_is_a_bounded_prefix_or_a_named_rejection(text, max_chars):
    strict, lenient = ReplyGuard(max_chars=max_chars), ReplyGuard(max_chars=max_chars, unencodable="repair")
    if lone_surrogate(text) is None:
        guarded = strict.apply(text)
        assert text.startswith(guarded.text) and len(guarded.text) == min(len(text), max_chars)
        assert guarded.cut == (len(text) > max_chars) and not guarded.repaired
    else:
        with pytest.raises(UnencodableTextError, match="action holds a lone surrogate"):
            strict.apply(text)
    guarded = lenient.apply(text)
    guarded.text.encode("utf-8")  # never raises
    assert len(guarded.text) <= max_chars and guarded.repaired == (lone_surrogate(text) is not None)


# -- persona files ----------------------------------------------------------------------------
def test_cli_validate_names_an_undecodable_line_and_goes_on(tmp_path, capsys):
    path = write_lines(
        tmp_path / "mixed.jsonl",
        [json.dumps(persona_record(1)).encode(), INVALID_UTF8, json.dumps(persona_record(3, split="dev")).encode(),
         SURROGATE_ESCAPE_LINE.encode(), b"\xff\xfe\x00"],
    )
    assert cli(["personas", "validate", str(path)]) == 1
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert lines[0] == f"{path}:2: not valid UTF-8 (byte 0xe9 at column 12)"
    assert lines[1].startswith(f"{path}:3: split:")
    assert lines[2].startswith(f"{path}:4: profile.name: a \\u escape of a lone surrogate")
    assert lines[3].startswith(f"{path}:5: not valid UTF-8 (byte 0xff at column 1)")
    assert "1 file(s) checked, 4 error(s)" in out.out
    with pytest.raises(PersonaValidationError, match="mixed.jsonl:2: not valid UTF-8"):
        PersonaSet.from_jsonl(path)


def test_a_byte_order_mark_before_the_first_line_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(persona_record(1)).encode() + b"\n")
    assert validate_file(path) == [] and PersonaSet.from_jsonl(path).ids == ["h-1"]


def test_a_persona_record_with_a_lone_surrogate_names_the_field():
    errors = validate_record(persona_record(1, profile={"name": "Sam\udfff", "traits": ["blunt"]}))
    assert [(e.field, e.message) for e in errors] == [("profile.name", "holds a lone surrogate, which UTF-8 cannot encode")]


bad_persona_lines = st.sampled_from([INVALID_UTF8, b"\x80", b"{not json", b"[1, 2]", SURROGATE_ESCAPE_LINE.encode(), b'"a string"'])
persona_lines = st.lists(
    st.one_of(st.integers(0, 10**6).map(lambda i: ("good", i)), bad_persona_lines.map(lambda b: ("bad", b)),
              st.binary(max_size=40).filter(lambda b: b"\n" not in b).map(lambda b: ("noise", b))),
    max_size=12,
)


@PROPERTY
@given(lines=persona_lines)
def test_every_bad_persona_line_is_reported_and_no_good_one(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("personas") / "p.jsonl"
    raw = [json.dumps(persona_record(n)).encode() if kind == "good" else value
           for n, (kind, value) in enumerate(lines, start=1)]
    write_lines(path, raw)
    errors = validate_file(path)
    flagged = {e.line for e in errors}
    for n, (kind, _) in enumerate(lines, start=1):
        if kind == "good":
            assert n not in flagged
        elif kind == "bad":
            assert n in flagged
    assert all(str(e).startswith(f"{path}:{e.line}: ") for e in errors)
    if errors:
        with pytest.raises(PersonaValidationError):
            PersonaSet.from_jsonl(path)
    else:
        assert len(PersonaSet.from_jsonl(path)) == sum(kind == "good" for kind, _ in lines)


# -- RLVER and SAGE imports ---------------------------------------------------------------------
def test_rlver_import_names_every_line_it_cannot_import(tmp_path):
    path = write_lines(
        tmp_path / "train_profile.jsonl",
        [json.dumps(rlver_profile(1), ensure_ascii=False).encode(), INVALID_UTF8,
         json.dumps(rlver_profile(3, main_cha="乐观型"), ensure_ascii=False).encode(), b"7",
         json.dumps(rlver_profile(5), ensure_ascii=False).encode()],
    )
    with pytest.raises(RLVERImportError) as info:
        import_rlver(path)
    message = str(info.value)
    assert message.startswith("3 lines that cannot be imported:")
    assert f"{path}:2: not valid UTF-8" in message
    assert f"{path}:3: main_cha: unknown character type '乐观型'" in message
    assert f"{path}:4: expected a JSON object, got int" in message
    good = write_lines(tmp_path / "test_profile.jsonl", [json.dumps(rlver_profile(1), ensure_ascii=False).encode()])
    assert [p.id for p in import_rlver(good)] == ["rlver-p1"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@PROPERTY
@given(records=st.lists(st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(sorted(rlver_profile())) , json_values).map(lambda d: rlver_profile(**d)),
), min_size=1, max_size=5))
def test_rlver_import_either_maps_a_line_or_names_it(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("rlver") / "train_profile.jsonl"
    write_lines(path, [json.dumps(r, ensure_ascii=True).encode() for r in records])
    try:
        personas = import_rlver(path)
    except RLVERImportError as exc:
        assert f"{path}:" in str(exc)
    else:
        assert len(personas) == len(records)
        for persona in personas:
            assert validate_record(persona.to_dict()) == []


def test_sage_import_names_an_undecodable_line(tmp_path):
    path = write_lines(tmp_path / "model-z.jsonl", [b"{not json", INVALID_UTF8])
    with pytest.raises(SageImportError) as info:
        import_sage(path)
    assert str(info.value).splitlines()[1:] == [
        f"  {path}:1: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"  {path}:2: not valid UTF-8 (byte 0xe9 at column 12)",
    ]


# -- episode files ------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def recorded_lines() -> tuple[bytes, ...]:
    episodes = play_many(list(make_personas(3)))
    return tuple(json.dumps(ep.to_dict(), ensure_ascii=False).encode() for ep in episodes)


BAD_EPISODE_LINES = {
    "latin-1": INVALID_UTF8,
    "not json": b'{"persona_id": ',
    "not an object": b"[1, 2, 3]",
    "surrogate": b'{"persona_id": "\\udc80"}',
}


def test_episode_reader_names_every_bad_line_and_reads_the_rest(tmp_path):
    good = recorded_lines()
    path = write_lines(tmp_path / "episodes.jsonl", [good[0], INVALID_UTF8, good[1], b"[1]", good[2]])
    seen = []
    with pytest.raises(EpisodeFileError) as info:
        for record in iter_episode_dicts(path):
            seen.append(record["episode_id"])
    assert seen == [json.loads(line)["episode_id"] for line in good]
    assert str(info.value).splitlines() == [
        "2 invalid lines:",
        f"  {path}:2: not valid UTF-8 (byte 0xe9 at column 12)",
        f"  {path}:4: expected a JSON object, got list",
    ]


def test_a_torn_last_line_cut_inside_a_character_is_still_a_torn_line(tmp_path):
    good = recorded_lines()
    path = tmp_path / "episodes.jsonl"
    write_lines(path, [good[0]])
    with path.open("ab") as fh:
        fh.write('{"opening": "我'.encode()[:-1])  # the kill landed inside a 3-byte character
    with pytest.warns(TornLineWarning, match=":2: skipping a torn last line"):
        assert len(list(iter_episode_dicts(path))) == 1


@PROPERTY
@given(plan=st.lists(st.one_of(st.integers(0, 2), st.sampled_from(sorted(BAD_EPISODE_LINES))), min_size=1, max_size=10),
       torn=st.booleans())
def test_episode_files_yield_every_good_record_and_name_every_bad_line(tmp_path_factory, plan, torn):
    good = recorded_lines()
    path = tmp_path_factory.mktemp("episodes") / "episodes.jsonl"
    write_lines(path, [good[p] if isinstance(p, int) else BAD_EPISODE_LINES[p] for p in plan])
    if torn:
        with path.open("ab") as fh:
            fh.write(good[0][:-7])
    bad = [n for n, p in enumerate(plan, start=1) if isinstance(p, str)]
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for record in iter_episode_dicts(path):
                seen.append(record["episode_id"])
        except EpisodeFileError as exc:
            assert bad and all(f"{path}:{n}: " in str(exc) for n in bad)
        else:
            assert not bad
    assert seen == [json.loads(good[p])["episode_id"] for p in plan if isinstance(p, int)]
    assert [w.category for w in caught] == ([TornLineWarning] if torn else [])
    write_episodes(tmp_path_factory.mktemp("rewrite") / "episodes.jsonl", [])  # the writer still opens cleanly


# -- backends: deterministic client-side faults are never sent or retried -----------------------
def test_backend_never_sends_or_retries_unencodable_text():
    with ScriptedOpenAIServer(seed=0) as server:
        backend = OpenAIBackend("scripted", base_url=server.base_url, backoff_s=0.5, max_retries=4)
        started = time.monotonic()
        with pytest.raises(UnencodableTextError, match=r"message 0 \(user\) of the request holds a lone surrogate"):
            asyncio.run(backend.complete([{"role": "user", "content": "\ud800 hi"}], max_tokens=8, temperature=0, seed=None))
        # Anything else in the request that UTF-8 cannot carry fails at once, never as a "malformed response".
        odd = OpenAIBackend("scripted", base_url=server.base_url, backoff_s=0.5, max_retries=4, extra_body={"tag": "\udfff"})
        with pytest.raises(BackendError, match="not retryable.*cannot be encoded as UTF-8") as info:
            asyncio.run(odd.complete([{"role": "user", "content": "hi"}], max_tokens=8, temperature=0, seed=None))
        assert info.value.attempts == 1 and time.monotonic() - started < 1.0
        assert server.stats()["chat_requests"] == 0


# -- the env: the guard in the step path ---------------------------------------------------------
@pytest.fixture
def server():
    with ScriptedOpenAIServer(seed=0) as srv:
        yield srv


def llm_env(server: ScriptedOpenAIServer, **kwargs) -> gym.Env:
    options = {"model": "scripted", "base_url": server.base_url, "timeout_s": 5.0, "backoff_s": 0.5}
    return gym.make("RLVER-Empathy-v1", simulator="openai", simulator_options=options, **kwargs)


def request_sizes(server: ScriptedOpenAIServer) -> list[int]:
    return [len(json.dumps(body, ensure_ascii=False).encode()) for body in server.requests]


def test_a_1mb_reply_reaches_the_llm_simulator_cut_to_the_limit(server):
    env = llm_env(server)
    env.reset(seed=0)
    wall = "I hear you. " * 87_382  # 1 MB
    _, _, _, truncated, info = env.step(wall)
    assert not truncated and info["reply_cut"]
    assert info["messages"][-2] == {"role": "assistant", "content": wall[:DEFAULT_MAX_REPLY_CHARS]}
    assert env.unwrapped.session.turns[-1].action == wall  # the whole action stays in the record
    _, _, _, _, info = env.step("What happened after that?")
    assert not info["reply_cut"]
    assert max(request_sizes(server)) < 3 * DEFAULT_MAX_REPLY_CHARS + 12_000  # the issue measured 1,004,401 bytes


def test_the_limits_are_set_per_env_in_characters_and_tokens(server):
    numbered = "".join(f"<{i:04d}>" for i in range(100))
    env = llm_env(server, reply_guard={"max_chars": 42})
    env.reset(seed=0)
    _, _, _, _, info = env.step(numbered)
    assert info["reply_cut"] and info["messages"][-2]["content"] == numbered[:42]
    appraisal = json.dumps(server.requests[-2], ensure_ascii=False)
    assert numbered[:42] in appraisal and numbered[:43] not in appraisal
    _, tokenizer = tiny_chat_model()
    budget = gym.make("RLVER-Empathy-v1", reply_guard=ReplyGuard(max_tokens=16, tokenizer=tokenizer))
    budget.reset(seed=0)
    _, _, _, _, info = budget.step("I have had a rough week and I need to talk. " * 10)
    assert info["reply_cut"] and len(tokenizer.encode(info["messages"][-2]["content"], add_special_tokens=False)) <= 16
    with pytest.raises(ValueError, match="unknown reply_guard field"):
        gym.make("RLVER-Empathy-v1", reply_guard={"max_length": 10})


def test_the_rule_simulators_wall_of_text_gate_still_judges_a_cut_reply():
    prose = " ".join(p.scene.event for p in PersonaSet.bundled().filter(language="en"))  # varied, natural text
    assert len(prose) > 2 * DEFAULT_MAX_REPLY_CHARS
    env = gym.make("RLVER-Empathy-v1", simulator="rule", language="en")
    env.reset(seed=0)
    _, _, _, _, info = env.step(prose)
    assert info["reply_cut"] and "wall of text" in info["privileged"]["reasoning"]
    assert info["emotion_delta"] < 0


def test_a_lone_surrogate_is_rejected_by_name_before_any_call_and_the_episode_goes_on(server):
    env = llm_env(server)
    env.reset(seed=0)
    before, started = server.stats()["chat_requests"], time.monotonic()
    with pytest.raises(UnencodableTextError, match=r"action holds a lone surrogate U\+D800 at index 0.*'\\ud800 hi'"):
        env.step("\ud800 hi")
    assert server.stats()["chat_requests"] == before and time.monotonic() - started < 0.5
    _, _, _, truncated, info = env.step("That sounds hard. What happened?")
    assert info["turn"] == 1 and not truncated and info["error"] is None
    thinking = gym.make("RLVER-Empathy-Think-v1")
    thinking.reset(seed=0)
    with pytest.raises(UnencodableTextError, match="action holds a lone surrogate"):  # a thought is recorded too
        thinking.step("<think>\udfff</think>That sounds hard.")


def test_repair_replaces_lone_surrogates_and_sends_the_rest(server):
    env = llm_env(server, reply_guard={"unencodable": "repair"})
    env.reset(seed=0)
    _, _, _, truncated, info = env.step("\ud800 hi \ud83d\ude00")
    assert not truncated and info["messages"][-2]["content"] == "\ufffd hi 😀"
    assert "\ufffd hi 😀" in json.dumps(server.requests[-2], ensure_ascii=False)


@PROPERTY
@given(seed=st.integers(0, 2**16), policy=st.sampled_from(["error", "repair"]),
       actions=st.lists(st.one_of(any_text, st.sampled_from(["x" * 1500, "你" * 1001, "\ud800" * 3, "<think>a</think>" + "b" * 2000])),
                        min_size=1, max_size=6))
def test_any_action_is_rejected_by_name_or_stepped_within_the_limit(seed, policy, actions):
    env = gym.make("RLVER-Empathy-Think-v1" if seed % 2 else "RLVER-Empathy-v1", split=None,
                   reply_guard={"max_chars": 1000, "unencodable": policy})
    env.reset(seed=seed)
    turn = 0
    for action in actions:
        if policy == "error" and lone_surrogate(action) is not None:
            with pytest.raises(UnencodableTextError, match="action holds a lone surrogate"):
                env.step(action)
            continue
        _, _, terminated, truncated, info = env.step(action)
        turn += 1
        assert info["turn"] == turn
        sent = info["messages"][-2]["content"]
        sent.encode("utf-8")
        assert len(sent) <= 1000 and (len(sent) == 1000 or not info["reply_cut"])
        if seed % 2 == 0 and lone_surrogate(action) is None:  # no thought to take out, nothing to repair
            assert sent == action[:1000] and info["reply_cut"] == (len(action) > 1000)
        json.dumps(info, ensure_ascii=False).encode("utf-8")  # everything recorded can be written
        if terminated or truncated:
            break
