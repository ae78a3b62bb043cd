// The calls of one second of a recorded run, for the message diagram
// (timeline-messages.js): which commands a client sent as one call of its
// lock (a script load and its EVALSHA, MULTI … EXEC, a write and the WAIT for
// it, Redlock's SET to every node and the release after a refused round),
// what each call did, and where each row of the diagram goes.
//
// A timeline records commands (`messages`) and what each client did
// (`actions`) apart; a call is what pairs them. The commands a client sent to
// one side (the lock's servers, or the storage) are cut into units: a command
// alone, a command with those that belong to it, or a round of one command to
// several nodes. When there are as many units as actions, each unit is the
// call of its action; otherwise all of them are one call, which says every
// action once. This file draws nothing: it is plain logic, loadable without a
// page.
(function (root) {
    'use strict';

    /** The side of the picture a lane is on: the storage, or the lock's servers. */
    function sideOf(lane) {
        return lane === 'storage' ? 'storage' : 'redis';
    }

    // The side each action is done on, and the lock function it is a call of.
    const ACTIONS = {
        acquired: ['redis', 'acquire'],
        denied: ['redis', 'acquire'],
        released: ['redis', 'release'],
        release_refused: ['redis', 'release'],
        deleted_other: ['redis', 'release'],
        renewed: ['redis', 'extend'],
        lease_lost: ['redis', 'extend'],
        read: ['storage', 'read'],
        wrote: ['storage', 'write'],
        read_rejected: ['storage', 'read'],
        write_rejected: ['storage', 'write'],
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

    /** A command's first word, as Redis reads it: "SET", "EVALSHA". */
    function wordOf(m) {
        return m.command.split(' ')[0].toUpperCase();
    }

    /** Whether a lane is one of Redlock's nodes (not "redis", not "storage"). */
    function isNode(lane) {
        return lane !== 'redis' && lane !== 'storage';
    }

    // Commands that finish the call of the command before them: the WAIT for
    // a write's replicas, the EXEC of a transaction.
    const FOLLOWS = new Set(['WAIT', 'EXEC']);
    // Commands that open a call with the command after them: a script load
    // before its EVALSHA, a WATCH or MULTI before the commands they guard.
    const LEADS = new Set(['SCRIPT', 'WATCH', 'MULTI']);

    /**
     * A client's commands to one side, in the order sent, cut into the units
     * a call is made of (lists of messages). A round, one command to several
     * nodes, is one unit; so is a command with those that belong to it.
     */
    function unitsOf(sent) {
        const units = [];
        let open = false; // the last unit takes the next command (after a LEADS word, inside MULTI)
        let inMulti = false;
        for (const m of sent) {
            const word = wordOf(m);
            const last = units[units.length - 1];
            const sameRound = last && isNode(m.to) && last.every((o) => wordOf(o) === word && isNode(o.to) && o.to !== m.to);
            if (last && (open || FOLLOWS.has(word) || sameRound)) {
                last.push(m);
            } else {
                units.push([m]);
            }
            if (word === 'MULTI') {
                inMulti = true;
            } else if (word === 'EXEC') {
                inMulti = false;
            }
            open = inMulti || LEADS.has(word);
        }
        return units;
    }

    /**
     * A second's calls, in the order their first command was sent: each
     * `{client, messages, actions}`, `actions` being what the call did (none
     * when the client recorded nothing for those commands).
     */
    function callsOf(timeline, second, messages) {
        const calls = [];
        for (const client of timeline.clients) {
            for (const side of ['redis', 'storage']) {
                const sent = messages.filter((m) => m.client === client && sideOf(m.to) === side);
                if (sent.length === 0) {
                    continue;
                }
                const did = second.clients[client].actions.filter((a) => (ACTIONS[a.kind] || [])[0] === side);
                const units = unitsOf(sent);
                if (units.length === did.length) {
                    units.forEach((unit, i) => calls.push({ client, messages: unit, actions: [did[i]] }));
                } else if (did.length === 0) {
                    units.forEach((unit) => calls.push({ client, messages: unit, actions: [] }));
                } else {
                    calls.push({ client, messages: sent, actions: did });
                }
            }
        }
        const first = (call) => messages.indexOf(call.messages[0]);
        return calls.sort((a, b) => first(a) - first(b));
    }

    /** A call's name, said once over its commands: "B: acquire — taken: not granted". */
    function callName(call) {
        const said = call.actions.map((a) => `${(ACTIONS[a.kind] || [])[1] || a.kind} — ${meaningOf(a)}`);
        return said.length ? `${call.client}: ${said.join('; ')}` : `${call.client}: ${call.messages.length} commands`;
    }

    /** Whether the server answered (files without the field: it did). */
    function answered(m) {
        return m.answered !== false;
    }

    /** A reply in a few characters, for a command inside a call: "OK", "nil", "1", "2 replicas". */
    function shortReply(m) {
        if (!answered(m)) {
            return 'no reply';
        }
        const reply = m.reply.replace(/^\(integer\) /, '').replace(/^\(nil\)$/, 'nil');
        if (wordOf(m) === 'WAIT' && /^\d+$/.test(reply)) {
            return `${reply} ${reply === '1' ? 'replica' : 'replicas'}`;
        }
        return reply.length > 12 ? reply.slice(0, 11) + '…' : reply;
    }

    /** What a round's replies came to: "3 OK, 2 no reply". */
    function roundSummary(round) {
        const counts = new Map();
        for (const m of round) {
            const reply = shortReply(m);
            counts.set(reply, (counts.get(reply) || 0) + 1);
        }
        // "3 OK", "2 no reply", but "3 × 0": a count beside a number would read as one.
        return [...counts].map(([reply, n]) => (/^\d/.test(reply) ? `${n} × ${reply}` : `${n} ${reply}`)).join(', ');
    }

    /** A round said in a line: "SET to 5 nodes: 3 OK, 2 no reply". */
    function roundLine(round) {
        return `${wordOf(round[0])} to ${round.length} nodes: ${roundSummary(round)}`;
    }

    // The diagram's rows, in px: a command and its reply take two rows; a
    // round (one command to several nodes) takes those and a strip for the
    // nodes' replies; a call of several commands has its name over them.
    const ROW = 26;
    const ROUND_EXTRA = 12;
    const NAME_ROW = 18;

    /**
     * Where each piece of a second's diagram goes, from `top`: a list of
     * blocks in the order drawn, each `{y, call}` (a call's name, with `end`,
     * where its last command's reply ends), `{y, message, index, inCall}` or
     * `{y, round, first, inCall}` (`first` the index of its first command),
     * and the height the picture needs.
     */
    function layout(calls, messages, top) {
        const blocks = [];
        let y = top;
        for (const call of calls) {
            const named = call.messages.length > 1;
            const head = named ? { y, call } : null;
            if (head) {
                blocks.push(head);
                y += NAME_ROW;
            }
            for (const unit of unitsOf(call.messages)) {
                const round = unit.length > 1 && unit.every((m) => isNode(m.to) && wordOf(m) === wordOf(unit[0]));
                if (round) {
                    blocks.push({ y, round: unit, first: messages.indexOf(unit[0]), inCall: named });
                    y += 2 * ROW + ROUND_EXTRA;
                } else {
                    for (const message of unit) {
                        blocks.push({ y, message, index: messages.indexOf(message), inCall: named });
                        y += 2 * ROW;
                    }
                }
            }
            if (head) {
                head.end = y - 6;
            }
        }
        return { blocks, height: y + 10 };
    }

    root.LockTimeline = Object.assign(root.LockTimeline || {}, {
        calls: { callsOf, callName, layout, meaningOf, answered, shortReply, roundSummary, roundLine, wordOf, ROW, ROUND_EXTRA },
    });
})(typeof window !== 'undefined' ? window : globalThis);
