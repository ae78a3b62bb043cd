//! Prints every timeline of the book, as text: `cargo run -p grader --example play [NAME]`.
fn main() -> Result<(), grader::error::GradeError> {
    let only = std::env::args().nth(1);
    for demo in grader::demos::all() {
        if only.as_deref().is_some_and(|name| name != demo.name) {
            continue;
        }
        println!("{}", demo.timeline()?.render(None));
    }
    Ok(())
}
