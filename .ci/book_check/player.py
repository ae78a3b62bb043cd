"""Checks of the timeline player, driven the way a reader drives it.

Each check opens the page that carries the player, works it by keyboard (or
its buttons), and compares what the browser shows with the recorded JSON:
the ✗ marks, the mistaken-belief style, the strip keeping the current second
in view, the focus staying on a control, the width at 390 px, the demo menu,
the speed and the event stepping.
"""

import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser import NARROW, WIDE

# The original page's demos, in its order: the menu numbers them Demo 1–6.
SEED_DEMOS = ["normal-run", "gc-pause", "gc-pause-fenced", "slow-job-plain-del", "slow-job", "fenced-reads"]
EVENT_KINDS = {"acquired", "wrote", "read_rejected", "write_rejected", "release_refused", "deleted_other", "lease_lost"}


def expected_unsafe(timeline):
    """{t: {client: rejected}} for every second with an unsafe action."""
    marks = {}
    for second in timeline["seconds"]:
        for client in timeline["clients"]:
            for action in second["clients"][client]["actions"]:
                if action["unsafe"]:
                    marks.setdefault(second["t"], {})[client] = action["rejected"]
    return marks


def expected_events(timeline):
    """The seconds with a grant, a write, a rejection, a refused release, a
    lost lease, an expiry, a fault or a ✗."""
    return [s["t"] for s in timeline["seconds"]
            if s["notes"] or any(a["unsafe"] or a["kind"] in EVENT_KINDS
                                 for c in s["clients"].values() for a in c["actions"])]


def open_player(book, demo, page=None):
    """Opens the first page with a player (or `page`) and switches it to `demo`."""
    if page is None:
        pages = book.pages_containing(f'data-timeline-player="{demo}"') or book.pages_containing("data-timeline-player=")
        book.check(pages, "no page of the book has a {{#player}}")
        page = pages[0]
    book.open(page)
    root = book.wait_for(f"the player on {page} to start",
                         lambda d: d.find_element(By.CSS_SELECTOR, "[data-timeline-player].tl-ready"))
    if root.get_attribute("data-current") != demo:
        Select(root.find_element(By.CSS_SELECTOR, "[data-role=select]")).select_by_value(demo)
    book.check(root.get_attribute("data-current") == demo, f"the player on {page} cannot switch to {demo}")
    # Below mdBook's menu bar, which stays on top of the page.
    book.js("arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -80)", root)
    return page, root


def press(book, button):
    """Activates a button from the keyboard, as a reader would: focus, Enter."""
    book.js("arguments[0].focus()", button)
    button.send_keys(Keys.ENTER)


def control(root, role):
    return root.find_element(By.CSS_SELECTOR, f"[data-role={role}]")


def go_to(book, root, t):
    """Puts the player at second `t` with the keyboard: Home, then Right."""
    control(root, "play").send_keys(Keys.HOME)
    for _ in range(t):
        book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    book.wait_for(f"t = {t}", lambda d: root.get_attribute("data-second") == str(t), 3)


STATE_JS = """
const root = arguments[0];
const cells = [...root.querySelectorAll('[data-role=unsafe-row] td[data-unsafe]')];
return {
    unsafe: cells.map(c => ({t: Number(c.getAttribute('data-second')), clients: c.getAttribute('data-unsafe'),
                             text: c.textContent})),
    cardUnsafe: [...root.querySelectorAll('[data-role=client]')].filter(c => c.querySelector('li[data-unsafe=true]'))
        .map(c => c.getAttribute('data-client')),
    holder: root.querySelector('[data-role=redis]').getAttribute('data-holder'),
    counter: Number(root.querySelector('[data-role=storage]').getAttribute('data-counter')),
    status: root.querySelector('[data-role=status]').textContent,
    live: root.querySelector('[data-role=status]').getAttribute('aria-live'),
    facts: root.querySelector('[data-role=facts]').textContent,
    focusVisible: document.activeElement.matches(':focus-visible'),
    outline: getComputedStyle(document.activeElement).outlineStyle,
};"""


