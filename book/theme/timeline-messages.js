// The timeline player's message diagram: one second's recorded commands as a
// Lamport diagram, a vertical lane per client, Redis and the storage, time
// running down, an arrow per command and a dashed one back per reply. The
// grader records the commands with each run (the timeline's `messages`);
// the player calls `LockTimeline.drawMessages` at every second.
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
                const sent = messages.filter((m) => m.client === client && m.to === lane);
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

    /** A reply and its meaning in a few characters: "0 = rejected: 33 < 34". */
    function replyLabel(reply, meaning) {
        const short = reply.replace(/^\(integer\) /, '');
        const label = meaning ? `${short} = ${meaning}` : short;
        return label.length > 30 ? label.slice(0, 29) + '…' : label;
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
        const lanes = [...timeline.clients, 'redis', 'storage'];
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
            'aria-label': `Messages at t = ${second.t} s: ${messages.length} commands`,
        });
        const defs = svg('defs', {});
        const marker = svg('marker', { id: `tl-arrow-${timeline.name}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
        marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: 'currentColor' }));
        defs.append(marker);
        picture.append(defs);
        for (const lane of lanes) {
            picture.append(svg('text', { x: x(lane), y: 16, 'text-anchor': 'middle', class: 'tl-lane-name' }, LANE_NAMES[lane] || lane));
            picture.append(svg('line', { x1: x(lane), y1: 22, x2: x(lane), y2: height - 4, class: 'tl-lane' }));
        }
        const arrowhead = `url(#tl-arrow-${timeline.name})`;
        const meant = meanings(timeline, second, messages);
        messages.forEach((m, i) => {
            const y = top + i * 2 * row;
            const [from, to] = [x(m.client), x(m.to)];
            const word = m.command.split(' ')[0];
            const rejected = refused(meant.get(m));
            picture.append(svg('line', { x1: from, y1: y, x2: to, y2: y + row - 6, class: 'tl-request', 'marker-end': arrowhead }));
            picture.append(svg('text', { x: (from + to) / 2, y: y + row / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, `${i + 1} ${word}`));
            picture.append(svg('line', { x1: to, y1: y + row, x2: from, y2: y + 2 * row - 6, class: rejected ? 'tl-reply tl-refused' : 'tl-reply', 'marker-end': arrowhead }));
            picture.append(svg('text', { x: (from + to) / 2, y: y + row + row / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label', 'data-meaning': meant.get(m) || '' }, replyLabel(m.reply, meant.get(m))));
        });
        const list = h(
            'ol',
            { class: 'tl-message-list', 'data-role': 'message-list' },
            messages.map((m) =>
                h(
                    'li',
                    { 'data-client': m.client, 'data-to': m.to, 'data-meaning': meant.get(m) || '' },
                    `${m.client} → ${LANE_NAMES[m.to]}: `,
                    h('code', {}, m.command),
                    ' ← ',
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
