"""Grammar-constrained sampling that checks the grammar lazily (llama.cpp's own strategy).

Guards the speed of grammar-constrained steps without loosening the constraint. llama-cpp-python
puts the grammar first in the sampler chain, so every token runs the grammar over the whole
vocabulary (262k entries for Gemma 3): about three quarters of the time of a step. Here, as in
llama.cpp's common sampler, the ordinary chain (penalties, top-k, top-p, min-p, temperature,
dist) picks a token first and only that token is checked against the grammar; only when the
grammar rejects it is the grammar applied to the full vocabulary and the token resampled. The
token that comes out is always one the grammar accepts, and the grammar state advances exactly
once per token.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np


class LazyGrammarSampler:
    """Stands in for llama-cpp-python's LlamaSampler inside Llama.sample()."""

    def __init__(self, llm: Any, chain: Any, grammar: Any):
        import llama_cpp
        from llama_cpp import _internals

        self._lib = llama_cpp
        self.chain = chain   # _internals.LlamaSampler without grammar; owns its C object
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the action grammar")
        self.n_vocab = llm.n_vocab()
        self.cur = _internals.LlamaTokenDataArray(n_vocab=self.n_vocab)
        self._one_data = (llama_cpp.llama_token_data * 1)()
        self._one = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._one_data, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False)
        self.fallbacks = 0
        self.tokens = 0

    def _pick(self, logits: np.ndarray, with_grammar: bool) -> int:
        lib = self._lib
        self.cur.copy_logits(logits)
        self.cur.candidates.selected = -1
        ref = ctypes.byref(self.cur.candidates)
        if with_grammar:
            lib.llama_sampler_apply(self.grammar, ref)
        lib.llama_sampler_apply(self.chain.sampler, ref)
        sel = self.cur.candidates.selected
        if sel < 0 or sel >= self.cur.candidates.size:
            raise RuntimeError("the sampler chain selected no token")
        return int(self.cur.candidates_data.id[sel])

    def _grammar_allows(self, token: int) -> bool:
        self._one_data[0].id = token
        self._one_data[0].logit = 0.0
        self._one_data[0].p = 0.0
        self._one.size = 1
        self._one.selected = -1
        self._one.sorted = False
        self._lib.llama_sampler_apply(self.grammar, ctypes.byref(self._one))
        return not math.isinf(self._one_data[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        lib = self._lib
        ptr = lib.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()
        token = self._pick(logits, with_grammar=False)
        if not self._grammar_allows(token):
            self.fallbacks += 1
            token = self._pick(logits, with_grammar=True)
        self.tokens += 1
        lib.llama_sampler_accept(self.grammar, token)
        lib.llama_sampler_accept(self.chain.sampler, token)
        return token

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self.grammar, token)
        self._lib.llama_sampler_accept(self.chain.sampler, token)

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self.grammar)
        self.chain.reset()

    def close(self) -> None:
        if self.grammar:
            self._lib.llama_sampler_free(self.grammar)
            self.grammar = None
        self.chain.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
