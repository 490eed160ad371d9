"""The search page at ``GET /``: ``trustindex serve`` (a real process, with a bearer token) over the demo snapshot
plus one hostile page, driven in Debian's headless chromium through its WebDriver (selenium + chromium-driver).

What the page shows is compared with what ``POST /v1/search`` answers for the same request: the order of the hits
and their percentages, the tier, the abstention and its reason, a target picked in the page.  The hostile page's
markup must arrive as text and run nothing.  Screenshots at 360 and 1440 px: set ``TRUSTINDEX_PAGE_SCREENSHOTS`` to
a folder (``docs``) to keep them."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import struct
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest

from tests.kits.browserkit import CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS
from tests.kits.servekit import ServeProcess, demo_with_page
from trustindex.serve.page import PAGE_PATHS, STATIC

DRIVER, FLAGS = CHROMEDRIVER, CHROMIUM_FLAGS
TOKEN = "page-test-token-5b1f"
INSTALL = "How do I install the Compact compiler?"
OFF_TOPIC = "What is the best pizza recipe in Naples?"  # nothing in the library: the response abstains
ZEBRA = "How do I embed the zebra widget gallery?"
# What a crawled page can hold: markup that would run if the page ever parsed index text as HTML.
HOSTILE_PAGE = """# Zebra widget gallery <img src=x onerror="window.__pwned='heading'">

## Embedding the zebra widget <script>window.__pwned='script'</script>

To embed the zebra widget gallery, paste <img src=x onerror="window.__pwned='img';document.title='pwned'"> into
your page. The zebra widget gallery then shows <b>bold</b> tiles and a <a href="javascript:window.__pwned='a'">zebra
link</a> <svg onload="window.__pwned='svg'"></svg> beside each embedded widget.
"""
TIER_WORDS = {"high": "Strong match", "mid": "Partial match", "low": "No strong match"}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None,
        reason="chromium or chromedriver is not installed (apt-get install -y chromium chromium-driver)",
    ),
    pytest.mark.skipif(importlib.util.find_spec("selenium") is None, reason="selenium is not installed ([test])"),
]


@pytest.fixture(scope="module")
def hostile_data(demo, prefect_harness, tmp_path_factory) -> Path:
    """The demo corpus with one more community page (the hostile markup above), refreshed into a data dir."""
    return demo_with_page(demo, tmp_path_factory.mktemp("hostile"), "docs/zebra-widget.md", HOSTILE_PAGE)


@pytest.fixture(scope="module")
def server(hostile_data, tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.txt"
    tokens.write_text(TOKEN + "\n", encoding="utf-8")
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    with ServeProcess(["--data", str(hostile_data), "--token-file", str(tokens)], log) as running:
        yield running


@pytest.fixture(scope="module")
def api(server):
    with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def _chrome(tmp_path: Path, width: int = 1440, height: int = 1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path}", f"--window-size={width},{height}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _wait(driver, condition: str, what: str, timeout_s: float = 60):
    """Poll a JavaScript condition (bounded in time); fail with the page's status line."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if driver.execute_script(f"return Boolean({condition})"):
            return
        time.sleep(0.05)
    status = driver.execute_script("return document.getElementById('status').textContent")
    raise AssertionError(f"{what}: not within {timeout_s} s (status: {status!r})")


def _give_token(driver):
    _wait(driver, "!document.getElementById('token-form').hidden", "the token form")
    driver.find_element("id", "token").send_keys(TOKEN)
    driver.find_element("css selector", "#token-form button[type=submit]").click()
    _wait(driver, "document.body.dataset.panels === 'ready'", "the panels")


@pytest.fixture(scope="module")
def browser(server, tmp_path_factory):
    driver = _chrome(tmp_path_factory.mktemp("chromium"))
    try:
        driver.get(server.url + "/")
        _give_token(driver)
        yield driver
    finally:
        driver.quit()


def _open(driver, base: str, q: str, k: int = 5, targets: dict | None = None, strict: bool = False) -> None:
    params = [("q", q), ("k", str(k)), *[("target", f"{c}={v}") for c, v in (targets or {}).items()]]
    driver.get(f"{base}/?{urlencode(params + ([('strict', '1')] if strict else []), quote_via=quote)}")
    _wait(driver, "document.body.dataset.answered === '1'", f"the answer to {q!r}")


