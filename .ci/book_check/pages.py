"""Checks of the book's pages: strips, page heights, print, themes, quizzes.

The strips are read from the HTML as the server sends it, which is what a
reader without JavaScript gets; the rest is measured in the browser.
"""

import html
import html.parser
import json
import re
import time

from selenium.webdriver.common.by import By

from browser import NARROW, THEMES, WIDE, CONTRAST_JS
from player import expected_unsafe, go_to, open_player

# The fencing page was 13,800 px tall at 1280 px with one table row per
# second; compact strips must bring it to a third of that.
FENCING_PAGE_MAX_PX = 13_800 // 3


def expected_rows(timeline):
    """A strip's rows, by `data-role` (and client or node), as the JSON makes them."""
    rows = [f"belief-row:{c}" for c in timeline["clients"]] + ["holder-row"]
    rows += [f"node-row:{n}" for n in timeline.get("nodes", [])]
    rows += ["counter-row"] + (["token-row"] if timeline["fencing"] else []) + ["unsafe-row"]
    return rows


class StripParser(html.parser.HTMLParser):
    """Collects, per static strip (`div.tl-figure[data-timeline]`), its rows
    (by `data-role`), its column seconds, its unsafe cells and its node cells
    (`{node: [(second, health, holder), ...]}`)."""

    def __init__(self):
        super().__init__()
        self.figures = {}
        self.current = None
        self.row = None
        self.node = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "tl-figure" in (a.get("class") or "").split() and a.get("data-timeline"):
            self.current = {"name": a["data-timeline"], "rows": [], "columns": [], "unsafe": {}, "nodes": {},
                            "strip": False, "gaps": [], "keys": {}}
            self.gap_text = None
            self.figures.setdefault(a["data-timeline"], self.current)
        if self.current is None:
            return
        if tag == "table" and a.get("data-role") == "strip":
            self.current["strip"] = True
        if tag == "tr":
            self.row = a.get("data-role")
            self.node = a.get("data-node")
            if self.row:
                who = a.get("data-client") or self.node
                self.current["rows"].append(self.row + (":" + who if who else ""))
        if tag == "th" and self.row is None and "data-second" in a:
            self.current["columns"].append(int(a["data-second"]))
        if tag == "th" and self.row is None and "data-gap" in a:
            start, end = (int(x) for x in a["data-gap"].split("-"))
            self.current["gaps"].append([start, end, ""])
            self.gap_text = self.current["gaps"][-1]
        if tag == "td" and self.row == "holder-row" and "data-second" in a:
            self.key_cell = [a.get("data-holder") or None, ""]
            self.current["keys"][int(a["data-second"])] = self.key_cell
        if tag == "td" and self.row == "unsafe-row" and "data-unsafe" in a:
            self.current["unsafe"][int(a["data-second"])] = (a["data-unsafe"].split(), a.get("data-rejected") == "true")
        if tag == "td" and self.row == "node-row" and "data-second" in a:
            cell = (int(a["data-second"]), a.get("data-health"), a.get("data-holder") or None)
            self.current["nodes"].setdefault(self.node, []).append(cell)

    def handle_data(self, data):
        if getattr(self, "gap_text", None) is not None:
            self.gap_text[2] += data
        if getattr(self, "key_cell", None) is not None:
            self.key_cell[1] += data

    def handle_endtag(self, tag):
        if tag == "th":
            self.gap_text = None
        if tag == "td":
            self.key_cell = None
        if tag == "table" and self.current is not None:
            self.current = None
            self.row = None
        elif tag == "tr":
            self.row = None


def check_static_strips(book):
    """Every {{#timeline}} is a strip in the served HTML: one column per
    second, the player's rows plus counter and token, the ✗ where the JSON
    puts it."""
    pages = book.pages_containing('class="tl-figure"')
    book.check(pages, "no page has a static timeline")
    count = sum(check_figures(book, page) for page in pages)
    book.report.verified(f"{count} static strips on {len(pages)} pages, in the HTML itself: a column per second with "
                         "an event, quiet runs folded into gaps that say their length, first and last second shown; "
                         "rows per client, key, counter, token, unsafe; ✗ as in the JSON; ◷ exactly on expiries and "
                         "⚡ on faults; the key row what its rule gives from the node rows at every shown second")


