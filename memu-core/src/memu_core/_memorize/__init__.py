"""Developer run workspaces (``memu memorize prepare|commit|verify-resources|discard``).

An application hands memu 1-10 sessions it recorded itself, runs its own executor over the
jobs, and commits once. Each ``prepare`` gets a private directory of its own
(:mod:`.workspace`), so independent runs never block or overwrite each other; inside it the
bridging pipeline runs exactly as it does for a host, over the given sessions (:mod:`.source`).
"""