def keyed_seconds(book, root, demo):
    """Steps the player `root` from t = 0 (Home) to the end of `demo`, one Right key a second, and
    yields each second once the player shows it and the key has not left the page."""
    last = len(book.timeline(demo)["seconds"]) - 1
    url = book.driver.current_url
    control(root, "play").send_keys(Keys.HOME)
    book.wait_for("t = 0 after Home", lambda d: root.get_attribute("data-second") == "0")
    for t in range(0, last + 1):
        if t > 0:
            book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
            book.wait_for(f"{demo}: t = {t} after Right", lambda d: root.get_attribute("data-second") == str(t), 3)
        book.check(book.driver.current_url == url,
                   f"{demo}: at t = {t} the Right key left the page for {book.driver.current_url}")
        yield t


def check_keyboard_walk(book):
    """gc-pause, second by second by keyboard: the ✗ where the JSON puts it."""
    demo = "gc-pause"
    timeline = book.timeline(demo)
    marks = expected_unsafe(timeline)
    book.check(marks, f"timelines/{demo}.json has no unsafe action: the demo should show A's unfenced late write")
    last = len(timeline["seconds"]) - 1
    page, root = open_player(book, demo)
    for t in keyed_seconds(book, root, demo):
        s = book.js(STATE_JS, root)
        second = timeline["seconds"][t]
        shown = {c["t"]: c for c in s["unsafe"]}
        due = {u: m for u, m in marks.items() if u <= t}
        book.check(set(shown) == set(due),
                   f"at t = {t} the unsafe row marks seconds {sorted(shown)}, expected {sorted(due)} (from {demo}.json)")
        for u, clients in due.items():
            cell = shown[u]
            book.check(cell["clients"].split() == list(clients),
                       f"the ✗ at t = {u} names {cell['clients']!r}, expected {' '.join(clients)!r}")
            book.check("✗" in cell["text"], f"the unsafe cell at t = {u} shows {cell['text']!r}, not a ✗")
            book.check(("rejected" in cell["text"]) == any(clients.values()),
                       f"the unsafe cell at t = {u} shows {cell['text']!r}; rejected in the JSON: {any(clients.values())}")
        book.check(sorted(s["cardUnsafe"]) == sorted(marks.get(t, {})),
                   f"at t = {t} the client cards mark {s['cardUnsafe']} unsafe, expected {sorted(marks.get(t, {}))}")
        book.check(s["holder"] == (second["holder"] or ""), f"at t = {t} Redis shows holder {s['holder']!r}, JSON {second['holder']!r}")
        book.check(s["counter"] == second["counter"], f"at t = {t} the counter shows {s['counter']}, JSON {second['counter']}")
        book.check(s["live"] == "polite" and s["status"].startswith(f"t = {t} s"), f"at t = {t} the aria-live status reads {s['status']!r}")
        book.check(s["facts"].startswith(f"t = {t} s"), f"at t = {t} the text version reads {s['facts'][:60]!r}")
        if t > 0:
            book.check(s["focusVisible"] and s["outline"] != "none", f"at t = {t} the focused control shows no focus outline")
        if t == min(marks):
            book.shot(f"player-{demo}-t{t}", root)
    book.report.verified(f"{page}: {demo} stepped t = 0..{last} by keyboard; ✗ at t = {sorted(marks)}, cards, key, counter, status follow the JSON")

    # Space plays, and pauses.
    control(root, "play").send_keys(Keys.HOME)
    control(root, "play").send_keys(Keys.SPACE)
    book.wait_for("playback to advance after Space",
                  lambda d: root.get_attribute("data-playing") == "true" and int(root.get_attribute("data-second")) >= 1, 4)
    book.driver.switch_to.active_element.send_keys(Keys.SPACE)
    book.check(root.get_attribute("data-playing") == "false", "Space did not pause the player")
    at = root.get_attribute("data-second")
    time.sleep(1.3)
    book.check(root.get_attribute("data-second") == at, "the player kept moving after it was paused")
    book.report.verified("Space plays and pauses")


