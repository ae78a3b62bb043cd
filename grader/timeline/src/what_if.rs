//! "What if": one story played again for every combination of a few values.
//!
//! A demo of the book shows one run: a 10 s TTL, a 14 s pause, no fencing. The
//! reader's next question is "and with a 20 s TTL? with fencing?", and the
//! only honest answer is another run. A [`WhatIf`] grid holds those runs:
//! a few controls (the TTL, the pause or the job's length, fencing, the
//! release), each with a few values, and one recorded [`Timeline`] for every
//! combination, made by the grader against Redis like every other timeline.
//!
//! A grid is stored as one JSON file, `book/src/what-if/<name>.json`, which
//! the player fetches only when the reader touches a control. To keep it
//! small, a cell whose run is one of the book's own timelines (the demo the
//! grid starts from) names that timeline instead of repeating it.

use serde::{Deserialize, Serialize};

use crate::Timeline;

/// Every run of one story over a small grid of values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhatIf {
    /// The grid's name: the file's stem, and the `{{#what-if NAME}}` argument.
    pub name: String,
    /// What the grid asks, in plain words, e.g. "What if the TTL, the pause or fencing changes?".
    pub question: String,
    /// The controls, in the order shown.
    pub controls: Vec<Control>,
    /// Every combination of the controls' values, the last control varying fastest.
    pub cells: Vec<Cell>,
}

/// One thing the reader can change, and the values offered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// What it changes, e.g. `TTL`.
    pub label: String,
    /// The values offered, as shown, e.g. `["10 s", "20 s"]`.
    pub values: Vec<String>,
}

/// One combination and its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// One value per control, in the controls' order.
    pub choice: Vec<String>,
    /// The book's timeline that is this very run but for its name, title and story,
    /// if there is one; the run is then not repeated here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<String>,
    /// The run, when it is not one of the book's timelines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Timeline>,
}

impl WhatIf {
    /// The grid as JSON, without indentation: it is fetched over the network.
    pub fn to_json(&self) -> String {
        // Serialising plain structs and maps of strings cannot fail.
        serde_json::to_string(self).unwrap_or_default() + "\n"
    }

    /// The name a cell's run carries: the grid's name and the cell's values,
    /// e.g. `gc-pause-20s-14s-on` (letters and digits of each value, joined by `-`).
    pub fn cell_name(grid: &str, choice: &[String]) -> String {
        let mut name = grid.to_owned();
        for value in choice {
            let slug: String = value
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            name.push('-');
            name.push_str(&slug);
        }
        name
    }

    /// Checks what serde cannot: the file's name, one cell for every combination and
    /// no other, each cell either naming a book timeline (for which `is_book_timeline`
    /// answers true) or carrying a valid run named by [`WhatIf::cell_name`].
    pub fn validate(
        &self,
        expected_name: &str,
        is_book_timeline: impl Fn(&str) -> bool,
    ) -> Result<(), String> {
        if self.name != expected_name {
            return Err(format!(
                "\"name\" is {:?} but the file is named {expected_name:?}.json",
                self.name
            ));
        }
        if self.controls.is_empty() {
            return Err("\"controls\" is empty".to_owned());
        }
        for control in &self.controls {
            if control.values.len() < 2 {
                return Err(format!(
                    "control {:?} offers fewer than two values",
                    control.label
                ));
            }
            for (i, value) in control.values.iter().enumerate() {
                if control.values[..i].contains(value) {
                    return Err(format!(
                        "control {:?} offers {value:?} twice",
                        control.label
                    ));
                }
            }
        }
        let combinations: usize = self.controls.iter().map(|c| c.values.len()).product();
        if self.cells.len() != combinations {
            return Err(format!(
                "{} cells for {combinations} combinations of the controls",
                self.cells.len()
            ));
        }
        for (i, cell) in self.cells.iter().enumerate() {
            self.validate_cell(cell, &is_book_timeline)?;
            if self.cells[..i].iter().any(|c| c.choice == cell.choice) {
                return Err(format!("the cell {:?} is there twice", cell.choice));
            }
        }
        Ok(())
    }

    fn validate_cell(
        &self,
        cell: &Cell,
        is_book_timeline: impl Fn(&str) -> bool,
    ) -> Result<(), String> {
        let offered = cell.choice.len() == self.controls.len()
            && cell
                .choice
                .iter()
                .zip(&self.controls)
                .all(|(value, control)| control.values.contains(value));
        if !offered {
            return Err(format!(
                "the cell {:?} is not one value of each control",
                cell.choice
            ));
        }
        match (&cell.same_as, &cell.run) {
            (Some(name), None) if is_book_timeline(name) => Ok(()),
            (Some(name), None) => Err(format!(
                "the cell {:?} is the same as {name:?}, which is not one of the book's timelines",
                cell.choice
            )),
            (None, Some(run)) => run
                .validate(&Self::cell_name(&self.name, &cell.choice))
                .map_err(|reason| format!("the cell {:?}: {reason}", cell.choice)),
            _ => Err(format!(
                "the cell {:?} needs exactly one of \"same_as\" and \"run\"",
                cell.choice
            )),
        }
    }
}

impl Timeline {
    /// How many times a client acted on a lock it no longer held and the storage let
    /// it: the ✗ marks not labelled "rejected". A run is safe when there are none.
    pub fn harmful_actions(&self) -> usize {
        self.seconds
            .iter()
            .map(|s| self.unsafe_actions(s).filter(|(_, a)| !a.rejected).count())
            .sum()
    }

    /// Whether `other` is the same run, apart from its name, title and story.
    pub fn same_run_as(&self, other: &Timeline) -> bool {
        let retitled = Timeline {
            name: other.name.clone(),
            title: other.title.clone(),
            story: other.story.clone(),
            ..self.clone()
        };
        retitled == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(cells: Vec<Cell>) -> WhatIf {
        WhatIf {
            name: "g".into(),
            question: "What if?".into(),
            controls: vec![Control {
                label: "TTL".into(),
                values: vec!["10 s".into(), "20 s".into()],
            }],
            cells,
        }
    }

    fn named(choice: &str, same_as: &str) -> Cell {
        Cell {
            choice: vec![choice.into()],
            same_as: Some(same_as.into()),
            run: None,
        }
    }

    #[test]
    fn a_cells_name_keeps_the_letters_and_digits_of_each_value() {
        let choice = ["20 s".to_owned(), "plain DEL".to_owned()];
        assert_eq!(
            WhatIf::cell_name("slow-job", &choice),
            "slow-job-20s-plaindel"
        );
    }

    #[test]
    fn every_combination_once_and_nothing_else() {
        let book = |name: &str| name == "a" || name == "b";
        assert_eq!(
            grid(vec![named("10 s", "a"), named("20 s", "b")]).validate("g", book),
            Ok(())
        );
        assert_eq!(
            grid(vec![named("10 s", "a"), named("10 s", "b")]).validate("g", book),
            Err("the cell [\"10 s\"] is there twice".to_owned())
        );
        assert_eq!(
            grid(vec![named("10 s", "a"), named("30 s", "b")]).validate("g", book),
            Err("the cell [\"30 s\"] is not one value of each control".to_owned())
        );
        assert_eq!(
            grid(vec![named("10 s", "a"), named("20 s", "c")]).validate("g", book),
            Err("the cell [\"20 s\"] is the same as \"c\", which is not one of the book's timelines".to_owned())
        );
        assert!(grid(vec![named("10 s", "a")]).validate("g", book).is_err());
        assert!(
            grid(vec![named("10 s", "a"), named("20 s", "b")])
                .validate("h", book)
                .is_err()
        );
    }
}
