"""Checks of the book read with one hand on a phone.

A click on the player's strip, a card or its story keeps the arrow keys in
the player; at 390 by 844 px, on every timeline at every second, the control
bar and the cards that change sit on one screen (but at the few seconds
listed in TALLER_THAN_A_SCREEN, where the bar stays on top of the cards down
to the last), the bar stays on screen while the cards scroll under it and
when mdBook's menu bar comes back, and the message diagram's labels are at
least 11 px; every chapter table fits the page as one card per row, its last
column in sight.
"""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import NARROW, WIDE
from player import keyed_seconds, open_player

PHONE_HEIGHT = 844  # an iPhone 12 to 15, in CSS pixels
MIN_DIAGRAM_PX = 11


def check_click_keeps_focus(book):
    """After a click on what is not a control, Right still steps the player."""
    demo = "gc-pause"
    page, root = open_player(book, demo)
    url = book.driver.current_url
    targets = {
        "a strip cell": "[data-role=strip] thead th[data-second='0']",
        "a client card": "[data-role=client]",
        "the story": "[data-role=story]",
    }
    for what, selector in targets.items():
        t = int(root.get_attribute("data-second"))
        ActionChains(book.driver).move_to_element(root.find_element(By.CSS_SELECTOR, selector)).click().perform()
        t = int(root.get_attribute("data-second"))  # a strip cell moves the player to its second
        ActionChains(book.driver).send_keys(Keys.ARROW_RIGHT).perform()
        book.wait_for(f"Right after a click on {what}", lambda d: root.get_attribute("data-second") == str(t + 1), 3)
        book.check(book.driver.current_url == url, f"after a click on {what}, Right left the page for {book.driver.current_url}")
    book.report.verified(f"{page}: after a click on {', '.join(targets)}, the Right key steps the player and keeps the page")


LAYOUT_JS = """
const root = arguments[0];
const box = (sel) => { const r = root.querySelector(sel).getBoundingClientRect(); return [Math.round(r.top), Math.round(r.bottom)]; };
// Whether a button is what a thumb on its middle would touch (not mdBook's menu bar over it).
const reachable = (sel) => { const b = root.querySelector(sel), r = b.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !!hit && b.contains(hit); };
return {bar: box('.tl-controls'), play: box('[data-role=play]'), next: box('[data-role=next]'),
        reachable: reachable('[data-role=play]') && reachable('[data-role=next]'),
        cards: [...root.querySelectorAll('[data-role=client], [data-role=redis], [data-role=storage]')].map((c) => {
            const r = c.getBoundingClientRect(); return [c.getAttribute('data-role') + (c.getAttribute('data-client') || ''), Math.round(r.top), Math.round(r.bottom)]; }),
        height: window.innerHeight};"""

# Scrolls the page by arguments[1] px, then resolves two frames later, once
# mdBook's menu bar has answered the scroll (it comes back when the page
# scrolls up, and leaves when it scrolls down).
SCROLL_JS = """
window.scrollBy(0, arguments[1]);
return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))));"""

# Puts the page where a reader stepping the player has it: scrolled down
# until the status line sits right under the control bar, which then sticks
# to the top of the screen. The last move is down, as a reader's thumb moves
# the page, so mdBook's menu bar is away.
READING_JS = """
const root = arguments[0];
const gap = root.querySelector('[data-role=status]').getBoundingClientRect().top
    - root.querySelector('.tl-controls').getBoundingClientRect().height;
window.scrollBy(0, gap - 200);
return new Promise((done) => requestAnimationFrame(() => { window.scrollBy(0, 200);
    requestAnimationFrame(() => requestAnimationFrame(() => done(true))); }));"""

DIAGRAM_JS = """
const svg = arguments[0].querySelector('.tl-lamport');
if (!svg) return null;
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));"""

# The seconds whose cards are taller than a phone's screen under the bar:
# three clients each take the lock and give it back (WAIT found no replica),
# and the status line says all six steps. There the bar must stay on top of
# the cards while the reader scrolls to the last one. The check fails when
# another second does not fit, and when one of these comes to fit (then it
# leaves this list).
TALLER_THAN_A_SCREEN = {("failover-wait", 0), ("failover-wait", 1), ("failover-wait-limit", 1)}


