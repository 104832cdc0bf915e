// Command act generates the kernel package's activation assembly: Sech2,
// TanhSech2 and the fused TanhRidgeGrad, each in an AVX2 (+FMA3) and an
// AVX-512 version. Every version runs, for each element, the operations of
// the package's Go reference (sech2Ref, tanhSech2Ref, dotRef and chainRef
// order), so all kernel sets return the same bits.
//
//	go run ./act -out ../act_amd64.s -stubs ../act_stubs_amd64.go -pkg kernel
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var (
	yregs = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}
	zregs = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
)

// The constants, in table order. Each entry of the table holds eight copies
// (64 bytes), so that AVX2 and AVX-512 code can use an entry as a full
// vector memory operand.
var konsts = []struct {
	name string
	bits uint64
}{
	{"absmask", 0x7fffffffffffffff},
	{"signmask", 0x8000000000000000},
	{"clamp", math.Float64bits(350)},
	{"m2", math.Float64bits(-2)},
	{"log2e", 0x3ff71547652b82fe},
	{"mln2hi", 0xbfe62e42fee00000},
	{"mln2lo", 0xbdea39ef35793c76},
	{"one", math.Float64bits(1)},
	{"two", math.Float64bits(2)},
	{"four", math.Float64bits(4)},
	{"c13", 0x3de6124613a86d09},
	{"c12", 0x3e21eed8eff8d898},
	{"c11", 0x3e5ae64567f544e4},
	{"c10", 0x3e927e4fb7789f5c},
	{"c9", 0x3ec71de3a556c734},
	{"c8", 0x3efa01a01a01a01a},
	{"c7", 0x3f2a01a01a01a01a},
	{"c6", 0x3f56c16c16c16c17},
	{"c5", 0x3f81111111111111},
	{"c4", 0x3fa5555555555555},
	{"c3", 0x3fc5555555555555},
	{"c2", 0x3fe0000000000000},
	{"shift", 0x43380000000003ff}, // 1.5·2⁵² + 1023
}

var (
	tab     Mem // the constants
	maskTab Mem // 4 ones then 4 zeros: maskTab+32−8t holds the mask of t lanes
)

func tables() {
	tab = GLOBL("actTab", RODATA|NOPTR)
	for i, k := range konsts {
		for c := 0; c < 8; c++ {
			DATA(64*i+8*c, U64(k.bits))
		}
	}
	maskTab = GLOBL("actMask", RODATA|NOPTR)
	for c := 0; c < 8; c++ {
		v := uint64(0)
		if c < 4 {
			v = math.MaxUint64
		}
		DATA(8*c, U64(v))
	}
}

// isa describes one instruction set and the state of the code being
// emitted for it.
type isa struct {
	name  string // function name suffix
	lanes int    // float64 lanes per vector
	wide  bool   // AVX-512
	vregs []VecPhysical
	kregs map[string]VecPhysical // constants held in registers
	free  []VecPhysical          // temporaries of the activation core
}

func avx2() *isa   { return &isa{name: "AVX2", lanes: 4, vregs: yregs} }
func avx512() *isa { return &isa{name: "AVX512", lanes: 8, wide: true, vregs: zregs} }

func (s *isa) v(i int) VecPhysical { return s.vregs[i] }

// k returns constant name as an operand: its register, or its table entry.
func (s *isa) k(name string) Op {
	if r, ok := s.kregs[name]; ok {
		return r
	}
	for i, k := range konsts {
		if k.name == name {
			return tab.Offset(64 * i)
		}
	}
	panic("unknown constant " + name)
}

// kop emits the instruction op k, x, dst whose first operand k is constant
// name: its register, or its table entry; for AVX-512 the entry is an
// embedded broadcast of its first element ({1to8}, by bcst, the same
// instruction's broadcast form), one 8-byte load rather than a 64-byte one,
// which on a Zen 4 (one 512-bit load a cycle) leaves the load slots to the
// matrix.
func (s *isa) kop(op, bcst func(...Op), name string, x, dst Op) {
	k := s.k(name)
	if s.bcast(k) {
		bcst(k, x, dst)
		return
	}
	op(k, x, dst)
}

