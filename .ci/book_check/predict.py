"""Predict, then see: the player hides every run's outcome until the reader answers or reaches the end.

On every timeline of the menu the outcome starts hidden, behind one question
whose answers are 0 to the run's number of jobs; answering shows the JSON's
outcome beside the answer, and keeps the arrow keys in the player; stepping
to the last second shows it too; a revealed outcome stays revealed when the
reader comes back to its demo.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from player import control, open_player

OUTCOME_JS = """
const el = arguments[0].querySelector('[data-role=outcome]');
return {revealed: el.getAttribute('data-revealed'), text: el.textContent,
        answers: [...el.querySelectorAll('[data-role=predict]')].map((b) => Number(b.getAttribute('data-value'))),
        focusInside: arguments[0].contains(document.activeElement)};"""


def outcome(book, root):
    return book.js(OUTCOME_JS, root)


def check_predict_then_see(book):
    page, root = open_player(book, "gc-pause")
    names = book.js("return [...arguments[0].querySelectorAll('[data-role=select] option')].map((o) => o.value)", root)
    for name in names:
        Select(control(root, "select")).select_by_value(name)
        run = book.timeline(name)["outcome"]
        o = outcome(book, root)
        book.check(o["revealed"] == "false" and run["summary"] not in o["text"],
                   f"{page}, {name}: the outcome shows at t = 0: {o['text']!r}")
        book.check(o["answers"] == list(range(run["jobs"] + 1)),
                   f"{page}, {name}: the prediction offers {o['answers']}, expected 0..{run['jobs']}")
    book.report.verified(f"{page}: on all {len(names)} timelines of the menu the outcome starts hidden behind a prediction of the counter (0..jobs)")

    # Answering, wrongly on purpose: the outcome shows, with the answer and the truth.
    demo = "gc-pause"
    Select(control(root, "select")).select_by_value(demo)
    run = book.timeline(demo)["outcome"]
    wrong = (run["counter"] + 1) % (run["jobs"] + 1)
    root.find_element(By.CSS_SELECTOR, f"[data-role=predict][data-value='{wrong}']").click()
    o = outcome(book, root)
    book.check(o["revealed"] == "true" and run["summary"] in o["text"] and f"You said {wrong}; it ends at {run['counter']}." in o["text"],
               f"{page}, {demo}: after the answer {wrong}, the outcome reads {o['text']!r}")
    book.check(o["focusInside"], f"{page}, {demo}: answering the prediction took the focus out of the player")
    t = int(root.get_attribute("data-second"))
    book.driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    book.wait_for("Right after answering", lambda d: root.get_attribute("data-second") == str(t + 1), 3)

    # Stepping to the end, without answering.
    other = "gc-pause-fenced"
    Select(control(root, "select")).select_by_value(other)
    last = len(book.timeline(other)["seconds"]) - 1
    control(root, "play").send_keys(Keys.END)
    book.wait_for("the last second", lambda d: root.get_attribute("data-second") == str(last), 3)
    o = outcome(book, root)
    summary = book.timeline(other)["outcome"]["summary"]
    book.check(o["revealed"] == "true" and summary in o["text"] and "You said" not in o["text"],
               f"{page}, {other}: at its last second the outcome reads {o['text']!r}")

    Select(control(root, "select")).select_by_value(demo)
    book.check(outcome(book, root)["revealed"] == "true", f"{page}: back on {demo}, its outcome is hidden again")
    book.report.verified(f"{page}: answering shows the outcome with the answer ({wrong}) and the truth ({run['counter']}), the "
                         f"focus stays in the player; reaching t = {last} of {other} shows its outcome; a shown outcome stays shown")
