"""Answering approval requests out of band: the one answering path, signed links for the
approval page, and push notifications to a phone.
"""
