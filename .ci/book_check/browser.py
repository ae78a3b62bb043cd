"""The browser side of the book check: the driver, waiting, and reading pages.

Everything a check needs to look at a page the way a reader's browser shows
it: the checks themselves live in `player.py` and `pages.py`, and record
what they verified through `Report`.
"""

import pathlib
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# mdBook's five themes, light ones first.
THEMES = ["light", "rust", "coal", "navy", "ayu"]
WIDE, NARROW = 1280, 390

# The small book that .ci/book-check builds beside the course's, from the
# preprocessor's test fixtures, to show timelines on several Redis nodes
# before a chapter has one; its pages are left out of the course's checks.
NODES_DIR = "nodes-check"
NODES_PAGE = f"{NODES_DIR}/nodes.html"
FIXTURES = "preprocessor/tests/fixtures"


class CheckFailed(Exception):
    pass


class Report:
    """Counts the checks and keeps one line per thing verified."""

    def __init__(self, out):
        self.out = out
        self.checks = 0
        self.lines = []

    def check(self, condition, message):
        self.checks += 1
        if not condition:
            raise CheckFailed(message)

    def verified(self, line):
        self.lines.append(line)
        print(f"book-check: {line}", flush=True)

    def write(self, status, seconds):
        text = "\n".join([f"book-check: {status}: {self.checks} checks in {seconds:.0f} s", *self.lines, ""])
        (self.out / "summary.txt").write_text(text, encoding="utf-8")
        return text


class Book:
    """The built book: its files, its server, and the browser that reads it."""

    def __init__(self, base, book_dir, out, report):
        self.base = base
        self.book_dir = pathlib.Path(book_dir)
        self.out = pathlib.Path(out)
        self.html = self.out / "html"
        self.report = report
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={WIDE},1000"]:
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(30)

    def quit(self):
        self.driver.quit()

    def check(self, condition, message):
        self.report.check(condition, message)

    def wait_for(self, what, predicate, timeout=10):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: predicate(d))
        except WebDriverException as err:
            raise CheckFailed(f"timed out after {timeout} s waiting for {what}") from err

    def pages_containing(self, marker):
        """The course's pages (not the nodes check's) whose HTML contains `marker`."""
        return sorted(p.relative_to(self.html).as_posix() for p in self.html.rglob("*.html")
                      if p.name != "print.html" and NODES_DIR not in p.relative_to(self.html).parts
                      and marker in p.read_text(encoding="utf-8"))

    def timeline(self, name):
        """A recorded timeline of the book, or else a fixture of the preprocessor's tests."""
        import json
        path = self.book_dir / "timelines" / f"{name}.json"
        if not path.is_file():
            path = self.book_dir / FIXTURES / f"{name}.json"
        return json.loads(path.read_text(encoding="utf-8"))

    def width(self, width, height=1000):
        """Resizes the window so that the page is `width` CSS pixels wide (and the window
        `height` tall)."""
        before = self.driver.execute_script("return window.innerWidth")
        self.driver.set_window_size(width, height)
        # A loaded machine may still report the old width for a moment: wait until the
        # page sees the resize before measuring the frame around it.
        inner = before if before == width else self.wait_for(
            f"the window to leave its {before} px width",
            lambda d: (lambda w: w if w != before else None)(d.execute_script("return window.innerWidth")))
        if inner != width:
            self.driver.set_window_size(2 * width - inner, height)

    def theme(self, theme):
        """Makes `theme` the theme of the next page loaded (None: the default)."""
        self.driver.get(f"{self.base}/index.html")
        if theme is None:
            self.driver.execute_script("localStorage.removeItem('mdbook-theme')")
        else:
            self.driver.execute_script("localStorage.setItem('mdbook-theme', arguments[0])", theme)

    def open(self, page):
        self.driver.get(f"{self.base}/{page}")
        return self.driver.find_element(By.TAG_NAME, "body")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def shot(self, name, element=None):
        """Keeps a screenshot (of the page, or of one element) for a person to look at."""
        path = str(self.out / f"{name}.png")
        if element is not None:
            element.screenshot(path)
        else:
            self.driver.save_screenshot(path)

    def console_errors(self):
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


# Text contrast, measured on what the browser computed: the colour of the
# text (with the opacity of its ancestors) over every background behind it
# (colours with alpha blended down to the first opaque one, and every colour
# of a gradient counted as a possible background).
CONTRAST_JS = r"""
const scopes = arguments[0];
const parse = (c) => {
    const m = c && c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
};
const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
        v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
};
function backgrounds(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
        const cs = getComputedStyle(e);
        const colour = parse(cs.backgroundColor);
        const image = cs.backgroundImage === 'none' ? [] : (cs.backgroundImage.match(/rgba?\([^)]+\)/g) || []).map(parse);
        layers.push({ colour, image });
        if (colour && colour[3] === 1 && image.length === 0) break;
    }
    let bases = [[255, 255, 255, 1]];
    for (const layer of layers.reverse()) {
        if (layer.colour && layer.colour[3] > 0) bases = bases.map((b) => over(layer.colour, b));
        if (layer.image.length) bases = layer.image.flatMap((i) => bases.map((b) => over(i, b)));
    }
    return bases;
}
const worst = [];
let measured = 0;
for (const scope of scopes) {
    for (const el of [scope, ...scope.querySelectorAll('*')]) {
        if (el.closest('.tl-sr, option, script, select')) continue;
        const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
        const rect = el.getBoundingClientRect();
        if (!own || rect.width === 0 || rect.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
        let opacity = 1;
        for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
        const fg = parse(getComputedStyle(el).color);
        fg[3] *= opacity;
        measured += 1;
        for (const bg of backgrounds(el)) {
            const r = ratio(over(fg, bg), bg);
            if (r < 4.5) {
                worst.push({ ratio: Math.round(r * 100) / 100, text: el.textContent.trim().slice(0, 40),
                             cls: el.className || el.tagName, fg: getComputedStyle(el).color,
                             bg: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')' });
                break;
            }
        }
    }
}
return { measured, failures: worst.slice(0, 5), count: worst.length };
"""
