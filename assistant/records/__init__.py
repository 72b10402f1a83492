"""What happened, kept for the person: session transcripts and the runs read back from them.
"""
