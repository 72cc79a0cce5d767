"""Tiny, real objects for tests: a persona and a randomly initialised chat model.

`tiny_chat_model()` trains a byte-level BPE tokenizer on a few sentences and builds a
two-layer Llama from a config (no download, well under a second on a CPU). Its output is
gibberish, which is what tests of batching, budgets and error paths need.
"""

from __future__ import annotations

from typing import Any

from dialog_gym.personas import Persona

_CORPUS = [
    "I have had a rough week and I need to talk.",
    "That sounds exhausting. What happened after that?",
    '{"intent": "comfort", "need_fit": "partly", "inner_reaction": "calmer", "feeling": "heard", "change": 5}',
    "我这周真的太难熬了，想找个人说说。听起来真的很辛苦。",
]


def make_persona(language: str = "en", **overrides: Any) -> Persona:
    """A complete, schema-valid persona for tests (English or Chinese)."""
    if language == "zh":
        data: dict[str, Any] = {
            "id": "zh-test-advice-1", "language": "zh", "split": "test", "hidden_need": "practical_advice",
            "character_type": "negative",
            "profile": {"name": "李明", "traits": ["急躁", "要强"], "age": 29, "occupation": "厨师"},
            "scene": {"event": "房东提前两周通知房租涨三成。", "current_state": "周五前必须决定搬不搬。"},
            "reactions": {"need_missed": "对方只会安慰时，他会不耐烦地说“说这些有什么用”。"},
            "disclosures": ["押金还在房东手里。"],
            "opening_line": "房东突然说房租涨三成，就给两周时间，我真是服了。",
        }
    else:
        data = {
            "id": "en-test-advice-1", "language": "en", "split": "test", "hidden_need": "practical_advice",
            "character_type": "negative",
            "profile": {"name": "Sam", "traits": ["impatient", "proud"], "age": 29, "occupation": "line cook",
                        "speaking_style": "short, blunt sentences"},
            "scene": {"event": "Sam's landlord raised the rent by 30% with two weeks' notice.",
                      "stages": ["The letter came on Monday.", "The landlord won't answer calls."],
                      "current_state": "Sam has to decide by Friday whether to move."},
            "reactions": {"need_missed": "Pure sympathy makes Sam snap: 'and what good does that do?'"},
            "disclosures": ["The landlord still holds a two-month deposit."],
            "opening_line": "My landlord just jacked up my rent by 30 percent. Two weeks notice.",
        }
    data.update(overrides)
    return Persona.from_dict(data)


def tiny_chat_model(seed: int = 0) -> tuple[Any, Any]:
    """A randomly initialised two-layer Llama and a byte-level BPE tokenizer with ChatML tokens."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<|im_start|>", "<|im_end|>"]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<|im_start|>",
                                   eos_token="<|im_end|>", pad_token="<|im_end|>")
    config = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    with torch.random.fork_rng(devices=[]):  # seeded weights without touching the global RNG state
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config).eval()
    return model, fast
