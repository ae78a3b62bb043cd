"""The browser check of the built book; `.ci/book-check` builds, serves and runs it.

    python3 .ci/book_check BASE_URL BOOK_DIR OUT_DIR

drives headless Chromium through the served book (at BASE_URL; the book's
sources at BOOK_DIR, the built HTML in OUT_DIR/html) and checks what a reader
sees: the player against the recorded timelines, the strips, the page
heights, print, the five themes and the quizzes; and, on a small page built
from the preprocessor's fixtures (OUT_DIR/html/nodes-check/), timelines on
several Redis nodes. It writes screenshots and
a summary of what it verified (summary.txt) into OUT_DIR, and exits non-zero
on the first failed check.
"""

import pathlib
import sys
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from selenium.common.exceptions import WebDriverException  # noqa: E402

from browser import Book, CheckFailed, Report  # noqa: E402
import calls  # noqa: E402
import nodes  # noqa: E402
import pages  # noqa: E402
import phone  # noqa: E402
import player  # noqa: E402
import predict  # noqa: E402
import what_if  # noqa: E402

CHECKS = [
    pages.check_quizzes,
    pages.check_one_question_quizzes,
    pages.check_static_strips,
    player.check_keyboard_walk,
    player.check_mistaken_style,
    player.check_current_column_wide,
    player.check_narrow_player,
    player.check_focus_at_ends,
    player.check_menu_speed_and_events,
    player.check_message_diagram,
    what_if.check_what_if,
    phone.check_click_keeps_focus,
    phone.check_phone_layout,
    phone.check_tables_reflow,
    phone.check_player_strip_folds,
    predict.check_predict_then_see,
    pages.check_players_in_first_chapters,
    pages.check_fencing_page_height,
    pages.check_print,
    pages.check_narrow_strips,
    pages.check_contrast,
    nodes.check_node_strips,
    nodes.check_node_player,
    nodes.check_nodes_narrow,
    nodes.check_nodes_contrast,
    nodes.check_redlock_diagram,
    calls.check_calls_of_several_commands,
]


def wait_for_server(base):
    for _ in range(50):
        try:
            urllib.request.urlopen(base + "/index.html", timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def main(base, book_dir, out):
    out = pathlib.Path(out)
    if not wait_for_server(base):
        print(f"book-check: FAILED: the HTTP server on {base} did not start (see {out}/http.log)", file=sys.stderr)
        return 1
    report = Report(out)
    book = Book(base, book_dir, out, report)
    started = time.monotonic()
    failed = None
    only = [c for c in CHECKS if c.__name__ in sys.argv[4:]] or CHECKS
    try:
        for check in only:
            try:
                check(book)
            except (CheckFailed, WebDriverException) as err:
                # A missing control or a refused click is a failure of the
                # page too; the other checks still run, so that one report
                # lists everything that is wrong.
                failed = failed or err
                message = str(err).splitlines()[0] if isinstance(err, WebDriverException) else err
                book.shot(f"failure-{check.__name__}")
                print(f"book-check: FAILED in {check.__name__}: {message}", file=sys.stderr, flush=True)
        errors = book.console_errors()
        try:
            report.check(not errors, "the browser console has errors:\n  " + "\n  ".join(errors))
        except CheckFailed as err:
            failed = failed or err
            print(f"book-check: {err}", file=sys.stderr)
    finally:
        book.quit()
    summary = report.write("FAILED" if failed else "OK", time.monotonic() - started)
    print(summary.splitlines()[0])
    print(f"book-check: summary and screenshots in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
