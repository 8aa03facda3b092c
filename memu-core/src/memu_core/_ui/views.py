"""The body of each page, from data already read (no engine calls here)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memu_core._ui.data import FileKey, Run, markdown_of
from memu_core._ui.gate import CSRF_FIELD
from memu_core._ui.html import Markup, e, join, link, post_form, table, tag, url

if TYPE_CHECKING:
    from memu_core.types import FileVersion

TRACK_CHOICES = (("", "all tracks"), ("memory", "memory"), ("skill", "skill"))
MODE_CHOICES = (("hybrid", "hybrid (words and meaning)"), ("lexical", "full text (words only)"))


@dataclass(frozen=True, slots=True)
class Ctx:
    """What every view needs: the mount point, the session's CSRF token and who is signed in."""

    base: str
    csrf: str
    who: str


def _key_params(key: FileKey) -> dict[str, str]:
    params = {"track": key.track, "name": key.name}
    if (key.user_id, key.agent_id) != ("default", "default"):
        params.update(user=key.user_id, agent=key.agent_id)
    return params


def file_link(ctx: Ctx, key: FileKey, text: object | None = None) -> Markup:
    """A link to a file's page."""
    return link(ctx.base, "file", text if text is not None else f"{key.track}/{key.name}", _key_params(key))


def key_of(item: Mapping[str, Any]) -> FileKey:
    """The :class:`FileKey` of a file dict from the engine."""
    return FileKey(
        str(item["track"]), str(item["name"]), str(item.get("user_id", "default")), str(item.get("agent_id", "default"))
    )


def _select(name: str, label: str, choices: Sequence[tuple[str, str]], current: str) -> Markup:
    options = join(tag("option", text, value=value, selected=value == current) for value, text in choices)
    return tag("label", join([label, tag("select", options, name=name, id=f"f-{name}")]), for_=f"f-{name}")


def _input(name: str, label: str, value: str, *, kind: str = "text", **attrs: object) -> Markup:
    field = tag("input", type=kind, name=name, id=f"f-{name}", value=value, **attrs)
    return tag("label", join([label, field]), for_=f"f-{name}")


# -- files -------------------------------------------------------------------------------------
def files_body(
    ctx: Ctx,
    files: list[dict[str, Any]],
    hosts: list[tuple[str, int]],
    *,
    track: str,
    host: str,
    text: str,
    more: str = "",
) -> Markup:
    """The listing: filters (track, host, name), one row per file, and a link to the next page
    when ``more`` (its cursor) is set."""
    host_choices = [("", "any host"), *((h, f"{h} ({n})") for h, n in hosts)]
    filters = tag(
        "form",
        join(
            [
                _select("track", "Track", TRACK_CHOICES, track),
                _select("host", "Last written by host", host_choices, host),
                _input("text", "Name or description contains", text),
                tag("button", "Filter", type="submit"),
            ]
        ),
        method="get",
        action=url(ctx.base, ""),
        class_="filters",
        role="search",
        aria_label="Filter files",
    )
    rows = [
        (
            file_link(ctx, key_of(item), item["name"]),
            item["track"],
            item.get("description") or "",
            _when(item.get("updated_at")),
        )
        for item in files
    ]
    caption = f"{len(files)} file(s)" + (" on this page" if more else "")
    shown = table(caption, ("Name", "Track", "Description", "Updated"), rows)
    onward = (
        tag("p", link(ctx.base, "", "Next page", {"track": track, "host": host, "text": text, "after": more}))
        if more
        else ""
    )
    return join([filters, shown if files else tag("p", "No files match.", class_="muted"), onward])


def _when(value: object) -> str:
    text = str(value or "")
    return text[:19].replace("T", " ")


