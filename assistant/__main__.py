"""`python -m assistant`: the same as the `assistant` command."""

from .cli import main

main()
