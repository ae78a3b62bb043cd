// The timeline player's message diagram: one second's recorded commands as a
// Lamport diagram, a vertical lane per client, Redis (or, in a Redlock story,
// each of its nodes) and the storage, time running down, an arrow per command
// and a dashed one back per reply; a node that said nothing (paused, down)
// gets a cross and "no reply" instead. The grader records the commands with
// each run (the timeline's `messages`); the player calls
// `LockTimeline.drawMessages` at every second.
(function () {
    'use strict';

    const { h } = window.LockTimeline;

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

    /** The lane group whose actions a message's reply can mean: the storage, or the lock's servers. */
    function groupOf(lane) {
        return lane === 'storage' ? 'storage' : 'redis';
    }

    // The actions a reply can mean, by the lane that answered.
    const LANE_OF = {
        acquired: 'redis',
        denied: 'redis',
        released: 'redis',
        release_refused: 'redis',
        deleted_other: 'redis',
        renewed: 'redis',
        lease_lost: 'redis',
        read: 'storage',
        wrote: 'storage',
        read_rejected: 'storage',
        write_rejected: 'storage',
    };

    /** What an action says a reply meant: "written", "rejected: 33 < 34", "not renewed". */
    function meaningOf(action) {
        switch (action.kind) {
            case 'wrote':
                return 'written';
            case 'read':
                return action.text;
            case 'write_rejected':
            case 'read_rejected':
                return action.text.replace(/^(write|read) /, '');
            case 'acquired':
                return 'granted';
            case 'denied':
                return 'taken: not granted';
            case 'released':
                return 'deleted: released';
            case 'release_refused':
                return 'not its lock: nothing deleted';
            case 'deleted_other':
                return `deleted someone else's lock`;
            case 'renewed':
                return action.unsafe ? 'not renewed: not its key' : 'renewed';
            case 'lease_lost':
                return 'not renewed: the job stops';
            default:
                return action.text;
        }
    }

    /**
     * What each of a second's replies meant, read off what the client did
     * in that second (its recorded actions): a reply alone says `(integer)
     * 0` for a plain write that succeeded and for a fenced write the storage
     * refused. A client's commands to one lane are paired in order with its
     * actions on that lane; where a call took several commands (five SETs
     * of Redlock, a WAIT after a grant), the last of them carries the
     * meaning. Returns a Map from message to words.
     */
    function meanings(timeline, second, messages) {
        const out = new Map();
        for (const client of timeline.clients) {
            for (const lane of ['redis', 'storage']) {
                const sent = messages.filter((m) => m.client === client && groupOf(m.to) === lane);
                const did = second.clients[client].actions.filter((a) => LANE_OF[a.kind] === lane);
                if (sent.length === 0 || did.length === 0) {
                    continue;
                }
                if (sent.length === did.length) {
                    sent.forEach((m, i) => out.set(m, meaningOf(did[i])));
                } else {
                    out.set(sent[sent.length - 1], did.map(meaningOf).join('; '));
                }
            }
        }
        return out;
    }

    /** Whether the server answered (files without the field: it did). */
    function answered(m) {
        return m.answered !== false;
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

    /**
     * Draws one second's messages as a Lamport diagram: a vertical lane per
     * client, Redis and the storage, time running down, an arrow per command
     * and one back per reply, numbered; the numbered list under it gives
     * each command and reply in full. Runs recorded without commands leave
     * the container empty and hidden.
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
        const row = 26;
        const top = 30;
        const height = top + Math.max(1, messages.length * 2) * row + 10;
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
        const meant = meanings(timeline, second, messages);
        messages.forEach((m, i) => {
            const y = top + i * 2 * row;
            const [from, to] = [x(m.client), x(m.to)];
            const word = m.command.split(' ')[0];
            const meaning = meant.get(m);
            // One group per message, so that what is drawn for it can be counted.
            const group = svg('g', { class: 'tl-message', 'data-index': i, 'data-answered': answered(m) });
            const ask = `${i + 1} ${word}`;
            group.append(svg('line', { x1: from, y1: y, x2: to, y2: y + row - 6, class: 'tl-request', 'marker-end': arrowhead }));
            group.append(svg('text', { x: labelX(from, to, ask, width), y: y + row / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, ask));
            const label = replyLabel(m, meaning);
            if (answered(m)) {
                const rejected = refused(meaning);
                group.append(svg('line', { x1: to, y1: y + row, x2: from, y2: y + 2 * row - 6, class: rejected ? 'tl-reply tl-refused' : 'tl-reply', 'marker-end': arrowhead }));
            } else {
                // Nothing comes back: a cross where the request met the silent node.
                group.append(svg('text', { x: to, y: y + row + 2, 'text-anchor': 'middle', class: 'tl-no-reply-mark' }, '×'));
            }
            group.append(svg('text', { x: labelX(from, to, label, width), y: y + row + row / 2 - 4, 'text-anchor': 'middle', class: answered(m) ? 'tl-arrow-label' : 'tl-arrow-label tl-no-reply', 'data-meaning': meaning || '' }, label));
            picture.append(group);
        });
        const list = h(
            'ol',
            { class: 'tl-message-list', 'data-role': 'message-list' },
            messages.map((m) =>
                h(
                    'li',
                    { 'data-client': m.client, 'data-to': m.to, 'data-answered': answered(m), 'data-meaning': meant.get(m) || '' },
                    `${m.client} → ${laneName(m.to)}: `,
                    h('code', {}, m.command),
                    answered(m) ? ' ← ' : ' ✗ ',
                    h('code', {}, m.reply),
                    meant.has(m) ? h('span', { class: 'tl-meaning' }, ` = ${meant.get(m)}`) : null
                )
            )
        );
        container.replaceChildren(
            h('p', { class: 'tl-messages-title' }, `Commands at t = ${second.t} s, in the order sent`),
            messages.length ? picture : h('p', { class: 'tl-quiet' }, 'No commands this second.'),
            messages.length ? list : null
        );
    }

    window.LockTimeline.drawMessages = drawMessages;
})();
