"""``memu ui`` in a real browser: Debian's chromium, headless, driven by Selenium.

One browser session and one store (real SQLite, the real MiniLM model offline, so the search
is hybrid) for the whole module. Each page visited gets an accessibility check (one ``h1``,
headings in order, every field labelled, every control named) and a screenshot, saved under
``$MEMU_TEST_ARTIFACTS/ui`` when that variable is set, else under pytest's temporary folder
(the path is printed). ``.ci/run`` installs ``chromium`` and ``chromium-driver``; without them
the module is skipped, except under ``MEMU_REQUIRE_ALL_TEST_DEPS=1`` where that is a failure.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
RELEASE = (
    "Cut the release branch on Tuesday.\nDeploy to staging first, then production.\nTag the commit after the deploy."
)
GARDEN = "Water the tomatoes every morning.\nThe basil likes the south window."


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (requirements-dev.txt)")
    if not missing:
        return
    message = f"browser tests need {', '.join(missing)}: apt-get install chromium chromium-driver; pip install selenium"
    if os.environ.get("MEMU_REQUIRE_ALL_TEST_DEPS"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = os.environ.get("MEMU_TEST_ARTIFACTS")
    folder = Path(root) / "ui" if root else tmp_path_factory.mktemp("ui-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"memu ui screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory, artifacts: Path) -> Iterator[Any]:
    """The page over a fresh store holding two memory files and a skill, written by a bridging run."""
    _require_browser()
    home = tmp_path_factory.mktemp("ui-home")
    with pytest.MonkeyPatch.context() as patch:
        # A clean configuration (the artifacts fixture has read MEMU_TEST_ARTIFACTS already).
        for key in [k for k in os.environ if k.startswith("MEMU_") and k != "MEMU_MODELS_DIR"]:
            patch.delenv(key)
        patch.setenv("HOME", str(home))
        patch.setenv("MEMU_DB", str(home / "ui.sqlite3"))
        patch.setenv("MEMU_EMBED_PROVIDER", "local")
        patch.setenv("MEMU_SERVE_AUTOSTART", "0")
        from memu_core._compose import local_engine
        from memu_core._engine.actor import acting_as
        from memu_core._ui.server import start

        engine = local_engine()
        with acting_as("claude-code run 20261203T2200Z-a1"):
            engine.commit_results(
                recall_files=[
                    {"name": "release", "description": "how we ship", "content": RELEASE},
                    {"name": "garden", "description": "plants at home", "content": GARDEN},
                    {
                        "name": "deploy-check",
                        "track": "skill",
                        "description": "check a deploy",
                        "content": "Run the smoke tests.",
                    },
                ]
            )
        running = start(engine).start_background()
        try:
            yield running
        finally:
            running.stop()
            engine.close()


@pytest.fixture(scope="module")
def browser(ui: Any) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        driver.get(ui.url)  # trades the token for the session cookie
        yield driver
    finally:
        driver.quit()


# -- helpers ---------------------------------------------------------------------------------
def by_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def one(driver: Any, selector: str) -> Any:
    found = by_css(driver, selector)
    assert len(found) == 1, f"{selector!r}: {len(found)} elements on {driver.current_url}"
    return found[0]


def button(driver: Any, text: str) -> Any:
    found = [b for b in by_css(driver, "button") if b.text.strip() == text]
    assert found, f"no button {text!r} on {driver.current_url}"
    return found[0]


def then(driver: Any, action: Any, selector: str = "h1") -> None:
    """Do ``action`` (a click, a key) that loads a new page, and wait until it has loaded."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.wait import WebDriverWait

    old = one(driver, "html")

    def replaced(_: Any) -> bool:
        # Mid-navigation Chrome answers a question about the old page's node either "stale" or
        # "node does not belong to the document" (a plain WebDriverException): both mean it is gone.
        try:
            old.is_enabled()
        except WebDriverException:
            return True
        return False

    action()
    WebDriverWait(driver, 30).until(replaced)
    # The same answer can come while the new page's nodes are being looked up: ask again.
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(lambda d: by_css(d, selector))


