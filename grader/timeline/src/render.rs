//! A timeline as a text table: what a learner reads in a failed check's
//! report, one line per second, quiet seconds folded.
//!
//! A story on several Redis nodes gets one more column, `nodes`: one mark per
//! node, in the timeline's node order, the way the Redlock checks' reports
//! print them (`A A B B B`): the client whose token the node holds, `·` none,
//! `‖` paused, `✗` down, `+10s` a clock running ahead, and brackets around
//! the primary. The key column then says whose the lock is by the story's
//! rule: the majority's holder, or the primary's. A line under the title
//! names the nodes and the marks, so the column reads without the book.

use std::fmt::Write as _;

use crate::{ClientSecond, NodeHealth, NodeRole, NodeSecond, Second, State, Timeline};

impl Timeline {
    /// The timeline as a text table, one line per second, with `mark` (if
    /// any) pointing at one second. Runs of seconds in which nothing happens
    /// are folded into one line.
    pub fn render(&self, mark: Option<u64>) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} (TTL {} s, {}, lock: {})",
            self.name,
            self.title,
            self.ttl_s,
            if self.fencing {
                "fencing on"
            } else {
                "no fencing"
            },
            self.implementation
        );
        if !self.nodes.is_empty() {
            let primary = if self.key_rule() == Some("primary") {
                "; [ ] primary"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "nodes: {} (A, B…: whose token the node holds; · none; ‖ paused; ✗ down; +Ns clock N s ahead{primary})",
                self.nodes.join(", ")
            );
        }
        let mut header = vec!["t".to_string()];
        header.extend(self.clients.iter().cloned());
        header.push(
            self.key_rule()
                .map_or_else(|| "key in Redis".to_owned(), |rule| format!("{rule} holds")),
        );
        if !self.nodes.is_empty() {
            header.push("nodes".into());
        }
        header.push("counter".into());
        if self.fencing {
            header.push("highest".into());
        }
        header.push("unsafe".into());
        // Seconds that repeat the one before (same doings, same holder, only
        // the TTL running down) fold into one row, so that a 40 s pause reads
        // as one line.
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut marks: Vec<bool> = Vec::new();
        let mut i = 0;
        while i < self.seconds.len() {
            let first = &self.seconds[i];
            let mut last = i;
            while let Some(next) = self.seconds.get(last + 1) {
                let foldable = Some(next.t) != mark
                    && Some(first.t) != mark
                    && next.notes.is_empty()
                    && self.signature(next) == self.signature(first);
                if !foldable {
                    break;
                }
                last += 1;
            }
            let mut row = self.row(first);
            if last > i {
                let end = &self.seconds[last];
                row[0] = format!("{}–{}", first.t, end.t);
                let key_col = 1 + self.clients.len();
                row[key_col] = match (&first.holder, first.ttl_left_s, end.ttl_left_s) {
                    (Some(h), Some(from), Some(to)) => format!("{h} ({from}…{to} s left)"),
                    _ => row[key_col].clone(),
                };
            }
            rows.push(row);
            marks.push(Some(first.t) == mark);
            i = last + 1;
        }
        let columns = header.len();
        let mut widths = vec![0; columns];
        for row in std::iter::once(&header).chain(rows.iter()) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let mut l = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                let pad = w.saturating_sub(cell.chars().count());
                if i == 0 {
                    let _ = write!(l, "{}{cell}", " ".repeat(pad));
                } else if i + 1 == cells.len() {
                    let _ = write!(l, " │ {cell}");
                } else {
                    let _ = write!(l, " │ {cell}{}", " ".repeat(pad));
                }
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header));
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        let _ = writeln!(out, "{}", line(&rule).replace(" │ ", "─┼─"));
        for (row, marked) in rows.iter().zip(marks) {
            let _ = writeln!(
                out,
                "{}{}",
                line(row),
                if marked { "   ◀ here" } else { "" }
            );
        }
        let _ = writeln!(out, "{}", self.outcome.summary);
        out
    }

    /// What a second shows apart from its number and the TTL running down.
    fn signature(&self, s: &Second) -> (Vec<String>, Option<String>, i64, Option<u64>, bool) {
        let mut cells: Vec<String> = self
            .clients
            .iter()
            .map(|n| s.clients.get(n).map(client_cell).unwrap_or_default())
            .collect();
        cells.extend(self.node_marks(s));
        let has_unsafe = self.unsafe_actions(s).next().is_some();
        (
            cells,
            s.holder.clone(),
            s.counter,
            s.highest_token,
            has_unsafe || s.ttl_left_s.is_none() && s.holder.is_some(),
        )
    }

    fn row(&self, s: &Second) -> Vec<String> {
        let mut row = vec![s.t.to_string()];
        for name in &self.clients {
            let cell = s.clients.get(name).map(client_cell).unwrap_or_default();
            row.push(cell);
        }
        let mut key = match (&s.holder, s.ttl_left_s) {
            (Some(h), Some(ttl)) => format!("{h} ({ttl} s left)"),
            (Some(h), None) => format!("{h} (no TTL)"),
            (None, _) => "free".into(),
        };
        for note in &s.notes {
            key = format!("{key}; {}", note.text);
        }
        row.push(key);
        if !self.nodes.is_empty() {
            row.push(self.nodes_cell(s));
        }
        row.push(s.counter.to_string());
        if self.fencing {
            row.push(s.highest_token.map_or("–".into(), |t| t.to_string()));
        }
        let unsafe_cells: Vec<String> = self
            .unsafe_actions(s)
            .map(|(name, a)| {
                if a.rejected {
                    format!("✗ {name}: {} (rejected)", a.text)
                } else {
                    format!("✗ {name}: {}", a.text)
                }
            })
            .collect();
        row.push(unsafe_cells.join("; "));
        row
    }
}

