"""Checks of the book read with one hand on a phone.

A click on the player's strip, a card or its story keeps the arrow keys in
the player; at 390 by 844 px the control bar and the cards that change sit
on one screen, the bar stays on screen while the cards scroll under it, and
the message diagram's labels are at least 11 px; every chapter table fits the
page as one card per row, its last column in sight.
"""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import NARROW, WIDE
from player import control, open_player

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
return {bar: box('.tl-controls'), play: box('[data-role=play]'), next: box('[data-role=next]'),
        cards: [...root.querySelectorAll('[data-role=client], [data-role=redis], [data-role=storage]')].map((c) => {
            const r = c.getBoundingClientRect(); return [c.getAttribute('data-role') + (c.getAttribute('data-client') || ''), Math.round(r.top), Math.round(r.bottom)]; }),
        height: window.innerHeight};"""

DIAGRAM_JS = """
const svg = arguments[0].querySelector('.tl-lamport');
if (!svg) return null;
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));"""


def check_phone_layout(book):
    """At 390 x 844: bar and cards on one screen, the bar sticky, the diagram's labels readable."""
    try:
        book.width(NARROW, PHONE_HEIGHT)
        for demo in ["gc-pause", "slow-job-plain-del"]:
            page, root = open_player(book, demo)
            book.js("window.scrollBy(0, arguments[0].querySelector('.tl-controls').getBoundingClientRect().top)", root)
            control(root, "play").send_keys(Keys.HOME)
            for t in range(0, 3):
                if t:
                    book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
                    book.wait_for(f"t = {t}", lambda d: root.get_attribute("data-second") == str(t), 3)
                v = book.js(LAYOUT_JS, root)
                outside = [c for c in v["cards"] if c[1] < v["bar"][1] - 1 or c[2] > v["height"]]
                book.check(v["bar"][0] >= -1 and not outside,
                           f"390 x {PHONE_HEIGHT} px, {page}, t = {t}: the bar at {v['bar']} and these cards are not on one screen: {outside}")
            book.shot(f"phone-{demo}")
            # Scrolled down through the cards, the bar stays on top of them.
            book.js("window.scrollBy(0, 250)")
            v = book.js(LAYOUT_JS, root)
            book.check(0 <= v["play"][0] and v["next"][1] <= v["height"],
                       f"390 px, {page}: scrolled 250 px further, the step buttons are off screen at {v['play']}")
            size = book.js(DIAGRAM_JS, root)
            book.check(size is not None and size >= MIN_DIAGRAM_PX,
                       f"390 px, {page}: the message diagram's smallest label is {size} px, under {MIN_DIAGRAM_PX}")
            book.report.verified(f"390 x {PHONE_HEIGHT} px, {page}: the control bar and all {len(v['cards'])} cards on one screen "
                                 f"at t = 0..2, the bar sticky while the cards scroll, diagram labels {size:.1f} px")
    finally:
        book.width(WIDE)


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
