"""The page's one stylesheet and its small script, served from memory (no build step, no files).

The script only improves what already works without it: it puts the cursor in an empty search
box, and ``/`` jumps to the search page's box from anywhere. It marks ``<html>`` with the class
``js`` (the tests tell a page read with JavaScript off by its absence). Reading and every write
work with JavaScript off.
"""

from __future__ import annotations

CSS = """
:root { color-scheme: light dark; --accent: #0b5cad; --muted: #5b6570; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 2rem; align-items: center; padding: .5rem 1.5rem; border-bottom: 1px solid #8884; }
header ul { display: flex; gap: 1.25rem; list-style: none; margin: 0; padding: 0; }
main { padding: 1rem 1.5rem; max-width: 72rem; }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus, textarea:focus { outline: 3px solid #f5a623; outline-offset: 1px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: .5rem; top: .5rem; background: #fff; padding: .25rem .5rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
pre { background: #8881; padding: .75rem; overflow-x: auto; white-space: pre-wrap; }
textarea { width: 100%; min-height: 20rem; font: 14px/1.4 ui-monospace, monospace; }
form.inline { display: inline; }
.actions { display: flex; gap: 1rem; align-items: center; margin: .5rem 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .9em; }
input[type=search] { min-width: 24rem; }
.notice { background: #e6f4ea; color: #1e4620; padding: .5rem .75rem; }
.error { background: #fde8e8; color: #7a1010; padding: .5rem .75rem; }
.muted { color: var(--muted); }
mark { background: #ffe58a; color: inherit; }
.diff-add { color: #116329; } .diff-del { color: #82071e; } .diff-hunk { color: var(--muted); }
ol.hits > li { margin-bottom: 1rem; }
"""

JS = """
document.documentElement.classList.add('js');
document.addEventListener('keydown', function (event) {
  var typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  var box = document.querySelector('input[type=search]');
  if (event.key === '/' && !typing && box) { event.preventDefault(); box.focus(); }
});
document.addEventListener('DOMContentLoaded', function () {
  var box = document.querySelector('input[type=search][data-autofocus]');
  if (box && !box.value) { box.focus(); }
});
"""
