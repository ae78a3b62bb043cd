// The timeline player: replays a recorded lock scenario second by second.
//
// The `mdbook-timeline` preprocessor leaves, for every {{#player NAME}}, an
// empty <div data-timeline-player="NAME">, and once per page the recorded
// timelines as <script type="application/json" data-timelines>. This script
// builds the controls inside each container: a menu of demos, play / pause,
// one second back or forward, and a slider. At each second it shows what
// every client does and believes, who really holds the key in Redis and for
// how long, the counter and the highest token the storage has seen, and a
// strip of the seconds so far whose unsafe row gets a red ✗ at the second a
// client acts on a lock it no longer holds ("rejected" when the storage
// refuses it).
//
// Keyboard: Tab reaches every control; Space plays or pauses, Left / Right
// step one second (Home / End jump to the ends), anywhere inside the player
// but the menu. Those keys are kept from mdBook, which would otherwise turn
// the page on Left / Right. An aria-live line announces each second, and the
// same facts are given as sentences under "This second in words".
//
// Elements carry data-role / data-second / data-unsafe attributes so that a
// browser test can read the state without parsing the text.
(function () {
    'use strict';

    // One recorded second per real second: slow enough to read the cards.
    const TICK_MS = 1000;

    /** Reads every embedded timeline on the page, by name, in page order. */
    function loadTimelines() {
        const byName = new Map();
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
        }
        return byName;
    }

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

    /** "believes it holds the lock (token 33), but Redis: B" and friends. */
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

    /** The short line read out by screen readers at every second. */
    function statusText(timeline, t) {
        const second = timeline.seconds[t];
        const events = [];
        for (const name of timeline.clients) {
            for (const action of second.clients[name].actions) {
                // Polling for a taken lock repeats every second; announcing
                // it would drown what changes.
                if (action.kind !== 'denied') {
                    events.push(`${action.unsafe ? '✗ ' : ''}${name}: ${action.text}`);
                }
            }
        }
        events.push(...second.notes);
        return `t = ${t} s.` + (events.length ? ` ${events.join('. ')}.` : ' No new events.');
    }

    /** One player, inside its container. */
    class Player {
        constructor(root, timelines) {
            this.root = root;
            this.timelines = timelines;
            this.timer = null;
            this.t = 0;
            const id = root.id || 'timeline-player';
            const initial = root.getAttribute('data-timeline-player');
            this.name = timelines.has(initial) ? initial : timelines.keys().next().value;
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

        build(id) {
            this.select = h('select', { id: `${id}-select`, 'data-role': 'select' });
            for (const [name, timeline] of this.timelines) {
                this.select.append(h('option', { value: name }, timeline.title));
            }
            this.prevButton = h('button', { type: 'button', 'data-role': 'prev', 'aria-label': 'Back one second' }, '◀ 1 s');
            this.playButton = h('button', { type: 'button', 'data-role': 'play', class: 'tl-play' }, 'Play');
            this.nextButton = h('button', { type: 'button', 'data-role': 'next', 'aria-label': 'Forward one second' }, '1 s ▶');
            this.scrub = h('input', {
                type: 'range',
                id: `${id}-scrub`,
                'data-role': 'scrub',
                min: 0,
                step: 1,
                value: 0,
            });
            this.clock = h('span', { class: 'tl-clock', 'data-role': 'clock', 'aria-hidden': 'true' });
            const controls = h(
                'div',
                { class: 'tl-controls' },
                h('label', { for: `${id}-select` }, 'Demo '),
                this.select,
                h('span', { class: 'tl-buttons' }, this.prevButton, this.playButton, this.nextButton),
                h('label', { for: `${id}-scrub`, class: 'tl-scrub-label' }, 'Second ', this.scrub),
                this.clock
            );
            this.meta = h('p', { class: 'tl-meta', 'data-role': 'meta' });
            this.story = h('p', { class: 'tl-player-story', 'data-role': 'story' });
            this.status = h('p', { class: 'tl-status', 'data-role': 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
            this.stage = h('div', { class: 'tl-stage', 'data-role': 'stage' });
            this.strip = h('table', { class: 'tl-strip', 'data-role': 'strip' });
            this.facts = h('p', { class: 'tl-facts', 'data-role': 'facts' });
            this.outcome = h('p', { class: 'tl-outcome', 'data-role': 'outcome' });
            this.root.replaceChildren(
                controls,
                this.meta,
                this.story,
                this.status,
                this.stage,
                h('div', { class: 'tl-strip-scroll' }, this.strip),
                h('details', { class: 'tl-text' }, h('summary', {}, 'This second in words'), this.facts),
                this.outcome
            );
            this.root.classList.add('tl-ready');

            this.select.addEventListener('change', () => this.load(this.select.value, true));
            this.prevButton.addEventListener('click', () => this.step(-1));
            this.nextButton.addEventListener('click', () => this.step(1));
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
                if (e.key === ' ' && e.target.tagName === 'BUTTON') {
                    e.preventDefault();
                }
            });
        }

        onKey(e) {
            if (e.altKey || e.ctrlKey || e.metaKey) {
                return;
            }
            const tag = e.target.tagName;
            if (tag === 'SELECT' || (tag === 'SUMMARY' && e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) {
                return; // The menu and the "in words" toggle keep their own keys.
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
            this.outcome.replaceChildren(h('strong', {}, 'Outcome: '), timeline.outcome.summary);
            this.buildStrip();
            this.show(0, announce);
        }

        buildStrip() {
            const timeline = this.timeline;
            const seconds = timeline.seconds.map((s) => s.t);
            const cells = () => seconds.map((t) => h('td', { 'data-second': t }));
            const head = h('tr', {}, h('th', { scope: 'col' }, 't'), seconds.map((t) => h('th', { scope: 'col', 'data-second': t }, t)));
            const rows = timeline.clients.map((name) =>
                h('tr', { 'data-role': 'belief-row', 'data-client': name }, h('th', { scope: 'row' }, `${name} believes`), cells())
            );
            rows.push(h('tr', { 'data-role': 'holder-row' }, h('th', { scope: 'row' }, 'Redis key'), cells()));
            rows.push(h('tr', { 'data-role': 'unsafe-row' }, h('th', { scope: 'row' }, 'unsafe'), cells()));
            this.strip.replaceChildren(
                h('caption', {}, 'Seconds so far: who believes it holds the lock, who really holds it, and the unsafe row'),
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
            this.prevButton.disabled = this.t === 0;
            this.nextButton.disabled = this.t === this.last;
            this.renderStage(second);
            this.renderStrip();
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
            const redis = h(
                'div',
                { class: 'tl-card tl-redis', 'data-role': 'redis', 'data-holder': second.holder || '', 'data-ttl': second.ttl_left_s === null ? '' : second.ttl_left_s },
                h('p', { class: 'tl-card-title' }, 'Redis'),
                h('p', {}, 'lock key: ', h('strong', {}, keyText(second))),
                second.notes.length ? h('ul', { class: 'tl-notes' }, second.notes.map((n) => h('li', {}, n))) : null
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
                h('p', {}, timeline.fencing ? `highest token: ${second.highest_token === null ? 'none yet' : second.highest_token}` : 'no fencing tokens')
            );
            this.stage.replaceChildren(h('div', { class: 'tl-clients' }, cards), h('div', { class: 'tl-truth' }, redis, storage));
        }

        /** Fills the strip up to the current second; later seconds stay blank. */
        renderStrip() {
            const timeline = this.timeline;
            for (const cell of this.strip.querySelectorAll('[data-second]')) {
                cell.classList.toggle('tl-now', Number(cell.getAttribute('data-second')) === this.t);
            }
            for (const row of this.strip.querySelectorAll('tbody tr')) {
                const role = row.getAttribute('data-role');
                for (const cell of row.querySelectorAll('td')) {
                    const t = Number(cell.getAttribute('data-second'));
                    cell.replaceChildren();
                    cell.removeAttribute('data-unsafe');
                    cell.removeAttribute('data-rejected');
                    cell.removeAttribute('title');
                    cell.className = t === this.t ? 'tl-now' : '';
                    if (t > this.t) {
                        cell.classList.add('tl-future');
                        continue;
                    }
                    const second = timeline.seconds[t];
                    if (role === 'belief-row') {
                        const name = row.getAttribute('data-client');
                        const client = second.clients[name];
                        cell.setAttribute('data-state', client.state);
                        if (client.believes) {
                            cell.classList.add('tl-believing');
                            if (second.holder !== name) {
                                cell.classList.add('tl-mistaken');
                            }
                            cell.append(client.token === null ? '●' : String(client.token));
                        }
                        cell.title = `t = ${t} s: ${name} ${client.state}, ${beliefText(name, client, second)}`;
                    } else if (role === 'holder-row') {
                        cell.append(second.holder || '–');
                        cell.title = `t = ${t} s: key ${keyText(second)}`;
                    } else {
                        const marks = unsafeMarks(timeline, second);
                        if (marks.length) {
                            const rejected = marks.every((m) => m.action.rejected);
                            cell.setAttribute('data-unsafe', marks.map((m) => m.client).join(' '));
                            cell.setAttribute('data-rejected', rejected);
                            for (const m of marks) {
                                cell.append(h('span', { class: 'tl-x' }, '✗'), m.client);
                            }
                            if (marks.some((m) => m.action.rejected)) {
                                cell.append(h('span', { class: 'tl-rejected' }, 'rejected'));
                            }
                            cell.title = marks.map((m) => `${m.client}: ${actionText(m.action)}`).join('; ');
                        }
                    }
                }
            }
        }

        step(delta) {
            this.pause();
            this.show(this.t + delta);
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
            }, TICK_MS);
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
        const timelines = loadTimelines();
        for (const root of containers) {
            if (timelines.size === 0) {
                root.setAttribute('data-error', 'no timeline data on this page');
                continue;
            }
            root.player = new Player(root, timelines);
        }
    }

    if (document.readyState === 'loading') {
        document.addEventListener('DOMContentLoaded', start);
    } else {
        start();
    }
})();
