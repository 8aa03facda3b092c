"""The parts of the host SDK: the host declaration, the working tree and the source helpers.

:mod:`memu_core.host` re-exports what host plugins use; plugins never import this package.
Nothing here imports the bridging pipeline or the CLI.
"""
