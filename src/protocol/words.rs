//! How counts read in what people see: `counted(1, "hunk")` is "1 hunk",
//! `counted(2, "hunk")` is "2 hunks" (every noun we count takes an `s`).

/// `n` and `noun`, the noun in the plural unless `n` is 1.
pub fn counted<N: std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(counted(0, "hunk"), "0 hunks");
        assert_eq!(counted(1, "file"), "1 file");
        assert_eq!(counted(12u64, "job"), "12 jobs");
    }
}