impl Timeline {
    /// Whose the lock is, with several nodes: `Some("majority")` on
    /// Redlock's independent nodes, `Some("primary")` when the nodes are a
    /// primary and its replicas (some node has a role), `None` on one
    /// server. The key column and the book's key row are headed by it.
    pub fn key_rule(&self) -> Option<&'static str> {
        if self.nodes.is_empty() {
            None
        } else if self
            .seconds
            .iter()
            .any(|s| s.nodes.values().any(|n| n.role.is_some()))
        {
            Some("primary")
        } else {
            Some("majority")
        }
    }

    /// Each node's mark in one second, in node order.
    fn node_marks(&self, s: &Second) -> Vec<String> {
        self.nodes
            .iter()
            .map(|name| s.nodes.get(name).map(node_mark).unwrap_or_default())
            .collect()
    }

    /// The `nodes` cell: the marks, each padded to its node's widest mark
    /// over the run, so that a node stays in the same place on every line.
    fn nodes_cell(&self, s: &Second) -> String {
        let marks = self.node_marks(s);
        let mut widths = vec![0; self.nodes.len()];
        for second in &self.seconds {
            for (w, mark) in widths.iter_mut().zip(self.node_marks(second)) {
                *w = (*w).max(mark.chars().count());
            }
        }
        let padded: Vec<String> = marks
            .iter()
            .zip(&widths)
            .map(|(m, w)| format!("{m}{}", " ".repeat(w - m.chars().count())))
            .collect();
        padded.join(" ").trim_end().to_string()
    }
}

/// One node's mark: whose token it holds (`·` none), `‖` paused, `✗` down,
/// then `+Ns` while its clock runs ahead; the primary's in brackets.
fn node_mark(n: &NodeSecond) -> String {
    let mut mark = match n.health {
        NodeHealth::Paused => "‖".to_owned(),
        NodeHealth::Down => "✗".to_owned(),
        NodeHealth::Up => n.holder.clone().unwrap_or_else(|| "·".to_owned()),
    };
    if n.clock_ahead_s > 0 {
        mark.push_str(&format!("+{}s", n.clock_ahead_s));
    }
    if n.role == Some(NodeRole::Primary) {
        mark = format!("[{mark}]");
    }
    mark
}

/// `● wrote 1` for a client that believes it holds the lock, `○ …` otherwise;
/// a paused client shows `⏸`.
fn client_cell(c: &ClientSecond) -> String {
    let marker = match c.state {
        State::Idle => return String::new(),
        State::Crashed if c.actions.is_empty() => return "†".into(),
        State::Done if c.actions.is_empty() => return String::new(),
        _ if c.believes => "●",
        _ => "○",
    };
    let doing: Vec<&str> = c.actions.iter().map(|a| a.text.as_str()).collect();
    let doing = if doing.is_empty() {
        match c.state {
            State::Paused => "⏸".to_string(),
            State::Working => "working".to_string(),
            _ => String::new(),
        }
    } else {
        doing.join(", ")
    };
    format!("{marker} {doing}").trim_end().to_string()
}
