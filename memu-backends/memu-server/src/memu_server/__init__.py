"""memu-server: memU's v4 memory HTTP API served warm over any local memu store.

``memu-server serve`` listens on TCP (API key per request, each key bound to one scope) and/or a
Unix socket only the user can open; ``memu-server keys create|list|revoke`` manages the keys.
:func:`memu_server.app.create_app` builds the FastAPI app for embedding or testing.
"""
