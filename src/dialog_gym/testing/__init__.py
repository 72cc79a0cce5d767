"""Test helpers that ship with dialog-gym: a real OpenAI-compatible server with a scripted brain."""

from dialog_gym.testing.openai_server import FAULT_KINDS, ScriptedOpenAIServer, scripted_brain, scripted_change

__all__ = ["FAULT_KINDS", "ScriptedOpenAIServer", "scripted_brain", "scripted_change"]
