// Build: rustc -C opt-level=2 -g -C remark=inline -o inl inl.rs
// The callees are large enough that rustc's MIR inliner leaves them to
// LLVM, whose inlining remarks are the truth.
fn mix(x: u64) -> u64 {
    let mut h = x ^ 0x9e37_79b9_7f4a_7c15;
    for i in 0..(x & 7) {
        h = h.rotate_left(13).wrapping_mul(0xff51_afd7_ed55_8ccd) ^ (h >> 29) ^ i;
        if h & 0xff == 0x42 {
            h = h.wrapping_add(x.count_ones() as u64);
        }
    }
    h
}

fn combine(a: u64, b: u64, c: u64) -> u64 {
    let mut acc = mix(a);
    for k in 0..(b & 3) {
        acc = acc.wrapping_add(mix(b ^ k)).rotate_right(7);
    }
    acc ^ c.wrapping_mul(31)
}

#[inline(never)]
fn work(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = s.wrapping_add(combine(i, n, 1));
    }
    s ^ mix(n)
}

fn main() {
    let n = std::env::args().count() as u64 + 9;
    println!("{} {}", work(n), combine(n, 2, 3));
}
