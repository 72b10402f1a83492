"""Attack 8 (special tokens to a chat-completions server, static half): control-token spellings of
many model families, in message content, must come out of neutralise() (what the openai backend's
chat-completions messages get when the server offers no tokenizer) with no exact spelling left,
also glued to other text and to each other."""
from assistant.models.special_tokens import neutralise

TOKENS = ["<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>", "<|eot_id|>", "<|start_header_id|>",
          "[INST]", "[/INST]", "[TOOL_CALLS]", "</s>", "<s>", "<|end|>", "<｜end▁of▁sentence｜>", "<｜User｜>",
          "[|endofturn|]", "]~b]", "]~!b[", ">>ANSWER<<", "[gMASK]", "<sop>", "<|START_OF_TURN_TOKEN|>",
          "<|channel|>", "<|message|>", "<|return|>", "<think>", "<tool_call>", "<|python_tag|>",
          "<|reserved_special_token_250|>", "<0x0A>", "[AVAILABLE_TOOLS]", "<|header_start|>",
          "<|im_sep|>", "<|start_of_role|>", "<用户>", "<seed:bos>", "[SYSTEM_PROMPT]", "<|begin_of_text|>"]
broke = []
for t in TOKENS:
    for text in (t, "x" + t + "y", t + t, "<" + t, t + ">", "[" + t + "]", "|" + t + "|", t.upper()):
        out = neutralise(text)
        if t in out:
            broke.append(repr(text))
print("BROKE: survives neutralise: " + ", ".join(broke) if broke else f"held: {len(TOKENS)} token spellings x 8 contexts all broken")
