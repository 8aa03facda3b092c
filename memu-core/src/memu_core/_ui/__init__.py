"""``memu ui``: a local web page to browse, search, edit, restore and forget memory.

Server-rendered HTML over the local engine (:mod:`.app`, a WSGI application), behind a per-run
token and CSRF checks (:mod:`.gate`); ``memu ui`` serves it from its own process on 127.0.0.1
(:mod:`.server`) and memu-server mounts the same application behind its API keys. Nothing here
is imported by the per-turn retrieve. Decisions: docs/adr/0025-memu-ui.md.
"""
