// What a recorded second says, in words and glyphs, for the timeline player.
//
// The player (timeline-player.js) and its message diagram
// (timeline-messages.js) share these helpers through `window.LockTimeline`:
// a small element builder, the ✗ marks and events of a second, and the
// sentences and glyphs that describe it. The glyphs and sentences match the
// static strips the `mdbook-timeline` preprocessor writes (strip.rs), so a
// reader sees the same marks with or without JavaScript.
(function () {
    'use strict';

    /** Creates an element with attributes and children (strings become text). */
    function h(tag, attrs, ...children) {
        const el = document.createElement(tag);
        for (const [key, value] of Object.entries(attrs || {})) {
            // null leaves the attribute out; booleans are spelt out, so that
            // data-unsafe="false" is as readable as data-unsafe="true".
            if (value === null || value === undefined) {
                continue;
            }
            if (key === 'class') {
                el.className = value;
            } else {
                el.setAttribute(key, String(value));
            }
        }
        for (const child of children.flat()) {
            if (child === null || child === undefined || child === false) {
                continue;
            }
            el.append(child instanceof Node ? child : document.createTextNode(String(child)));
        }
        return el;
    }

    /** The unsafe actions of one second, with their clients, in column order. */
    function unsafeMarks(timeline, second) {
        const marks = [];
        for (const client of timeline.clients) {
            for (const action of second.clients[client].actions) {
                if (action.unsafe) {
                    marks.push({ client, action });
                }
            }
        }
        return marks;
    }

    // What counts as an event for "previous / next event": a grant, a write,
    // a rejection, an expiry, a ✗.
    const EVENT_KINDS = new Set(['acquired', 'wrote', 'read_rejected', 'write_rejected']);

    function isEvent(timeline, second) {
        if (second.notes.length > 0) {
            return true;
        }
        return timeline.clients.some((name) =>
            second.clients[name].actions.some((a) => a.unsafe || EVENT_KINDS.has(a.kind))
        );
    }

    /** "believes it holds the lock (token 33), but the key is B's" and friends. */
    function beliefText(name, client, second) {
        if (!client.believes) {
            return 'does not believe it holds the lock';
        }
        const token = client.token === null ? '' : ` (token ${client.token})`;
        if (second.holder === name) {
            return `believes it holds the lock${token}, and it does`;
        }
        const truth = second.holder === null ? 'the key is gone' : `the key is ${second.holder}'s`;
        return `believes it holds the lock${token}, but ${truth}`;
    }

    /** The strip's glyph for a client: as `client_glyph` in the preprocessor. */
    function clientGlyph(client) {
        if (client.state === 'paused') {
            return '‖';
        }
        if (client.believes) {
            return client.token === null ? '●' : String(client.token);
        }
        return { crashed: '†', done: '✓', waiting: '·', working: '○' }[client.state] || '';
    }

    function keyText(second) {
        if (second.holder === null) {
            return 'free';
        }
        return second.ttl_left_s === null
            ? `held by ${second.holder}`
            : `held by ${second.holder}, ${second.ttl_left_s} s left`;
    }

    function actionText(action) {
        const flags = [];
        if (action.unsafe) {
            flags.push('unsafe: the lock is no longer held');
        }
        if (action.rejected) {
            flags.push('rejected');
        }
        return flags.length ? `${action.text} (${flags.join('; ')})` : action.text;
    }

    /** The same second's facts as sentences: the text alternative. */
    function factsText(timeline, t) {
        const second = timeline.seconds[t];
        const last = timeline.seconds.length - 1;
        const lines = [`t = ${t} s of ${last} s.`];
        for (const name of timeline.clients) {
            const client = second.clients[name];
            const did = client.actions.map(actionText).join('; ');
            lines.push(
                `Client ${name}: ${client.state}, ${beliefText(name, client, second)}.` +
                    (did ? ` This second: ${did}.` : '')
            );
        }
        const notes = second.notes.length ? ` ${second.notes.join('. ')}.` : '';
        lines.push(`Redis lock key: ${keyText(second)}.${notes}`);
        const highest = second.highest_token === null ? 'none' : second.highest_token;
        lines.push(`Storage: counter = ${second.counter}, highest token ${highest}.`);
        const marks = unsafeMarks(timeline, second);
        lines.push(
            marks.length
                ? `Unsafe: ${marks.map((m) => `✗ ${m.client}${m.action.rejected ? ' (rejected)' : ''}`).join(', ')}.`
                : 'Unsafe: nothing.'
        );
        return lines.join(' ');
    }

    /** An action as the status line tells it: a read or write names its token. */
    function eventText(action, client) {
        const fenced = (action.kind === 'read' || action.kind === 'wrote') && client.token !== null;
        return `${action.unsafe ? '✗ ' : ''}${action.text}${fenced ? ` with token ${client.token}` : ''}`;
    }

    /**
     * The short line read out by screen readers at every second. Within a
     * second the clients act in column order, so the events are listed in
     * the order they happened; the cards show the end of the second, which
     * the line says when several clients acted (a rejection "33 < 34"
     * followed by C's write with 35 leaves the storage at 35).
     */
    function statusText(timeline, t) {
        const second = timeline.seconds[t];
        const events = [];
        const actors = new Set();
        for (const name of timeline.clients) {
            const client = second.clients[name];
            for (const action of client.actions) {
                // Polling for a taken lock repeats every second; announcing
                // it would drown what changes.
                if (action.kind !== 'denied') {
                    events.push(`${name}: ${eventText(action, client)}`);
                    actors.add(name);
                }
            }
        }
        events.push(...second.notes);
        if (events.length === 0) {
            return `t = ${t} s. No new events.`;
        }
        const order = actors.size > 1 ? ' In this order:' : '';
        const end = actors.size > 1 && timeline.fencing && second.highest_token !== null
            ? ` At the end of the second the storage's highest token is ${second.highest_token}.`
            : '';
        return `t = ${t} s.${order} ${events.join('. ')}.${end}`;
    }

    window.LockTimeline = Object.assign(window.LockTimeline || {}, {
        h,
        unsafeMarks,
        isEvent,
        beliefText,
        clientGlyph,
        keyText,
        actionText,
        factsText,
        statusText,
    });
})();
