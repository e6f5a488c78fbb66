"""More Hugging Face architectures for make_models.py (``--only`` with these
names, or make_zoo_models.py for all of them): the families users bring
beyond the issue's list, each built from a transformers config with random
weights (no hub download), small for the tests and larger for the benchmark.

    KINDS: name -> "text" | "image" | "audio" (make_models.SHAPE_SETS)
    build(name, size, Wrap) -> (module, input names, output names, make_inputs)

Text models take input_ids and attention_mask and give their first output
(the encoders' last_hidden_state, the causal LMs' logits); image models take
pixel_values; wav2vec2 takes input_values (raw audio samples).  Every model
runs with eager attention (the form the exporters write out op by op).

Importing this module needs neither torch nor transformers: KINDS and the
sizes are plain data the tests parametrise over.
"""
from __future__ import annotations

import numpy as np

# name -> (kind, transformers config class, model class, tiny kwargs, bench kwargs)
_TEXT = dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2,
             max_position_embeddings=128)
_TEXT_BENCH = dict(hidden_size=512, num_attention_heads=8, intermediate_size=2048, num_hidden_layers=4,
                   max_position_embeddings=512)


def _with(base: dict, **kw) -> dict:
    d = dict(base)
    d.update(kw)
    return d


SPECS = {
    # encoders
    "albert": ("text", "AlbertConfig", "AlbertModel", _with(_TEXT, embedding_size=32),
               _with(_TEXT_BENCH, embedding_size=128)),
    "electra": ("text", "ElectraConfig", "ElectraModel", _with(_TEXT, embedding_size=32),
                _with(_TEXT_BENCH, embedding_size=128)),
    "mpnet": ("text", "MPNetConfig", "MPNetModel", _TEXT, _TEXT_BENCH),
    "deberta-v2": ("text", "DebertaV2Config", "DebertaV2Model", _TEXT, _TEXT_BENCH),
    "xlm-roberta": ("text", "XLMRobertaConfig", "XLMRobertaModel", _TEXT, _TEXT_BENCH),
    "mobilebert": ("text", "MobileBertConfig", "MobileBertModel",
                   _with(_TEXT, embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32,
                         num_feedforward_networks=2),
                   _with(_TEXT_BENCH, embedding_size=128, intra_bottleneck_size=128, true_hidden_size=128,
                         num_feedforward_networks=4)),
    "bart-encoder": ("text", "BartConfig", "BartModel",
                     dict(d_model=64, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                          decoder_ffn_dim=128, encoder_layers=2, decoder_layers=1, max_position_embeddings=128),
                     dict(d_model=512, encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                          decoder_ffn_dim=2048, encoder_layers=4, decoder_layers=1, max_position_embeddings=512)),
    "clip-text": ("text", "CLIPTextConfig", "CLIPTextModel", _TEXT, _TEXT_BENCH),
    # causal language models
    "opt": ("text", "OPTConfig", "OPTForCausalLM",
            dict(hidden_size=64, num_attention_heads=4, ffn_dim=128, num_hidden_layers=2,
                 max_position_embeddings=128, word_embed_proj_dim=64),
            dict(hidden_size=512, num_attention_heads=8, ffn_dim=2048, num_hidden_layers=4,
                 max_position_embeddings=512, word_embed_proj_dim=512)),
    "gpt-neo": ("text", "GPTNeoConfig", "GPTNeoForCausalLM",
                dict(hidden_size=64, num_heads=4, num_layers=2, attention_types=[[["global", "local"], 1]],
                     max_position_embeddings=128, window_size=8),
                dict(hidden_size=512, num_heads=8, num_layers=4, attention_types=[[["global", "local"], 2]],
                     max_position_embeddings=512, window_size=256)),
    "gpt-neox": ("text", "GPTNeoXConfig", "GPTNeoXForCausalLM", _TEXT, _TEXT_BENCH),
    "phi": ("text", "PhiConfig", "PhiForCausalLM", _TEXT, _TEXT_BENCH),
    "mistral": ("text", "MistralConfig", "MistralForCausalLM", _with(_TEXT, num_key_value_heads=2),
                _with(_TEXT_BENCH, num_key_value_heads=4)),
    "gemma": ("text", "GemmaConfig", "GemmaForCausalLM", _with(_TEXT, num_key_value_heads=2, head_dim=16),
              _with(_TEXT_BENCH, num_key_value_heads=4, head_dim=64)),
    "gemma2": ("text", "Gemma2Config", "Gemma2ForCausalLM", _with(_TEXT, num_key_value_heads=2, head_dim=16),
               _with(_TEXT_BENCH, num_key_value_heads=4, head_dim=64)),
    "qwen3": ("text", "Qwen3Config", "Qwen3ForCausalLM", _with(_TEXT, num_key_value_heads=2, head_dim=16),
              _with(_TEXT_BENCH, num_key_value_heads=4, head_dim=64)),
    "stablelm": ("text", "StableLmConfig", "StableLmForCausalLM", _with(_TEXT, num_key_value_heads=2),
                 _with(_TEXT_BENCH, num_key_value_heads=4)),
    "bloom": ("text", "BloomConfig", "BloomForCausalLM", dict(hidden_size=64, n_head=4, n_layer=2),
              dict(hidden_size=512, n_head=8, n_layer=4)),
    "falcon": ("text", "FalconConfig", "FalconForCausalLM",
               dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=2),
               dict(hidden_size=512, num_attention_heads=8, num_hidden_layers=4)),
    "gptj": ("text", "GPTJConfig", "GPTJForCausalLM", dict(n_embd=64, n_head=4, n_layer=2, n_positions=128,
                                                           rotary_dim=8),
             dict(n_embd=512, n_head=8, n_layer=4, n_positions=512, rotary_dim=32)),
    "codegen": ("text", "CodeGenConfig", "CodeGenForCausalLM",
                dict(n_embd=64, n_head=4, n_layer=2, n_positions=128, n_ctx=128, rotary_dim=8),
                dict(n_embd=512, n_head=8, n_layer=4, n_positions=512, n_ctx=512, rotary_dim=32)),
    # vision
    "clip-vision": ("image", "CLIPVisionConfig", "CLIPVisionModel",
                    dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2,
                         image_size=32, patch_size=8),
                    dict(hidden_size=384, num_attention_heads=6, intermediate_size=1536, num_hidden_layers=4,
                         image_size=224, patch_size=16)),
    "deit": ("image", "DeiTConfig", "DeiTModel",
             dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2,
                  image_size=32, patch_size=8),
             dict(hidden_size=384, num_attention_heads=6, intermediate_size=1536, num_hidden_layers=4,
                  image_size=224, patch_size=16)),
    "swin": ("image", "SwinConfig", "SwinModel",
             dict(embed_dim=16, depths=[1, 1], num_heads=[2, 4], image_size=32, patch_size=4, window_size=4),
             dict(embed_dim=48, depths=[2, 2, 2, 2], num_heads=[3, 6, 12, 24], image_size=224, patch_size=4,
                  window_size=7)),
    "convnext": ("image", "ConvNextConfig", "ConvNextModel",
                 dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32),
                 dict(hidden_sizes=[48, 96, 192, 384], depths=[2, 2, 2, 2], image_size=224)),
    "segformer": ("image", "SegformerConfig", "SegformerModel",
                  dict(image_size=32, hidden_sizes=[8, 16, 24, 32], num_attention_heads=[1, 1, 2, 2],
                       depths=[1, 1, 1, 1], decoder_hidden_size=32),
                  dict(image_size=224, hidden_sizes=[32, 64, 160, 256], num_attention_heads=[1, 2, 5, 8],
                       depths=[2, 2, 2, 2], decoder_hidden_size=256)),
    # audio
    "wav2vec2": ("audio", "Wav2Vec2Config", "Wav2Vec2Model",
                 dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=2,
                      conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
                      num_conv_pos_embedding_groups=4),
                 dict(hidden_size=384, num_attention_heads=6, intermediate_size=1536, num_hidden_layers=4)),
}

