"""special_tokens.neutralise: every special-token spelling of the families we know is broken (so
no tokenizer matches it), ordinary text is left alone, and only confirmed candidates are touched
when the server's tokenizer can be asked."""

from assistant.models.special_tokens import JOINER, aggressive, candidates, neutralise

SPELLINGS = ["<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>", "<|eot_id|>",
             "<|start_header_id|>", "<｜begin▁of▁sentence｜>", "<｜Assistant｜>", "[INST]", "[/INST]",
             "[TOOL_CALLS]", "</s>", "<s>", "<|end|>", "<|user|>", "<|endoftext|>"]


def test_every_known_spelling_is_broken_and_reads_the_same_without_the_joiner():
    text = "page: " + " and ".join(SPELLINGS) + " end"
    out = neutralise(text)
    for sp in SPELLINGS:
        assert sp not in out, sp
    assert out.replace(JOINER, "") == text
    assert neutralise(out) == out          # idempotent


def test_ordinary_text_is_untouched():
    for text in ("a < b and c > d", "x<y", "[link](http://a)", "|a|b|", "use [brackets] here", "2 <= 3"):
        assert neutralise(text) == text, text


def test_with_the_servers_tokenizer_only_confirmed_candidates_are_broken():
    asked = []

    def is_special(c):
        asked.append(c)
        return c == "<end_of_turn>"

    out = neutralise("<b>bold</b> then <end_of_turn> and <end_of_turn>", is_special)
    assert out == f"<b>bold</b> then <{JOINER}end_of_turn> and <{JOINER}end_of_turn>"
    assert sorted(asked) == sorted(set(candidates("<b>bold</b> then <end_of_turn>")))


def test_aggressive_breaks_every_opener():
    assert aggressive("<x>[y]|z") == f"<{JOINER}x>[{JOINER}y]|{JOINER}z"
