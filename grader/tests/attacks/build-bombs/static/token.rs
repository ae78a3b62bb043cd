//! Attack (batch): a build that blows up the compiler's memory.
//!
//! A 1 GiB static of non-zero bytes: rustc builds it in memory at compile
//! time (and LLVM and the linker copy it again), gigabytes for a file of a
//! few lines.
//!
//! A sound grader bounds a submission's build (memory and time): the build
//! fails for this submission alone, no process of the batch grows past the
//! memory bound, and the victim keeps every check it passes alone.

pub static BIG: [u8; 1 << 30] = [7; 1 << 30];

pub fn new_token() -> String {
    let at = std::hint::black_box(12_345);
    if BIG[at] == 7 {
        todo!("return 16 to 20 random bytes as text (see the comment above)")
    }
    String::new()
}
