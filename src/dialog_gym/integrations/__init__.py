"""Adapters for the trainers users already run.

- `dialog_gym.integrations.trl`: a `rollout_func` and a reward function for TRL's
  `GRPOTrainer` (multi-turn dialogues played by the trainer's own model).
- `dialog_gym.integrations.verl`: the simulated user of verl's multi-turn rollout (which
  scales over Ray to many machines): an agent loop for verl 0.9.x, an interaction for 0.7.x.
- `dialog_gym.integrations.verifiers`: a verifiers 0.4 environment (taskset, env, harness),
  found by `vf-eval dialog-gym-empathy` through the `dialog_gym_empathy` module.
- `dialog_gym.integrations.openenv`: an OpenEnv server (`dialog-gym serve`) and its typed
  client.

Each module imports its trainer lazily: importing `dialog_gym` never requires TRL, verl,
verifiers or openenv-core.
"""