# The player's strip folds quiet seconds as the static strips do: a column spans
# data-second to data-to (a gap), or data-second alone.
IN_COLUMN_JS = """
const inColumn = (cells, t) => [...cells].find((c) => {
    const from = Number(c.getAttribute('data-second'));
    return from <= t && t <= Number(c.getAttribute('data-to') || from);
});"""

CELL_STYLE_JS = IN_COLUMN_JS + """
const [root, client, seconds] = arguments;
return seconds.map((t) => {
    const cell = inColumn(root.querySelectorAll(`[data-role=strip] tr[data-role=belief-row][data-client="${client}"] td[data-second]`), t);
    const cs = getComputedStyle(cell);
    return {t, look: cs.backgroundColor + ' ' + cs.backgroundImage, mistaken: cell.classList.contains('tl-mistaken'),
            title: cell.title || ''};
});"""


def check_mistaken_style(book):
    """A, paused while the key is B's, then C's, looks mistaken, not just paused."""
    demo = "gc-pause"
    timeline = book.timeline(demo)
    wrong = [s["t"] for s in timeline["seconds"]
             if s["clients"]["A"]["believes"] and s["holder"] != "A" and s["clients"]["A"]["state"] == "paused"]
    right = [s["t"] for s in timeline["seconds"]
             if s["clients"]["A"]["believes"] and s["holder"] == "A" and s["clients"]["A"]["state"] == "paused"]
    awake = [s["t"] for s in timeline["seconds"]
             if s["clients"]["A"]["believes"] and s["holder"] != "A" and s["clients"]["A"]["state"] != "paused"]
    book.check(wrong == list(range(10, 15)), f"{demo}.json: A is paused and mistaken at {wrong}, the chapter says t = 10–14")
    book.check(right and awake, f"{demo}.json: A should also be paused rightly (t = 2–9) and mistaken awake (t = 15)")
    page, root = open_player(book, demo)
    go_to(book, root, max(wrong + awake))
    cells = {c["t"]: c for c in book.js(CELL_STYLE_JS, root, "A", wrong + right + awake)}
    for t in wrong:
        book.check(cells[t]["mistaken"], f"A's strip cell at t = {t} lacks the mistaken-belief class")
        book.check(cells[t]["look"] != cells[right[-1]]["look"],
                   f"A's strip cell at t = {t} (paused, the key is not A's) looks like t = {right[-1]} (paused, A holds it): {cells[t]['look']}")
        book.check(cells[t]["look"] == cells[awake[0]]["look"],
                   f"A's strip cell at t = {t} does not look like the mistaken belief at t = {awake[0]}: "
                   f"{cells[t]['look']} vs {cells[awake[0]]['look']}")
    book.shot(f"strip-{demo}-mistaken", root.find_element(By.CSS_SELECTOR, "[data-role=strip]"))
    book.report.verified(f"{page}: A's cells at t = {wrong[0]}–{wrong[-1]} of {demo} carry the mistaken-belief style, "
                         f"unlike t = {right[0]}–{right[-1]}")


VISIBLE_JS = IN_COLUMN_JS + """
const [root, t] = arguments;
const strip = root.querySelector('[data-role=strip]');
const cell = inColumn(strip.querySelectorAll('thead th[data-second]'), t);
let scroller = strip.parentElement;
while (scroller !== root && !/(auto|scroll|hidden)/.test(getComputedStyle(scroller).overflowX)) scroller = scroller.parentElement;
const box = scroller.getBoundingClientRect();
let left = box.left + scroller.clientLeft;
for (const th of strip.querySelectorAll('thead th')) {
    if (getComputedStyle(th).position === 'sticky') left = Math.max(left, th.getBoundingClientRect().right);
}
left = Math.max(left, 0);
const right = Math.min(box.left + scroller.clientLeft + scroller.clientWidth, document.documentElement.clientWidth);
const r = cell.getBoundingClientRect();
return {inside: r.left >= left - 1 && r.right <= right + 1, cell: [Math.round(r.left), Math.round(r.right)],
        view: [Math.round(left), Math.round(right)]};"""

