// Writes three Rec records to the file named by os.Args[1] as they are in
// memory, and prints what each holds, one "INDEX PATH=VALUE" line per
// member: the truth gopahole --prettify must print.
// build: go build -o rec .
package main

import (
	"fmt"
	"os"
	"unsafe"
)

type Point struct {
	X int16
	Y float32
}

type Rec struct {
	A     int8
	B     uint64
	C     int32
	Ok    bool
	F32   float32
	F64   float64
	Bytes [4]byte
	Pt    Point
	Pts   [2]Point
	Neg   int64
	U16   uint16
	Cx    complex128
}

func main() {
	var rs [3]Rec
	for k := range rs {
		r := &rs[k]
		r.A = int8(-100 + k)
		r.B = ^uint64(0) - uint64(k)
		r.C = int32(-70000 * (k + 1))
		r.Ok = k%2 == 0
		r.F32 = 0.1 * float32(k+1)
		r.F64 = 1e300 / float64(k+1)
		r.Bytes = [4]byte{1, 2, 3, byte(250 + k)}
		r.Pt = Point{int16(-k), 2.5}
		r.Pts[1] = Point{int16(30000 + k), -1}
		r.Neg = -1 << 40
		r.U16 = uint16(65535 - k)
		r.Cx = complex(1.5, float64(-k))
		fmt.Printf("%d A=%d\n%d B=%d\n%d C=%d\n%d Ok=%t\n", k, r.A, k, r.B, k, r.C, k, r.Ok)
		fmt.Printf("%d F32=%v\n%d F64=%v\n%d Bytes.3=%d\n%d Pt.X=%d\n%d Pt.Y=%v\n", k, r.F32, k, r.F64, k, r.Bytes[3], k, r.Pt.X, k, r.Pt.Y)
		fmt.Printf("%d Pts.1.X=%d\n%d Pts.1.Y=%v\n%d Neg=%d\n%d U16=%d\n", k, r.Pts[1].X, k, r.Pts[1].Y, k, r.Neg, k, r.U16)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&rs[0])), unsafe.Sizeof(rs))
	if err := os.WriteFile(os.Args[1], b, 0o644); err != nil {
		panic(err)
	}
}