def check_phone_layout(book):
    """At 390 x 844, on every timeline of the menu at every second: the control bar and the cards on one
    screen, the bar's buttons reachable; the bar sticky over the cards as they scroll, and not hidden by
    mdBook's menu bar when the page scrolls back up; the diagram's labels readable."""
    fitted = 0
    tall = set()
    smallest = None
    try:
        book.width(NARROW, PHONE_HEIGHT)
        page, root = open_player(book, "gc-pause")
        demos = book.js("return [...arguments[0].querySelectorAll('[data-role=select] option')].map((o) => o.value)", root)
        for demo in demos:
            page, root = open_player(book, demo)
            for t in keyed_seconds(book, root, demo):
                book.js(READING_JS, root)
                v = book.js(LAYOUT_JS, root)
                where = f"390 x {PHONE_HEIGHT} px, {page}, {demo} at t = {t}"
                outside = [c for c in v["cards"] if c[1] < v["bar"][1] - 1 or c[2] > v["height"]]
                book.check(-1 <= v["bar"][0] and v["reachable"], f"{where}: the step buttons at {v['play']} are off screen or covered")
                if (demo, t) in TALLER_THAN_A_SCREEN:
                    book.check(outside, f"{where}: the cards now fit one screen; take this second out of TALLER_THAN_A_SCREEN")
                    # Scrolled down to the last card's bottom, the bar is still there, over the cards.
                    book.js(SCROLL_JS, root, max(c[2] for c in v["cards"]) - v["height"])
                    v = book.js(LAYOUT_JS, root)
                    book.check(0 <= v["bar"][0] and v["reachable"] and max(c[2] for c in v["cards"]) <= v["height"],
                               f"{where}: scrolled to the last card, the step buttons are off screen or covered: {v}")
                    tall.add((demo, t))
                else:
                    book.check(not outside, f"{where}: the bar at {v['bar']} and these cards are not on one screen "
                                            f"({v['height']} px high): {outside}")
                    fitted += 1
                size = book.js(DIAGRAM_JS, root)
                if size is not None:
                    smallest = size if smallest is None else min(smallest, size)
                    book.check(size >= MIN_DIAGRAM_PX, f"{where}: the message diagram's smallest label is {size:.1f} px, "
                                                       f"under {MIN_DIAGRAM_PX}")
            if demo in ("gc-pause", "redlock-clock-jump"):
                book.shot(f"phone-{demo}")
            # Scrolled down through the cards, the bar stays on top of them; scrolled back up, mdBook's
            # menu bar comes back, and the step buttons stay in sight and within reach.
            for scroll, what in [(250, "scrolled 250 px further"), (-120, "scrolled 120 px back up")]:
                book.js(SCROLL_JS, root, scroll)
                v = book.js(LAYOUT_JS, root)
                book.check(0 <= v["play"][0] and v["next"][1] <= v["height"] and v["reachable"],
                           f"390 px, {page}, {demo}: {what}, the step buttons at {v['play']} are off screen or covered")
        book.check(tall == TALLER_THAN_A_SCREEN, f"the seconds {sorted(TALLER_THAN_A_SCREEN - tall)} were not stepped")
        book.check(smallest is not None, "no message diagram was drawn at 390 px")
    finally:
        book.width(WIDE)
    book.report.verified(f"390 x {PHONE_HEIGHT} px, all {len(demos)} timelines of the menu stepped by keyboard: the control "
                         f"bar and every card on one screen at {fitted} seconds; at the {len(tall)} seconds where three "
                         f"clients each act twice ({', '.join(f'{d} t = {t}' for d, t in sorted(tall))}) the bar sticks "
                         "over the cards down to the last; the step buttons in sight and not covered scrolled down "
                         f"and back up; diagram labels at least {smallest:.1f} px")


TABLES_JS = """
return [...document.querySelectorAll('main table:not(.tl-strip)')].map((t) => {
    const cells = [...t.querySelectorAll('td')];
    const page = document.documentElement.clientWidth;
    return {cls: t.className, wide: t.scrollWidth > t.parentElement.clientWidth + 1 || t.getBoundingClientRect().right > page + 0.5,
            hidden: cells.filter((c) => c.getBoundingClientRect().right > page + 0.5).length,
            head: t.querySelector('th') ? t.querySelector('th').textContent.trim().slice(0, 30) : ''};
});"""


def check_tables_reflow(book):
    """At 390 px no chapter table is wider than the page: each row a card."""
    checked = 0
    try:
        book.width(NARROW)
        for page in book.pages_containing("<table"):
            book.open(page)
            for table in book.js(TABLES_JS):
                checked += 1
                book.check("tl-reflow" in table["cls"] and not table["wide"] and not table["hidden"],
                           f"390 px, {page}: the table headed {table['head']!r} does not fit as cards: {table}")
    finally:
        book.width(WIDE)
    book.check(checked, "no chapter table found")
    book.report.verified(f"390 px: all {checked} chapter tables reflow into cards inside the page, every cell in sight")


FOLDS_JS = """
const [root, name] = arguments;
const fig = document.querySelector(`.tl-figure[data-timeline="${name}"]`);
return {static: fig ? [...fig.querySelectorAll('thead th.tl-gap')].map((th) => th.getAttribute('data-gap')) : null,
        player: [...root.querySelectorAll('[data-role=strip] thead th[data-to]')].map((th) => th.getAttribute('data-second') + '-' + th.getAttribute('data-to'))};"""


def check_player_strip_folds(book):
    """The player's strip folds the quiet seconds its page's static strip folds, and no others."""
    checked = []
    for page in book.pages_containing("data-timeline-player="):
        for demo in book.js("return [...document.querySelectorAll('.tl-figure[data-timeline]')].map((f) => f.getAttribute('data-timeline'))") \
                if book.open(page) else []:
            _, root = open_player(book, demo, page)
            folds = book.js(FOLDS_JS, root, demo)
            book.check(folds["static"] is not None and folds["player"] == folds["static"],
                       f"{page}, {demo}: the player folds {folds['player']}, the static strip {folds['static']}")
            if folds["player"]:
                checked.append(f"{demo} {', '.join(folds['player'])}")
    book.check(checked, "no player strip folds anything")
    book.report.verified(f"the players' strips fold the same quiet seconds as their pages' static strips: {'; '.join(checked)}")