# -- search ------------------------------------------------------------------------------------
def search_body(ctx: Ctx, query: str, mode: str, track: str, result: Mapping[str, Any] | None) -> Markup:
    """The search form and, for a query, each line with its score and why it matched."""
    form = tag(
        "form",
        join(
            [
                _input("q", "Search memory", query, kind="search", data_autofocus=True),
                _select("mode", "Search by", MODE_CHOICES, mode),
                _select("track", "Track", TRACK_CHOICES, track),
                tag("button", "Search", type="submit"),
            ]
        ),
        method="get",
        action=url(ctx.base, "search"),
        class_="filters",
        role="search",
        aria_label="Search memory",
    )
    if result is None:
        return form
    files = {f["id"]: f for f in result.get("files", [])}
    items = []
    for seg in result.get("segments", []):
        parent = files.get(seg.get("recall_file_id", ""))
        why = seg.get("why") or {}
        where = file_link(ctx, key_of(parent)) if parent else e(seg.get("track", ""))
        items.append(
            tag(
                "li",
                join(
                    [
                        tag("p", _marked(str(seg["text"]), why.get("terms", []))),
                        tag("p", join([where, f" · score {seg['score']:.4f} · ", _why_text(why)]), class_="muted"),
                    ]
                ),
            )
        )
    used = result.get("mode", mode)
    summary = f"{len(items)} line(s), searched {'by words and meaning' if used == 'hybrid' else 'by words only'}"
    if mode == "hybrid" and used != "hybrid":
        summary += " (this store holds no vectors, so the search used words only)"
    listing = tag("ol", join(items), class_="hits") if items else tag("p", "Nothing matched.", class_="muted")
    return join([form, tag("h2", "Results"), tag("p", summary), listing])


def _why_text(why: Mapping[str, Any]) -> Markup:
    parts = [f"{part['source']} rank {part['rank']} (+{part['share']:.4f})" for part in why.get("parts", [])]
    if why.get("rest"):
        parts.append(f"same-file lift +{why['rest']:.4f}")
    words = why.get("terms") or []
    text = "why: " + (", ".join(parts) or "no ranking share")
    text += (
        f"; words matched: {', '.join(words)}"
        if words
        else "; no query word in the line (matched by meaning or context)"
    )
    return e(text)


def _marked(text: str, terms: Sequence[str]) -> Markup:
    """``text`` with each query word (and its forms: the line's words starting with the term's
    first letters) wrapped in ``<mark>``."""
    if not terms:
        return e(text)
    stems = sorted({t[: max(3, len(t) - 3)] for t in terms}, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE)
    out, last = [], 0
    for hit in pattern.finditer(text):
        out += [e(text[last : hit.start()]), tag("mark", hit.group())]
        last = hit.end()
    out.append(e(text[last:]))
    return join(out)


# -- one file ----------------------------------------------------------------------------------
def file_body(ctx: Ctx, key: FileKey, versions: list[FileVersion]) -> Markup:
    """The stored file (or its tombstone), its actions and its history."""
    newest = versions[0]
    if newest.current:
        actions = join(
            [
                link(ctx.base, "edit", "Edit", _key_params(key)),
                " ",
                post_form(
                    ctx.base, "forget", ctx.csrf, _key_params(key), "Forget", label=f"Forget {key.track}/{key.name}"
                ),
            ]
        )
        shown = join(
            [
                tag(
                    "p",
                    f"{key.track} file · version {newest.version} · written by {newest.actor} · "
                    f"{_when(newest.created_at.isoformat())}",
                ),
                tag("div", actions, class_="actions"),
                tag("h2", "Content"),
                tag("pre", markdown_of(newest)),
            ]
        )
    else:
        shown = join(
            [
                tag("p", f"This file was forgotten by {newest.actor} at {_when(newest.created_at.isoformat())}."),
                post_form(
                    ctx.base,
                    "undo-forget",
                    ctx.csrf,
                    _key_params(key),
                    "Undo forget",
                    label=f"Undo forget of {key.track}/{key.name}",
                ),
                tag("h2", "Content before the forget"),
                tag("pre", markdown_of(newest)),
            ]
        )
    return join([shown, history_table(ctx, key, versions)])


def history_table(ctx: Ctx, key: FileKey, versions: list[FileVersion]) -> Markup:
    """One row per version: who, when, what, size change, a diff link and a restore button."""
    rows = []
    for i, v in enumerate(versions):
        older = versions[i + 1] if i + 1 < len(versions) else None
        change = v.size - older.size if older is not None else v.size
        diff = (
            link(ctx.base, "diff", f"diff v{v.version}", {**_key_params(key), "v": v.version}) if not v.deleted else ""
        )
        restore = (
            post_form(ctx.base, "restore", ctx.csrf, {**_key_params(key), "v": v.version}, f"Restore v{v.version}")
            if not v.current and not v.deleted
            else ""
        )
        rows.append(
            (
                f"v{v.version}" + (" (current)" if v.current else ""),
                v.action,
                v.actor,
                _when(v.created_at.isoformat()),
                f"{v.size} bytes ({change:+d})",
                join([diff, " ", restore]),
            )
        )
    return join(
        [
            tag("h2", "History"),
            table(f"{len(versions)} version(s)", ("Version", "Action", "By", "When", "Size", "Actions"), rows),
        ]
    )


