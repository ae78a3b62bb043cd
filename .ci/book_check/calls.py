"""Checks of the calls in the message diagram: a call of several commands named once, a round in one band.

A lock's call may send several commands: a write and the WAIT for its
replicas, Redlock's SET to every node and the release after a refused round.
The diagram names such a call once ("B: acquire — taken: not granted") over
its commands, each command keeping its own reply ("OK", "nil", a cross), so
that no single reply is made to carry what the whole call meant; and a round,
one command to several nodes, is one band with one line for its replies
("3 OK, 2 no reply"), which keeps a Redlock second short on a phone.

Every expectation is read off the timeline's JSON: the rounds are the runs of
one client's consecutive commands with one first word to distinct nodes, and
a call must be named wherever a client sent more commands to one side (the
lock's servers, or the storage) than it did actions there.
"""

import json
import re

from browser import NARROW, WIDE
from player import keyed_seconds, open_player

# The tallest a Redlock second's diagram may be: the longest second (a grant,
# then a refused round of SETs and its release round, and a storage write)
# takes 320 px; one five-command round drawn as five arrows and replies took
# 260 px alone, and such a second 820–872 px.
MAX_REDLOCK_DIAGRAM_PX = 340

# Actions on the storage; every other action of the lock kinds is on the lock's servers.
STORAGE_KINDS = {"read", "wrote", "read_rejected", "write_rejected"}
LOCK_KINDS = {"acquired", "denied", "released", "release_refused", "deleted_other", "renewed", "lease_lost"}

# What the diagram script adds about rounds and calls (run inside DIAGRAM_JS, `svg` and `box` in scope).
CALLS_JS = """
    rounds: [...svg.querySelectorAll('g.tl-round')].map((r) => ({
        first: Number(r.getAttribute('data-first')), size: Number(r.getAttribute('data-size')),
        rows: new Set([...r.querySelectorAll('line.tl-request')].map((l) => l.getAttribute('y1'))).size,
        summary: (r.querySelector('.tl-round-summary') || {}).textContent || ''})),
    calls: [...svg.querySelectorAll('g.tl-call')].map((c) => ({
        client: c.getAttribute('data-client'),
        name: (c.querySelector('.tl-call-name') || {}).textContent || '',
        indices: [...c.querySelectorAll('g.tl-message')].map((g) => Number(g.getAttribute('data-index'))),
        labels: [...c.querySelectorAll('g.tl-message .tl-arrow-label')].map((t) => t.textContent)})),
    listed_calls: [...box.querySelectorAll('[data-role=message-list] li[data-role=call]')].map((li) => ({
        client: li.getAttribute('data-client'),
        summary: (li.querySelector('summary') || {}).textContent || '',
        indices: [...li.querySelectorAll('li[data-to]')].map((item) => Number(item.getAttribute('value')) - 1)})),
    height: svg.getBoundingClientRect().height,
    all_outside: [...svg.querySelectorAll('text')].filter((t) => { const b = t.getBBox(); return b.x < -0.5 || b.x + b.width > width + 0.5; })
        .map((t) => t.textContent),
"""


def word(m):
    """A command's first word, as Redis reads it."""
    return m["command"].split(" ")[0].upper()


def expected_rounds(want, nodes):
    """The runs of one client's consecutive commands with one first word to distinct nodes, two or more long,
    as (index of the first, length)."""
    runs, i = [], 0
    while i < len(want):
        j = i + 1
        while (j < len(want) and want[i]["to"] in nodes and want[j]["client"] == want[i]["client"]
               and word(want[j]) == word(want[i]) and want[j]["to"] in nodes
               and want[j]["to"] not in {m["to"] for m in want[i:j]}):
            j += 1
        if j - i > 1:
            runs.append((i, j - i))
        i = j
    return runs


def more_commands_than_actions(timeline, t, want):
    """Each client's commands to one side, where it sent more of them than it did actions there (at least one):
    as (client, the commands' indices, how many actions)."""
    second = timeline["seconds"][t]
    out = []
    for client in timeline["clients"]:
        actions = second["clients"][client]["actions"]
        for storage in (False, True):
            sent = {i for i, m in enumerate(want) if m["client"] == client and (m["to"] == "storage") == storage}
            did = [a for a in actions if (a["kind"] in STORAGE_KINDS) == storage
                   and a["kind"] in STORAGE_KINDS | LOCK_KINDS]
            if did and len(sent) > len(did):
                out.append((client, sent, len(did)))
    return out


def counts(summary):
    """A round's summary, "3 OK, 2 no reply" or "3 × 0, 2 × 1", as {reply: count}."""
    found = {}
    for part in summary.split(", "):
        match = re.fullmatch(r"(\d+) (?:× )?(.+)", part)
        if not match:
            return None
        found[match.group(2)] = int(match.group(1))
    return found


