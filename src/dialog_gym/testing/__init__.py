"""Test helpers that ship with dialog-gym.

- `ScriptedOpenAIServer`: a real OpenAI-compatible HTTP server with a scripted brain and
  fault injection (see `dialog_gym.testing.openai_server`).
- `make_persona`, `tiny_chat_model`: a test persona and a tiny random chat model
  (`dialog_gym.testing.tiny`; the model needs torch and transformers).
"""

from dialog_gym.testing.openai_server import FAULT_KINDS, ScriptedOpenAIServer, scripted_brain, scripted_change
from dialog_gym.testing.tiny import make_persona, tiny_chat_model

__all__ = ["FAULT_KINDS", "ScriptedOpenAIServer", "make_persona", "scripted_brain", "scripted_change", "tiny_chat_model"]
