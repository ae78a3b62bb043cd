//! Attack (batch): the constant that never finishes (see `lib.rs`).

const SPIN: u64 = {
    let mut i: u64 = 0;
    while i < (1 << 40) {
        i += 1;
    }
    i
};

pub fn new_token() -> String {
    if std::hint::black_box(SPIN) > 0 {
        todo!("return 16 to 20 random bytes as text (see the comment above)")
    }
    String::new()
}
