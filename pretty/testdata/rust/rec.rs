// Writes three Rec records (Rust's own layout: fields reordered) to the
// file named by the first argument as they are in memory, and prints what
// each holds, one "INDEX PATH=VALUE" line per member: the truth gopahole
// --prettify must print.
// build: rustc -g -C opt-level=0 -o rec rec.rs
use std::io::Write;

#[derive(Clone, Copy)]
#[allow(dead_code)]
enum Shape { Dot, Circle(u32), Rect { w: u16, h: u16 } }

#[derive(Clone, Copy)]
struct Rec {
    a: u8,
    b: u64,
    c: i16,
    ok: bool,
    f: f32,
    ch: char,
    bytes: [u8; 3],
    opt: Option<u32>,
    shape: Shape,
    big: i128,
}

fn main() {
    let mut rs = [Rec { a: 0, b: 0, c: 0, ok: false, f: 0.0, ch: 'a', bytes: [0; 3], opt: None, shape: Shape::Dot, big: 0 }; 3];
    for k in 0..3usize {
        let r = &mut rs[k];
        r.a = 250 + k as u8;
        r.b = u64::MAX - k as u64;
        r.c = -300 * (k as i16 + 1);
        r.ok = k != 1;
        r.f = 0.25 * (k as f32 + 1.0);
        r.ch = ['x', 'é', '€'][k];
        r.bytes = [k as u8, 7, 255];
        r.opt = if k == 1 { None } else { Some(1000 + k as u32) };
        r.shape = [Shape::Dot, Shape::Circle(77), Shape::Rect { w: 3, h: 4 }][k];
        r.big = -(1i128 << 100) + k as i128;
        println!("{k} a={}\n{k} b={}\n{k} c={}\n{k} ok={}\n{k} f={}\n{k} ch={}", r.a, r.b, r.c, r.ok, r.f, r.ch);
        println!("{k} bytes.0={}\n{k} bytes.2={}\n{k} big={}", r.bytes[0], r.bytes[2], r.big);
        match r.opt { Some(v) => println!("{k} opt=Some\n{k} opt.__0={v}"), None => println!("{k} opt=None") }
        match r.shape {
            Shape::Dot => println!("{k} shape=Dot"),
            Shape::Circle(v) => println!("{k} shape=Circle\n{k} shape.__0={v}"),
            Shape::Rect { w, h } => println!("{k} shape=Rect\n{k} shape.w={w}\n{k} shape.h={h}"),
        }
    }
    let n = std::mem::size_of_val(&rs);
    let b = unsafe { std::slice::from_raw_parts(rs.as_ptr() as *const u8, n) };
    std::fs::File::create(std::env::args().nth(1).unwrap()).unwrap().write_all(b).unwrap();
}
