"""Episode records: what happened in a dialogue, written to and read from JSONL."""

from dialog_gym.episodes.record import Episode

__all__ = ["Episode"]
