// What a recorded second says, in words and glyphs, for the timeline player.
//
// The player (timeline-player.js) and its message diagram
// (timeline-messages.js) share these helpers through `window.LockTimeline`:
// a small element builder, the ✗ marks and events of a second, and the
// sentences and glyphs that describe it. The glyphs and sentences match the
// static strips the `mdbook-timeline` preprocessor writes (strip.rs, and
// nodes.rs for a story on several Redis nodes), so a reader sees the same
// marks with or without JavaScript.
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
    // a rejection, a refused release (the only hint a paused client gets),
    // a lost lease, an expiry, a fault, a ✗.
    const EVENT_KINDS = new Set(['acquired', 'wrote', 'read_rejected', 'write_rejected', 'release_refused', 'deleted_other', 'lease_lost']);

    /** Whether a note of this kind ('expiry' or 'fault') was made in the second: as `noted` in strip.rs. */
    function noted(second, kind) {
        return second.notes.some((n) => n.kind === kind);
    }

    /** Whether the client's release was refused this second: as `refused_release` in strip.rs. */
    function refusedRelease(client) {
        return client.actions.some((a) => a.kind === 'release_refused');
    }

    /** The writes of one second, in order, as [client, value]: as `writes` in strip.rs. */
    function writes(timeline, second) {
        const out = [];
        for (const name of timeline.clients) {
            for (const a of second.clients[name].actions) {
                if (a.kind === 'wrote') {
                    out.push([name, a.text.startsWith('wrote ') ? a.text.slice(6) : a.text]);
                }
            }
        }
        return out;
    }

    /**
     * What happened to Redis in second t, in order: the notes, then what the
     * node rows show changed only where no fault was noted, so that a kill is
     * said once (as `redis_events` in strip.rs).
     */
    function redisEvents(timeline, t) {
        const second = timeline.seconds[t];
        const events = second.notes.map((n) => n.text);
        if (!noted(second, 'fault')) {
            events.push(...nodeEvents(timeline, t));
        }
        return events;
    }

    function isEvent(timeline, second) {
        if (second.notes.length > 0 || nodeEvents(timeline, second.t).length > 0) {
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

    // ---- Stories on several Redis nodes (as nodes.rs in the preprocessor) ----

    /** 'majority' (Redlock's nodes), 'primary' (a primary and its replicas) or null (one server). */
    function keyRule(timeline) {
        const nodes = timeline.nodes || [];
        if (nodes.length === 0) {
            return null;
        }
        const roles = timeline.seconds.some((s) => Object.values(s.nodes || {}).some((n) => n.role));
        return roles ? 'primary' : 'majority';
    }

    /** The key row's heading: 'Redis key', 'majority holds' or 'primary holds'. */
    function keyHeading(timeline) {
        const rule = keyRule(timeline);
        return rule === null ? 'Redis key' : `${rule} holds`;
    }

    /** Whose the lock is at the end of the second, in words. */
    function keyWords(timeline, second) {
        const rule = keyRule(timeline);
        const ttl = second.ttl_left_s === null ? '' : `, ${second.ttl_left_s} s left`;
        if (rule === null) {
            return `lock key ${keyText(second)}`;
        }
        if (rule === 'primary') {
            return second.holder === null ? 'the primary holds no token' : `the primary holds ${second.holder}'s token${ttl}`;
        }
        return second.holder === null
            ? "no client's token is on a majority of the nodes"
            : `a majority of the nodes hold ${second.holder}'s token${ttl}`;
    }

    /** The node's state one second before t, or null at t = 0. */
    function nodeBefore(timeline, t, name) {
        return t > 0 ? timeline.seconds[t - 1].nodes[name] : null;
    }

    function nodeJumped(node, before) {
        return node.clock_ahead_s > 0 && node.clock_ahead_s > (before ? before.clock_ahead_s || 0 : 0);
    }

    function nodeRoleChanged(node, before) {
        return before !== null && (before.role || null) !== (node.role || null);
    }

    /** A node's glyph: the client whose token it holds, – none, ‖ paused, ⊘ down (⊘A: down, counted for A). */
    function nodeGlyph(node) {
        if (node.health === 'paused') {
            return '‖';
        }
        if (node.health === 'down') {
            return `⊘${node.holder || ''}`;
        }
        return node.holder === null ? '–' : node.holder;
    }

    /** "node 3 up, holds B's token; its clock runs 10 s ahead" and friends. */
    function nodeText(name, node, before) {
        let text = `${name} ${node.health}`;
        if (node.role) {
            text += `, ${node.role}`;
            if (before && before.role && before.role !== node.role) {
                text += ` (was ${before.role})`;
            }
        }
        if (node.health === 'up') {
            text += node.holder === null ? ', holds no token' : `, holds ${node.holder}'s token`;
        } else if (node.health === 'down' && node.holder !== null) {
            text += `, answers nothing; still counted for ${node.holder}: it comes back only after ${node.holder}'s key would have expired`;
        } else {
            text += node.holder === null ? ', answers nothing' : `, keeps ${node.holder}'s token but answers nothing`;
        }
        if (node.clock_ahead_s > 0) {
            text += `; its clock runs ${node.clock_ahead_s} s ahead`;
            if (nodeJumped(node, before)) {
                text += ' (jumped this second)';
            }
        }
        return text;
    }

    /** Fills a node row's cell of the player's strip with the marks of the static strip (nodes.rs). */
    function fillNodeCell(cell, timeline, t, name) {
        const node = timeline.seconds[t].nodes[name];
        const before = nodeBefore(timeline, t, name);
        const jumped = nodeJumped(node, before);
        const changed = nodeRoleChanged(node, before);
        cell.setAttribute('data-health', node.health);
        cell.setAttribute('data-holder', node.holder || '');
        cell.setAttribute('data-jumped', jumped);
        cell.setAttribute('data-role-changed', changed);
        cell.classList.toggle('tl-node-out', node.health !== 'up');
        cell.classList.toggle('tl-changed', jumped || changed);
        if (changed) {
            cell.append('↻');
        }
        if (node.role) {
            cell.append(h('span', { class: 'tl-node-role' }, node.role === 'primary' ? 'P' : 'R'));
        }
        cell.append(nodeGlyph(node));
        if (jumped) {
            cell.append(h('span', { class: 'tl-jump' }, `+${node.clock_ahead_s}s`));
        }
        cell.title = `t = ${t} s: ${nodeText(name, node, before)}`;
    }

    /** The Redis card's list of nodes: a glyph and the node's state in words. */
    function nodeList(timeline, second) {
        return h(
            'ul',
            { class: 'tl-node-list', 'data-role': 'nodes' },
            timeline.nodes.map((name) => {
                const node = second.nodes[name];
                return h(
                    'li',
                    { 'data-node': name, 'data-health': node.health, 'data-holder': node.holder || '' },
                    h('span', { class: 'tl-node-glyph', 'aria-hidden': 'true' }, nodeGlyph(node)),
                    h('span', {}, nodeText(name, node, nodeBefore(timeline, second.t, name)))
                );
            })
        );
    }

    /** What happened to the nodes in second t, in words, in node order. */
    function nodeEvents(timeline, t) {
        const events = [];
        const second = timeline.seconds[t];
        for (const name of timeline.nodes || []) {
            const node = second.nodes[name];
            const before = nodeBefore(timeline, t, name);
            const was = before ? before.health : 'up';
            if (was !== node.health) {
                events.push(
                    node.health === 'paused'
                        ? `${name} is paused`
                        : node.health === 'down'
                          ? `${name} is down`
                          : was === 'paused'
                            ? `${name} resumes`
                            : `${name} is back up`
                );
            }
            if (nodeJumped(node, before)) {
                events.push(`${name}'s clock jumps to ${node.clock_ahead_s} s ahead`);
            }
            if (nodeRoleChanged(node, before)) {
                const role = { primary: 'the primary', replica: 'a replica' }[node.role] || 'a node without a role';
                events.push(`${name} becomes ${role}`);
            }
        }
        return events;
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
        const notes = second.notes.length ? ` ${second.notes.map((n) => n.text).join('. ')}.` : '';
        if (keyRule(timeline) === null) {
            lines.push(`Redis lock key: ${keyText(second)}.${notes}`);
        } else {
            const nodes = timeline.nodes.map((name) => `${nodeText(name, second.nodes[name], nodeBefore(timeline, t, name))}.`);
            lines.push(`The lock: ${keyWords(timeline, second)}.${notes}`, `Nodes: ${nodes.join(' ')}`);
        }
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
        // What happened to Redis (an expiry, a fault) comes before the
        // clients' steps of the second.
        const events = redisEvents(timeline, t);
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
        noted,
        refusedRelease,
        writes,
        redisEvents,
        keyRule,
        keyHeading,
        keyWords,
        nodeGlyph,
        nodeText,
        fillNodeCell,
        nodeList,
        actionText,
        factsText,
        statusText,
    });
})();