def call_failures(timeline, t, shown, where):
    """What is wrong with the rounds and calls drawn for second `t`; empty when right."""
    want = [m for m in timeline["messages"] if m["t"] == t]
    nodes = set(timeline.get("nodes", []))
    wrong = []
    rounds = {(r["first"], r["size"]): r for r in shown["rounds"]}
    for first, size in expected_rounds(want, nodes):
        r = rounds.get((first, size))
        label = f"{word(want[first])} from {want[first]['client']}, commands {first + 1}–{first + size}"
        if r is None:
            wrong.append(f"{where}: the round {label} is not drawn as one band (bands: {sorted(rounds)})")
            continue
        if r["rows"] != 1:
            wrong.append(f"{where}: the round {label} sends its commands on {r['rows']} rows, not one")
        said = counts(r["summary"])
        silent = sum(1 for m in want[first:first + size] if m.get("answered") is False)
        if said is None or sum(said.values()) != size or said.get("no reply", 0) != silent:
            wrong.append(f"{where}: the round {label} says {r['summary']!r}: not {size} replies of which "
                         f"{silent} no reply")
    for r in shown["rounds"]:
        band = want[r["first"]:r["first"] + r["size"]]
        if (len(band) != r["size"] or len({m["client"] for m in band}) != 1 or len({word(m) for m in band}) != 1
                or len({m["to"] for m in band}) != len(band) or not all(m["to"] in nodes for m in band)):
            wrong.append(f"{where}: a band at {r['first'] + 1} is not one command from one client to distinct nodes")
    # Where a client sent more commands than it did actions, some call took several commands: it must be
    # named, and no action may be left to ride on one of its commands, so the named calls and the commands
    # drawn alone are at most as many as the actions.
    for client, sent, did in more_commands_than_actions(timeline, t, want):
        calls = [c for c in shown["calls"] if set(c["indices"]) <= sent]
        alone = sent - {i for c in calls for i in c["indices"]}
        if not calls or len(calls) + len(alone) > did:
            wrong.append(f"{where}: {client} sent {len(sent)} commands for {did} actions, drawn as {len(calls)} "
                         f"named calls and {len(alone)} commands alone")
    for c in shown["calls"]:
        if not c["name"].startswith(f"{c['client']}: ") or len(c["indices"]) < 2:
            wrong.append(f"{where}: the call named {c['name']!r} of {c['client']} holds {len(c['indices'])} commands")
        if any(want[i]["client"] != c["client"] for i in c["indices"] if i < len(want)):
            wrong.append(f"{where}: the call {c['name']!r} holds another client's commands")
        if any(" = " in label for label in c["labels"]):
            wrong.append(f"{where}: a command inside the call {c['name']!r} carries a meaning of its own: {c['labels']}")
    listed = {tuple(sorted(c["indices"])): c for c in shown["listed_calls"]}
    for c in shown["calls"]:
        item = listed.get(tuple(sorted(c["indices"])))
        if item is None or not item["summary"].startswith(c["name"].rstrip("…")):
            wrong.append(f"{where}: the list has no item for the call {c['name']!r} with its commands")
    for (first, size) in expected_rounds(want, nodes):
        r = rounds.get((first, size))
        line = f"{word(want[first])} to {size} nodes: {r['summary']}" if r else None
        if line and not any(line in item["summary"] for item in shown["listed_calls"]):
            wrong.append(f"{where}: the list does not say {line!r}")
    if nodes & {m["to"] for m in want} and shown["height"] > MAX_REDLOCK_DIAGRAM_PX:
        wrong.append(f"{where}: the diagram is {shown['height']:.0f} px tall, over {MAX_REDLOCK_DIAGRAM_PX}")
    if shown["all_outside"]:
        wrong.append(f"{where}: labels {shown['all_outside']} run out of the picture")
    return wrong


# CALLS_JS on its own, for the player of a story on one Redis.
CALL_DIAGRAM_JS = """
const root = arguments[0];
const box = root.querySelector('[data-role=messages]');
const svg = box.querySelector('svg.tl-lamport');
if (!svg) return null;
const width = svg.viewBox.baseVal.width;
return {""" + CALLS_JS + "};"


def several_command_timelines(book):
    """The book's timelines on one Redis where, in some second, a client sent more commands than it did
    actions (a write and its WAIT, say), by name; the Redlock ones are checked with their nodes."""
    found = []
    for path in sorted((book.book_dir / "timelines").glob("*.json")):
        timeline = json.loads(path.read_text(encoding="utf-8"))
        nodes = set(timeline.get("nodes", []))
        if not timeline.get("messages") or any(m["to"] in nodes for m in timeline["messages"]):
            continue
        for t in range(len(timeline["seconds"])):
            want = [m for m in timeline["messages"] if m["t"] == t]
            if more_commands_than_actions(timeline, t, want):
                found.append(path.stem)
                break
    return found


def check_calls_of_several_commands(book):
    """At 390 px, in every second of every story on one Redis whose clients send several commands for one
    action, the message diagram names each such call once over its commands, each with its own reply."""
    demos = several_command_timelines(book)
    book.check(demos, "no timeline of the book has a call of several commands on one Redis")
    named = 0
    try:
        book.width(NARROW)
        for demo in demos:
            timeline = book.timeline(demo)
            _, root = open_player(book, demo)
            for t in keyed_seconds(book, root, demo):
                shown = book.js(CALL_DIAGRAM_JS, root)
                if shown is None:
                    continue
                wrong = call_failures(timeline, t, shown, f"{timeline['name']} at t = {t}")
                book.check(not wrong, "; ".join(wrong[:3]))
                named += len(shown["calls"])
    finally:
        book.width(WIDE)
    book.check(named > 0, f"{demos}: no call of several commands was drawn with its name")
    book.report.verified(f"390 px, {', '.join(demos)}: {named} calls of several commands each named once over "
                         "commands that keep their own replies, and listed as one item that opens onto them")
