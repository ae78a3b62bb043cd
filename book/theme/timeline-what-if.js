// "What if": the player's controls for a grid of recorded runs.
//
// Demos 2–5 each belong to a grid (book/src/what-if/NAME.json, written by the
// grader): the same story played against Redis for every combination of a few
// values (the TTL; the pause or the job's length; fencing or the release).
// The page embeds only each grid's controls and which demos are its cells
// ("what_if" in the player's data); the runs themselves are fetched the first
// time the reader changes a value, and never computed here: a cell is a
// recorded timeline, loaded into the player like any demo. A cell that is one
// of the book's own timelines is stored as its name ("same_as"), and the
// player already has it.
//
// The fieldset carries data-role="what-if" and data-state (idle, loading,
// loaded, error) so that a browser test can wait for a run and check it.
(function () {
    'use strict';

    const { h } = window.LockTimeline;

    /** One fetch per grid file and page; a failed one is forgotten, so a later change retries. */
    const fetched = new Map();

    function fetchGrid(file) {
        if (!fetched.has(file)) {
            // mdBook sets path_to_root on every page: the grids sit beside the pages' root.
            const root = typeof window.path_to_root === 'string' ? window.path_to_root : '';
            const request = fetch(root + file).then((response) => {
                if (!response.ok) {
                    throw new Error(`${file}: HTTP ${response.status}`);
                }
                return response.json();
            });
            request.catch(() => fetched.delete(file));
            fetched.set(file, request);
        }
        return fetched.get(file);
    }

    const sameChoice = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

    /** The controls of every grid, for one player; only one grid's are shown at a time. */
    class WhatIfControls {
        /**
         * `grids`: the embedded index; `id`: the player's id, for the labels;
         * `pick(name, run)`: loads the cell's timeline into the player, `run`
         * being null when the player has it already under `name`.
         */
        constructor(grids, id, pick) {
            this.grids = grids || [];
            this.pick = pick;
            this.request = 0;
            // Timeline name -> { grid, choice }: the demos now, each fetched cell later.
            this.cells = new Map();
            for (const grid of this.grids) {
                for (const [name, choice] of Object.entries(grid.demos || {})) {
                    this.cells.set(name, { grid, choice });
                }
            }
            this.grid = null;
            this.question = h('legend', {}, 'What if…');
            this.fields = h('span', { class: 'tl-what-if-fields' });
            this.note = h('span', { class: 'tl-what-if-note', 'data-role': 'what-if-note', 'aria-live': 'polite' });
            this.element = h('fieldset', { class: 'tl-what-if-controls', 'data-role': 'what-if', 'data-state': 'idle', hidden: '' }, this.question, this.fields, this.note);
            this.id = id;
        }

        /** Shows the controls of the grid that timeline `name` belongs to, set to its values. */
        showFor(name) {
            const cell = this.cells.get(name);
            this.element.hidden = !cell;
            if (!cell) {
                return;
            }
            if (this.grid !== cell.grid) {
                this.build(cell.grid);
            }
            this.selects.forEach((select, i) => {
                select.value = cell.choice[i];
            });
            this.element.setAttribute('data-choice', cell.choice.join('|'));
        }

        build(grid) {
            this.grid = grid;
            this.element.setAttribute('data-grid', grid.name);
            this.question.textContent = grid.question;
            this.selects = grid.controls.map((control, i) => {
                const select = h(
                    'select',
                    { id: `${this.id}-what-if-${i}`, 'data-role': 'what-if-control', 'data-control': control.label },
                    control.values.map((v) => h('option', { value: v }, v))
                );
                select.addEventListener('change', () => this.change());
                return select;
            });
            this.fields.replaceChildren(
                ...grid.controls.map((control, i) => h('span', { class: 'tl-field' }, h('label', { for: this.selects[i].id }, control.label), this.selects[i]))
            );
        }

        setState(state, text) {
            this.element.setAttribute('data-state', state);
            this.note.textContent = text;
        }

        /** Fetches the grid if need be, and loads the run of the values now chosen. */
        async change() {
            const grid = this.grid;
            const choice = this.selects.map((s) => s.value);
            const request = ++this.request;
            this.element.setAttribute('data-choice', choice.join('|'));
            this.setState('loading', 'loading the recorded run…');
            let data;
            try {
                data = await fetchGrid(grid.file);
            } catch (err) {
                if (request === this.request) {
                    this.setState('error', `The recorded runs could not be loaded (${err.message}); they are fetched from the book's server (book/serve).`);
                }
                return;
            }
            if (request !== this.request) {
                return; // The reader has chosen again meanwhile.
            }
            for (const cell of data.cells) {
                if (cell.run) {
                    this.cells.set(cell.run.name, { grid, choice: cell.choice });
                }
            }
            const cell = data.cells.find((c) => sameChoice(c.choice, choice));
            if (!cell) {
                this.setState('error', `No recorded run for ${choice.join(', ')}.`);
                return;
            }
            this.setState('loaded', '');
            this.pick(cell.run ? cell.run.name : cell.same_as, cell.run || null);
        }
    }

    window.LockTimeline.WhatIfControls = WhatIfControls;
})();