def _cards(driver) -> list[tuple[str, str]]:
    rows = driver.execute_script(
        "return [...document.querySelectorAll('article.hit')]"
        ".map(a => [a.dataset.chunk, a.querySelector('.pct').textContent])"
    )
    return [tuple(r) for r in rows]


def _expected(response: dict) -> list[tuple[str, str]]:
    # JavaScript's Math.round rounds halves up; Python's round would round them to even
    return [(h["chunk_id"], f"{math.floor(h['display_confidence'] * 100 + 0.5)}%") for h in response["hits"]]


def test_page_files_are_open_static_and_locked_down(server):
    for path in PAGE_PATHS:
        r = httpx.get(server.url + path, timeout=30)
        assert r.status_code == 200, path
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
    assert httpx.get(server.url + "/v1/sources", timeout=30).status_code == 401  # the data still needs the token
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script\b[^>]*>", html)  # every script a file of its own: none inline
    assert scripts == ['<script src="/page/render.js" defer>', '<script src="/page/app.js" defer>']
    assert not re.search(r"<style|\sstyle=|\son[a-z]+=", html, re.I)
    for name in ("index.html", "render.js", "app.js", "app.css"):
        assert not re.search(r"https?://|@import|url\(", (STATIC / name).read_text(encoding="utf-8")), name
    for name in ("render.js", "app.js"):
        js = re.sub(r"^\s*//.*$", "", (STATIC / name).read_text(encoding="utf-8"), flags=re.M)  # not comments
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function", js)


def test_token_is_typed_once_and_never_in_the_url(server, tmp_path):
    driver = _chrome(tmp_path / "u")
    try:
        driver.get(f"{server.url}/?q={quote(INSTALL)}&k=3")
        _give_token(driver)
        _wait(driver, "document.body.dataset.answered === '2'", "the search after the token")  # 1: the 401
        assert len(_cards(driver)) == 3
        assert driver.execute_script("return sessionStorage.getItem('trustindex.token')") == TOKEN
        driver.refresh()  # the same tab: the token is still there, no form
        _wait(driver, "document.body.dataset.answered === '1'", "the search after a reload")
        assert driver.execute_script("return document.getElementById('token-form').hidden") is True
        assert TOKEN not in driver.current_url and TOKEN not in driver.execute_script("return document.body.innerHTML")
    finally:
        driver.quit()


def test_a_pages_other_passages_are_listed_under_its_hit(browser, server, api):
    query = "How much memory does the proof server need?"
    expected = api.post("/v1/search", json={"query": query, "k": 5}).json()
    folded = [h for h in expected["hits"] if h["same_page"]]
    assert folded, "the demo's proof-server page has more than one passage that matches"
    _open(browser, server.url, query)
    for h in expected["hits"]:
        chunk = h["chunk_id"]
        card = browser.find_element("css selector", f'article.hit[data-chunk="{chunk}"]')
        listed = card.find_elements("css selector", ".same-page a, .same-page span")
        assert len(listed) == len(h["same_page"])
        for el, p in zip(listed, h["same_page"], strict=True):
            assert el.text == (" › ".join(p["heading_path"][1:]) or f"lines {p['start_line']}-{p['end_line']}")
            if el.tag_name == "a":  # a link only to an address the page accepts, and to the section's own
                assert el.get_attribute("href") == p["page_url"]


