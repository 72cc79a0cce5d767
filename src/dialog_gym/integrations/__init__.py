"""Adapters for the trainers users already run.

- `dialog_gym.integrations.trl`: a `rollout_func` and a reward function for TRL's
  `GRPOTrainer` (multi-turn dialogues played by the trainer's own model).
- `dialog_gym.integrations.verl`: the simulated user of verl's multi-turn rollout (which
  scales over Ray to many machines): an agent loop for verl 0.9.x, an interaction for 0.7.x.

Each module imports its trainer lazily: importing `dialog_gym` never requires TRL or verl.
"""
