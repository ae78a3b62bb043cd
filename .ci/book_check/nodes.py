"""Checks of timelines on several Redis nodes: the node rows of the strip and the player.

No chapter has such a timeline yet, so `.ci/book-check` builds a small book
beside the course's (`nodes-check/nodes.html`), with the real preprocessor,
theme and mdBook, from the preprocessor's test fixtures: `nodes-redlock`
(five nodes, one paused, one down, a clock jump, two clients who each took a
majority) and `nodes-failover` (a primary, its replica and a failover). The
page has both as static strips and a player that starts on the first.

Once the book's own timelines include some on several nodes (`redlock-*`,
`failover-*`), the same checks also run them, in the player of the first
chapter that has one (`targets`), and `pages.check_static_strips` holds
their strips' node rows to the JSON. Every expectation comes from the JSON,
never from the fixtures' particulars.
"""

import json

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import NARROW, NODES_PAGE, THEMES, WIDE
from calls import CALLS_JS, MAX_REDLOCK_DIAGRAM_PX, call_failures, expected_rounds
from pages import FITS_JS, check_figures, measure_contrast
from phone import MIN_DIAGRAM_PX
from player import control, go_to, keyed_seconds, open_player, walk_with

DEMOS = ["nodes-redlock", "nodes-failover"]


def targets(book):
    """(page, demos) pairs to check: the fixtures' page, then, if the book has
    timelines on several nodes, the first page with a player (which embeds
    every timeline) and those timelines."""
    found = [(NODES_PAGE, DEMOS)]
    course = sorted(p.stem for p in (book.book_dir / "timelines").glob("*.json")
                    if json.loads(p.read_text(encoding="utf-8")).get("nodes"))
    pages = book.pages_containing("data-timeline-player=")
    if course and pages:
        found.append((pages[0], course))
    return found

NODES_JS = """
const root = arguments[0];
const strip = root.querySelector('[data-role=strip]');
const a = document.activeElement;
return {
    key: strip.querySelector('tr[data-role=holder-row] th').textContent,
    keys: [...strip.querySelectorAll('tr[data-role=holder-row] td')].map((td) => ({
        from: Number(td.getAttribute('data-second')), to: Number(td.getAttribute('data-to') || td.getAttribute('data-second')),
        text: td.textContent})),
    rows: [...strip.querySelectorAll('tr[data-role=node-row]')].map((tr) => ({
        node: tr.getAttribute('data-node'),
        heading: tr.querySelector('th').textContent,
        cells: [...tr.querySelectorAll('td')].map((td) => ({
            from: Number(td.getAttribute('data-second')), to: Number(td.getAttribute('data-to') || td.getAttribute('data-second')),
            health: td.getAttribute('data-health'), holder: td.getAttribute('data-holder'), text: td.textContent,
            jumped: td.getAttribute('data-jumped'), changed: td.getAttribute('data-role-changed'), title: td.title})),
    })),
    card: [...root.querySelectorAll('[data-role=nodes] li')].map((li) => ({
        node: li.getAttribute('data-node'), health: li.getAttribute('data-health'),
        holder: li.getAttribute('data-holder'), text: li.textContent})),
    facts: root.querySelector('[data-role=facts]').textContent,
    focus: root.contains(a) && a.matches(':focus-visible') && getComputedStyle(a).outlineStyle !== 'none',
};"""


def key_heading(timeline):
    """What the key row is headed with: by the primary when nodes have roles, else by the majority."""
    roles = any(n.get("role") for s in timeline["seconds"] for n in s["nodes"].values())
    return "primary holds" if roles else "majority holds"


def rule_holder(timeline, t):
    """Whose the lock is at `t` by the key row's rule, from the JSON's node rows alone: the primary's holder,
    or the client whose token more than half of the nodes hold; None for no one."""
    nodes = timeline["seconds"][t]["nodes"]
    if any(n.get("role") for s in timeline["seconds"] for n in s["nodes"].values()):
        return next((nodes[n]["holder"] for n in timeline["nodes"] if nodes[n].get("role") == "primary"), None)
    holders = [nodes[n]["holder"] for n in timeline["nodes"] if nodes[n]["holder"]]
    return next((h for h in holders if 2 * holders.count(h) > len(timeline["nodes"])), None)


def expected_cell(timeline, t, node):
    """(health, holder, glyph, jumped, role changed) of `node` at `t`, from the JSON."""
    now = timeline["seconds"][t]["nodes"][node]
    before = timeline["seconds"][t - 1]["nodes"][node] if t > 0 else None
    glyph = {"paused": "‖", "down": "⊘"}.get(now["health"], now["holder"] or "–")
    ahead = now.get("clock_ahead_s", 0)
    jumped = ahead > (before.get("clock_ahead_s", 0) if before else 0)
    changed = before is not None and before.get("role") != now.get("role")
    return now["health"], now["holder"] or "", glyph, jumped, changed


