pub fn mean(v: &[u32]) -> u32 {
    v.iter().sum::<u32>() / v.len() as u32
}
