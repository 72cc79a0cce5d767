"""docs/concepts.md, "Extending", is true: its plugin registers a toy simulator, backend,
preset and agent in one file each, and `dialog-gym` runs episodes with them.

The plugin is installed the way the section says, as an entry point of `dialog_gym.plugins`
(a `*.dist-info` folder on the path, which is what `pip install` writes), and the section's
commands run in a fresh `python -m dialog_gym`, so nothing here is registered by hand.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import dialog_gym

CONCEPTS = Path(__file__).resolve().parents[1] / "docs" / "concepts.md"


def extending_section() -> str:
    text = CONCEPTS.read_text(encoding="utf-8")
    return text[text.index("## Extending") :]


def blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """A folder with `my_plugin.py` and the dist-info that declares it a dialog-gym plugin."""
    section = extending_section()
    (code,) = blocks(section, "python")
    (toml,) = blocks(section, "toml")
    group, name, target = re.search(r'\[project\.entry-points\."([^"]+)"\]\n(\S+) = "(\S+)"', toml).groups()
    assert group == "dialog_gym.plugins"
    root = tmp_path_factory.mktemp("site")
    (root / "my_plugin.py").write_text(code, encoding="utf-8")
    info = root / "my_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n", encoding="utf-8")  # what pip writes
    return root


def run_cli(command: str, plugin_path: Path, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "dialog-gym"
    paths = [str(plugin_path), *sys.path]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    return subprocess.run([sys.executable, "-m", "dialog_gym", *argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_sections_commands_run_episodes_with_the_plugins_registrations(plugin_path, tmp_path):
    (commands,) = blocks(extending_section(), "bash")
    curious, parrot, demo = [line for line in commands.splitlines() if line.strip()]

    result = run_cli(curious, plugin_path, tmp_path)
    assert result.returncode == 0, result.stderr
    episodes = [json.loads(line) for line in (tmp_path / "runs/curious/episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2
    for episode in episodes:  # the parrot agent always asks; the curious user likes it, within the preset's clamp
        assert episode["simulator"] == {"simulator": "curious", "style": "vanilla", "gain": 5}
        assert episode["preset"] == "patient" and episode["agent"]["backend"] == {"class": "ParrotBackend", "model": "warm"}
        assert [turn["delta"] for turn in episode["turns"]] == [5, 5, 5] and episode["final_mood"] == 65

    result = run_cli(parrot, plugin_path, tmp_path)  # the backend as an LLM user simulator
    assert result.returncode == 0, result.stderr
    episodes = [json.loads(line) for line in (tmp_path / "runs/parrot/episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2
    for episode in episodes:
        assert episode["simulator"]["backend"] == {"class": "ParrotBackend", "model": "judge"}
        assert episode["agent"] == {"name": "asker"}
        assert {turn["delta"] for turn in episode["turns"]} == {2}
        assert {turn["user_reply"] for turn in episode["turns"]} == {"judge?"}

    result = run_cli(demo, plugin_path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "What happened next?" in result.stdout and "mean reward over 1 episodes" in result.stdout

    result = run_cli("dialog-gym eval --help", plugin_path, tmp_path)
    assert "curious" in result.stdout and "parrot" in result.stdout and "patient" in result.stdout


def test_in_python_importing_the_plugin_is_enough(plugin_path, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_path))
    import my_plugin  # noqa: F401  # registers the four

    from dialog_gym.simulators import _SIMULATORS, is_offline, simulator_names

    try:
        env = gym.make("RLVER-Empathy-v2", simulator="curious", simulator_options={"gain": 3}, rules="patient")
        obs, info = env.reset(seed=0)
        assert info["mood"] == 50
        obs, reward, terminated, truncated, info = env.step("How are you holding up?")
        assert info["emotion_delta"] == 3 and env.unwrapped.simulator.identity()["gain"] == 3
        env.close()
        assert "curious" in simulator_names() and "parrot" in simulator_names() and is_offline("curious")
        assert not is_offline("parrot")
        with pytest.raises(TypeError, match=r"'gian' \(did you mean 'gain'\?\)"):
            dialog_gym.make_simulator("curious", gian=1)
    finally:  # leave the registries as the other tests expect them
        from dialog_gym.agents import _AGENTS
        from dialog_gym.backends.factory import _BACKENDS
        from dialog_gym.mood import PRESETS

        _SIMULATORS.pop("curious", None)
        _BACKENDS.pop("parrot", None)
        PRESETS.pop("patient", None)
        _AGENTS.pop("asker", None)
        sys.modules.pop("my_plugin", None)