@pytest.mark.parametrize("query", [INSTALL, "Wallet API deprecated replacement", "counter contract"])
def test_hits_and_percentages_are_the_apis(browser, server, api, query):
    expected = api.post("/v1/search", json={"query": query, "k": 5}).json()
    _open(browser, server.url, query)
    assert _cards(browser) == _expected(expected) and expected["hits"]
    tier = browser.find_element("id", "tier")
    assert tier.get_attribute("data-tier") == expected["match_tier"]
    assert tier.text.startswith(TIER_WORDS[expected["match_tier"]])
    first = browser.find_element("css selector", "article.hit")
    bars = first.find_elements("css selector", ".factor")
    assert [b.get_attribute("data-factor") for b in bars] == list(expected["hits"][0]["factors"])
    f = expected["hits"][0]["factors"]
    for bar in bars:
        name = bar.get_attribute("data-factor")
        assert bar.find_element("css selector", ".fname").text == name.replace("_", " ")  # named by its key
        assert bar.find_element("css selector", ".fmult").text == f"×{f[name]['multiplier']:.2f}"
        assert float(bar.find_element("css selector", "meter").get_attribute("value")) == min(f[name]["multiplier"], 1)
        assert bar.find_element("css selector", ".evidence li").text  # every bar has its evidence line
    heading = " › ".join(expected["hits"][0]["provenance"]["heading_path"])
    assert not heading or first.find_element("css selector", ".path").text == heading
    marks = [m.text.lower() for m in first.find_elements("css selector", ".passage mark")]
    assert marks and all(any(m.startswith(w) for w in re.findall(r"\w{3,}", query.lower())) for m in marks)


def test_a_target_from_the_picker_changes_the_results_as_the_api_does(browser, server, api):
    from selenium.webdriver.support.ui import Select

    plain = api.post("/v1/search", json={"query": INSTALL, "k": 5}).json()
    targeted = api.post("/v1/search", json={"query": INSTALL, "k": 5, "targets": {"docs": "0.1.0"}}).json()
    assert _expected(plain) != _expected(targeted)  # the target matters for this query
    _open(browser, server.url, INSTALL)
    assert _cards(browser) == _expected(plain)
    Select(browser.find_element("id", "component")).select_by_value("docs")
    options = browser.execute_script("return [...document.querySelectorAll('#versions option')].map(o => o.value)")
    assert "0.1.0" in options and not any(" " in o for o in options)  # versions, not the ranges pages state
    version = browser.find_element("id", "version")
    version.clear()
    version.send_keys("0.1.0")
    browser.find_element("id", "add-target").click()
    browser.find_element("id", "go").click()
    _wait(browser, "document.body.dataset.answered === '2' && location.search.includes('target=')", "targeted")
    assert "target=docs%3D0.1.0" in browser.current_url
    assert _cards(browser) == _expected(targeted)
    resolved = browser.find_element("id", "resolved").text
    t = targeted["targets"][0]
    assert f"docs=0.1.0 → {t['resolved']} ({t['resolution']})" in resolved
    browser.back()  # the URL is the state: back shows the untargeted answer again
    _wait(browser, "!location.search.includes('target=') && document.body.dataset.answered === '3'", "back")
    assert _cards(browser) == _expected(plain)


def test_a_hostile_passage_renders_as_text_and_runs_nothing(browser, server, api):
    expected = api.post("/v1/search", json={"query": ZEBRA, "k": 5}).json()
    hostile = [h for h in expected["hits"] if h["provenance"]["path"] == "docs/zebra-widget.md"]
    assert hostile and "onerror=" in hostile[0]["text"]
    browser.get_log("browser")  # drain what earlier pages logged
    _open(browser, server.url, ZEBRA)
    assert _cards(browser) == _expected(expected)
    card = browser.find_element("css selector", f'article.hit[data-chunk="{hostile[0]["chunk_id"]}"]')
    passage = browser.execute_script("return arguments[0].querySelector('.passage').textContent", card)
    assert passage == hostile[0]["text"]  # shown exactly as indexed, markup and all, as text
    assert "<img src=x onerror=" in passage or "<script>" in passage
    injected = "#results img, #results script, #results svg, #results b, #results iframe, #results [onerror]"
    assert browser.execute_script(f"return document.querySelectorAll('{injected}').length") == 0
    hrefs = browser.execute_script("return [...document.querySelectorAll('#results a')].map(a => a.href)")
    assert all(h.startswith(("http://", "https://")) for h in hrefs)
    time.sleep(0.5)  # an onerror handler would have run by now
    assert browser.execute_script("return window.__pwned === undefined && document.title") == "trustindex search"
    logs = [e["message"] for e in browser.get_log("browser")]
    assert not [m for m in logs if "Content Security Policy" in m or "Uncaught" in m], logs
    links = browser.execute_script(
        "return [safeHref('javascript:alert(1)'), safeHref('data:text/html,x'), safeHref('https://a.example/p')]"
    )
    assert links == [None, None, "https://a.example/p"]


