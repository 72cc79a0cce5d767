"""Both installs find the bundled data: a real wheel in a fresh venv, and this (editable) install."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from dialog_gym._resources import data_dir

ROOT = Path(__file__).resolve().parents[1]


def test_this_install_finds_envs_and_personas():
    assert (data_dir("envs") / "rlver-empathy-v0.yaml").is_file()
    assert (data_dir("personas") / "schema.json").is_file()


@pytest.mark.slow
def test_wheel_carries_data_and_works_in_a_fresh_venv(tmp_path):
    pytest.importorskip("build", reason="the 'build' package builds the wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(ROOT)],
        check=True, capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("dialog_gym-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dialog_gym/_data/envs/rlver-empathy-v0.yaml" in names
    assert "dialog_gym/_data/personas/schema.json" in names
    assert any(n.startswith("dialog_gym/_data/personas/en/") for n in names)

    # A fresh venv that sees this environment's dependencies (not its editable dialog_gym:
    # .pth files inside a directory named by a .pth line are not processed).
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    (site_dir,) = (env_dir / "lib").glob("python*/site-packages")
    (site_dir / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)], check=True, capture_output=True)
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import gymnasium as gym, dialog_gym, dialog_gym._resources as r;"
        "assert sys.argv[1] in str(r.data_dir('personas')), r.data_dir('personas');"
        "env = gym.make('RLVER-Empathy-v1'); obs, info = env.reset(seed=0);"
        "print(len(env.unwrapped.personas), info['persona_id'])"
    )
    out = subprocess.run([str(python), "-c", script, str(target)], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert int(out.stdout.split()[0]) > 0
