"""solar's offline table of HuggingFace model configs: the published hyperparameters of the
models that workload files load by name (KernelBench level 4), so that
``AutoConfig.from_pretrained(name)`` resolves without the hub (``hf_offline``).

Each entry: the ``model_type`` and the fields of the hub's ``config.json`` that differ from the
``transformers`` config class's defaults (fields that only matter for training, generation or the
tokenizer — dropout, ``task_specific_params``, token ids equal to the defaults — are left out: they
do not change the forward pass's shapes or ops), and ``source``: where the values come from.
``keep_sequence``: validate at the file's sequence length. ``validation_layers``: the layer-count fields to set for a scaled validation (see
``hf_offline.validation_sizes``): the same widths and per-layer structure, fewer layers, because the
full-size weights in float64 do not fit the validation budget.

Values were written from the models' published ``config.json`` (URLs below, read as published on
the hub; the table was written 2026-12-01) and cross-checked against the ``transformers`` config
docs and model cards (layer / width / head counts). ``dtype``: the configs of opt-1.3b
(``torch_dtype: float16``) and gpt-neo-2.7B (``float32``) name a checkpoint dtype; ``from_config``
builds in torch's default dtype (float32), as ``from_pretrained`` did in the transformers 4.x that
KernelBench was written against, so the table leaves ``torch_dtype`` out.
"""
from __future__ import annotations

from typing import Any

HF_CONFIGS: dict[str, dict[str, Any]] = {
    "gpt2": {
        "model_type": "gpt2",
        # GPT2Config's defaults are gpt2 (124M): n_embd 768, n_layer 12, n_head 12, n_positions 1024,
        # vocab_size 50257, activation gelu_new.
        "fields": {},
        "validation_layers": {"n_layer": 2},
        "source": "https://huggingface.co/openai-community/gpt2/blob/main/config.json (as of 2026-12-01)",
    },
    "facebook/opt-1.3b": {
        "model_type": "opt",
        "fields": {"hidden_size": 2048, "ffn_dim": 8192, "num_hidden_layers": 24, "num_attention_heads": 32,
                   "word_embed_proj_dim": 2048, "max_position_embeddings": 2048, "vocab_size": 50272,
                   "activation_function": "relu", "do_layer_norm_before": True, "pad_token_id": 1,
                   "bos_token_id": 2, "eos_token_id": 2},
        "validation_layers": {"num_hidden_layers": 2},
        "source": "https://huggingface.co/facebook/opt-1.3b/blob/main/config.json (as of 2026-12-01)",
    },
    "EleutherAI/gpt-neo-2.7B": {
        "model_type": "gpt_neo",
        "fields": {"hidden_size": 2560, "num_layers": 32, "num_heads": 20,
                   "attention_types": [[["global", "local"], 16]], "window_size": 256,
                   "max_position_embeddings": 2048, "vocab_size": 50257, "activation_function": "gelu_new",
                   "intermediate_size": None, "layer_norm_epsilon": 1e-5},
        "validation_layers": {"num_layers": 2, "attention_types": [[["global", "local"], 1]]},
        "source": "https://huggingface.co/EleutherAI/gpt-neo-2.7B/blob/main/config.json (as of 2026-12-01)",
    },
    "facebook/bart-large": {
        "model_type": "bart",
        # BartConfig's defaults are bart-large: d_model 1024, 12 + 12 layers, 16 heads, ffn 4096,
        # vocab_size 50265, max_position_embeddings 1024, activation gelu.
        "fields": {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
                   "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096,
                   "vocab_size": 50265, "max_position_embeddings": 1024, "scale_embedding": False,
                   "forced_eos_token_id": 2},
        "validation_layers": {"encoder_layers": 2, "decoder_layers": 2},
        "source": "https://huggingface.co/facebook/bart-large/blob/main/config.json (as of 2026-12-01)",
    },
    "google/bigbird-roberta-base": {
        "model_type": "big_bird",
        # BigBirdConfig's defaults are bigbird-roberta-base: hidden 768, 12 layers, 12 heads,
        # intermediate 3072, vocab 50358, max_position_embeddings 4096, block_sparse, block 64, 3 random blocks.
        "fields": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                   "intermediate_size": 3072, "vocab_size": 50358, "max_position_embeddings": 4096,
                   "attention_type": "block_sparse", "block_size": 64, "num_random_blocks": 3,
                   "hidden_act": "gelu_new", "sep_token_id": 66},
        "validation_layers": {"num_hidden_layers": 2},
        "source": "https://huggingface.co/google/bigbird-roberta-base/blob/main/config.json (as of 2026-12-01)",
    },
    "google/electra-small-discriminator": {
        "model_type": "electra",
        # ElectraConfig's defaults are electra-small: embedding 128, hidden 256, 12 layers, 4 heads,
        # intermediate 1024, vocab 30522, max_position_embeddings 512. Small enough to validate whole.
        "fields": {"embedding_size": 128, "hidden_size": 256, "num_hidden_layers": 12, "num_attention_heads": 4,
                   "intermediate_size": 1024, "vocab_size": 30522, "max_position_embeddings": 512},
        "validation_layers": {},
        "source": "https://huggingface.co/google/electra-small-discriminator/blob/main/config.json "
                  "(as of 2026-12-01)",
    },
    "google/reformer-enwik8": {
        "model_type": "reformer",
        "fields": {"attention_head_size": 128, "attn_layers": ["local", "lsh"] * 6,
                   "axial_pos_embds": True, "axial_pos_shape": [128, 512], "axial_pos_embds_dim": [256, 768],
                   "feed_forward_size": 4096, "hidden_act": "relu", "hidden_size": 1024, "is_decoder": True,
                   "local_attn_chunk_length": 128, "local_num_chunks_before": 1, "local_num_chunks_after": 0,
                   "lsh_attn_chunk_length": 256, "lsh_num_chunks_before": 1, "lsh_num_chunks_after": 0,
                   "max_position_embeddings": 65536, "num_attention_heads": 8,
                   "num_hashes": 4, "vocab_size": 258, "layer_norm_eps": 1e-12, "pad_token_id": 0,
                   "eos_token_id": 2},
        # two local/lsh pairs: the first layer reads the embeddings twice (reversible streams), so the
        # structure check needs a second pair to find the repeated block
        "validation_layers": {"attn_layers": ["local", "lsh"] * 2},
        # its local attention is chunked only past local_attn_chunk_length (128) tokens: another
        # structure at a shorter sequence, so validation keeps the file's sequence length
        "keep_sequence": True,
        "source": "https://huggingface.co/google/reformer-enwik8/blob/main/config.json (as of 2026-12-01); "
                  "num_buckets left at the default (None: chosen from the sequence length): at sequence "
                  "lengths up to lsh_attn_chunk_length (256) the LSH layers attend in full and never hash",
    },
}
