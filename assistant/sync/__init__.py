"""Git-backed sync of memory between the person's enrolled, signed devices (docs/sync.md).

Above the note store, below the tools: nothing below imports it. Incoming changes land through
the memory writer (assistant.notes.writer.GatedWriter), checked like any write.
"""