def check_figures(book, page):
    """Holds every static strip of `page` to its JSON: columns, rows, ✗
    marks and, on several nodes, each node's health and holder per second.
    Returns how many strips it checked."""
    parser = StripParser()
    parser.feed((book.html / page).read_text(encoding="utf-8"))
    for name, fig in parser.figures.items():
        timeline = book.timeline(name)
        where = f"{page}, timeline {name}"
        book.check(fig["strip"], f"{where}: no strip (table[data-role=strip]) in the HTML a reader without JavaScript gets")
        seconds = [s["t"] for s in timeline["seconds"]]
        shown = fig["columns"]
        covered = sorted(shown + [t for a, b, _ in fig["gaps"] for t in range(a, b + 1)])
        book.check(covered == seconds, f"{where}: columns {shown[:5]}… and gaps {fig['gaps']} do not cover 0..{seconds[-1]} once each")
        events = [s["t"] for s in timeline["seconds"] if s["notes"] or any(
            a["kind"] != "denied" for c in s["clients"].values() for a in c["actions"])]
        book.check(shown[:1] == [0] and shown[-1:] == [seconds[-1]] and all(t in shown for t in events),
                   f"{where}: the strip starts at {shown[:1]} and ends at {shown[-1:]}, and shows {shown}; "
                   f"it must show its first and last seconds and every second with an event {events}")
        for a, b, text in fig["gaps"]:
            book.check(text.strip() == f"… {b - a + 1} s …", f"{where}: the gap {a}–{b} reads {text!r}")
        rows = expected_rows(timeline)
        book.check(fig["rows"] == rows, f"{where}: rows {fig['rows']}, expected {rows}")
        want = {t: (list(m), any(m.values())) for t, m in expected_unsafe(timeline).items()}
        got = {t: (clients, rejected) for t, (clients, rejected) in fig["unsafe"].items()}
        book.check(got == want, f"{where}: ✗ marks {got}, expected {want}")
        by_t = {s["t"]: s for s in timeline["seconds"]}
        for t, (holder, text) in fig["keys"].items():
            kinds = {n["kind"] for n in by_t[t]["notes"]}
            book.check(("◷" in text) == ("expiry" in kinds) and ("⚡" in text) == ("fault" in kinds),
                       f"{where} t = {t}: the key cell reads {text!r} but the notes are {by_t[t]['notes']}")
        for node in timeline.get("nodes", []):
            want = [(s["t"], s["nodes"][node]["health"], s["nodes"][node]["holder"]) for s in timeline["seconds"] if s["t"] in shown]
            book.check(fig["nodes"].get(node) == want,
                       f"{where}: node {node}'s cells {fig['nodes'].get(node)}, expected {want}")
        if timeline.get("nodes"):
            check_key_rule(book, where, timeline, fig)
    return len(parser.figures)


def check_key_rule(book, where, timeline, fig):
    """The key row says, at every shown second, what its legend's rule gives
    from the node rows drawn under it: the primary's holder, or the client
    whose token more than half of the nodes hold."""
    primary = any(n.get("role") for s in timeline["seconds"] for n in s["nodes"].values())
    by_t = {s["t"]: s for s in timeline["seconds"]}
    for t, (holder, _) in fig["keys"].items():
        cells = {node: fig["nodes"][node][[c[0] for c in fig["nodes"][node]].index(t)] for node in timeline["nodes"]}
        if primary:
            roles = {node: by_t[t]["nodes"][node].get("role") for node in timeline["nodes"]}
            want = next((cells[n][2] for n in timeline["nodes"] if roles[n] == "primary"), None)
        else:
            holders = [c[2] for c in cells.values() if c[2]]
            want = next((h for h in holders if 2 * holders.count(h) > len(timeline["nodes"])), None)
        book.check(holder == want, f"{where} t = {t}: the key row says {holder!r}, its rule gives {want!r} from the node rows")