OVERFLOW_JS = """
const root = arguments[0];
const width = document.documentElement.clientWidth;
const all = [root, ...root.querySelectorAll('*')];
const scrollers = all.filter((e) => e !== root && /(auto|scroll)/.test(getComputedStyle(e).overflowX));
const wide = [];
// Text counts too: a line that does not wrap spills out of its box, whose
// own rectangle stays inside the page.
const range = document.createRange();
for (const el of all) {
    if (scrollers.some((s) => s !== el && s.contains(el))) continue;
    const boxes = [el.getBoundingClientRect()];
    for (const node of el.childNodes) {
        if (node.nodeType === 3 && node.textContent.trim()) {
            range.selectNodeContents(node);
            boxes.push(range.getBoundingClientRect());
        }
    }
    for (const r of boxes) {
        if (r.width === 0 && r.height === 0) continue;
        if (r.left < -0.5 || r.right > width + 0.5) {
            wide.push(`${el.tagName.toLowerCase()}${el.getAttribute('data-role') ? '[data-role=' + el.getAttribute('data-role') + ']' : ''}` +
                      ` from ${Math.round(r.left)} to ${Math.round(r.right)} px`);
            break;
        }
    }
}
return {width, wide: wide.slice(0, 5)};"""


def walk_with(book, root, demo, width, advance):
    """Steps `demo` from 0 to its end with `advance`, checking at every second
    that the current column is in view (and, at 390 px, that nothing is wider
    than the page)."""
    last = len(book.timeline(demo)["seconds"]) - 1
    for t in range(0, last + 1):
        if t > 0:
            advance()
            book.wait_for(f"t = {t}", lambda d: root.get_attribute("data-second") == str(t), 3)
        v = book.js(VISIBLE_JS, root, t)
        book.check(v["inside"], f"{width} px, {demo}: at t = {t} its column ({v['cell']}) is outside the visible strip ({v['view']})")
        if width == NARROW:
            o = book.js(OVERFLOW_JS, root)
            book.check(not o["wide"], f"390 px, {demo}, t = {t}: wider than the {o['width']} px page: {'; '.join(o['wide'])}")
    return last


def check_current_column_wide(book):
    """At 1280 px the strip follows the current second to the end of the 40 s demo."""
    page, root = open_player(book, "long-pause")
    nxt = control(root, "next")
    control(root, "play").send_keys(Keys.HOME)
    last = walk_with(book, root, "long-pause", WIDE, lambda: press(book, nxt))
    book.shot("player-long-pause-end-1280", root)
    book.report.verified(f"{WIDE} px: long-pause's current column stays in view at every second, t = 0..{last} (Next button)")


def check_narrow_player(book):
    """At 390 px the strip follows the current second, and nothing spills."""
    try:
        book.width(NARROW)
        for demo in ["gc-pause", "long-pause"]:
            page, root = open_player(book, demo)
            control(root, "play").send_keys(Keys.HOME)
            last = walk_with(book, root, demo, NARROW,
                             lambda: book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT))
            book.report.verified(f"{NARROW} px: {demo}'s current column in view and no player element wider than the page, t = 0..{last}")
            book.shot(f"player-{demo}-390", root)
    finally:
        book.width(WIDE)


FOCUS_JS = """
const root = arguments[0];
const a = document.activeElement;
return {inside: root.contains(a), tag: a.tagName, role: a.getAttribute('data-role') || ''};"""


