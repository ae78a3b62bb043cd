// The timeline player's message diagram: one second's recorded commands as a
// Lamport diagram, a vertical lane per client, Redis (or, in a Redlock story,
// each of its nodes) and the storage, time running down, an arrow per command
// and a dashed one back per reply; a node that said nothing (paused, down)
// gets a cross and "no reply" instead. A call of several commands (a write
// and its WAIT, Redlock's SET to every node) is named once over them, each
// command keeping its own reply; a round of one command to several nodes is
// drawn in one band (timeline-calls.js cuts a second into calls). The grader
// records the commands with each run (the timeline's `messages`); the player
// calls `LockTimeline.drawMessages` at every second.
(function () {
    'use strict';

    const { h } = window.LockTimeline;
    const { callsOf, callName, layout, meaningOf, answered, shortReply, roundSummary, roundLine, wordOf, ROW, ROUND_EXTRA } =
        window.LockTimeline.calls;

    const SVG = 'http://www.w3.org/2000/svg';

    /** Creates an SVG element with attributes and text. */
    function svg(tag, attrs, text) {
        const el = document.createElementNS(SVG, tag);
        for (const [key, value] of Object.entries(attrs)) {
            el.setAttribute(key, String(value));
        }
        if (text !== undefined) {
            el.textContent = text;
        }
        return el;
    }

    const LANE_NAMES = { redis: 'Redis', storage: 'Storage' };

    /** A lane's name in the list: "Redis", "Storage", or the node's own ("node 3"). */
    function laneName(lane) {
        return LANE_NAMES[lane] || lane;
    }

    /** A lane's heading over the diagram, short enough for eight lanes at 390 px: "N3" for "node 3". */
    function laneHeading(lane) {
        return LANE_NAMES[lane] || lane.replace(/^node\s*/, 'N');
    }

    /**
     * The diagram's lanes: the clients, then the servers the timeline's
     * messages go to. A story on Redlock's nodes has a lane per node and
     * none for one Redis (a primary and its replica, whose clients talk to
     * "redis", keep the one lane).
     */
    function lanesOf(timeline, all) {
        const nodes = (timeline.nodes || []).filter((n) => all.some((m) => m.to === n));
        const servers = nodes.length ? [...nodes, 'storage'] : ['redis', 'storage'];
        return [...timeline.clients, ...servers];
    }

    /**
     * What each reply of a one-command call meant, read off what the client
     * did with it: a reply alone says `(integer) 0` for a plain write that
     * succeeded and for a fenced write the storage refused. A call of
     * several commands says what it did once, in its name, and each of its
     * commands gets its own reply. Returns a Map from message to words.
     */
    function meanings(calls) {
        const out = new Map();
        for (const call of calls) {
            if (call.messages.length === 1 && call.actions.length) {
                out.set(call.messages[0], call.actions.map(meaningOf).join('; '));
            }
        }
        return out;
    }

    /** A reply and its meaning in a few characters: "0 = rejected: 33 < 34"; "no reply" for none. */
    function replyLabel(m, meaning) {
        const short = answered(m) ? m.reply.replace(/^\(integer\) /, '') : 'no reply';
        const label = meaning ? `${short} = ${meaning}` : short;
        return label.length > 30 ? label.slice(0, 29) + '…' : label;
    }

    /**
     * Where a label centred between two lanes goes so that it stays inside
     * the picture: its estimated width (13 px text, about 0.6 em a
     * character) is kept off both edges.
     */
    function labelX(from, to, label, width) {
        const half = (label.length * 13 * 0.6) / 2 + 2;
        return Math.max(half, Math.min(width - half, (from + to) / 2));
    }

    /** Whether the meaning is a refusal, drawn as a refused reply. */
    function refused(meaning) {
        return /^(rejected|not )/.test(meaning || '');
    }

    /** A label cut to what fits in `px` at 13 px (the list under the picture has it whole). */
    function cut(label, px) {
        const room = Math.max(3, Math.floor((px - 8) / (13 * 0.6)));
        return label.length > room ? label.slice(0, room - 1) + '…' : label;
    }

    /**
     * Draws one command and its reply (or the cross where none came) into
     * `group`: the arrow out from `y`, the reply back, and the reply's label,
     * which says what the call meant when the call is this one command.
     */
    function drawOne(group, p, m, y, meaning) {
        const { from, to, width, arrowhead } = p;
        const label = meaning === undefined ? shortReply(m) : replyLabel(m, meaning);
        group.append(svg('line', { x1: from, y1: y, x2: to, y2: y + ROW - 6, class: 'tl-request', 'marker-end': arrowhead }));
        if (answered(m)) {
            const rejected = refused(meaning);
            group.append(svg('line', { x1: to, y1: y + ROW, x2: from, y2: y + 2 * ROW - 6, class: rejected ? 'tl-reply tl-refused' : 'tl-reply', 'marker-end': arrowhead }));
        } else {
            // Nothing comes back: a cross where the request met the silent node.
            group.append(svg('text', { x: to, y: y + ROW + 2, 'text-anchor': 'middle', class: 'tl-no-reply-mark' }, '×'));
        }
        group.append(svg('text', { x: labelX(from, to, label, width), y: y + ROW + ROW / 2 - 4, 'text-anchor': 'middle', class: answered(m) ? 'tl-arrow-label' : 'tl-arrow-label tl-no-reply', 'data-meaning': meaning || '' }, label));
    }

    /**
     * Draws a round, one command to several nodes, in one band: the arrows
     * fan out together under one label ("1–5 SET"), each node's reply sits
     * on its lane ("OK", "nil", or a cross), the replies come back together,
     * and one label says what they came to ("3 OK, 2 no reply"). Each
     * command keeps its own group, so that what is drawn for it can be counted.
     */
    function drawRound(picture, x, gap, width, arrowhead, block) {
        const { round, first } = block;
        const y = block.y;
        const from = x(round[0].client);
        const far = round.map((m) => x(m.to)).reduce((a, b) => (Math.abs(b - from) > Math.abs(a - from) ? b : a));
        const band = svg('g', { class: 'tl-round', 'data-first': first, 'data-size': round.length });
        const ask = `${first + 1}–${first + round.length} ${wordOf(round[0])}`;
        band.append(svg('text', { x: labelX(from, far, ask, width), y: y + ROW / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, ask));
        round.forEach((m, k) => {
            const to = x(m.to);
            const group = svg('g', { class: 'tl-message', 'data-index': first + k, 'data-answered': answered(m) });
            group.append(svg('line', { x1: from, y1: y, x2: to, y2: y + ROW - 6, class: 'tl-request', 'marker-end': arrowhead }));
            if (answered(m)) {
                group.append(svg('text', { x: to, y: y + ROW + 8, 'text-anchor': 'middle', class: 'tl-arrow-label tl-node-reply' }, cut(shortReply(m), gap)));
                group.append(svg('line', { x1: to, y1: y + ROW + ROUND_EXTRA, x2: from, y2: y + 2 * ROW + ROUND_EXTRA - 6, class: 'tl-reply', 'marker-end': arrowhead }));
            } else {
                group.append(svg('text', { x: to, y: y + ROW + 8, 'text-anchor': 'middle', class: 'tl-no-reply-mark' }, '×'));
            }
            band.append(group);
        });
        const summary = roundSummary(round);
        band.append(svg('text', { x: labelX(from, far, summary, width), y: y + ROW + ROUND_EXTRA + ROW / 2 + 2, 'text-anchor': 'middle', class: 'tl-arrow-label tl-round-summary' }, summary));
        picture.append(band);
    }

    /**
     * Draws a call's name over its commands, and a bar down its client's
     * lane as far as its last reply; returns the call's group, which its
     * commands are drawn into.
     */
    function drawCallName(picture, x, width, block) {
        const lane = x(block.call.client);
        const name = cut(callName(block.call), width);
        const wide = name.length * 13 * 0.6;
        const start = Math.max(4, Math.min(lane - 10, width - wide - 4));
        const group = svg('g', { class: 'tl-call', 'data-client': block.call.client, 'data-size': block.call.messages.length });
        group.append(svg('text', { x: start, y: block.y + 13, class: 'tl-arrow-label tl-call-name' }, name));
        group.append(svg('line', { x1: lane, y1: block.y + 17, x2: lane, y2: block.end, class: 'tl-call-span' }));
        picture.append(group);
        return group;
    }

    /** A list item for one command, numbered as in the picture. */
    function listItem(m, i, meaning) {
        return h(
            'li',
            { value: i + 1, 'data-client': m.client, 'data-to': m.to, 'data-answered': answered(m), 'data-meaning': meaning || '' },
            `${m.client} → ${laneName(m.to)}: `,
            h('code', {}, m.command),
            answered(m) ? ' ← ' : ' ✗ ',
            h('code', {}, m.reply),
            meaning ? h('span', { class: 'tl-meaning' }, ` = ${meaning}`) : null
        );
    }

    /**
     * The list under the picture: every command and reply in full, in the
     * order sent. A call of several commands is one item that says its name
     * and its rounds ("SET to 5 nodes: 3 OK, 2 no reply") and opens onto its
     * commands, so that five nodes' replies do not make the page tall.
     */
    function messageList(calls, messages, meant) {
        const items = calls.map((call) => {
            if (call.messages.length === 1) {
                const m = call.messages[0];
                return listItem(m, messages.indexOf(m), meant.get(m));
            }
            const rounds = layout([call], messages, 0)
                .blocks.filter((b) => b.round)
                .map((b) => roundLine(b.round));
            return h(
                'li',
                { class: 'tl-call-item', 'data-role': 'call', 'data-client': call.client },
                h(
                    'details',
                    {},
                    h('summary', {}, [callName(call), ...rounds].join('. ')),
                    h('ol', { class: 'tl-call-commands' }, call.messages.map((m) => listItem(m, messages.indexOf(m))))
                )
            );
        });
        return h('ol', { class: 'tl-message-list', 'data-role': 'message-list' }, items);
    }

    /**
     * Draws one second's messages as a Lamport diagram: a vertical lane per
     * client, Redis (or each node) and the storage, time running down, an
     * arrow per command and one back per reply, numbered; a call of several
     * commands is named once over them, and a round of one command to
     * several nodes takes one band. The list under it gives each command and
     * reply in full. Runs recorded without commands leave the container
     * empty and hidden.
     */
    function drawMessages(container, timeline, second) {
        const all = timeline.messages || [];
        container.hidden = all.length === 0;
        if (all.length === 0) {
            container.replaceChildren();
            return;
        }
        const messages = all.filter((m) => m.t === second.t);
        const lanes = lanesOf(timeline, all);
        // Drawn at the width it is shown at (at most 480 px), never scaled down: on a
        // phone its labels keep the 13 px of the stylesheet.
        const width = Math.round(Math.max(300, Math.min(480, container.clientWidth || 480)));
        const x = (lane) => 30 + (lanes.indexOf(lane) * (width - 60)) / (lanes.length - 1);
        const calls = callsOf(timeline, second, messages);
        const { blocks, height } = layout(calls, messages, 30);
        const picture = svg('svg', {
            viewBox: `0 0 ${width} ${height}`,
            width,
            height,
            class: 'tl-lamport',
            role: 'img',
            'aria-label': `Messages at t = ${second.t} s: ${messages.length} commands, ${messages.filter((m) => !answered(m)).length} unanswered`,
        });
        const defs = svg('defs', {});
        const marker = svg('marker', { id: `tl-arrow-${timeline.name}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
        marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: 'currentColor' }));
        defs.append(marker);
        picture.append(defs);
        for (const lane of lanes) {
            const name = svg('text', { x: x(lane), y: 16, 'text-anchor': 'middle', class: 'tl-lane-name', 'data-lane': lane }, laneHeading(lane));
            name.append(svg('title', {}, laneName(lane)));
            picture.append(name);
            picture.append(svg('line', { x1: x(lane), y1: 22, x2: x(lane), y2: height - 4, class: 'tl-lane' }));
        }
        const arrowhead = `url(#tl-arrow-${timeline.name})`;
        const meant = meanings(calls);
        const gap = (width - 60) / (lanes.length - 1);
        let call = picture; // where the blocks of the call being drawn go
        for (const block of blocks) {
            const into = block.inCall ? call : picture;
            if (block.call) {
                call = drawCallName(picture, x, width, block);
            } else if (block.round) {
                drawRound(into, x, gap, width, arrowhead, block);
            } else {
                const m = block.message;
                const i = block.index;
                const p = { from: x(m.client), to: x(m.to), width, arrowhead };
                // One group per message, so that what is drawn for it can be counted.
                const group = svg('g', { class: 'tl-message', 'data-index': i, 'data-answered': answered(m) });
                const ask = `${i + 1} ${wordOf(m)}`;
                group.append(svg('text', { x: labelX(p.from, p.to, ask, width), y: block.y + ROW / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, ask));
                drawOne(group, p, m, block.y, block.inCall ? undefined : meant.get(m) || '');
                into.append(group);
            }
        }
        container.replaceChildren(
            h('p', { class: 'tl-messages-title' }, `Commands at t = ${second.t} s, in the order sent`),
            messages.length ? picture : h('p', { class: 'tl-quiet' }, 'No commands this second.'),
            messages.length ? messageList(calls, messages, meant) : null
        );
    }

    window.LockTimeline.drawMessages = drawMessages;
})();
