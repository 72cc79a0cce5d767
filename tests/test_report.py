"""`dialog-gym report`: a self-contained HTML report, escaped, checked in a real headless browser."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report's plots need matplotlib (the 'report' extra)")

from dialog_gym.agents import BaselineAgent
from dialog_gym.cli import main
from dialog_gym.episodes.io import read_episodes, write_episodes
from dialog_gym.eval import evaluate
from dialog_gym.eval.report import RunData, build_report, write_report

from eval_helpers import make_personas

HOSTILE = (
    '<script>document.body.setAttribute("data-pwned","script")</script>'
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"> & \"quotes\" </details>"
)


def hostile_agent(messages):
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return HOSTILE if turn == 1 else BaselineAgent()(messages)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    personas = make_personas(6)
    evaluate(BaselineAgent(), out=root / "baseline", personas=personas, seeds=2, progress=False)
    evaluate(hostile_agent, out=root / "hostile", personas=personas, progress=False)
    return [root / "baseline", root / "hostile"]


def test_report_is_self_contained_and_complete(runs, tmp_path):
    out = write_report(runs, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert '<th>baseline</th><th>hostile</th>' in text  # runs side by side
    assert text.count('<details class="episode"') == 12 + 6  # every transcript
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    assert not re.search(r"(src|href)=\"(?!data:)", text)  # nothing loaded from elsewhere
    for ep in read_episodes(runs[0])[:3]:
        assert f"final mood <b>{ep.final_mood}</b>" in text


def test_transcript_text_is_escaped(runs, tmp_path):
    text = write_report(runs[1:], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script" not in text.lower() and "<img src=x" not in text
    assert "&lt;script&gt;document.body.setAttribute(&quot;data-pwned&quot;" in text
    assert "&amp; &quot;quotes&quot; &lt;/details&gt;" in text


def test_report_of_an_episode_file_without_summary(tmp_path, runs):
    path = tmp_path / "some.jsonl"
    write_episodes(path, read_episodes(runs[0])[:4])
    text = write_report([path], tmp_path / "x.html", names=["just four"]).read_text(encoding="utf-8")
    assert "<th>just four</th>" in text and text.count('<details class="episode"') == 4
    assert "calibrated (vanilla)" in text  # run information taken from the records


def test_build_report_needs_a_run():
    with pytest.raises(ValueError, match="at least one run"):
        build_report([])
    assert "<td" in build_report([RunData("empty", {}, [])])


def test_cli_report(runs, tmp_path, capsys):
    assert main(["report", str(runs[0])]) == 0
    assert (runs[0] / "report.html").is_file()
    out = tmp_path / "both.html"
    assert main(["report", *map(str, runs), "--names", "A", "B", "-o", str(out), "--title", "Two <runs>"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<title>Two &lt;runs&gt;</title>" in text and "<th>A</th><th>B</th>" in text
    assert main(["report", str(runs[0]), "--names", "A", "B"]) == 2


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (CI installs Debian's chromium)")
def test_report_renders_in_headless_chromium_and_scripts_never_run(runs, tmp_path):
    from PIL import Image

    report = write_report(runs, tmp_path / "report.html")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Mood trajectories" not in dom.stdout  # the title is drawn in the PNG, not in text
    assert "dialog-gym evaluation report" in dom.stdout
    assert "data-pwned=" not in dom.stdout.split("<body", 1)[1].split(">", 1)[0]  # neither payload ran
    assert 'setAttribute("data-pwned","script")' in dom.stdout.replace("&quot;", '"')  # shown as text

    shot = tmp_path / "report.png"
    result = subprocess.run([*flags, "--window-size=1200,1800", f"--screenshot={shot}", report.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    image = Image.open(shot).convert("L")
    assert image.size == (1200, 1800)
    histogram = image.histogram()
    assert max(histogram) < 0.97 * sum(histogram)  # not a blank page: text, tables and plots