def check_page(driver: Any, artifacts: Path, shot: str) -> None:
    """The accessibility rules every page keeps, then a screenshot."""
    assert one(driver, "html").get_attribute("lang") == "en"
    assert len(by_css(driver, "h1")) == 1, "a page has exactly one h1"
    levels = [int(h.tag_name[1]) for h in by_css(driver, "h1, h2, h3, h4, h5, h6")]
    assert levels[0] == 1, f"the first heading is not the h1: {levels}"
    for before, after in itertools.pairwise(levels):
        assert after <= before + 1, f"heading level skips from h{before} to h{after}"
    for field in by_css(driver, "input:not([type=hidden]), select, textarea"):
        ident = field.get_attribute("id")
        labelled = (ident and by_css(driver, f'label[for="{ident}"]')) or field.get_attribute("aria-label")
        assert labelled, f"unlabelled {field.tag_name} name={field.get_attribute('name')!r}"
    for control in by_css(driver, "button, a"):
        name = (control.get_attribute("aria-label") or control.get_attribute("textContent") or "").strip()
        assert name, f"a {control.tag_name} without a name on {driver.current_url}"
    for table in by_css(driver, "table"):
        assert by_css(table, "caption") and by_css(table, "th[scope=col]"), "a table without caption or headers"
    driver.save_screenshot(str(artifacts / f"{shot}.png"))


