//! Which addresses a fetch may connect to: public ones only. Loopback,
//! private, link-local (the cloud metadata address among them), shared
//! (carrier NAT), unspecified, broadcast, multicast and reserved ranges
//! are refused, in IPv4 and IPv6, an IPv4 address carried inside an IPv6
//! one (mapped, compatible, NAT64, 6to4) included.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not fetched (`None`: a public address).
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if ip.is_link_local() {
        "link-local"
    } else if ip.is_unspecified() || a == 0 {
        "unspecified"
    } else if ip.is_broadcast() {
        "broadcast"
    } else if ip.is_multicast() {
        "multicast"
    } else if a == 100 && (64..128).contains(&b) {
        "shared (carrier-grade NAT)"
    } else if (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) || a >= 240 {
        "reserved"
    } else {
        return None;
    })
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_multicast() {
        "multicast"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link-local"
    } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        "private"
    } else if s[..6] == [0; 6] {
        // `::a.b.c.d` (IPv4-compatible, deprecated).
        return refused_v4(embedded(s[6], s[7]));
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64: the IPv4 address it reaches.
        return refused_v4(embedded(s[6], s[7]));
    } else if s[0] == 0x2002 {
        // 6to4: the IPv4 address of its relay.
        return refused_v4(embedded(s[1], s[2]));
    } else {
        return None;
    })
}

fn embedded(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(text: &str) -> Option<&'static str> {
        refused(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass_and_the_rest_say_why_not() {
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"] {
            assert_eq!(why(public), None, "{public}");
        }
        for (addr, reason) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("::1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("fd00::1", "private"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("255.255.255.255", "broadcast"),
            ("224.0.0.1", "multicast"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::10.0.0.1", "private"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:7f00:1::", "loopback"),
        ] {
            assert_eq!(why(addr), Some(reason), "{addr}");
        }
    }
}