def check_node_strips(book):
    """The static strips of the fixtures' page have a row per node, as the JSON says, under the key row
    (the book's own strips are held to their JSON by pages.check_static_strips)."""
    page = NODES_PAGE
    count = check_figures(book, page)
    book.check(count >= 2, f"{page}: {count} static strips, expected the two node fixtures'")
    book.report.verified(f"{page}: {count} static strips on several nodes; a row per node under the key row, "
                         "each node's health and holder per second as in the JSON")


def check_node_player(book):
    """Stepped by keyboard, the player's node rows and node list follow the current second."""
    for page, demos in targets(book):
        node_player_on(book, page, demos)


def node_player_on(book, page, demos):
    for demo in demos:
        timeline = book.timeline(demo)
        nodes = timeline["nodes"]
        last = len(timeline["seconds"]) - 1
        page, root = open_player(book, demo, page)
        for t in keyed_seconds(book, root, demo):
            s = book.js(NODES_JS, root)
            where = f"{demo} at t = {t}"
            book.check(s["key"] == key_heading(timeline), f"{where}: the key row is headed {s['key']!r}")
            book.check([r["node"] for r in s["rows"]] == nodes, f"{where}: node rows {[r['node'] for r in s['rows']]}, expected {nodes}")
            for r in s["rows"]:
                for cell in r["cells"]:
                    # A folded gap of quiet seconds shows the second the player is at
                    # while inside it, else its last.
                    u = min(cell["to"], max(cell["from"], t))
                    if cell["from"] > t:
                        book.check(cell["health"] is None and cell["text"] == "",
                                   f"{where}: {r['node']}'s cell at t = {u}, a later second, already shows {cell['text']!r}")
                        continue
                    health, holder, glyph, jumped, changed = expected_cell(timeline, u, r["node"])
                    book.check((cell["health"], cell["holder"]) == (health, holder),
                               f"{where}: {r['node']} at t = {u} shows {cell['health']}/{cell['holder']!r}, JSON {health}/{holder!r}")
                    book.check(glyph in cell["text"] and r["node"] in cell["title"],
                               f"{where}: {r['node']} at t = {u} reads {cell['text']!r} (title {cell['title']!r}), expected {glyph!r}")
                    book.check((cell["jumped"], cell["changed"]) == (str(jumped).lower(), str(changed).lower()),
                               f"{where}: {r['node']} at t = {u} marks jump {cell['jumped']}, role change {cell['changed']}; "
                               f"JSON: {jumped}, {changed}")
            # The key row, at every second shown so far: its rule's holder from the node rows, ◷ only on an
            # expiry and ⚡ only on a fault.
            for cell in s["keys"]:
                if cell["from"] > t:
                    continue
                u = min(cell["to"], max(cell["from"], t))
                kinds = {n["kind"] for n in timeline["seconds"][u]["notes"]}
                holder = cell["text"].replace("◷", "").replace("⚡", "")
                book.check(holder == (rule_holder(timeline, u) or "–")
                           and ("◷" in cell["text"]) == ("expiry" in kinds) and ("⚡" in cell["text"]) == ("fault" in kinds),
                           f"{where}: the key row at t = {u} reads {cell['text']!r}; its rule gives "
                           f"{rule_holder(timeline, u)!r} from the nodes, and the notes are {sorted(kinds)}")
            want = [(n, *expected_cell(timeline, t, n)[:2]) for n in nodes]
            got = [(c["node"], c["health"], c["holder"]) for c in s["card"]]
            book.check(got == want, f"{where}: the Redis card lists {got}, expected {want}")
            book.check("Nodes: " in s["facts"] and all(n in s["facts"] for n in nodes),
                       f"{where}: the text version does not describe the nodes: {s['facts'][:120]!r}")
            if t > 0:
                book.check(s["focus"], f"{where}: the focus left the player's controls or shows no outline")
        book.shot(f"player-{demo}-end", root)
        book.report.verified(f"{page}: {demo} stepped t = 0..{last} by keyboard; {len(nodes)} node rows and the node list "
                             f"follow the JSON at every second, later seconds blank; the key row its rule's holder from "
                             f"the nodes at every second, ◷ only on expiries, ⚡ only on faults; focus stays on a control")


def check_nodes_narrow(book):
    """At 390 px the player with its node rows keeps the current column in view and nothing spills; the
    static strips keep their unsafe row in view."""
    for page, demos in targets(book):
        nodes_narrow_on(book, page, demos)