def check_fencing_page_height(book):
    book.width(WIDE)
    book.theme(None)
    book.open("fencing.html")
    book.wait_for("fencing.html to load", lambda d: d.execute_script("return document.readyState") == "complete")
    height = book.js("return document.documentElement.scrollHeight")
    book.check(height <= FENCING_PAGE_MAX_PX, f"fencing.html is {height} px tall at {WIDE} px, more than {FENCING_PAGE_MAX_PX} px")
    book.report.verified(f"fencing.html is {height} px tall at {WIDE} px (limit {FENCING_PAGE_MAX_PX} px, a third of 13,800)")
    book.shot("fencing-1280")


FITS_JS = """
return [...document.querySelectorAll('.tl-figure')].map((fig) => {
    const strip = fig.querySelector('[data-role=strip]');
    const scroller = strip ? strip.parentElement : fig;
    const unsafe = [...fig.querySelectorAll('th')].find((th) => th.textContent.trim() === 'unsafe');
    const r = unsafe ? unsafe.getBoundingClientRect() : null;
    return {name: fig.getAttribute('data-timeline'), shown: !!strip && strip.getBoundingClientRect().height > 0,
            overflow: scroller.scrollWidth - scroller.clientWidth,
            unsafe: r ? [Math.round(r.left), Math.round(r.right)] : null,
            width: document.documentElement.clientWidth};
});"""


def check_print(book):
    """In print the strips show and fit the page."""
    book.open("fencing.html")
    book.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        figures = book.js(FITS_JS)
        for f in figures:
            book.check(f["shown"], f"print: the strip of {f['name']} is not shown")
            book.check(f["overflow"] <= 1, f"print: the strip of {f['name']} is {f['overflow']} px wider than the page")
        book.shot("fencing-print")
    finally:
        book.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    book.report.verified(f"print: the {len(figures)} strips of fencing.html show and fit the page width")


def check_narrow_strips(book):
    """At 390 px every strip's unsafe row is in view without scrolling sideways."""
    try:
        book.width(NARROW)
        for page in book.pages_containing('class="tl-figure"'):
            book.open(page)
            for f in book.js(FITS_JS):
                book.check(f["unsafe"] is not None, f"{NARROW} px, {page}: the strip of {f['name']} has no 'unsafe' heading")
                left, right = f["unsafe"]
                book.check(left >= 0 and right <= f["width"],
                           f"{NARROW} px, {page}: the 'unsafe' heading of {f['name']} is at {left}..{right} px, "
                           f"outside the {f['width']} px page: it needs sideways scrolling")
        book.open("fencing.html")
        book.js("document.querySelector('.tl-figure').scrollIntoView({block: 'center'})")
        book.shot("fencing-strip-390")
        strips = 0
        for width in [NARROW, WIDE]:
            book.width(width)
            for page in book.pages_containing('class="tl-figure"'):
                book.open(page)
                for f in book.js(STRIP_FITS_JS):
                    strips += 1
                    book.check(f["scroll"] <= f["client"] + 1,
                               f"{width} px, {page}: the strip of {f['name']} is {f['scroll']} px wide in a "
                               f"{f['client']} px box: its last seconds are off screen")
    finally:
        book.width(WIDE)
    book.report.verified(f"{NARROW} px: every strip's unsafe row is in view without scrolling sideways; at {NARROW} "
                         f"and {WIDE} px every column of the {strips // 2} strips, first second to last, fits its box")


# Each static strip's width against its scrolling box.
STRIP_FITS_JS = """
return [...document.querySelectorAll('.tl-figure[data-timeline] .tl-strip-scroll')].map((box) => ({
    name: box.closest('.tl-figure').getAttribute('data-timeline'),
    scroll: box.scrollWidth, client: box.clientWidth}));"""


def check_players_in_first_chapters(book):
    for page in ["single-instance.html", "releasing.html"]:
        book.open(page)
        book.wait_for(f"a player on {page}", lambda d: d.find_element(By.CSS_SELECTOR, "[data-timeline-player].tl-ready"), 5)
    book.report.verified("chapters 1 and 2 have a working player")


def measure_contrast(book, root, theme, demo, t):
    """Shows the player `root` at second `t`, its details open, and measures the contrast of every
    text element in it and in the page's strips: (how many were measured, a failure line or None)."""
    go_to(book, root, t)
    book.js("arguments[0].querySelector('details').open = true", root)
    result = book.js(CONTRAST_JS, [root, *book.driver.find_elements(By.CSS_SELECTOR, ".tl-figure")])
    if not result["count"]:
        return result["measured"], None
    return result["measured"], (f"{theme} theme, {demo} at t = {t}: {result['count']} text elements below "
                                f"4.5:1, e.g. {json.dumps(result['failures'], ensure_ascii=False)}")


