"""What reaches a person's eyes: terminal escaping, colour, screen lines, local time.

The bottom of assistant/ but for confine: it imports nothing above it.
"""