def nodes_narrow_on(book, page, demos):
    try:
        book.width(NARROW)
        for demo in demos:
            page, root = open_player(book, demo, page)
            control(root, "play").send_keys(Keys.HOME)
            last = walk_with(book, root, demo, NARROW,
                             lambda: book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT))
            book.shot(f"player-{demo}-390", root)
            book.report.verified(f"{NARROW} px, {page}: {demo}'s current column in view and no element wider than the page, "
                                 f"t = 0..{last}")
        for f in book.js(FITS_JS):
            book.check(f["unsafe"] is not None and f["unsafe"][0] >= 0 and f["unsafe"][1] <= f["width"],
                       f"{NARROW} px, {page}: the 'unsafe' heading of {f['name']}'s strip is at {f['unsafe']}, "
                       f"outside the {f['width']} px page")
        book.js("document.querySelector('.tl-figure').scrollIntoView({block: 'start'})")
        book.shot("nodes-strip-390")
    finally:
        book.width(WIDE)
    book.report.verified(f"{NARROW} px, {page}: every strip's unsafe row is in view without scrolling sideways")


def check_nodes_contrast(book):
    """The node rows, marks and node list are readable in all five themes."""
    for page, demos in targets(book):
        nodes_contrast_on(book, page, demos)


def nodes_contrast_on(book, page, demos):
    measured = 0
    failures = []
    for theme in THEMES:
        book.theme(theme)
        for demo in demos:
            timeline = book.timeline(demo)
            # The first second where a node is marked (a jump, a role change), else the last.
            marked = [t for t in range(len(timeline["seconds"]))
                      if any(any(expected_cell(timeline, t, n)[3:]) for n in timeline["nodes"])]
            t = marked[0] if marked else len(timeline["seconds"]) - 1
            page, root = open_player(book, demo, page)
            count, failure = measure_contrast(book, root, theme, demo, t)
            measured += count
            failures += [failure] if failure else []
        book.shot(f"nodes-{theme}", root)
    book.theme(None)
    book.check(not failures, "\n  ".join(failures))
    book.report.verified(f"{page}: contrast ≥ 4.5:1 for {measured} text elements of node rows, player and strips "
                         f"in {', '.join(THEMES)}")


DIAGRAM_JS = """
const root = arguments[0];
const box = root.querySelector('[data-role=messages]');
const svg = box.querySelector('svg.tl-lamport');
const page = document.documentElement.clientWidth;
if (!svg) return {hidden: box.hidden, svg: false};
const width = svg.viewBox.baseVal.width;
const scale = svg.getBoundingClientRect().width / width;
return {
    hidden: box.hidden, svg: true,
    lanes: [...svg.querySelectorAll('.tl-lane-name')].map((t) => t.getAttribute('data-lane')),
    items: [...box.querySelectorAll('[data-role=message-list] li[data-to]')].map((li) =>
        [li.getAttribute('data-client'), li.getAttribute('data-to'), li.getAttribute('data-answered'), li.textContent]),
    groups: [...svg.querySelectorAll('g.tl-message')].map((g) => ({
        answered: g.getAttribute('data-answered'),
        requests: g.querySelectorAll('line.tl-request').length,
        replies: g.querySelectorAll('line.tl-reply').length,
        crosses: g.querySelectorAll('.tl-no-reply-mark').length,
        // A command of a round says "no reply" in the round's one summary, not under its own cross.
        labels: [...g.querySelectorAll('.tl-arrow-label'),
                 ...(g.closest('g.tl-round') ? g.closest('g.tl-round').querySelectorAll('.tl-round-summary') : [])]
            .map((t) => t.textContent),
        outside: [...g.querySelectorAll('text')].filter((t) => { const b = t.getBBox(); return b.x < -0.5 || b.x + b.width > width + 0.5; })
            .map((t) => t.textContent)})),
    font: Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
    spills: svg.getBoundingClientRect().right > page + 0.5,""" + CALLS_JS + "};"


def redlock_timelines(book):
    """The book's timelines whose messages go to Redlock's nodes, by name."""
    found = []
    for path in sorted((book.book_dir / "timelines").glob("*.json")):
        timeline = json.loads(path.read_text(encoding="utf-8"))
        nodes = timeline.get("nodes", [])
        if any(m["to"] in nodes for m in timeline.get("messages", [])):
            found.append(path.stem)
    return found