// kmov copies constant name into register r (for AVX-512 from memory as a
// broadcast of one element).
func (s *isa) kmov(name string, r VecPhysical) {
	k := s.k(name)
	if s.bcast(k) {
		VBROADCASTSD(k, r)
		return
	}
	VMOVUPD(k, r)
}

// bcast reports whether constant operand k (from s.k) is read as a
// broadcast of one element: an AVX-512 table entry, not a register.
func (s *isa) bcast(k Op) bool {
	_, inReg := k.(VecPhysical)
	return s.wide && !inReg
}

// holdConsts loads the named constants into the highest registers and
// returns the number of registers left below them.
func (s *isa) holdConsts(names ...string) int {
	s.kregs = map[string]VecPhysical{}
	top := len(s.vregs)
	for _, n := range names {
		top--
		r := s.vregs[top]
		VMOVUPD(s.k(n), r)
		s.kregs[n] = r
	}
	return top
}

func (s *isa) setTemps(regs ...VecPhysical) { s.free = append([]VecPhysical(nil), regs...) }

func (s *isa) alloc() VecPhysical {
	if len(s.free) == 0 {
		panic(s.name + ": out of temporary registers")
	}
	r := s.free[0]
	s.free = s.free[1:]
	return r
}

func (s *isa) release(rs ...VecPhysical) {
	s.free = append(append([]VecPhysical(nil), rs...), s.free...)
}

// core emits the activation of the argument in register v: it returns the
// register holding sech²(v) and, when tanh is set, the one holding tanh(v).
// v is overwritten unless tanh is set. The operations are those of
// expParts, sech2Ref and tanhSech2Ref, in the same order.
func (s *isa) core(v VecPhysical, tanh bool) (sech, th VecPhysical) {
	av := v
	if tanh {
		av = s.alloc()
	}
	s.kop(VANDPD, VANDPD_BCST, "absmask", v, av)
	if r, ok := s.kregs["clamp"]; ok {
		VMINPD(av, r, av) // min(350, |v|), the second source (|v|) when NaN
	} else {
		c := s.alloc()
		s.kmov("clamp", c)
		VMINPD(av, c, av)
		s.release(c)
	}
	s.kop(VMULPD, VMULPD_BCST, "m2", av, av) // w = −2|v|
	kf := s.alloc()
	s.kmov("shift", kf)
	s.kop(VFMADD231PD, VFMADD231PD_BCST, "log2e", av, kf) // kf = fma(w, log2e, shift)
	tn := s.alloc()
	VPSLLQ(U8(52), kf, tn)                                 // 2ⁿ
	s.kop(VSUBPD, VSUBPD_BCST, "shift", kf, kf)            // nf
	s.kop(VFMADD231PD, VFMADD231PD_BCST, "mln2hi", kf, av) // fma(nf, mln2hi, w)
	s.kop(VFMADD231PD, VFMADD231PD_BCST, "mln2lo", kf, av) // r
	s.release(kf)
	r := av
	r2 := s.alloc()
	VMULPD(r, r, r2)
	pair := func(hi, lo string) VecPhysical { // fma(r, c_hi, c_lo)
		p := s.alloc()
		s.kmov(hi, p)
		s.kop(VFMADD213PD, VFMADD213PD_BCST, lo, r, p)
		return p
	}
	p1213 := pair("c13", "c12")
	p1011 := pair("c11", "c10")
	p89 := pair("c9", "c8")
	VFMADD231PD(p1011, r2, p89) // q811 = fma(p1011, r2, p89)
	s.release(p1011)
	p67 := pair("c7", "c6")
	p45 := pair("c5", "c4")
	VFMADD231PD(p67, r2, p45) // q47
	s.release(p67)
	p23 := pair("c3", "c2")
	var q VecPhysical
	if tanh {
		q = s.alloc()
		VMOVAPD(r, q)
		VFMADD231PD(p23, r2, q) // q03 = fma(p23, r2, r)
	}
	p := pair("one", "one") // p01 = fma(r, c1, c0)
	VFMADD231PD(p23, r2, p) // p03
	s.release(p23)
	VMULPD(r2, r2, r2)          // r⁴
	VFMADD231PD(p1213, r2, p89) // q813
	s.release(p1213)
	VFMADD231PD(p45, r2, p) // p07
	if tanh {
		VFMADD231PD(p45, r2, q) // q07
	}
	s.release(p45)
	VMULPD(r2, r2, r2)      // r⁸
	VFMADD231PD(p89, r2, p) // p
	if tanh {
		VFMADD231PD(p89, r2, q) // q
	}
	s.release(p89, r2)
	if r != v {
		s.release(r)
	}
	// sech² = 4u/(1+u)², u = p·2ⁿ
	VMULPD(tn, p, p)
	den := s.alloc()
	s.kop(VADDPD, VADDPD_BCST, "one", p, den)
	VMULPD(den, den, den)
	s.kop(VMULPD, VMULPD_BCST, "four", p, p)
	VDIVPD(den, p, p)
	s.release(den)
	if !tanh {
		s.release(tn)
		return p, nil
	}
	// e = fma(2ⁿ, q, 2ⁿ − 1); tanh|v| = −e/(2+e), with the sign of v.
	em := s.alloc()
	s.kop(VSUBPD, VSUBPD_BCST, "one", tn, em)
	VFMADD231PD(q, tn, em)
	s.release(q, tn)
	d := s.alloc()
	s.kop(VADDPD, VADDPD_BCST, "two", em, d)
	VDIVPD(d, em, em)
	if s.wide {
		tern := func(o ...Op) { VPTERNLOGQ(U8(0xe4), o[0], o[1], o[2]) }
		ternB := func(o ...Op) { VPTERNLOGQ_BCST(U8(0xe4), o[0], o[1], o[2]) }
		s.kop(tern, ternB, "absmask", v, em) // absmask ? em : v
	} else {
		VANDPD(s.k("absmask"), em, em)
		VANDPD(s.k("signmask"), v, d)
		VORPD(d, em, em)
	}
	s.release(d)
	return p, em
}