def check_focus_at_ends(book):
    """Stepping to either end keeps the focus on the button, so the next
    arrow key still steps the player instead of turning the page."""
    demo = "gc-pause"
    last = len(book.timeline(demo)["seconds"]) - 1
    page, root = open_player(book, demo)
    url = book.driver.current_url
    control(root, "play").send_keys(Keys.HOME)
    for role, target, key in [("next", last, Keys.ARROW_RIGHT), ("prev", 0, Keys.ARROW_LEFT)]:
        button = control(root, role)
        book.js("arguments[0].focus()", button)
        for _ in range(last + 1):
            # To whatever has the focus, as a keyboard would, even the page.
            ActionChains(book.driver).send_keys(Keys.ENTER).perform()
        book.wait_for(f"t = {target} after the {role} button", lambda d: root.get_attribute("data-second") == str(target), 3)
        f = book.js(FOCUS_JS, root)
        book.check(f["inside"] and f["tag"] in ("BUTTON", "INPUT", "SELECT"),
                   f"at t = {target}, after the {role} button, the focus is on {f['tag']} outside the player's controls")
        ActionChains(book.driver).send_keys(key).perform()
        time.sleep(0.3)
        book.check(book.driver.current_url == url, f"at t = {target}, one more arrow key turned the page to {book.driver.current_url}")
        book.check(root.get_attribute("data-second") == str(target), f"at t = {target} the arrow key moved the player past its end")
    book.report.verified(f"{page}: focus stays on the Next / Back button at t = {last} and t = 0; the arrow keys then keep the page")


def check_menu_speed_and_events(book):
    """Demo 1–6 first, a speed control, and stepping from event to event."""
    page, root = open_player(book, "gc-pause")
    options = book.js("return [...arguments[0].querySelectorAll('[data-role=select] option')].map(o => [o.value, o.textContent])", root)
    names = [v for v, _ in options]
    book.check(names[:len(SEED_DEMOS)] == SEED_DEMOS, f"the demo menu starts {names[:6]}, expected the original page's order {SEED_DEMOS}")
    for i, (value, label) in enumerate(options[:len(SEED_DEMOS)]):
        book.check(label.startswith(f"Demo {i + 1}: "), f"menu entry {value} reads {label!r}, expected 'Demo {i + 1}: …'")
    book.report.verified(f"the demo menu lists Demo 1–6 in the original order, then {len(names) - len(SEED_DEMOS)} more")

    for demo in ["gc-pause", "gc-pause-fenced"]:
        page, root = open_player(book, demo)
        events = expected_events(book.timeline(demo))
        control(root, "play").send_keys(Keys.HOME)
        button = control(root, "next-event")
        seen = []
        for _ in range(len(events) + 1):
            press(book, button)
            seen.append(int(root.get_attribute("data-second")))
        want = [t for t in events if t > 0]
        book.check(seen[:len(want)] == want and all(t == want[-1] for t in seen[len(want):]),
                   f"{demo}: Next event stops at {seen}, expected {want} and then stays")
        back = control(root, "prev-event")
        press(book, back)
        book.check(int(root.get_attribute("data-second")) == want[-2], f"{demo}: Previous event went to {root.get_attribute('data-second')}, expected {want[-2]}")
        refused = [s["t"] for s in book.timeline(demo)["seconds"]
                   if any(a["kind"] == "release_refused" for c in s["clients"].values() for a in c["actions"])]
        book.check(refused and all(t in seen for t in refused), f"{demo}: Next event skips the refused release at {refused}")
        book.report.verified(f"{demo}: Next event visits t = {want} (grants, writes, rejections, the refused release at "
                             f"{refused}, expiries, ✗), Previous event goes back")

    Select(control(root, "speed")).select_by_value("4")
    control(root, "play").send_keys(Keys.HOME)
    started = time.monotonic()
    press(book, control(root, "play"))
    book.wait_for("4× playback to reach t = 4", lambda d: int(root.get_attribute("data-second")) >= 4, 3)
    took = time.monotonic() - started
    press(book, control(root, "play"))
    book.check(took < 2.5, f"at 4× the player took {took:.1f} s for 4 seconds")
    book.report.verified(f"at 4× the player plays 4 recorded seconds in {took:.1f} s")