def diagram_failures(timeline, t, shown):
    """What is wrong with the drawn diagram of second `t`, against the JSON; empty when right."""
    want = [m for m in timeline["messages"] if m["t"] == t]
    where = f"{timeline['name']} at t = {t}"
    if not want:
        return [] if not shown["svg"] else [f"{where}: a diagram is drawn for a second without commands"]
    if shown["hidden"] or not shown["svg"]:
        return [f"{where}: {len(want)} commands but no diagram"]
    wrong = []
    lanes = timeline["clients"] + timeline["nodes"] + ["storage"]
    if shown["lanes"] != lanes:
        wrong.append(f"{where}: the lanes are {shown['lanes']}, not {lanes}")
    listed = [(c, to, a) for c, to, a, _ in shown["items"]]
    recorded = [(m["client"], m["to"], str(m.get("answered", True)).lower()) for m in want]
    if listed != recorded:
        wrong.append(f"{where}: the list gives {listed}, the JSON {recorded}")
    for (_, _, _, text), m in zip(shown["items"], want):
        if m["command"] not in text or m["reply"] not in text:
            wrong.append(f"{where}: {text!r} lacks {m['command']!r} and its reply {m['reply']!r}")
    if len(shown["groups"]) != len(want):
        wrong.append(f"{where}: {len(shown['groups'])} messages drawn for {len(want)} recorded")
    for i, (g, m) in enumerate(zip(shown["groups"], want), 1):
        answered = m.get("answered", True)
        drawn = (g["requests"], g["replies"], g["crosses"])
        if drawn != ((1, 1, 0) if answered else (1, 0, 1)):
            wrong.append(f"{where}, message {i} ({m['client']} to {m['to']}, answered: {answered}): drawn with "
                         f"{drawn[0]} request, {drawn[1]} reply arrows and {drawn[2]} crosses")
        if not answered and not any("no reply" in label for label in g["labels"]):
            wrong.append(f"{where}, message {i}: unanswered, but labelled {g['labels']}")
        if g["outside"]:
            wrong.append(f"{where}, message {i}: labels {g['outside']} run out of the picture")
    if shown["font"] < MIN_DIAGRAM_PX:
        wrong.append(f"{where}: the diagram's smallest text is {shown['font']:.1f} px, under {MIN_DIAGRAM_PX}")
    if shown["spills"]:
        wrong.append(f"{where}: the diagram is wider than the page")
    return wrong + call_failures(timeline, t, shown, where)


def check_redlock_diagram(book):
    """At 390 px, stepped through every second of every Redlock timeline, the message diagram has a lane per
    client, per node and for the storage, draws every recorded command of the second with its reply or,
    where a node said nothing, a cross and "no reply", and keeps its text readable and inside the page."""
    demos = redlock_timelines(book)
    book.check(demos, "no timeline of the book records commands to Redlock's nodes")
    try:
        book.width(NARROW)
        drawn = silent = rounds = 0
        for demo in demos:
            timeline = book.timeline(demo)
            _, root = open_player(book, demo)
            for t in keyed_seconds(book, root, demo):
                wrong = diagram_failures(timeline, t, book.js(DIAGRAM_JS, root))
                book.check(not wrong, "; ".join(wrong[:3]))
                want = [m for m in timeline["messages"] if m["t"] == t]
                drawn += len(want)
                silent += sum(1 for m in want if m.get("answered") is False)
                rounds += len(expected_rounds(want, set(timeline["nodes"])))
            book.shot(f"messages-{demo}-390", root.find_element(By.CSS_SELECTOR, "[data-role=messages]"))
        book.check(silent > 0, f"the Redlock timelines {demos} record no unanswered command: the crosses went unchecked")
        book.check(rounds > 0, f"the Redlock timelines {demos} record no round of one command to several nodes")
        # At 1280 px the diagram is drawn 480 px wide: the busiest second of each story again.
        book.width(WIDE)
        for demo in demos:
            timeline = book.timeline(demo)
            busiest = max(range(len(timeline["seconds"])),
                          key=lambda t: sum(1 for m in timeline["messages"] if m["t"] == t))
            _, root = open_player(book, demo)
            go_to(book, root, busiest)
            wrong = diagram_failures(timeline, busiest, book.js(DIAGRAM_JS, root))
            book.check(not wrong, "1280 px: " + "; ".join(wrong[:3]))
    finally:
        book.width(WIDE)
    book.report.verified(f"390 px, {', '.join(demos)}: every second's message diagram draws a lane per client, node and "
                         f"the storage and all {drawn} recorded commands, the {silent} a paused or down node left "
                         f"unanswered as a cross and \"no reply\", text at least {MIN_DIAGRAM_PX} px inside the page; "
                         f"the {rounds} rounds each in one band with its replies counted, every call of several "
                         f"commands named once, no second taller than {MAX_REDLOCK_DIAGRAM_PX} px; the busiest "
                         "second of each the same at 1280 px")