// loadMask sets the AVX2 mask register m to the first t lanes, t in
// register tr (clobbered).
func loadMask(tr, scratch GPPhysical, m VecPhysical) {
	SHLQ(U8(3), tr)
	NEGQ(tr)
	LEAQ(maskTab.Offset(32), scratch)
	VMOVUPD(Mem{Base: scratch, Index: tr, Scale: 1}, m)
}

// setKMask sets opmask k to the first t lanes, t in CX (clobbered, with AX).
func setKMask(k Register) {
	MOVL(U32(1), EAX)
	SHLL(CL, EAX)
	DECL(EAX)
	KMOVB(EAX, k)
}

// elementwise emits Sech2 (tanh false) or TanhSech2 (tanh true) for s.
func elementwise(s *isa, tanh bool) {
	name := "sech2" + s.name
	sig := "func(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int)"
	if tanh {
		name = "tanhSech2" + s.name
		sig = "func(rows, n int, x *float64, ldx int, b, a, t *float64, ldt int, s *float64, lds int)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	if tanh {
		Doc(name+" sets T[r][j] = tanh(X[r][j]+b[j]) and S[r][j] = a[j]·sech²(X[r][j]+b[j]) for",
			fmt.Sprintf("r < rows, j < n (rows, n ≥ 1), %d lanes at a time, then a masked tail in each row.", s.lanes))
	} else {
		Doc(name+" sets Y[r][j] = a[j]·sech²(X[r][j]+b[j]) for r < rows, j < n",
			fmt.Sprintf("(rows, n ≥ 1), %d lanes at a time, then a masked tail in each row.", s.lanes))
	}
	Load(Param("rows"), R11)
	Load(Param("x"), RSI)
	Load(Param("ldx"), R12)
	SHLQ(U8(3), R12)
	Load(Param("b"), RDI)
	Load(Param("a"), RDX)
	var ldo GPPhysical = R13
	if tanh {
		Load(Param("t"), R8)
		Load(Param("ldt"), R13)
		Load(Param("s"), R9)
		Load(Param("lds"), R15)
		SHLQ(U8(3), R15)
	} else {
		Load(Param("y"), R8)
		Load(Param("ldy"), R13)
	}
	SHLQ(U8(3), ldo)
	Load(Param("n"), RBX)
	MOVQ(RBX, R14)
	ANDQ(I32(-s.lanes), RBX)
	ANDQ(I32(s.lanes-1), R14)

	// Registers: the mask (AVX2 Y15, AVX-512 K1), the constants held in
	// registers, and temporaries below.
	var temps []VecPhysical
	if s.wide {
		MOVQ(R14, RCX)
		setKMask(K1)
		names := []string{"absmask", "clamp", "m2", "log2e", "mln2hi", "mln2lo", "one", "four", "shift",
			"c13", "c12", "c11", "c10", "c9", "c8", "c7", "c6", "c5", "c4", "c3", "c2"}
		if tanh {
			names = append(names, "two")
		}
		top := s.holdConsts(names...)
		temps = s.vregs[:top]
	} else {
		MOVQ(R14, RAX)
		loadMask(RAX, R10, Y15)
		s.kregs = nil
		temps = s.vregs[:15]
	}
	out := R8 // y, or t
	sout := R9

	Label(name + "_row")
	XORQ(RCX, RCX)
	TESTQ(RBX, RBX)
	JE(LabelRef(name + "_tail"))
	Label(name + "_loop")
	{
		s.setTemps(temps...)
		v := s.alloc()
		VMOVUPD(Mem{Base: RSI, Index: RCX, Scale: 8}, v)
		VADDPD(Mem{Base: RDI, Index: RCX, Scale: 8}, v, v)
		sech, th := s.core(v, tanh)
		VMULPD(Mem{Base: RDX, Index: RCX, Scale: 8}, sech, sech)
		if tanh {
			VMOVUPD(th, Mem{Base: out, Index: RCX, Scale: 8})
			VMOVUPD(sech, Mem{Base: sout, Index: RCX, Scale: 8})
		} else {
			VMOVUPD(sech, Mem{Base: out, Index: RCX, Scale: 8})
		}
	}
	ADDQ(U8(s.lanes), RCX)
	CMPQ(RCX, RBX)
	JLT(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(R14, R14)
	JE(LabelRef(name + "_next"))
	{
		s.setTemps(temps...)
		v := s.alloc()
		x := Mem{Base: RSI, Index: RCX, Scale: 8}
		b := Mem{Base: RDI, Index: RCX, Scale: 8}
		a := Mem{Base: RDX, Index: RCX, Scale: 8}
		o := Mem{Base: out, Index: RCX, Scale: 8}
		so := Mem{Base: sout, Index: RCX, Scale: 8}
		if s.wide {
			VMOVUPD_Z(x, K1, v)
			VADDPD_Z(b, v, K1, v)
		} else {
			VMASKMOVPD(x, Y15, v)
			t := s.alloc()
			VMASKMOVPD(b, Y15, t)
			VADDPD(t, v, v)
			s.release(t)
		}
		sech, th := s.core(v, tanh)
		if s.wide {
			VMULPD_Z(a, sech, K1, sech)
			if tanh {
				VMOVUPD(th, K1, o)
				VMOVUPD(sech, K1, so)
			} else {
				VMOVUPD(sech, K1, o)
			}
		} else {
			t := s.alloc()
			VMASKMOVPD(a, Y15, t)
			VMULPD(t, sech, sech)
			if tanh {
				VMASKMOVPD(th, Y15, o)
				VMASKMOVPD(sech, Y15, so)
			} else {
				VMASKMOVPD(sech, Y15, o)
			}
		}
	}

	Label(name + "_next")
	ADDQ(R12, RSI)
	ADDQ(ldo, out)
	if tanh {
		ADDQ(R15, sout)
	}
	DECQ(R11)
	JNE(LabelRef(name + "_row"))
	VZEROUPPER()
	RET()
}

func main() {
	ConstraintExpr("amd64,!noasm")
	tables()
	for _, tanh := range []bool{false, true} {
		elementwise(avx2(), tanh)
		elementwise(avx512(), tanh)
	}
	ridge(avx2())
	ridge(avx512())
	Generate()
}
