// Predict, then see: the player keeps a run's outcome hidden until the reader
// has stepped to its last second or answered one question about it.
//
// The question is the same for every run, and its answer comes from the run
// itself: three jobs each set out to add 1 to the counter; where will it end?
// One button per possible value, 0 to the number of jobs. Answering shows the
// recorded outcome beside the answer given; so does reaching the end. What the
// reader has seen is remembered per timeline, for as long as the page is open,
// so switching demos and back does not hide it again.
//
// The element carries data-role="outcome" and data-revealed (true / false), and
// each answer button data-role="predict" and data-value, for the browser test.
(function () {
    'use strict';

    const { h } = window.LockTimeline;

    const NUMBERS = ['No', 'One', 'Two', 'Three', 'Four', 'Five', 'Six'];

    class OutcomeGate {
        /** `focusHome()` takes the focus back into the player when the focused answer button goes away. */
        constructor(focusHome) {
            this.focusHome = focusHome;
            this.seen = new Map(); // timeline name -> { revealed, predicted }
            this.drawn = '';
            this.element = h('div', { class: 'tl-outcome', 'data-role': 'outcome', 'aria-live': 'polite' });
        }

        /** Shows `timeline`'s outcome, or its question; `atEnd`: the player is at its last second. */
        show(timeline, atEnd) {
            const state = this.state(timeline.name);
            state.revealed = state.revealed || atEnd;
            this.draw(timeline, state);
        }

        state(name) {
            if (!this.seen.has(name)) {
                this.seen.set(name, { revealed: false, predicted: null });
            }
            return this.seen.get(name);
        }

        answer(timeline, value) {
            const state = this.state(timeline.name);
            state.predicted = value;
            state.revealed = true;
            this.draw(timeline, state);
        }

        draw(timeline, state) {
            // Redrawn only when something changed: a redraw at every step would take the
            // focus from an answer button the reader has tabbed to.
            const key = `${timeline.name}|${state.revealed}|${state.predicted}`;
            if (key === this.drawn) {
                return;
            }
            this.drawn = key;
            const hadFocus = this.element.contains(document.activeElement);
            const { counter, jobs, summary } = timeline.outcome;
            this.element.setAttribute('data-revealed', state.revealed);
            if (state.revealed) {
                const said =
                    state.predicted === null
                        ? null
                        : h('span', { class: 'tl-predicted', 'data-role': 'predicted' }, state.predicted === counter ? ` You said ${state.predicted}: right.` : ` You said ${state.predicted}; it ends at ${counter}.`);
                this.element.replaceChildren(h('p', {}, h('strong', {}, 'Outcome: '), summary, said));
            } else {
                const jobsWord = (NUMBERS[jobs] || String(jobs)).toLowerCase();
                const choices = [];
                for (let value = 0; value <= jobs; value += 1) {
                    const button = h('button', { type: 'button', 'data-role': 'predict', 'data-value': value }, String(value));
                    button.addEventListener('click', () => this.answer(timeline, value));
                    choices.push(button);
                }
                this.element.replaceChildren(
                    h(
                        'p',
                        {},
                        h('strong', {}, 'Predict, then see: '),
                        `${jobsWord} jobs each set out to add 1 to the counter. Where will it end? `,
                        h('span', { class: 'tl-predict-choices', role: 'group', 'aria-label': 'The counter at the end' }, choices)
                    ),
                    h('p', { class: 'tl-quiet' }, `The outcome shows once you answer, or once you reach t = ${timeline.seconds.length - 1} s.`)
                );
            }
            if (hadFocus) {
                this.focusHome();
            }
        }
    }

    window.LockTimeline.OutcomeGate = OutcomeGate;
})();
