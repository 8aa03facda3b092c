"""The warm path: ``memu serve`` keeps the store, the index and the embedder loaded behind a Unix
socket in ``~/.memu/run/``, and a stdlib-only client lets the per-turn ``retrieve`` use it.

- :mod:`.paths`: where the socket, lock and pidfile live (0700 directory, 0600 socket);
- :mod:`.stamp`: the version + configuration fingerprint both sides compute (the handshake);
- :mod:`.v4`: the v4 memory API's rules (routes, scopes, bounds, errors), shared with memu-server;
- :mod:`.server`: the socket server and its lifecycle (lock, idle exit, stale-config exit);
- :mod:`.client`: the stdlib client (raw HTTP/1.0 over the socket) and on-demand start;
- :mod:`.fastpath`: ``retrieve`` argument handling that tries the warm server first.
"""
