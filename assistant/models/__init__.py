"""Model backends behind one protocol (base.Model): llama_cpp (local GGUF) and scripted."""