def check_contrast(book):
    """Text in the player and the strips is readable in all five themes."""
    measured = 0
    failures = []
    for theme in THEMES:
        book.theme(theme)
        for demo, t in [("gc-pause", 14), ("gc-pause-fenced", 15)]:
            page, root = open_player(book, demo)
            cls = book.js("return document.documentElement.className")
            book.check(theme in cls.split(), f"theme {theme} did not apply ({cls})")
            count, failure = measure_contrast(book, root, theme, demo, t)
            measured += count
            failures += [failure] if failure else []
        book.shot(f"player-{theme}", root)
    book.theme(None)
    book.check(not failures, "\n  ".join(failures))
    book.report.verified(f"contrast ≥ 4.5:1 for {measured} text elements of the player and the strips in {', '.join(THEMES)}")


QUOTE = re.compile(r"^- \*“(.+?)”\*", re.S)
CHAPTER = re.compile(r"(\[)?chapters?\s+\d(?:[^\]]{0,20}\]\(([^)]+)\))?", re.I)


def check_quizzes(book):
    """The final quiz renders; every distractor's explanation starts by
    quoting it; every "chapter N" in a quiz is a link to a page of the book."""
    page = "final-quiz.html"
    book.open(page)
    placeholder = book.wait_for("the quiz on the final quiz page",
                                lambda d: d.find_element(By.CSS_SELECTOR, ".quiz-placeholder .mdbook-quiz"), 15)
    questions = json.loads(book.driver.find_element(By.CSS_SELECTOR, ".quiz-placeholder").get_attribute("data-quiz-questions"))["questions"]
    book.check(len(questions) > 0, f"the quiz on {page} has no questions")
    placeholder.find_element(By.CSS_SELECTOR, "button.start").click()
    counter = book.wait_for("question 1 after Start",
                            lambda d: d.find_element(By.CSS_SELECTOR, ".mdbook-quiz .question .prompt") and
                            d.find_element(By.CSS_SELECTOR, ".mdbook-quiz header .counter"))
    book.check(counter.text.strip() == f"Question 1 / {len(questions)}",
               f"quiz header says {counter.text!r}, expected 'Question 1 / {len(questions)}'")
    book.shot("final-quiz")
    book.report.verified(f"{page}: the quiz renders, {len(questions)} questions")

    distractors = links = 0
    for quiz_page in book.pages_containing("data-quiz-questions"):
        text = (book.html / quiz_page).read_text(encoding="utf-8")
        for block in re.findall(r'data-quiz-questions="([^"]*)"', text):
            for q in json.loads(html.unescape(block))["questions"]:
                context = q.get("context", "")
                bullets = [b for b in re.split(r"\n(?=- )", "\n" + context) if b.startswith("- ")]
                quoted = [m.group(1).replace("\n  ", " ").replace("\n", " ") for m in map(QUOTE.match, bullets) if m]
                for d in q["prompt"].get("distractors", []):
                    distractors += 1
                    book.check(" ".join(d.split()) in [" ".join(x.split()) for x in quoted],
                               f"{quiz_page}, question {q['id']}: no explanation starts by quoting the option {d!r}")
                for part in [context, q["prompt"].get("prompt", "")]:
                    for m in CHAPTER.finditer(part):
                        book.check(m.group(1) and m.group(2), f"{quiz_page}, question {q['id']}: {m.group(0)!r} is not a link")
                        target = m.group(2).split("#")[0]
                        book.check((book.html / target).is_file(), f"{quiz_page}: the link {m.group(2)!r} points at no page")
                        links += 1
    book.report.verified(f"quizzes: {distractors} distractor explanations each start by quoting their option; "
                         f"{links} chapter pointers are links to pages of the book")
    check_option_lengths(book)


QUIZ_JS = """
const [index] = arguments;
return document.querySelectorAll('.quiz-placeholder')[index].querySelector('.mdbook-quiz');"""


