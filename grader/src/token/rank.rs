//! How many independent bits a set of bit columns holds: their rank over GF(2).
//!
//! Each column is one bit position of the tokens, read down the samples: a
//! vector with one bit per token. Two columns that always agree (a bit
//! printed twice), or a column that is the XOR of others (a bit derived from
//! them), add nothing new, and Gaussian elimination over GF(2) counts exactly
//! the columns that do. A counter or a clock has only a few bits that move,
//! so however it is printed its columns span a small space; `n` independent
//! random bits span `n` dimensions whenever there are comfortably more
//! samples than bits.

/// A column: one bit per sample, packed 64 to a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    words: Vec<u64>,
}

impl Column {
    /// A column of `samples` zero bits.
    pub fn zeros(samples: usize) -> Column {
        Column {
            words: vec![0; samples.div_ceil(64)],
        }
    }

    /// A column of `samples` one bits.
    pub fn ones(samples: usize) -> Column {
        let mut column = Column::zeros(samples);
        for sample in 0..samples {
            column.set(sample);
        }
        column
    }

    /// Sets the bit of `sample`.
    pub fn set(&mut self, sample: usize) {
        self.words[sample / 64] |= 1 << (sample % 64);
    }

    /// How many samples have this bit set.
    pub fn ones_count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The lowest sample whose bit is set, as (word, mask).
    fn pivot(&self) -> Option<(usize, u64)> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| (i, w & w.wrapping_neg()))
    }

    fn xor(&mut self, other: &Column) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a ^= b;
        }
    }
}

/// The rank over GF(2) of `columns`, all of the same length, or `limit` if
/// it is at least that.
///
/// Each column is reduced by the basis found so far; every basis vector has
/// a zero at the pivot of each one found before it, so reducing in order
/// clears every pivot, and what remains is either zero (dependent) or a new
/// basis vector.
pub fn rank(columns: impl IntoIterator<Item = Column>, limit: usize) -> usize {
    let mut basis: Vec<(usize, u64, Column)> = Vec::new();
    for mut column in columns {
        // No more than one dimension per bit of a column: once there, stop.
        if basis.len() >= limit || basis.len() == 64 * column.words.len() {
            break;
        }
        for (word, mask, b) in &basis {
            if column.words[*word] & mask != 0 {
                column.xor(b);
            }
        }
        if let Some((word, mask)) = column.pivot() {
            basis.push((word, mask, column));
        }
    }
    basis.len()
}

/// The affine rank of `columns` over `samples` samples, or `limit` if it is
/// at least that: the rank with the all-ones column added, less one. A bit
/// and its complement (`x` and `x XOR 1`) then count once, as they should.
pub fn affine_rank(
    columns: impl IntoIterator<Item = Column>,
    samples: usize,
    limit: usize,
) -> usize {
    rank(
        std::iter::once(Column::ones(samples)).chain(columns),
        limit + 1,
    ) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column from a string of '0' and '1', one character per sample.
    fn col(bits: &str) -> Column {
        let mut c = Column::zeros(bits.len());
        for (i, b) in bits.chars().enumerate() {
            if b == '1' {
                c.set(i);
            }
        }
        c
    }

    #[test]
    fn independent_columns_count_one_each() {
        assert_eq!(rank([col("1000"), col("0100"), col("0010")], 9), 3);
        assert_eq!(rank([col("1000"), col("0100"), col("0010")], 2), 2);
        assert_eq!(rank([col("1100"), col("0110"), col("0011")], 9), 3);
    }

    #[test]
    fn a_repeated_or_derived_column_counts_nothing() {
        assert_eq!(rank([col("1010"), col("1010")], 9), 1);
        // The third is the XOR of the first two.
        assert_eq!(rank([col("1100"), col("0110"), col("1010")], 9), 2);
        assert_eq!(rank([col("0000")], 9), 0);
    }

    #[test]
    fn a_complement_counts_once_in_the_affine_rank() {
        assert_eq!(rank([col("1100"), col("0011")], 9), 2);
        assert_eq!(affine_rank([col("1100"), col("0011")], 4, 9), 1);
        assert_eq!(affine_rank([col("1111")], 4, 9), 0);
        assert_eq!(affine_rank(Vec::new(), 4, 9), 0);
    }

    #[test]
    fn the_rank_stops_at_one_dimension_per_sample() {
        let unit = |i: usize| {
            let mut c = Column::zeros(64);
            c.set(i % 64);
            c
        };
        assert_eq!(rank((0..200).map(unit), 100), 64);
    }

    #[test]
    fn columns_longer_than_a_word_reduce_across_words() {
        let n = 130;
        let mut a = Column::zeros(n);
        let mut b = Column::zeros(n);
        let mut c = Column::zeros(n);
        for s in [3, 70, 129] {
            a.set(s);
            c.set(s);
        }
        for s in [70, 100] {
            b.set(s);
            c.set(s);
        }
        // c = a XOR b, except that bit 70 cancels: c must have 70 clear.
        c.words[1] &= !(1 << (70 - 64));
        assert_eq!(rank([a.clone(), b.clone(), c], 9), 2);
        let mut d = a.clone();
        d.set(5);
        assert_eq!(rank([a, b, d], 9), 3);
        assert_eq!(Column::ones(n).ones_count(), n);
    }
}
