"""Attack 8 (bounded diff): the deadline is checked only between difflib's find_longest_match
calls, so one call may run past DIFF_SECONDS. Current note: 125,000 equal lines between two
different ones; proposal: 197 of the same line between two others (199 lines: under difflib's
autojunk threshold of 200, so no line is junk). 125,002 x 199 = 24.9M pairs is under
MAX_DIFF_LINE_PAIRS, both texts fit under max_note_bytes (256 KiB). Prints the time one diff took."""
import time
from assistant.display import terminal

current = "y\n" + "x\n" * 125_000 + "y\n"
proposed = "z\n" + "x\n" * 197 + "z\n"
assert len(current.encode()) <= 262144
t = time.monotonic()
out = terminal.unified_diff(current, proposed, "n.md")
took = time.monotonic() - t
print(f"unified_diff took {took:.2f} s (bound DIFF_SECONDS={terminal.DIFF_SECONDS}); "
      f"{'no diff (bounded)' if out.startswith('(no diff') else 'diff computed'}")
print("BROKE" if took > 2 * terminal.DIFF_SECONDS else "held")
