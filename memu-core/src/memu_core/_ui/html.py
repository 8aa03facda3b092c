"""HTML building blocks: every page's frame, escaped text, links, tables and write forms.

Pages are plain server-rendered HTML: each has one ``h1``, headings in order, a label on every
input, and every action is a link or a button (reachable by Tab, used with Enter). Values are
escaped here and nowhere else: a view passes text, never markup it built by hand from data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from urllib.parse import urlencode

from memu_core._ui.gate import CSRF_FIELD


class Markup(str):
    """Text that is already HTML (built by this module); :func:`e` leaves it as it is."""

    __slots__ = ()


def e(value: object) -> Markup:
    """``value`` escaped for HTML text and attribute values (Markup passes through)."""
    if isinstance(value, Markup):
        return value
    return Markup(escape(str(value), quote=True))


def join(parts: Iterable[object]) -> Markup:
    """Concatenate escaped parts."""
    return Markup("".join(e(p) for p in parts))


def tag(element: str, body: object = "", /, **attrs: object) -> Markup:
    """``<element attrs>body</element>``: ``class_`` becomes ``class``, ``aria_label`` ``aria-label``;
    ``True`` is a bare attribute, ``None`` or ``False`` none."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        rendered.append(f" {attr}" if value is True else f' {attr}="{e(value)}"')
    return Markup(f"<{element}{''.join(rendered)}>{e(body)}</{element}>")


def link(base: str, path: str, text: object, params: Mapping[str, object] | None = None, **attrs: object) -> Markup:
    """A link to ``path`` under the page's mount point ``base``, with query ``params``."""
    return tag("a", text, href=url(base, path, params), **attrs)


def url(base: str, path: str, params: Mapping[str, object] | None = None) -> str:
    """``base/path?params`` (empty values dropped)."""
    query = urlencode({k: str(v) for k, v in (params or {}).items() if v not in (None, "")})
    return f"{base}/{path}" + (f"?{query}" if query else "")


def table(caption: str, head: Sequence[str], rows: Iterable[Sequence[object]], **attrs: object) -> Markup:
    """A data table with a caption and column headers."""
    header = tag("tr", join(tag("th", h, scope="col") for h in head))
    body = join(tag("tr", join(tag("td", cell) for cell in row)) for row in rows)
    return tag("table", join([tag("caption", caption), tag("thead", header), tag("tbody", body)]), **attrs)


def post_form(
    base: str,
    path: str,
    csrf: str,
    fields: Mapping[str, object],
    button: str,
    *,
    label: str | None = None,
    **attrs: object,
) -> Markup:
    """A one-button write form (POST, CSRF token included); ``label`` names the button for screen readers."""
    hidden = join(tag("input", type="hidden", name=k, value=v) for k, v in {**fields, CSRF_FIELD: csrf}.items())
    return tag(
        "form",
        join([hidden, tag("button", button, type="submit", aria_label=label)]),
        method="post",
        action=url(base, path),
        class_="inline",
        **attrs,
    )


def page(base: str, title: str, body: object, *, who: str, notice: str = "", error: str = "") -> Markup:
    """A whole page: head, skip link, navigation, one ``h1`` (the title), messages, ``body``."""
    nav = tag(
        "nav",
        tag(
            "ul",
            join(
                tag("li", link(base, path, text))
                for path, text in (("", "Files"), ("search", "Search"), ("runs", "Bridging runs"), ("events", "Events"))
            ),
        ),
        aria_label="Sections",
    )
    messages = join(
        [
            tag("p", notice, class_="notice", role="status") if notice else "",
            tag("p", error, class_="error", role="alert") if error else "",
        ]
    )
    head = join(
        [
            Markup('<meta charset="utf-8">'),
            Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            tag("title", f"{title} · memu"),
            Markup(f'<link rel="stylesheet" href="{e(base)}/static/ui.css">'),
            Markup(f'<script src="{e(base)}/static/ui.js" defer></script>'),
        ]
    )
    header = tag(
        "header",
        join([tag("p", join([tag("strong", "memu"), f" · {who}"]), class_="brand"), nav]),
    )
    main = tag("main", join([tag("h1", title), messages, body]), id="main", tabindex="-1")
    skip = tag("a", "Skip to content", href="#main", class_="skip")
    return Markup(f'<!doctype html>\n<html lang="en"><head>{head}</head><body>{skip}{header}{main}</body></html>\n')
