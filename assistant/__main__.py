"""`python -m assistant`: the same as the `assistant` command (help and messages say `assistant`)."""

from assistant.cli import main

main(prog_name="assistant")
