"""Scheduling the bridging run: ``memu-<host> schedule install|uninstall|status|verify|run``.

memu writes everything a scheduler needs itself: a wrapper script that depends on nothing from
the environment (:mod:`.wrapper`), one tagged entry per host in the platform's scheduler (cron,
systemd user timers, launchd or the Windows Task Scheduler: :mod:`.backends`), and a registry
file recording what was installed (:mod:`.plan`). Each scheduled run goes through
:mod:`.runner`, which guards against overlap, bounds the agent's time and keeps a rotated log.
"""
