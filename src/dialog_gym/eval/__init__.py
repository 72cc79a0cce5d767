"""Evaluation: the benchmark runner, metrics with confidence intervals, HTML reports."""

from dialog_gym.eval.agents import BackendAgent, load_agent
from dialog_gym.eval.metrics import bootstrap_mean_ci, summarize
from dialog_gym.eval.runner import EvalResult, aevaluate, evaluate, load_run

__all__ = ["BackendAgent", "EvalResult", "aevaluate", "bootstrap_mean_ci", "evaluate", "load_agent", "load_run", "summarize"]
