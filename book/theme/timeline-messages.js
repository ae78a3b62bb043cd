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
        const width = 480;
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
        messages.forEach((m, i) => {
            const y = top + i * 2 * row;
            const [from, to] = [x(m.client), x(m.to)];
            const word = m.command.split(' ')[0];
            const rejected = /^0$|\(integer\) 0$/.test(m.reply) && m.to === 'storage' && word !== 'HSET';
            picture.append(svg('line', { x1: from, y1: y, x2: to, y2: y + row - 6, class: 'tl-request', 'marker-end': arrowhead }));
            picture.append(svg('text', { x: (from + to) / 2, y: y + row / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, `${i + 1} ${word}`));
            picture.append(svg('line', { x1: to, y1: y + row, x2: from, y2: y + 2 * row - 6, class: rejected ? 'tl-reply tl-refused' : 'tl-reply', 'marker-end': arrowhead }));
            picture.append(svg('text', { x: (from + to) / 2, y: y + row + row / 2 - 4, 'text-anchor': 'middle', class: 'tl-arrow-label' }, m.reply.length > 14 ? m.reply.slice(0, 13) + '…' : m.reply));
        });
        const list = h(
            'ol',
            { class: 'tl-message-list', 'data-role': 'message-list' },
            messages.map((m) =>
                h('li', { 'data-client': m.client, 'data-to': m.to }, `${m.client} → ${LANE_NAMES[m.to]}: `, h('code', {}, m.command), ' ← ', h('code', {}, m.reply))
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