def answer_one_question(book, page, index, value):
    """Opens `page` with no answer remembered, starts its quiz number `index` and answers `value`;
    returns the quiz element."""
    book.open(page)
    book.js("Object.keys(localStorage).filter((k) => k.startsWith('mdbook-quiz')).forEach((k) => localStorage.removeItem(k))")
    book.open(page)
    quiz = book.wait_for(f"quiz {index + 1} on {page}", lambda d: d.execute_script(QUIZ_JS, index), 15)
    quiz.find_element(By.CSS_SELECTOR, "button.start").click()
    choice = book.wait_for(f"the options of quiz {index + 1} on {page}", lambda d: [
        o for o in quiz.find_elements(By.CSS_SELECTOR, "input[type=radio]") if o.get_attribute("value") == value])
    choice[0].click()
    quiz.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    return quiz


def check_one_question_quizzes(book):
    """Each one-question check inside a chapter explains its answer once it is given: at once after the right
    answer, and after a wrong one as soon as the reader asks for the correct answers: the right option and why
    each other one is wrong."""
    checked = []
    for page in book.pages_containing("data-quiz-questions"):
        text = (book.html / page).read_text(encoding="utf-8")
        for index, block in enumerate(re.findall(r'data-quiz-questions="([^"]*)"', text)):
            questions = json.loads(html.unescape(block))["questions"]
            q = questions[0]
            answer = q.get("answer", {}).get("answer")
            if len(questions) != 1 or q.get("type") != "MultipleChoice" or not isinstance(answer, str):
                continue
            distractors = q["prompt"].get("distractors", [])
            # Each other option's explanation opens by quoting it: “option”.
            explained = lambda quiz: all(f"“{' '.join(d.split())}”" in " ".join(quiz.text.split()) for d in distractors)
            where = f"{page}, the one-question check {q['id']}"
            quiz = answer_one_question(book, page, index, answer)
            book.wait_for(f"{where}: the explanation after the right answer", lambda d: explained(quiz), 5)
            book.check(explained(quiz), f"{where}: no explanation after the right answer")
            quiz = answer_one_question(book, page, index, distractors[0])
            see = book.wait_for(f"{where}: a way to see the correct answer after a wrong one", lambda d: [
                b for b in quiz.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == "see the correct answers"])
            see[0].click()
            book.wait_for(f"{where}: the explanation after a wrong answer", lambda d: explained(quiz)
                          and " ".join(answer.split()) in " ".join(quiz.text.split()), 5)
            book.check(explained(quiz), f"{where}: no explanation after a wrong answer")
            checked.append(page.removesuffix(".html"))
    book.check(checked, "no one-question check found in a chapter")
    book.report.verified(f"{len(checked)} one-question checks ({', '.join(checked)}) explain their answer and every other "
                         "option at once after the right answer, and after a wrong one on \"see the correct answers\"")


# The longest option must not give the answer away: in at most this share of
# the single-answer questions may the correct option be the longest one.
LONGEST_SHARE = 0.40


def check_option_lengths(book):
    """Across every quiz of the book, the correct option of a single-answer
    question is strictly the longest in at most LONGEST_SHARE of them."""
    single = longest = 0
    offenders = []
    for quiz_page in book.pages_containing("data-quiz-questions"):
        text = (book.html / quiz_page).read_text(encoding="utf-8")
        for block in re.findall(r'data-quiz-questions="([^"]*)"', text):
            for q in json.loads(html.unescape(block))["questions"]:
                answer = q.get("answer", {}).get("answer")
                distractors = q["prompt"].get("distractors", [])
                if q.get("type") != "MultipleChoice" or not isinstance(answer, str) or not distractors:
                    continue
                single += 1
                if len(answer) > max(len(d) for d in distractors):
                    longest += 1
                    offenders.append(f"{quiz_page} {q['id']}")
    book.check(single > 0, "no single-answer question found in the book")
    share = longest / single if single else 0
    book.check(share <= LONGEST_SHARE,
               f"the correct option is the longest in {longest} of {single} single-answer questions "
               f"({share:.0%} > {LONGEST_SHARE:.0%}): shorten answers or lengthen distractors in {offenders}")
    book.report.verified(f"quizzes: the correct option is the longest in {longest} of {single} "
                         f"single-answer questions ({share:.0%}, at most {LONGEST_SHARE:.0%})")