MESSAGES_JS = """
const root = arguments[0];
const box = root.querySelector('[data-role=messages]');
return {hidden: box.hidden, items: [...box.querySelectorAll('[data-role=message-list] li[data-to]')].map((li) =>
            [li.getAttribute('data-client'), li.getAttribute('data-to'), li.textContent]),
        arrows: box.querySelectorAll('svg line.tl-request, svg line.tl-reply').length,
        status: root.querySelector('[data-role=status]').textContent};"""


def check_message_diagram(book):
    """The message diagram shows the recorded commands of the player's
    second, and the status line orders that second's events."""
    demo = "gc-pause-fenced"
    timeline = book.timeline(demo)
    messages = timeline.get("messages", [])
    book.check(messages, f"timelines/{demo}.json records no commands")
    page, root = open_player(book, demo)
    checked = 0
    for t in [0, 1, 12, 15]:
        go_to(book, root, t)
        shown = book.js(MESSAGES_JS, root)
        want = [m for m in messages if m["t"] == t]
        book.check(not shown["hidden"], f"{demo} at t = {t}: the message diagram is hidden")
        book.check([(c, to) for c, to, _ in shown["items"]] == [(m["client"], m["to"]) for m in want],
                   f"{demo} at t = {t}: the diagram lists {[(c, to) for c, to, _ in shown['items']]}, "
                   f"the JSON {[(m['client'], m['to']) for m in want]}")
        for (_, _, text), m in zip(shown["items"], want):
            book.check(m["command"] in text and m["reply"] in text, f"{demo} at t = {t}: {text!r} lacks {m['command']!r} ← {m['reply']!r}")
            book.check("dlcourse:" not in text, f"{demo} at t = {t}: {text!r} shows a machine-specific key prefix")
        if t == 15:
            said = [text for _, _, text in shown["items"]]
            book.check(any(text.startswith("A ") and "= rejected: 33 < 34" in text for text in said)
                       and any(text.startswith("C ") and "= written" in text for text in said),
                       f"{demo} at t = 15: the replies do not say what happened (A: rejected: 33 < 34, C: written): {said}")
        book.check(shown["arrows"] == 2 * len(want), f"{demo} at t = {t}: {shown['arrows']} arrows for {len(want)} commands and replies")
        checked += len(want)
        if t == 15:
            book.shot(f"messages-{demo}-t15", root.find_element(By.CSS_SELECTOR, "[data-role=messages]"))
            status = shown["status"]
            book.check("In this order:" in status and status.index("33 < 34") < status.index("C: wrote")
                       and status.endswith("highest token is 35."),
                       f"{demo} at t = 15: the status line {status!r} does not order A's rejection before C's write "
                       "and say the storage ends the second at 35")
    failover = "failover-lost-lock"
    _, root = open_player(book, failover)
    go_to(book, root, 1)
    status = book.js(MESSAGES_JS, root)["status"]
    book.check(status.count("killed") == 1 and "becomes the primary" not in status
               and status.index("killed") < status.index("promoted") < status.index("B: acquired"),
               f"{failover} at t = 1: the status line {status!r} does not say the kill, then the promotion, then B's "
               "grant, each once")
    book.report.verified(f"{failover} at t = 1: the status line says the kill, the promotion and B's grant in that order, "
                         "each once")
    book.report.verified(f"{page}: the message diagram draws the {checked} recorded commands of {demo} at t = 0, 1, 12, 15 "
                         "with their replies, each said in words (at t = 15: A's 0 = rejected: 33 < 34, C's = written); at t = 15 the status line orders the rejection (33 < 34) before C's write (35)")
