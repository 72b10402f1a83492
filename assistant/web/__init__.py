"""The approval page (`assistant approvals serve`): another door onto the approval inbox.

app.py: who may see and answer what (signed links, login, CSRF, bounded bodies);
pages.py: the escaped, phone-sized HTML; server.py: the address and the bounds of the server.
"""