KINDS = {name: spec[0] for name, spec in SPECS.items()}
VOCAB = 1000
SAMPLES = {"tiny": 1600, "bench": 16000}   # wav2vec2's input: 0.1 s and 1 s at 16 kHz


def image_size(name: str, size: str) -> int:
    return SPECS[name][3 if size == "tiny" else 4].get("image_size", 224)


def bench_inputs(name: str, batch: int, seq: int, rng) -> dict:
    """The benchmark's feeds: sequence seq (attention mask all ones), a
    bench-size image, or a second of audio."""
    kind = KINDS[name]
    if kind == "text":
        return {"input_ids": rng.integers(3, VOCAB, size=(batch, seq)).astype(np.int64),
                "attention_mask": np.ones((batch, seq), np.int64)}
    if kind == "image":
        s = image_size(name, "bench")
        return {"pixel_values": rng.standard_normal((batch, 3, s, s)).astype(np.float32)}
    return {"input_values": rng.standard_normal((batch, SAMPLES["bench"])).astype(np.float32)}


def _wake(model) -> None:
    """Random values where the initialisation left zeros (biases, a zero
    scale that would hide a wrong fold) and random running statistics in
    every BatchNorm, from a fixed generator.  (MobileViT is not here: with
    random weights its output does not depend on its input.)"""
    import torch
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in model.parameters():
            if not p.any():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)


def build(name: str, size: str, Wrap, text_inputs):
    """The module (Wrap of the model with its named inputs), its input and
    output names, and make_inputs(batch, seq, padded, k, rng) for the test
    sets (text_inputs: make_models' text input maker)."""
    import transformers as tf

    kind, cfg_name, model_name, tiny, bench = SPECS[name]
    kw = dict(tiny if size == "tiny" else bench)
    if kind == "text":
        kw.setdefault("vocab_size", VOCAB)
    cfg = getattr(tf, cfg_name)(**kw)
    cfg._attn_implementation = "eager"
    model = getattr(tf, model_name)(cfg)
    if name == "bart-encoder":
        model = model.get_encoder()
    _wake(model)
    if kind == "text":
        ins = ["input_ids", "attention_mask"]
        causal = model_name.endswith("ForCausalLM")
        out = "logits" if causal else "last_hidden_state"

        def run(m, **feeds):
            return m(**feeds, use_cache=False)[0] if causal else m(**feeds)[0]
        return Wrap(model, ins, run), ins, [out], text_inputs()
    if kind == "image":
        s = image_size(name, size)

        def make(batch, seq, padded, k, rng):
            return {"pixel_values": rng.standard_normal((batch, 3, s, s)).astype(np.float32)}
        return Wrap(model, ["pixel_values"], lambda m, **f: m(**f)[0]), ["pixel_values"], ["last_hidden_state"], make

    n = SAMPLES[size]

    def make_audio(batch, seq, padded, k, rng):
        return {"input_values": rng.standard_normal((batch, n)).astype(np.float32)}
    return (Wrap(model, ["input_values"], lambda m, **f: m(**f)[0]), ["input_values"], ["last_hidden_state"],
            make_audio)
