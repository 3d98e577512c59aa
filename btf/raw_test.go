package btf

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// convertBoth converts raw BTF twice, through rawBTF and through
// cilium/ebpf's decoder (the oracle), and fails unless the two type graphs
// are equal and hold at least min types.
func convertBoth(t *testing.T, raw []byte, min int) {
	t.Helper()
	ids, err := namedComposites(raw)
	if err != nil {
		t.Fatal(err)
	}
	load := func() (*cbtf.Spec, error) { return cbtf.LoadSpecFromReader(bytesReader(raw)) }
	var direct, oracle []types.Type
	ds, err := convertSpec("raw", func() (*cbtf.Spec, error) {
		t.Fatal("the raw reader fell back to cilium/ebpf")
		return nil, nil
	}, raw, ids, "x86_64", 8, "raw BTF", func(t types.Type) { direct = append(direct, t) }, true)
	if err != nil {
		t.Fatal(err)
	}
	ospec, err := convertSpec("raw", load, nil, ids, "x86_64", 8, "raw BTF", func(t types.Type) { oracle = append(oracle, t) }, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(direct) < min || len(direct) != len(oracle) || ds.Len() != ospec.Len() {
		t.Fatalf("raw reader: %d types (%d named), cilium/ebpf %d (%d); want at least %d", len(direct), ds.Len(), len(oracle), ospec.Len(), min)
	}
	// One DeepEqual over all: its memory of the pairs it compared spares
	// the graphs' shared parts (type by type would take minutes).
	if reflect.DeepEqual(direct, oracle) {
		return
	}
	for i := range direct {
		if !reflect.DeepEqual(direct[i], oracle[i]) {
			t.Fatalf("type %d (%s) differs:\nraw reader  %#v\ncilium/ebpf %#v", i, oracle[i].TypeName(), direct[i], oracle[i])
		}
	}
	t.Fatal("the graphs differ")
}

// TestRawKernel: the running kernel's BTF read directly is the graph
// cilium/ebpf's decoder gives, type for type.
func TestRawKernel(t *testing.T) {
	raw, err := os.ReadFile(KernelBTF)
	if err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	convertBoth(t, raw, 10000)
}

// TestRawKinds: BTF that cilium/ebpf's encoder writes with every kind the
// kernel's may lack (declaration tags on a struct and a member, type tags,
// signed and 64-bit enums, a forward-declared union, a variadic prototype,
// bitfields) reads the same both ways.
func TestRawKinds(t *testing.T) {
	u32 := &cbtf.Int{Name: "unsigned int", Size: 4}
	s8 := &cbtf.Int{Name: "signed char", Size: 1, Encoding: cbtf.Signed | cbtf.Char}
	b := &cbtf.Int{Name: "_Bool", Size: 1, Encoding: cbtf.Bool}
	fwd := &cbtf.Fwd{Name: "later", Kind: cbtf.FwdUnion}
	proto := &cbtf.FuncProto{Return: u32, Params: []cbtf.FuncParam{{Name: "fmt", Type: &cbtf.Pointer{Target: &cbtf.Const{Type: s8}}}, {Type: &cbtf.Void{}}}}
	self := &cbtf.Struct{Name: "node", Size: 32}
	self.Members = []cbtf.Member{
		{Name: "next", Type: &cbtf.Pointer{Target: &cbtf.TypeTag{Type: self, Value: "rcu"}}, Tags: []string{"a", "b"}},
		{Name: "flag", Type: b, Offset: 64, BitfieldSize: 1},
		{Name: "mode", Type: u32, Offset: 65, BitfieldSize: 3},
		{Name: "fn", Type: &cbtf.Pointer{Target: proto}, Offset: 128},
		{Name: "u", Type: &cbtf.Pointer{Target: fwd}, Offset: 192},
	}
	self.Tags = []string{"whole"}
	signed := &cbtf.Enum{Name: "sign", Size: 4, Signed: true, Values: []cbtf.EnumValue{{Name: "NEG", Value: uint64(0xffffffffffffffff)}, {Name: "POS", Value: 7}}}
	wide := &cbtf.Enum{Name: "wide", Size: 8, Values: []cbtf.EnumValue{{Name: "BIG", Value: 1 << 40}}}
	arr := &cbtf.Typedef{Name: "vec", Type: &cbtf.Array{Index: u32, Type: &cbtf.Volatile{Type: s8}, Nelems: 3}}
	fn := &cbtf.Func{Name: "printf", Type: proto, Linkage: cbtf.GlobalFunc}
	bld, err := cbtf.NewBuilder([]cbtf.Type{self, signed, wide, arr, fn, &cbtf.Float{Name: "double", Size: 8}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bld.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	convertBoth(t, raw, 4)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestAlignerKernel: types.Aligner, which remembers the structs it
// aligned, gives every type of the kernel's BTF and each of its members
// the alignment types.Alignof computes afresh.
func TestAlignerKernel(t *testing.T) {
	if _, err := os.Stat(KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	spec, err := Load(KernelBTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	var al types.Aligner
	n := 0
	check := func(ty types.Type) {
		if got, want := al.Alignof(ty), types.Alignof(ty); got != want {
			t.Fatalf("%s: Aligner %d, Alignof %d", types.TypeString(ty), got, want)
		}
		n++
	}
	for _, ty := range spec.Types() {
		check(ty)
		if s, ok := types.Resolve(ty).(*types.Struct); ok {
			for _, m := range s.Members {
				check(m.Type)
			}
		}
	}
	if n < 50000 {
		t.Fatalf("compared %d alignments; want at least 50000", n)
	}
}
