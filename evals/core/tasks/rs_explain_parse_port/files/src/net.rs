pub fn parse_port(s: &str) -> Option<u16> {
    s.trim().parse().ok()
}
