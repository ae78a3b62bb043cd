// The timeline player: replays a recorded lock scenario second by second.
//
// The `mdbook-timeline` preprocessor leaves, for every {{#player NAME}}, an
// empty <div data-timeline-player="NAME">, and once per page the recorded
// timelines as <script type="application/json" data-timelines>, in the menu's
// order (the original page's Demo 1–6 first) with their "Demo N" labels. This
// script builds the controls inside each container: a menu of demos, a speed,
// play / pause, one second or one event back and forward, and a slider. At
// each second it shows what every client does and believes, who really holds
// the key in Redis and for how long, the counter and the highest token the
// storage has seen (in a story on several Redis nodes, whose the lock is by
// the story's rule and what each node holds); a strip of the seconds so far, drawn like the book's
// static strips (a red ✗ in the unsafe row at the second a client acts on a
// lock it no longer holds, "rejected" when the storage refuses it; a row per
// node, when there are nodes, with the marks of the static strip); and,
// when the run recorded them, the commands of that second as a message
// diagram: one lane per client, Redis and the storage.
//
// Keyboard: Tab reaches every control; Space plays or pauses, Left / Right
// step one second (Home / End jump to the ends), anywhere inside the player
// but the menus, also after a click on a strip cell, a card or the story. Those keys are kept from mdBook, which would otherwise turn
// the page on Left / Right. No control is ever disabled (a disabled button
// would drop the focus to the page, and the next arrow key would turn it):
// at an end, the buttons say so with aria-disabled and do nothing. An
// aria-live line announces each second, and the same facts are given as
// sentences under "This second in words".
//
// The outcome is hidden until the reader answers a one-question prediction
// or steps to the last second (timeline-predict.js).
//
// Demos 2–5 also offer "what if" controls (timeline-what-if.js): other values
// of the TTL, the pause or the job's length, fencing or the release, each a
// run recorded by the grader and fetched when the reader picks it.
//
// Elements carry data-role / data-second / data-unsafe attributes so that a
// browser test can read the state without parsing the text. The words and
// glyphs come from timeline-common.js, the message diagram from
// timeline-messages.js (book.toml loads both first).
(function () {
    'use strict';

    const {
        h,
        unsafeMarks,
        isEvent,
        beliefText,
        clientGlyph,
        keyText,
        noted,
        refusedRelease,
        writes,
        keyRule,
        keyHeading,
        keyWords,
        fillNodeCell,
        nodeList,
        actionText,
        factsText,
        statusText,
        drawMessages,
        WhatIfControls,
        OutcomeGate,
    } = window.LockTimeline;

    // One recorded second per real second at 1×: slow enough to read the cards.
    const TICK_MS = 1000;
    const SPEEDS = [0.5, 1, 2, 4];

    /** Reads the embedded timelines (in menu order), their labels and the what-if grids. */
    function loadTimelines() {
        const byName = new Map();
        const labels = new Map();
        const whatIf = [];
        const folds = new Map();
        for (const script of document.querySelectorAll('script[data-timelines]')) {
            let data;
            try {
                data = JSON.parse(script.textContent);
            } catch (err) {
                console.error('timeline player: embedded data is not JSON', err);
                continue;
            }
            for (const timeline of data.timelines || []) {
                if (!byName.has(timeline.name)) {
                    byName.set(timeline.name, timeline);
                }
            }
            for (const [name, label] of Object.entries(data.labels || {})) {
                labels.set(name, label);
            }
            whatIf.push(...(data.what_if || []));
            // The folded gaps of every strip: the demos', and the what-if runs'.
            for (const source of [data, ...(data.what_if || [])]) {
                for (const [name, gaps] of Object.entries(source.folds || {})) {
                    folds.set(name, gaps);
                }
            }
        }
        return { byName, labels, whatIf, folds };
    }

    /** One player, inside its container. */
    class Player {
        constructor(root, data) {
            this.root = root;
            this.timelines = data.byName;
            this.labels = data.labels;
            this.folds = data.folds;
            this.timer = null;
            this.speed = 1;
            this.t = 0;
            const id = root.id || 'timeline-player';
            const initial = root.getAttribute('data-timeline-player');
            this.name = this.timelines.has(initial) ? initial : this.timelines.keys().next().value;
            this.whatIf = new WhatIfControls(data.whatIf, id, (name, run) => this.loadWhatIf(name, run));
            this.build(id);
            this.select.value = this.name;
            this.load(this.name, false);
        }

        get timeline() {
            return this.timelines.get(this.name);
        }

        get last() {
            return this.timeline.seconds.length - 1;
        }

        menuLabel(name, timeline) {
            const label = this.labels.get(name);
            return label ? `${label}: ${timeline.title}` : timeline.title;
        }

        build(id) {
            this.select = h('select', { id: `${id}-select`, 'data-role': 'select' });
            for (const [name, timeline] of this.timelines) {
                this.select.append(h('option', { value: name }, this.menuLabel(name, timeline)));
            }
            this.speedSelect = h(
                'select',
                { id: `${id}-speed`, 'data-role': 'speed' },
                SPEEDS.map((s) => h('option', { value: s }, `${s}×`))
            );
            this.speedSelect.value = '1';
            const button = (role, label, text) => h('button', { type: 'button', 'data-role': role, 'aria-label': label, title: label }, text);
            this.prevEventButton = button('prev-event', 'Back to the previous event', '« event');
            this.prevButton = button('prev', 'Back one second', '◀ 1 s');
            this.playButton = h('button', { type: 'button', 'data-role': 'play', class: 'tl-play' }, 'Play');
            this.nextButton = button('next', 'Forward one second', '1 s ▶');
            this.nextEventButton = button('next-event', "On to the next event: a grant, a write, a rejection, an expiry, a node's fault or a ✗", 'event »');
            this.scrub = h('input', { type: 'range', id: `${id}-scrub`, 'data-role': 'scrub', min: 0, step: 1, value: 0 });
            this.clock = h('span', { class: 'tl-clock', 'data-role': 'clock', 'aria-hidden': 'true' });
            // The menus are set once; the bar under them is used at every step,
            // and on a phone it is the part that stays on screen (timeline-player.css).
            const choices = h(
                'div',
                { class: 'tl-choices' },
                h('span', { class: 'tl-field tl-demo-field' }, h('label', { for: `${id}-select` }, 'Demo'), this.select),
                h('span', { class: 'tl-field' }, h('label', { for: `${id}-speed` }, 'Speed'), this.speedSelect)
            );
            const controls = h(
                'div',
                { class: 'tl-controls' },
                h('span', { class: 'tl-buttons' }, this.prevEventButton, this.prevButton, this.playButton, this.nextButton, this.nextEventButton),
                h('span', { class: 'tl-field tl-scrub-field' }, h('label', { for: `${id}-scrub` }, 'Second'), this.scrub),
                this.clock
            );
            this.meta = h('p', { class: 'tl-meta', 'data-role': 'meta' });
            this.story = h('p', { class: 'tl-player-story', 'data-role': 'story' });
            this.status = h('p', { class: 'tl-status', 'data-role': 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
            this.stage = h('div', { class: 'tl-stage', 'data-role': 'stage' });
            this.strip = h('table', { class: 'tl-strip', 'data-role': 'strip' });
            this.stripScroll = h('div', { class: 'tl-strip-scroll', 'data-role': 'strip-scroll' }, this.strip);
            this.messages = h('div', { class: 'tl-messages', 'data-role': 'messages' });
            this.facts = h('p', { class: 'tl-facts', 'data-role': 'facts' });
            // The outcome stays hidden until the reader predicts it or steps to the end.
            this.outcome = new OutcomeGate(() => this.root.focus({ preventScroll: true }));
            this.root.replaceChildren(
                choices,
                controls,
                this.whatIf.element,
                this.meta,
                this.story,
                this.outcome.element,
                this.status,
                this.stage,
                h('div', { class: 'tl-views' }, this.stripScroll, this.messages),
                h('details', { class: 'tl-text' }, h('summary', {}, 'This second in words'), this.facts)
            );
            this.root.classList.add('tl-ready');
            // A click on what is not a control (a strip cell, a card, the story) would
            // otherwise leave the focus on the page, and the next arrow key would turn it.
            // Focusable itself, the player takes that focus, and its keys keep working.
            this.root.tabIndex = -1;

            this.select.addEventListener('change', () => this.load(this.select.value, true));
            this.speedSelect.addEventListener('change', () => {
                this.speed = Number(this.speedSelect.value) || 1;
                if (this.timer !== null) {
                    this.pause();
                    this.play();
                }
            });
            this.prevEventButton.addEventListener('click', () => this.stepEvent(-1));
            this.prevButton.addEventListener('click', () => this.step(-1));
            this.nextButton.addEventListener('click', () => this.step(1));
            this.nextEventButton.addEventListener('click', () => this.stepEvent(1));
            this.playButton.addEventListener('click', () => this.toggle());
            this.scrub.addEventListener('input', () => {
                this.pause();
                this.show(Number(this.scrub.value));
            });
            this.strip.addEventListener('click', (e) => {
                const cell = e.target.closest('[data-second]');
                if (cell) {
                    this.pause();
                    this.show(Number(cell.getAttribute('data-second')));
                }
            });
            this.root.addEventListener('keydown', (e) => this.onKey(e));
            // A button activates on the release of Space; the press already
            // toggled playback, so the release must not click it again.
            this.root.addEventListener('keyup', (e) => {
                if (e.key === ' ' && e.target.tagName === 'BUTTON' && !this.answering(e)) {
                    e.preventDefault();
                }
            });
        }

        onKey(e) {
            if (e.altKey || e.ctrlKey || e.metaKey) {
                return;
            }
            const tag = e.target.tagName;
            if (this.answering(e)) {
                return; // Space and Enter answer the prediction.
            }
            if (tag === 'SELECT' || (tag === 'SUMMARY' && e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) {
                return; // The menus and the "in words" toggle keep their own keys.
            }
            switch (e.key) {
                case ' ':
                    this.toggle();
                    break;
                case 'ArrowLeft':
                    this.step(-1);
                    break;
                case 'ArrowRight':
                    this.step(1);
                    break;
                case 'Home':
                    this.pause();
                    this.show(0);
                    break;
                case 'End':
                    this.pause();
                    this.show(this.last);
                    break;
                default:
                    return;
            }
            e.preventDefault();
            e.stopPropagation();
        }

        /**
         * Loads a what-if cell: `run` is its recorded timeline, or null when
         * the cell is a timeline the player already has under `name`. A new
         * run joins the menu, under "What if".
         */
        loadWhatIf(name, run) {
            if (run && !this.timelines.has(name)) {
                this.timelines.set(name, run);
                if (!this.whatIfGroup) {
                    this.whatIfGroup = h('optgroup', { label: 'What if' });
                    this.select.append(this.whatIfGroup);
                }
                this.whatIfGroup.append(h('option', { value: name }, run.title));
            }
            this.select.value = name;
            this.load(name, true);
        }

        /** Whether a key went to a prediction's answer button, which Space and Enter press. */
        answering(e) {
            return (e.key === ' ' || e.key === 'Enter') && e.target.closest('[data-role=predict]') !== null;
        }

        /** Switches to another demo, back at t = 0. */
        load(name, announce) {
            this.pause();
            this.name = name;
            const timeline = this.timeline;
            this.root.setAttribute('data-current', name);
            this.scrub.max = String(this.last);
            const fencing = timeline.fencing ? 'fencing tokens checked by the storage' : 'no fencing';
            this.meta.textContent = `lock: ${timeline.implementation} · TTL ${timeline.ttl_s} s · ${fencing}`;
            this.story.textContent = timeline.story;
            this.events = timeline.seconds.filter((s) => isEvent(timeline, s)).map((s) => s.t);
            this.buildStrip();
            this.stripScroll.scrollLeft = 0;
            this.whatIf.showFor(name);
            this.show(0, announce);
        }

        /**
         * The strip's columns, `[first, last]` second: one per second, but a run of
         * quiet seconds folds into one gap column, as in the book's static strips
         * (the preprocessor's rule, given with the data).
         */
        columns() {
            const gaps = this.folds.get(this.name) || [];
            const columns = [];
            for (const { t } of this.timeline.seconds) {
                const gap = gaps.find(([from, to]) => from <= t && t <= to);
                if (!gap) {
                    columns.push([t, t]);
                } else if (gap[0] === t) {
                    columns.push(gap);
                }
            }
            return columns;
        }

        buildStrip() {
            const timeline = this.timeline;
            const columns = this.columns();
            const to = (from, last) => (last > from ? last : null);
            const cells = () => columns.map(([from, last]) => h('td', { 'data-second': from, 'data-to': to(from, last) }));
            const rowHead = (text) => h('th', { scope: 'row', class: 'tl-rowhead' }, text);
            const headCell = ([from, last]) =>
                last > from
                    ? h('th', { scope: 'col', 'data-second': from, 'data-to': last, class: 'tl-gap', title: `t = ${from} to ${last} s: nothing changes but the TTL` }, `… ${last - from + 1} s …`)
                    : h('th', { scope: 'col', 'data-second': from }, from);
            const head = h('tr', {}, h('th', { scope: 'col', class: 'tl-rowhead' }, 't (s)'), columns.map(headCell));
            const rows = timeline.clients.map((name) => h('tr', { 'data-role': 'belief-row', 'data-client': name }, rowHead(name), cells()));
            rows.push(h('tr', { 'data-role': 'holder-row' }, rowHead(keyHeading(timeline)), cells()));
            for (const name of timeline.nodes || []) {
                rows.push(h('tr', { 'data-role': 'node-row', 'data-node': name }, rowHead(name), cells()));
            }
            rows.push(h('tr', { 'data-role': 'counter-row' }, rowHead('counter'), cells()));
            if (timeline.fencing) {
                rows.push(h('tr', { 'data-role': 'token-row' }, rowHead('highest token'), cells()));
            }
            rows.push(h('tr', { 'data-role': 'unsafe-row' }, rowHead('unsafe'), cells()));
            this.strip.setAttribute('data-seconds', timeline.seconds.length);
            this.strip.replaceChildren(
                h('caption', { class: 'tl-sr' }, `Seconds so far: what each client believes, who really holds the key${(timeline.nodes || []).length ? ', what each node holds' : ''}, the storage, and the unsafe row`),
                h('thead', {}, head),
                h('tbody', {}, rows)
            );
        }

        /** Shows second `t`. */
        show(t, announce = true) {
            const timeline = this.timeline;
            this.t = Math.max(0, Math.min(this.last, t));
            const second = timeline.seconds[this.t];
            this.root.setAttribute('data-second', this.t);
            this.scrub.value = String(this.t);
            this.scrub.setAttribute('aria-valuetext', `t = ${this.t} s of ${this.last} s`);
            this.clock.textContent = `t = ${this.t} s / ${this.last} s`;
            this.prevButton.setAttribute('aria-disabled', this.t === 0);
            this.nextButton.setAttribute('aria-disabled', this.t === this.last);
            this.prevEventButton.setAttribute('aria-disabled', this.eventFrom(-1) === null);
            this.nextEventButton.setAttribute('aria-disabled', this.eventFrom(1) === null);
            this.renderStage(second);
            this.renderStrip();
            this.keepCurrentVisible();
            this.renderMessages(second);
            this.outcome.show(timeline, this.t === this.last);
            this.facts.textContent = factsText(timeline, this.t);
            const status = statusText(timeline, this.t);
            if (announce || this.status.textContent === '') {
                this.status.textContent = status;
            }
        }

        renderStage(second) {
            const timeline = this.timeline;
            const cards = timeline.clients.map((name) => {
                const client = second.clients[name];
                const mistaken = client.believes && second.holder !== name;
                return h(
                    'div',
                    {
                        class: 'tl-card tl-client' + (mistaken ? ' tl-mistaken' : ''),
                        'data-role': 'client',
                        'data-client': name,
                        'data-state': client.state,
                        'data-believes': client.believes,
                        'data-mistaken': mistaken,
                    },
                    h('p', { class: 'tl-card-title' }, `Client ${name}`, h('span', { class: 'tl-badge', 'data-state': client.state }, client.state)),
                    h('p', { class: 'tl-belief' }, beliefText(name, client, second)),
                    client.actions.length
                        ? h(
                              'ul',
                              { class: 'tl-card-actions' },
                              client.actions.map((a) =>
                                  h(
                                      'li',
                                      { 'data-kind': a.kind, 'data-unsafe': a.unsafe, 'data-rejected': a.rejected },
                                      a.unsafe ? h('span', { class: 'tl-x', 'aria-hidden': 'true' }, '✗ ') : null,
                                      a.text,
                                      a.rejected ? h('span', { class: 'tl-rejected' }, 'rejected') : null
                                  )
                              )
                          )
                        : h('p', { class: 'tl-quiet' }, client.state === 'paused' ? 'frozen: does nothing' : 'no action')
                );
            });
            const nodes = keyRule(timeline) === null ? [] : timeline.nodes;
            const redis = h(
                'div',
                { class: 'tl-card tl-redis', 'data-role': 'redis', 'data-holder': second.holder || '', 'data-ttl': second.ttl_left_s === null ? '' : second.ttl_left_s },
                h('p', { class: 'tl-card-title' }, nodes.length ? 'Redis nodes' : 'Redis'),
                nodes.length
                    ? h('p', {}, h('strong', {}, keyWords(timeline, second)))
                    : h('p', {}, 'lock key: ', h('strong', {}, keyText(second))),
                nodes.length ? nodeList(timeline, second) : null,
                second.notes.length
                    ? h('ul', { class: 'tl-notes' }, second.notes.map((n) => h('li', { 'data-kind': n.kind }, n.kind === 'expiry' ? '◷ ' : '⚡ ', n.text)))
                    : null
            );
            const storage = h(
                'div',
                {
                    class: 'tl-card tl-storage',
                    'data-role': 'storage',
                    'data-counter': second.counter,
                    'data-highest-token': second.highest_token === null ? '' : second.highest_token,
                },
                h('p', { class: 'tl-card-title' }, 'Storage'),
                h('p', {}, 'counter = ', h('strong', {}, second.counter)),
                h('p', {}, timeline.fencing ? `highest token: ${second.highest_token === null ? 'none yet' : second.highest_token}` : 'no fencing tokens'),
                h('p', { class: 'tl-quiet' }, 'at the end of the second')
            );
            this.stage.replaceChildren(h('div', { class: 'tl-clients' }, cards), h('div', { class: 'tl-truth' }, redis, storage));
        }

        /** Fills the strip up to the current second; later seconds stay blank. */
        renderStrip() {
            const timeline = this.timeline;
            // A column spans [data-second, data-to]; a gap shows the second the player is
            // at while inside it, else its last, which reads as every folded second does.
            const span = (cell) => {
                const from = Number(cell.getAttribute('data-second'));
                return [from, Number(cell.getAttribute('data-to') || from)];
            };
            for (const cell of this.strip.querySelectorAll('thead [data-second]')) {
                const [from, last] = span(cell);
                cell.classList.toggle('tl-now', from <= this.t && this.t <= last);
            }
            for (const row of this.strip.querySelectorAll('tbody tr')) {
                const role = row.getAttribute('data-role');
                for (const cell of row.querySelectorAll('td')) {
                    const [from, last] = span(cell);
                    const t = Math.min(last, Math.max(from, this.t));
                    cell.replaceChildren();
                    for (const attr of ['data-unsafe', 'data-rejected', 'data-state', 'data-believes', 'data-mistaken', 'data-refused', 'data-expired', 'data-fault', 'data-writes', 'data-health', 'data-holder', 'data-jumped', 'data-role-changed', 'title']) {
                        cell.removeAttribute(attr);
                    }
                    cell.className = (t === this.t ? 'tl-now' : '') + (last > from ? ' tl-gap' : '');
                    if (from > this.t) {
                        cell.classList.add('tl-future');
                        continue;
                    }
                    const second = timeline.seconds[t];
                    const previous = timeline.seconds[t - 1];
                    if (role === 'belief-row') {
                        const name = row.getAttribute('data-client');
                        const client = second.clients[name];
                        const mistaken = client.believes && second.holder !== name;
                        cell.setAttribute('data-state', client.state);
                        cell.setAttribute('data-believes', client.believes);
                        cell.setAttribute('data-mistaken', mistaken);
                        cell.classList.toggle('tl-believing', client.believes);
                        cell.classList.toggle('tl-mistaken', mistaken);
                        cell.classList.toggle('tl-acted', client.actions.some((a) => a.kind !== 'denied'));
                        cell.append(clientGlyph(client));
                        cell.setAttribute('data-refused', refusedRelease(client));
                        if (refusedRelease(client)) {
                            cell.append(h('span', { class: 'tl-release-refused' }, '!'));
                        }
                        const did = client.actions.map(actionText).join('; ');
                        cell.title = `t = ${t} s: ${name} ${client.state}, ${beliefText(name, client, second)}` + (did ? `. ${did}` : '');
                    } else if (role === 'holder-row') {
                        const [expired, fault] = [noted(second, 'expiry'), noted(second, 'fault')];
                        cell.setAttribute('data-expired', expired);
                        cell.setAttribute('data-fault', fault);
                        if (fault) {
                            cell.classList.add('tl-fault');
                            cell.append('⚡');
                        }
                        if (expired) {
                            cell.classList.add('tl-expired');
                            cell.append('◷');
                        }
                        cell.append(second.holder || '–');
                        cell.title = [`t = ${t} s: ${keyWords(timeline, second)}`, ...second.notes.map((n) => n.text)].join('. ');
                    } else if (role === 'node-row') {
                        fillNodeCell(cell, timeline, t, row.getAttribute('data-node'));
                    } else if (role === 'counter-row') {
                        const written = writes(timeline, second);
                        cell.setAttribute('data-writes', written.length);
                        cell.classList.toggle('tl-changed', written.length > 0 || (previous !== undefined && previous.counter !== second.counter));
                        if (written.length > 1) {
                            for (const [client, value] of written) {
                                cell.append(h('span', { class: 'tl-write', 'data-client': client }, value, h('sub', {}, client)));
                            }
                        } else {
                            cell.append(second.counter);
                        }
                        cell.title = `t = ${t} s: counter = ${second.counter}` + (written.length ? ` (${written.map(([c, v]) => `${c} wrote ${v}`).join(', then ')})` : '');
                    } else if (role === 'token-row') {
                        const shown = second.highest_token === null ? '–' : String(second.highest_token);
                        cell.append(shown);
                        cell.title = `t = ${t} s: the storage's highest token: ${shown}`;
                    } else {
                        const marks = unsafeMarks(timeline, second);
                        if (marks.length) {
                            const clients = [...new Set(marks.map((m) => m.client))];
                            cell.classList.add('tl-x-cell');
                            cell.setAttribute('data-unsafe', clients.join(' '));
                            cell.setAttribute('data-rejected', marks.every((m) => m.action.rejected));
                            for (const client of clients) {
                                cell.append(h('span', { class: 'tl-x' }, '✗'), client);
                            }
                            if (marks.some((m) => m.action.rejected)) {
                                cell.append(h('span', { class: 'tl-rejected' }, 'rejected'));
                            }
                            cell.title = `t = ${t} s: ` + marks.map((m) => `${m.client}: ${actionText(m.action)}`).join('; ');
                        }
                    }
                }
            }
        }

        /**
         * Scrolls the strip sideways, if needed, so that the current second's
         * column is in view beside the sticky row headings, with a column of
         * context on either side.
         */
        keepCurrentVisible() {
            const scroller = this.stripScroll;
            const cell = [...this.strip.querySelectorAll('thead th[data-second]')].find((th) => th.classList.contains('tl-now'));
            const corner = this.strip.querySelector('thead .tl-rowhead');
            if (!cell || !corner) {
                return;
            }
            const box = scroller.getBoundingClientRect();
            const left = box.left + scroller.clientLeft + corner.getBoundingClientRect().width;
            const right = box.left + scroller.clientLeft + scroller.clientWidth;
            const rect = cell.getBoundingClientRect();
            const margin = Math.min(rect.width, Math.max(0, (right - left - rect.width) / 2));
            if (rect.left < left) {
                scroller.scrollLeft -= left - rect.left + margin;
            } else if (rect.right > right) {
                scroller.scrollLeft += rect.right - right + margin;
            }
        }

        /** The second's commands as a message diagram (timeline-messages.js). */
        renderMessages(second) {
            drawMessages(this.messages, this.timeline, second);
        }

        step(delta) {
            this.pause();
            this.show(this.t + delta);
        }

        /** The next (1) or previous (-1) second with an event, or null. */
        eventFrom(direction) {
            const later = direction > 0 ? this.events.filter((t) => t > this.t) : this.events.filter((t) => t < this.t).reverse();
            return later.length ? later[0] : null;
        }

        stepEvent(direction) {
            this.pause();
            const t = this.eventFrom(direction);
            if (t !== null) {
                this.show(t);
            }
        }

        toggle() {
            if (this.timer === null) {
                this.play();
            } else {
                this.pause();
            }
        }

        play() {
            if (this.t >= this.last) {
                this.show(0);
            }
            this.playButton.textContent = 'Pause';
            this.root.setAttribute('data-playing', 'true');
            this.timer = window.setInterval(() => {
                if (this.t >= this.last) {
                    this.pause();
                } else {
                    this.show(this.t + 1);
                }
            }, TICK_MS / this.speed);
        }

        pause() {
            if (this.timer !== null) {
                window.clearInterval(this.timer);
                this.timer = null;
            }
            this.playButton.textContent = 'Play';
            this.root.setAttribute('data-playing', 'false');
        }
    }

    function start() {
        const containers = document.querySelectorAll('[data-timeline-player]');
        if (containers.length === 0) {
            return;
        }
        const data = loadTimelines();
        for (const root of containers) {
            if (data.byName.size === 0) {
                root.setAttribute('data-error', 'no timeline data on this page');
                continue;
            }
            root.player = new Player(root, data);
        }
    }

    // In print, the seconds in words are part of the page.
    window.addEventListener('beforeprint', () => {
        for (const details of document.querySelectorAll('details.tl-detail:not([open])')) {
            details.setAttribute('open', '');
            details.setAttribute('data-opened-for-print', '');
        }
    });
    window.addEventListener('afterprint', () => {
        for (const details of document.querySelectorAll('details[data-opened-for-print]')) {
            details.removeAttribute('open');
            details.removeAttribute('data-opened-for-print');
        }
    });

    if (document.readyState === 'loading') {
        document.addEventListener('DOMContentLoaded', start);
    } else {
        start();
    }
})();