def test_abstentions_show_their_reason(browser, server, api):
    floor = api.post("/v1/search", json={"query": OFF_TOPIC, "k": 5}).json()
    assert floor["abstained"] and floor["abstention_reason"]
    _open(browser, server.url, OFF_TOPIC)
    banner = browser.find_element("id", "abstained")
    assert banner.get_attribute("data-reason") == floor["abstention_reason"]
    assert floor["abstention_reason"] in banner.text and banner.text.startswith("Abstained")
    assert _cards(browser) == _expected(floor)  # what it found (if anything) is listed under the banner
    request = {"query": INSTALL, "k": 5, "targets": {"compact-runtime": "5.0"}, "strict": True}
    missing = api.post("/v1/search", json=request).json()
    assert missing["abstention_reason"] == "version_unavailable" and not missing["hits"]
    _open(browser, server.url, INSTALL, targets={"compact-runtime": "5.0"}, strict=True)
    assert browser.find_element("id", "abstained").get_attribute("data-reason") == "version_unavailable"
    assert browser.find_element("id", "no-hits").is_displayed() and not _cards(browser)
    resolved = browser.find_element("id", "resolved").text
    assert "compact-runtime=5.0" in resolved and all(c in resolved for c in missing["targets"][0]["constraints_seen"])
    assert browser.find_element("id", "strict").is_selected()
    _open(browser, server.url, INSTALL, targets={"no-such-component": "1.0"})
    error = api.post("/v1/search", json={"query": INSTALL, "k": 5, "targets": {"no-such-component": "1.0"}})
    assert error.status_code == 400
    assert browser.find_element("css selector", "#status p.error").text == error.json()["error"]


def test_the_panel_names_every_source_commit_and_the_build(browser, api):
    sources = api.get("/v1/sources").json()
    snap = api.get("/v1/snapshot").json()
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#sources li')].map(li => [li.dataset.source,"
        " li.querySelector('code.commit').textContent])"
    )
    assert rows == [[s["source"], s["commit"][:12]] for s in sources["sources"]] and rows
    facts = browser.find_element("id", "snapshot-facts").text
    assert snap["snapshot_id"] in facts and snap["created_at"][:10] in facts
    signed = browser.execute_script("return document.querySelectorAll('[data-fact=signed]').length")
    assert signed == ("signed" in snap)  # shown once exports say whether they are signed


def test_keyboard_moves_through_the_results(browser, server):
    from selenium.webdriver.common.action_chains import ActionChains

    _open(browser, server.url, INSTALL, k=3)
    active = "return document.activeElement.id || document.activeElement.dataset.rank || ''"
    browser.execute_script("document.activeElement.blur()")
    ActionChains(browser).send_keys("/").perform()
    assert browser.execute_script(active) == "q"
    browser.execute_script("document.activeElement.blur()")
    ranks = []
    for key in "jjjk":
        ActionChains(browser).send_keys(key).perform()
        ranks.append(browser.execute_script(active))
    assert ranks == ["1", "2", "3", "2"]


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


@pytest.mark.parametrize("width, height", [(360, 1800), (1440, 1300)])
def test_readable_at_360_and_1440_px(browser, server, width, height):
    browser.set_window_size(width, height)
    try:
        _open(browser, server.url, INSTALL, k=3, targets={"docs": "0.1.0"})
        inner = browser.execute_script("return window.innerWidth")
        scroll = browser.execute_script("return document.documentElement.scrollWidth")
        assert scroll <= inner, f"the page is {scroll} px wide in a {inner} px window: it scrolls sideways"
        png = browser.get_screenshot_as_png()
        assert _png_size(png)[0] == inner and len(png) > 30_000  # drawn, not blank
        keep = os.environ.get("TRUSTINDEX_PAGE_SCREENSHOTS")
        if keep:
            Path(keep, f"search-page-{width}.png").write_bytes(png)
    finally:
        browser.set_window_size(1440, 1000)