def diff_body(ctx: Ctx, key: FileKey, old: FileVersion | None, new: FileVersion, lines: list[str]) -> Markup:
    """A unified diff between two versions, each line coloured by kind."""
    rendered = []
    for line in lines:
        kind = (
            "diff-hunk"
            if line.startswith("@@")
            else "diff-add"
            if line.startswith("+")
            else "diff-del"
            if line.startswith("-")
            else ""
        )
        rendered.append(tag("span", line + "\n", class_=kind or None))
    what = f"v{old.version} → v{new.version}" if old is not None else f"v{new.version} (first version)"
    return join(
        [
            tag("p", join([file_link(ctx, key), f" · {what}"])),
            tag("pre", join(rendered)) if lines else tag("p", "No difference in content.", class_="muted"),
        ]
    )


def edit_body(ctx: Ctx, key: FileKey, text: str, base_hash: str) -> Markup:
    """The edit form: the whole Markdown file (frontmatter and body) in one labelled text area."""
    hidden = join(
        tag("input", type="hidden", name=k, value=v)
        for k, v in {**_key_params(key), "base": base_hash, CSRF_FIELD: ctx.csrf}.items()
    )
    area = tag("label", "Markdown (frontmatter, then the content)", for_="f-text")
    form = tag(
        "form",
        join(
            [
                hidden,
                area,
                tag("textarea", text, name="text", id="f-text", rows="20"),
                tag("p", join([tag("button", "Save", type="submit"), " ", file_link(ctx, key, "Cancel")])),
            ]
        ),
        method="post",
        action=url(ctx.base, "edit"),
    )
    note = tag(
        "p",
        "Saving checks the frontmatter as every memu door does, and refuses if the file changed since you opened it.",
        class_="muted",
    )
    return join([note, form])


# -- runs and events ---------------------------------------------------------------------------
def runs_body(ctx: Ctx, runs: list[Run]) -> Markup:
    """One row per bridging run (and per command that wrote), newest first."""

    def files(names: list[str]) -> Markup:
        return (
            join([", ".join(names[:8]), f" and {len(names) - 8} more" if len(names) > 8 else ""])
            if names
            else Markup("—")
        )

    rows = [
        (
            r.when.replace("T", " ").rstrip("Z"),
            r.host or "—",
            r.actor,
            "—" if r.sessions is None else str(r.sessions),
            files(r.added),
            files(r.changed),
            files(r.forgotten),
        )
        for r in runs
    ]
    note = tag(
        "p",
        "Assembled from each file's history (who wrote which version when) and each host's run log "
        "(the sessions a bridging run mined). Times are UTC.",
        class_="muted",
    )
    head = ("When", "Host", "Run or command", "Sessions mined", "Added", "Changed", "Forgotten")
    shown = table(f"{len(runs)} writer(s)", head, rows)
    return join([note, shown if runs else tag("p", "No changes recorded yet.", class_="muted")])


def events_body(ctx: Ctx, events: list[dict[str, Any]], spool: str, on: bool) -> Markup:
    """The newest events of the local spool (``memu events`` reads the same file)."""
    state = "Telemetry is on" if on else "Telemetry is off (`memu config --telemetry on` turns it on)"
    rows = [
        (
            str(ev.get("occurred_at", "")).replace("T", " ")[:19],
            ev.get("event_name", ""),
            (ev.get("context") or {}).get("agent_platform", ""),
            ", ".join(f"{k}={v}" for k, v in (ev.get("properties") or {}).items() if k != "frames"),
        )
        for ev in events
    ]
    return join(
        [
            tag("p", f"{state}. Spool: {spool}", class_="muted"),
            table(f"{len(rows)} newest event(s)", ("When", "Event", "Host", "Properties"), rows)
            if rows
            else tag("p", "The spool is empty.", class_="muted"),
        ]
    )
