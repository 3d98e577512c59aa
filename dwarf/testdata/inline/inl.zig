// Build: zig build-exe -O Debug -femit-bin=inl inl.zig
// Zig inlines every call of an inline fn (a language rule, not a
// heuristic), so each call below is an inline site.
const std = @import("std");

inline fn sq(x: u64) u64 {
    return x *% x;
}

inline fn add3(a: u64, b: u64, c: u64) u64 {
    return sq(a) +% b +% c;
}

noinline fn work(n: u64) u64 {
    var s: u64 = 0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        s +%= add3(i, n, 1);
    }
    return s +% sq(n);
}

pub fn main() void {
    const n: u64 = std.os.argv.len + 9;
    std.debug.print("{d} {d}\n", .{ work(n), add3(n, 2, 3) });
}