def tab_through(driver: Any, limit: int = 200, *, until: Any = None) -> list[Any]:
    """The elements Tab visits from the top of the page (the skip link, the first stop), in order,
    until focus leaves the page or comes round (or reaches ``until``)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    first = one(driver, "a.skip")
    driver.execute_script("arguments[0].focus()", first)  # the top of the page, whatever has focus
    seen: list[Any] = [first]
    for _ in range(limit):
        if until is not None and seen[-1] == until:
            break
        ActionChains(driver).send_keys(Keys.TAB).perform()
        active = driver.switch_to.active_element
        if active.tag_name == "body" or active == first:
            break
        seen.append(active)
    return seen


def go(driver: Any, ui: Any, path: str) -> None:
    driver.get(f"{ui.address}{path}")


# -- the tests -------------------------------------------------------------------------------
def test_search_shows_each_line_with_its_score_and_why(browser: Any, ui: Any, artifacts: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    go(browser, ui, "/search")
    check_page(browser, artifacts, "search-empty")
    box = one(browser, "input[type=search]")
    assert browser.switch_to.active_element == box  # the script put the cursor there
    then(browser, lambda: box.send_keys("when do we deploy to production", Keys.ENTER), "main h2")
    hits = by_css(browser, "ol.hits > li")
    assert hits, "no results"
    first = hits[0].text
    assert "Deploy to staging first, then production." in first
    assert "score" in first and "lexical rank" in first and "dense rank" in first
    assert "words matched: deploy, production" in first
    assert [m.text for m in by_css(hits[0], "mark")] == ["Deploy", "production"]
    assert "searched by words and meaning" in one(browser, "main").text
    check_page(browser, artifacts, "search-results")
    button(browser, "Search")  # the form is still there for the next question

    full_text = by_css(browser, "#f-mode option[value=lexical]")[0]
    full_text.click()
    then(browser, button(browser, "Search").click, "main h2")
    assert "searched by words only" in one(browser, "main").text
    assert "dense rank" not in one(browser, "ol.hits").text


def test_browse_by_track_and_host_then_view_a_file_with_its_history(browser: Any, ui: Any, artifacts: Path) -> None:
    go(browser, ui, "/")
    check_page(browser, artifacts, "files")
    names = [a.text for a in by_css(browser, "tbody a")]
    assert names == ["garden", "release", "deploy-check"]  # by track, then name
    by_css(browser, "#f-track option[value=skill]")[0].click()
    then(browser, button(browser, "Filter").click)
    assert [a.text for a in by_css(browser, "tbody a")] == ["deploy-check"]
    go(browser, ui, "/?host=claude-code&track=memory")
    assert [a.text for a in by_css(browser, "tbody a")] == ["garden", "release"]
    assert "claude-code (3)" in one(browser, "#f-host").text

    [link] = [a for a in by_css(browser, "tbody a") if a.text == "release"]
    then(browser, link.click)
    assert one(browser, "h1").text == "memory/release"
    assert "Deploy to staging first" in one(browser, "pre").text
    assert "claude-code run 20261203T2200Z-a1" in one(browser, "table").text
    check_page(browser, artifacts, "file")


def test_edit_saves_through_the_form_and_history_diff_restore(browser: Any, ui: Any, artifacts: Path) -> None:
    go(browser, ui, "/file?track=memory&name=release")
    [edit] = [a for a in by_css(browser, "main a") if a.text == "Edit"]
    then(browser, edit.click, "textarea")
    check_page(browser, artifacts, "edit")
    area = one(browser, "textarea")
    text = area.get_attribute("value")
    assert text.startswith("---\nname: release\n")
    area.clear()
    area.send_keys(text.replace("Tuesday", "Wednesday"))
    then(browser, button(browser, "Save").click, "[role=status]")
    assert "Saved memory/release." in one(browser, "[role=status]").text
    assert "Wednesday" in one(browser, "pre").text
    assert "memu ui" in one(browser, "tbody tr:first-child").text

    [diff] = [a for a in by_css(browser, "tbody a") if a.text == "diff v2"]
    then(browser, diff.click)
    assert one(browser, "h1").text == "Changes in memory/release"
    assert [s.text for s in by_css(browser, "pre .diff-del")][-1] == "-Cut the release branch on Tuesday."
    assert [s.text for s in by_css(browser, "pre .diff-add")][-1] == "+Cut the release branch on Wednesday."
    check_page(browser, artifacts, "diff")

    go(browser, ui, "/file?track=memory&name=release")
    then(browser, button(browser, "Restore v1").click, "[role=status]")
    assert "Restored memory/release as a new version." in one(browser, "[role=status]").text
    assert "Tuesday" in one(browser, "pre").text
    assert "restore" in one(browser, "tbody tr:first-child").text

    # A broken frontmatter is refused on the page, with the text kept for fixing.
    go(browser, ui, "/edit?track=memory&name=release")
    area = one(browser, "textarea")
    area.clear()
    area.send_keys("---\nname: release\nno closing fence\n")
    then(browser, button(browser, "Save").click, "[role=alert]")
    assert "Not saved:" in one(browser, "[role=alert]").text
    assert "no closing fence" in one(browser, "textarea").get_attribute("value")
    check_page(browser, artifacts, "edit-refused")


def test_forget_and_undo_by_keyboard(browser: Any, ui: Any, artifacts: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    go(browser, ui, "/file?track=memory&name=garden")
    forget = button(browser, "Forget")
    tab_through(browser, until=forget)  # walk to it with Tab and press Enter: no mouse
    assert browser.switch_to.active_element == forget
    then(browser, lambda: ActionChains(browser).send_keys(Keys.ENTER).perform(), "[role=status]")
    assert "Forgot memory/garden." in one(browser, "[role=status]").text
    check_page(browser, artifacts, "forgotten")
    go(browser, ui, "/")
    assert "garden" not in [a.text for a in by_css(browser, "tbody a")]

    go(browser, ui, "/file?track=memory&name=garden")
    undo = button(browser, "Undo forget")
    then(browser, lambda: undo.send_keys(Keys.ENTER), "[role=status]")
    assert "Brought memory/garden back." in one(browser, "[role=status]").text
    assert "basil" in one(browser, "pre").text


@pytest.mark.parametrize(
    "path", ["/", "/search?q=deploy", "/file?track=memory&name=release", "/edit?track=memory&name=release"]
)
def test_tab_reaches_every_link_button_and_field_in_page_order(browser: Any, ui: Any, path: str) -> None:
    go(browser, ui, path)
    visited = tab_through(browser)
    controls = by_css(browser, "a[href], button, input:not([type=hidden]), select, textarea")
    missing = [f"{c.tag_name} {c.text or c.get_attribute('name')!r}" for c in controls if c not in visited]
    assert not missing, f"not reachable by Tab on {path}: {missing}"
    assert visited[0].get_attribute("textContent") == "Skip to content"


def test_runs_and_events_pages(browser: Any, ui: Any, artifacts: Path) -> None:
    go(browser, ui, "/runs")
    row = one(browser, "tbody tr:last-child").text
    assert "claude-code" in row and "claude-code run 20261203T2200Z-a1" in row and "memory/release" in row
    check_page(browser, artifacts, "runs")
    go(browser, ui, "/events")
    assert "Telemetry is off" in one(browser, "main").text
    check_page(browser, artifacts, "events")


def test_reading_works_with_javascript_off(browser: Any, ui: Any, artifacts: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    go(browser, ui, "/")
    assert by_css(browser, "html.js"), "the script runs when JavaScript is on"
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        go(browser, ui, "/")
        assert not by_css(browser, "html.js"), "JavaScript still ran"
        [link] = [a for a in by_css(browser, "tbody a") if a.text == "release"]
        then(browser, link.click, "pre")
        assert "Deploy to staging first" in one(browser, "pre").text
        [search] = [a for a in by_css(browser, "nav a") if a.text == "Search"]
        then(browser, search.click, "input[type=search]")
        box = one(browser, "input[type=search]")
        then(browser, lambda: box.send_keys("basil window", Keys.ENTER), "main h2")
        assert "The basil likes the south window." in one(browser, "ol.hits").text
        check_page(browser, artifacts, "search-no-js")
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
