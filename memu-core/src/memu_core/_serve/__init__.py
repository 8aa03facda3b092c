"""The warm path: ``memu serve`` keeps the store, the index and the embedder loaded behind a Unix
socket in ``~/.memu/run/``, and a stdlib-only client lets the per-turn ``retrieve`` use it.

- :mod:`.stamp`: the version + configuration fingerprint both sides compute (the handshake);
- :mod:`.unix`: binding a Unix socket only this user can open (memu-server binds through it too);
- :mod:`.server`: the socket server and its lifecycle (lock, idle exit, stale-config exit);
- :mod:`.client`: the stdlib client (raw HTTP/1.0 over the socket) and on-demand start;
- :mod:`.fastpath`: a host binary's ``retrieve`` answered by the warm server.

Where the socket, lock and pidfile live is :mod:`memu_core._layout`'s to say; the v4 rules
are the public :mod:`memu_core.v4`.
"""
