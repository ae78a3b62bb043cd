//! Expanding the directives of one chapter.
//!
//! The chapter's Markdown is kept byte for byte except where a directive
//! stood: each one is replaced by its HTML, splicing from the last to the
//! first so that the byte ranges found by [`crate::directive::find`] stay
//! valid. (Re-rendering the parsed Markdown instead would reformat the
//! whole chapter and break other preprocessors' directives.)

use crate::directive::{self, Directive, Kind};
use crate::error::{Error, Problem};
use crate::library::Library;
use crate::library::demo_label;
use crate::player::{self, PageState};
use crate::strip;
use crate::what_if;

/// Returns `markdown` with every `{{#timeline}}`, `{{#player}}` and `{{#what-if}}` in its
/// prose replaced by HTML. `chapter` names the chapter in errors.
pub fn expand(markdown: &str, chapter: &str, library: &mut Library) -> Result<String, Error> {
    let directives = directive::find(markdown).map_err(|m| Error::Directive {
        chapter: chapter.to_owned(),
        line: m.line,
        directive: m.text,
        source: Problem::Syntax(m.error),
    })?;
    let mut page = PageState::new();
    let mut replacements = Vec::with_capacity(directives.len());
    // Rendered front to back, so the first player on the page carries the
    // data and ids count up in reading order.
    for directive in &directives {
        let html = render(directive, library, &mut page).map_err(|source| Error::Directive {
            chapter: chapter.to_owned(),
            line: directive.line,
            directive: markdown[directive.range.clone()].to_owned(),
            source,
        })?;
        replacements.push((directive.range.clone(), html));
    }
    let mut out = markdown.to_owned();
    for (range, html) in replacements.into_iter().rev() {
        let indent = indentation(markdown, range.start);
        // Inside a list item every line of the block needs the item's
        // indentation, or the item would end after the first line.
        let html = html.replace('\n', &format!("\n{indent}"));
        // The directive stands alone on its line, so the line's own newline
        // follows; one more makes the blank line that ends the HTML block.
        out.replace_range(range, &format!("{html}\n"));
    }
    Ok(out)
}

/// The whitespace between the start of the line and byte `at`.
fn indentation(markdown: &str, at: usize) -> &str {
    let line_start = markdown[..at].rfind('\n').map_or(0, |i| i + 1);
    &markdown[line_start..at]
}

fn render(
    directive: &Directive,
    library: &mut Library,
    page: &mut PageState,
) -> Result<String, Problem> {
    match directive.kind {
        Kind::Timeline => Ok(strip::render(
            library.get(&directive.name)?,
            demo_label(&directive.name).as_deref(),
        )),
        Kind::Player => {
            // Read the named file first: if it is the one that is missing,
            // the error should say so rather than blame the folder.
            library.get(&directive.name)?;
            let json = if page.take_data_slot() {
                Some(library.embedded_json()?.to_owned())
            } else {
                None
            };
            let id = page.player_id(&directive.name);
            Ok(player::render(
                library.get(&directive.name)?,
                &id,
                json.as_deref(),
            ))
        }
        Kind::WhatIf => {
            let grid = library.what_if(&directive.name)?.clone();
            let mut runs = Vec::with_capacity(grid.cells.len());
            for cell in &grid.cells {
                runs.push(match (&cell.run, &cell.same_as) {
                    (Some(run), _) => run.clone(),
                    (None, Some(name)) => library.get(name)?.clone(),
                    // `what_if` refuses such a cell; say so rather than panic if it ever did not.
                    (None, None) => {
                        return Err(crate::error::LoadError::Invalid {
                            path: directive.name.clone().into(),
                            reason: format!("the cell {:?} has no run", cell.choice),
                        }
                        .into());
                    }
                });
            }
            let rows: Vec<what_if::Row<'_>> = grid
                .cells
                .iter()
                .zip(&runs)
                .map(|(cell, run)| what_if::Row {
                    choice: &cell.choice,
                    same_as: cell.same_as.as_deref(),
                    run,
                })
                .collect();
            Ok(what_if::render(&grid, &rows))
        }
    }
}
