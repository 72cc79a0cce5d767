"""The OpenEnv server: `dialog-gym serve` started here on 127.0.0.1, driven by openenv-core's clients.

openenv-core's web UI pulls gradio, which pins another pillow than ours, so CI installs
openenv-core and the packages its server and client import (no gradio) into a folder of
its own (the line in `.ci/run`)::

    pip install --no-deps --target .openenv-site openenv-core==0.3.0 ...
    DIALOG_GYM_OPENENV_PATH=.openenv-site pytest tests/test_integration_openenv.py

`DIALOG_GYM_OPENENV_PATH` lists folders appended to sys.path (and to the server's
PYTHONPATH), so installed packages win; when it is set, openenv must import and these
tests never skip. Without it they skip unless openenv-core is installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import gymnasium as gym
import pytest

import dialog_gym  # noqa: F401  (registers the env ids)
from dialog_gym.integrations._setup import newest_env_id

ROOT = Path(__file__).resolve().parents[1]
OPENENV_PATH = os.environ.get("DIALOG_GYM_OPENENV_PATH", "")
if OPENENV_PATH and importlib.util.find_spec("openenv") is None:
    sys.path.extend(p for p in OPENENV_PATH.split(os.pathsep) if p)
if not OPENENV_PATH:
    pytest.importorskip("openenv.core", reason="needs openenv-core: pip install 'dialog-gym[openenv]' (see the docstring)")

from openenv.cli._validation import validate_running_environment  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402

from dialog_gym.integrations.openenv import DialogAction, DialogEnvClient, create_server_app  # noqa: E402
from dialog_gym.integrations.openenv.server import EmpathyEnvironment  # noqa: E402

MAX_SESSIONS = 4
REPLIES = [
    "That sounds really hard. What happened after that?",
    "I hear you, and it makes sense that you feel hurt by it.",
    "Have you tried just moving on?",
    "You did nothing wrong here; anyone would feel this way.",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def child_env() -> dict[str, str]:
    """The server process's environment: this process's path, openenv's folder appended."""
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def http(method: str, url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def server():
    """`dialog-gym serve` in its own process, as a user starts it."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dialog_gym", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--max-sessions", str(MAX_SESSIONS), "--language", "en", "--log-level", "warning"],
        env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            pytest.fail(f"dialog-gym serve exited {proc.returncode}: {proc.stdout.read()[-3000:]}")
        try:
            if http("GET", f"{base}/health")[1].get("status") == "healthy":
                break
        except (urllib.error.URLError, ConnectionError):
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"dialog-gym serve did not answer /health: {proc.stdout.read()[-3000:]}")
        time.sleep(0.2)
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def gym_episode(seed: int, replies: list[str], **options) -> tuple[list[str], list[float], dict]:
    """Observations, rewards and the last info of `gym.make(newest)` with this seed and these replies."""
    env = gym.make(newest_env_id(), language="en", **options)
    obs, info = env.reset(seed=seed)
    observations, rewards = [obs], []
    for reply in replies:
        obs, reward, terminated, truncated, info = env.step(reply)
        observations.append(obs)
        rewards.append(float(reward))
        if terminated or truncated:
            break
    env.close()
    return observations, rewards, info


async def play(base: str, seed: int, replies: list[str]) -> tuple[list[str], list[float], list]:
    results = []
    async with DialogEnvClient(base_url=base) as env:
        result = await env.reset(seed=seed)
        results.append(result)
        for reply in replies:
            result = await env.step(reply)
            results.append(result)
            if result.done:
                break
        state = await env.state()
    assert state.step_count == len(results) - 1 and state.seed == seed
    return [r.observation.message for r in results], [float(r.reward) for r in results[1:]], results


def test_the_server_passes_openenvs_own_runtime_validation(server):
    report = validate_running_environment(server, timeout_s=30)
    assert report["passed"], json.dumps(report, indent=2)
    assert report["mode"] == "simulation"
    status, schema = http("GET", f"{server}/schema")
    assert status == 200 and schema["action"]["required"] == ["message"]
    fields = set(schema["observation"]["properties"])
    assert fields >= {"message", "messages", "episode_id", "mood", "done", "reward"}
    assert not fields & {"privileged", "hidden_need", "reasoning", "thought"}
    status, metadata = http("GET", f"{server}/metadata")
    assert metadata["name"] == newest_env_id() and "mood" in metadata["description"]


def test_concurrent_websocket_sessions_equal_gym_make(server):
    seeds = [0, 1, 2, MAX_SESSIONS + 5]  # as many sessions as the server allows, all at once
    scripts = [REPLIES[i:] + REPLIES[:i] for i in range(len(seeds))]

    async def all_sessions():
        return await asyncio.gather(*(play(server, seed, script * 3) for seed, script in zip(seeds, scripts)))

    played = asyncio.run(all_sessions())
    for seed, script, (observations, rewards, results) in zip(seeds, scripts, played):
        want_obs, want_rewards, info = gym_episode(seed, script * 3)
        assert observations == want_obs
        assert rewards == pytest.approx(want_rewards)
        last = results[-1].observation
        assert last.done and last.terminal_reason == info["terminal_reason"] and last.mood == info["mood"]
        assert last.messages == info["messages"]
        assert last.persona_id == info["persona_id"]
        # Nothing privileged in what the policy is sent.
        hidden_need = info["privileged"]["hidden_need"]
        for result in results:
            wire = result.observation.model_dump_json()
            assert hidden_need not in wire and "privileged" not in wire and "hidden_need" not in wire
    assert len({p[2][-1].observation.persona_id for p in played}) > 1


def test_named_episodes_continue_over_http_and_bad_ids_are_named(server):
    status, body = http("POST", f"{server}/reset", {"seed": 7, "episode_id": "http-episode-7"})
    assert status == 200 and body["observation"]["episode_id"] == "http-episode-7"
    observations, rewards = [body["observation"]["message"]], []
    for reply in REPLIES * 3:
        status, body = http("POST", f"{server}/step", {"action": {"message": reply}, "episode_id": "http-episode-7"})
        assert status == 200, body
        observations.append(body["observation"]["message"])
        rewards.append(body["reward"])
        if body["done"]:
            break
    want_obs, want_rewards, _ = gym_episode(7, REPLIES * 3)
    assert observations == want_obs and rewards == pytest.approx(want_rewards)
    # A finished named episode is gone; unknown ids and steps without one are refused by name.
    status, body = http("POST", f"{server}/step", {"action": {"message": "hi"}, "episode_id": "http-episode-7"})
    assert status == 404 and "no open dialogue 'http-episode-7'" in body["detail"]
    status, body = http("POST", f"{server}/step", {"action": {"message": "hi"}, "episode_id": "never-started"})
    assert status == 404 and "POST /reset" in body["detail"]
    status, body = http("POST", f"{server}/step", {"action": {"message": "hi"}})
    assert status == 409 and "episode_id" in body["detail"] and "/ws" in body["detail"]
    status, body = http("POST", f"{server}/reset", {"seed": 1, "persona": "en-x"})
    assert status == 422 and "unknown reset option(s) ['persona']" in body["detail"]
    status, body = http("POST", f"{server}/reset", {"seed": 1, "persona_id": "no-such-persona"})
    assert status == 422 and "no-such-persona" in body["detail"]
    # A malformed action never reaches the dialogue: openenv-core's schema validation refuses it.
    http("POST", f"{server}/reset", {"seed": 1, "episode_id": "e-bad"})
    status, body = http("POST", f"{server}/step", {"action": {"text": "hi"}, "episode_id": "e-bad"})
    assert status == 422 and any(err["loc"][-1] in ("message", "text") for err in body["detail"])


async def open_session(client: DialogEnvClient) -> None:
    """Connect and reset, waiting while the server still tears down sessions closed just before."""
    for _ in range(50):
        await client.connect()
        try:
            await client.reset(seed=1)
            return
        except RuntimeError as exc:
            if "CAPACITY_REACHED" not in str(exc):
                raise
            await client.disconnect()
            await asyncio.sleep(0.1)
    raise AssertionError("the server kept refusing sessions that should have been free")


def test_websocket_errors_name_the_problem(server):
    async def scenario():
        async with DialogEnvClient(base_url=server) as env:
            with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
                await env.step("hello")
            with pytest.raises(RuntimeError, match="unknown reset option"):
                await env.reset(seed=0, persona="x")
            await env.reset(seed=0)
            with pytest.raises(RuntimeError, match="lone surrogate U\\+D800"):
                await env.step("broken \ud800 text")
            # The reply guard is the env's: a reply past 8,000 characters reaches the user cut.
            long_reply = "I am here for you. " * 500
            result = await env.step(long_reply)
            assert result.observation.reply_cut
            assert result.observation.messages[-2] == {"role": "assistant", "content": long_reply[:8000]}
            with pytest.raises(TypeError, match="str or a DialogAction"):
                await env.step(123)
        async with GenericEnvClient(base_url=server) as raw:
            await raw.reset(seed=0)
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                await raw.step({"text": "not the action's field"})
        # The server holds at most MAX_SESSIONS WebSocket sessions; one more is refused by name.
        clients = [DialogEnvClient(base_url=server) for _ in range(MAX_SESSIONS + 1)]
        try:
            for client in clients[:MAX_SESSIONS]:
                await open_session(client)
            await clients[-1].connect()
            await asyncio.sleep(0.5)  # the refusal (an error frame, then close) arrives before the request is sent
            with pytest.raises(RuntimeError, match=rf"capacity: {MAX_SESSIONS}/{MAX_SESSIONS}.*CAPACITY_REACHED"):
                await clients[-1].reset(seed=1)
        finally:
            for client in clients:
                await client.close()

    asyncio.run(scenario())
    _, _, info = gym_episode(0, ["I am here for you. " * 500])
    assert info["reply_cut"]


def test_the_environment_runs_in_process_and_after_an_end_refuses_to_step():
    app = create_server_app(language="en", max_sessions=2)
    setup = app.state.dialog_setup
    env = EmpathyEnvironment(setup)
    observation = env.reset(seed=3)
    want_obs, want_rewards, _ = gym_episode(3, REPLIES * 3)
    assert observation.message == want_obs[0]
    got = [observation.message]
    while not observation.done:
        observation = env.step(DialogAction(message=REPLIES[(len(got) - 1) % len(REPLIES)]))
        got.append(observation.message)
    assert got == want_obs
    with pytest.raises(Exception, match="has ended"):
        env.step(DialogAction(message="still there?"))
    env.close()
    with pytest.raises(ValueError, match="max_sessions"):
        create_server_app(max_sessions=0)
    with pytest.raises(ValueError, match="unknown env id"):
        create_server_app("RLVER-Empathy-v999")
    with pytest.raises(TypeError, match="config is a DialogConfig, so simulator cannot be given beside it"):
        create_server_app(config=setup.config, simulator="rule")


def test_serve_refuses_bad_options_with_exit_code_2():
    result = subprocess.run(
        [sys.executable, "-m", "dialog_gym", "serve", "--env", "RLVER-Empathy-v999", "--port", str(free_port())],
        env=child_env(), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and "unknown env id 'RLVER-Empathy-v999'" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "dialog_gym", "serve", "--option", "think"], env=child_env(),
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and "KEY=VALUE" in result.stderr
