"""Checks of the "what if" grids: every recorded run loads, and is the one the JSON holds.

For each grid in book/src/what-if/, the page whose {{#what-if}} table shows it
is opened; its table must list every cell with the safety read off the cell's
run; then the player is switched to the grid's demo and, for every cell, the
reader's controls are set to the cell's values: the run must be fetched and
loaded (data-state "loaded"), named as the JSON names it, as long as it,
with the ✗ marks of its JSON and, at its last second, its final counter;
the focus stays on the control just changed. At 390 px the table reflows
into cards no wider than the page.
"""

import json

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser import NARROW, WIDE
from player import control, expected_unsafe, open_player

GRID_DIR = "src/what-if"


def grids(book):
    folder = book.book_dir / GRID_DIR
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def cell_run(book, cell):
    """The cell's timeline: its own run, or the book timeline it names."""
    return cell["run"] if "run" in cell else book.timeline(cell["same_as"])


def harmful(run):
    return sum(1 for s in run["seconds"] for c in s["clients"].values() for a in c["actions"]
               if a["unsafe"] and not a["rejected"])


TABLE_JS = """
return [...arguments[0].querySelectorAll('tbody tr')].map((tr) => ({
    choice: tr.getAttribute('data-choice'), safe: tr.getAttribute('data-safe'),
    counter: Number(tr.getAttribute('data-counter')), timeline: tr.getAttribute('data-timeline')}));"""

PLAYER_JS = """
const root = arguments[0];
return {
    current: root.getAttribute('data-current'),
    last: Number(root.querySelector('[data-role=scrub]').max),
    state: root.querySelector('[data-role=what-if]').getAttribute('data-state'),
    unsafe: [...root.querySelectorAll('[data-role=unsafe-row] td[data-unsafe]')].map((c) => Number(c.getAttribute('data-second'))),
    counter: Number(root.querySelector('[data-role=storage]').getAttribute('data-counter')),
    focus: document.activeElement.getAttribute('data-role'),
};"""


def choose(book, root, choice):
    """Sets the what-if controls to `choice`, as a reader does: one menu after another."""
    for select in root.find_elements(By.CSS_SELECTOR, "[data-role=what-if-control]"):
        value = choice[int(select.get_attribute("id").rsplit("-", 1)[1])]
        if Select(select).first_selected_option.get_attribute("value") != value:
            Select(select).select_by_value(value)
    book.wait_for(f"the run of {choice} to load",
                  lambda d: control(root, "what-if").get_attribute("data-state") in ("loaded", "error")
                  and control(root, "what-if").get_attribute("data-choice") == "|".join(choice))


def check_what_if_table(book, grid, page):
    table = book.open(page).find_element(By.CSS_SELECTOR, f'[data-what-if="{grid["name"]}"]')
    rows = book.js(TABLE_JS, table)
    book.check(len(rows) == len(grid["cells"]),
               f"{page}: the {grid['name']} table has {len(rows)} rows for {len(grid['cells'])} cells")
    for row, cell in zip(rows, grid["cells"]):
        run = cell_run(book, cell)
        want = {"choice": "|".join(cell["choice"]), "safe": str(harmful(run) == 0).lower(),
                "counter": run["outcome"]["counter"], "timeline": run["name"]}
        book.check(row == want, f"{page}: the {grid['name']} table says {row}, its JSON {want}")
    try:
        book.width(NARROW)
        table = book.open(page).find_element(By.CSS_SELECTOR, f'[data-what-if="{grid["name"]}"]')
        shape = book.js("""const t = arguments[0], tr = t.querySelector('tbody tr');
            return {display: getComputedStyle(tr).display, right: Math.max(...[...t.querySelectorAll('*')].map((e) => e.getBoundingClientRect().right)),
                    width: document.documentElement.clientWidth};""", table)
        book.check(shape["display"] == "block" and shape["right"] <= shape["width"] + 0.5,
                   f"390 px, {page}: the {grid['name']} table does not reflow into cards inside the page: {shape}")
        book.shot(f"what-if-{grid['name']}-table-390", table)
    finally:
        book.width(WIDE)


def check_what_if(book):
    """Every cell of every grid: the table lists it, the player loads it from its JSON."""
    found = grids(book)
    book.check(found, f"no what-if grid in book/{GRID_DIR}/")
    for grid in found:
        pages = book.pages_containing(f'data-what-if="{grid["name"]}"')
        book.check(pages, f"no page shows the what-if table of {grid['name']}")
        check_what_if_table(book, grid, pages[0])
        demo = next(c["same_as"] for c in grid["cells"] if "same_as" in c)
        page, root = open_player(book, demo, pages[0])
        book.check(control(root, "what-if").is_displayed(), f"{page}: {demo} shows no what-if controls")
        for cell in grid["cells"]:
            run = cell_run(book, cell)
            choose(book, root, cell["choice"])
            state = book.js(PLAYER_JS, root)
            book.check(state["state"] == "loaded", f"{page}: {cell['choice']} did not load: {state}")
            book.check(state["focus"] == "what-if-control", f"{page}: after choosing {cell['choice']} the focus is on {state['focus']}")
            book.check(state["current"] == run["name"] and state["last"] == len(run["seconds"]) - 1,
                       f"{page}: {cell['choice']} shows {state['current']} ({state['last'] + 1} s), its JSON {run['name']} ({len(run['seconds'])} s)")
            control(root, "play").send_keys(Keys.END)
            book.wait_for("the last second", lambda d: root.get_attribute("data-second") == str(state["last"]), 3)
            state = book.js(PLAYER_JS, root)
            want = sorted(expected_unsafe(run))
            book.check(state["unsafe"] == want and state["counter"] == run["outcome"]["counter"],
                       f"{page}: {cell['choice']} shows ✗ at {state['unsafe']} and counter {state['counter']}, "
                       f"its JSON ✗ at {want} and counter {run['outcome']['counter']}")
        book.shot(f"what-if-{grid['name']}-player", root)
        book.report.verified(f"what-if {grid['name']}: all {len(grid['cells'])} cells listed in {pages[0]}'s table with their "
                             f"safety, each loaded in the player from its JSON with its ✗ marks and final counter; the table reflows at 390 px")
