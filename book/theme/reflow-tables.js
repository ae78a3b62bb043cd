// Wide tables on a phone: one card per row.
//
// A chapter's comparison table (the choices of chapter 8, the Redlock debate's
// side by side) has more columns than a 390 px screen can show; scrolled
// sideways, its last column is out of sight. So every table of a chapter with
// a heading row gets the class tl-reflow, and each of its cells the name of its
// column as data-label; timeline-what-if.css turns such a table, below 600 px,
// into one card per row, each value under its column's name. The timeline
// strips are left alone: their columns are seconds, and they fold instead.
(function () {
    'use strict';

    function reflow(table) {
        const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
        if (heads.length < 2) {
            return;
        }
        for (const row of table.querySelectorAll('tbody tr')) {
            [...row.children].forEach((cell, i) => {
                if (heads[i] && !cell.hasAttribute('data-label')) {
                    cell.setAttribute('data-label', heads[i]);
                }
            });
        }
        table.classList.add('tl-reflow');
    }

    function start() {
        for (const table of document.querySelectorAll('main table:not(.tl-strip)')) {
            reflow(table);
        }
    }

    if (document.readyState === 'loading') {
        document.addEventListener('DOMContentLoaded', start);
    } else {
        start();
    }
})();
