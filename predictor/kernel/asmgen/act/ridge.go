package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// General-purpose registers of the ridge kernel.
var (
	rP    = RDI // first row of the current block of M
	rS    = RSI // ldm in bytes
	rS3   = R8  // 3·ldm in bytes
	rZ    = R9  // z
	rT    = R10 // t
	rI    = R13 // the current block's first row times 8: its offset in b, a and g
	rBase = R11 // scratch: the address of b, a or g
	rQ4p  = R12 // row 4 of the chained block at the current column (fused)
	rPF   = R12 // the next line of the next block to prefetch (chain)
	rK    = R14 // rows left
	rRem  = R15 // bytes of full vectors left in a row
	rPrev = RBX // first row of the block to chain
	rQ0   = RAX // row 0 of the block at the current column
	rQ4   = RDX // row 4 of the block at the current column (AVX-512)
	rOff  = RCX // column offset in bytes
)

// row returns the address of row c of the block at the current column plus
// disp bytes: rows 0–3 from rQ0, rows 4–7 from rQ4.
func row(c, disp int) Mem { return rowAt(rQ0, rQ4, c, disp) }

// rowAt is row for the block whose rows 0 and 4 are at q0 and q4.
func rowAt(q0, q4 GPPhysical, c, disp int) Mem {
	base := q0
	if c >= 4 {
		base, c = q4, c-4
	}
	switch c {
	case 0:
		return Mem{Base: base, Disp: disp}
	case 1:
		return Mem{Base: base, Index: rS, Scale: 1, Disp: disp}
	case 2:
		return Mem{Base: base, Index: rS, Scale: 2, Disp: disp}
	}
	return Mem{Base: base, Index: rS3, Scale: 1, Disp: disp}
}

// rowsFrom points rQ0 (and rQ4 for more than 4 rows) at the block of r rows
// starting at p, and zeroes the column offset.
func rowsFrom(p GPPhysical, r int) {
	MOVQ(p, rQ0)
	if r > 4 {
		LEAQ(Mem{Base: rQ0, Index: rS, Scale: 4}, rQ4)
	}
	XORQ(rOff, rOff)
}

// advance moves the rows and the column offset on by bytes.
func advance(r, bytes int) {
	ADDQ(U32(bytes), rQ0)
	if r > 4 {
		ADDQ(U32(bytes), rQ4)
	}
	ADDQ(U32(bytes), rOff)
}

// fullBytes sets rRem to the bytes of the first n &^ (per−1) elements.
func fullBytes(per int) {
	Load(Param("n"), rRem)
	ANDQ(I32(-per), rRem)
	SHLQ(U8(3), rRem)
}

type ridgeGen struct {
	s     *isa
	R     int // rows per block
	label int
	// regT: t lives in Z15..Z31 (regLoop), so reduce and act keep to
	// Z0..Z14.
	regT bool
}

func (g *ridgeGen) newLabel(what string) string {
	g.label++
	return fmt.Sprintf("ridge%s_%s%d", g.s.name, what, g.label)
}

// dot leaves in one vector (returned) the dot products M[i]·z of the r rows
// of the block at p, lane c for row c, in dot order. Lanes ≥ r hold +0.
func (g *ridgeGen) dot(p GPPhysical, r int) VecPhysical {
	s := g.s
	rowsFrom(p, r)
	for i := 0; i < 8; i++ {
		VXORPD(s.v(i), s.v(i), s.v(i))
	}
	fullBytes(8)
	lp, tail, done := g.newLabel("dot"), g.newLabel("dottail"), g.newLabel("dotdone")
	JE(LabelRef(tail))
	Label(lp)
	zc := Mem{Base: rZ, Index: rOff, Scale: 1}
	if s.wide {
		VMOVUPD(zc, Z8)
		for c := 0; c < r; c++ {
			VFMADD231PD(row(c, 0), Z8, s.v(c))
		}
	} else {
		// Lanes 0–3 of the eight partial sums of row c in Y(c), lanes 4–7
		// in Y(4+c).
		VMOVUPD(zc, Y8)
		VMOVUPD(zc.Offset(32), Y9)
		for c := 0; c < r; c++ {
			VFMADD231PD(row(c, 0), Y8, s.v(c))
			VFMADD231PD(row(c, 32), Y9, s.v(4+c))
		}
	}
	advance(r, 64)
	SUBQ(U8(64), rRem)
	JNE(LabelRef(lp))
	Label(tail)
	if s.wide {
		KORTESTB(K1, K1)
		JE(LabelRef(done))
		VMOVUPD_Z(zc, K1, Z8)
		for c := 0; c < r; c++ {
			VFMADD231PD(row(c, 0), Z8, K1, s.v(c)) // merge: other lanes untouched
		}
	} else {
		partA := g.newLabel("dotpartA")
		Load(Param("n"), rRem)
		ANDQ(U8(7), rRem)
		JE(LabelRef(done))
		CMPQ(rRem, U8(4))
		JLT(LabelRef(partA))
		VMOVUPD(zc, Y8)
		for c := 0; c < r; c++ {
			VFMADD231PD(row(c, 0), Y8, s.v(c))
		}
		TESTQ(U32(3), rRem)
		JE(LabelRef(done))
		g.maskedFMA(r, zc.Offset(32), 32, 4)
		JMP(LabelRef(done))
		Label(partA)
		g.maskedFMA(r, zc, 0, 0)
	}
	Label(done)
	return g.reduce()
}

// maskedFMA adds, in the lanes of mask Y15 only, the products of the rows
// at disp and z at zm to the accumulators Y(acc+c); other lanes keep their
// bits (a blend, not an addition of zero, which would turn −0 into +0).
func (g *ridgeGen) maskedFMA(r int, zm Mem, disp, acc int) {
	VMASKMOVPD(zm, Y15, Y8)
	for c := 0; c < r; c++ {
		t := Y10
		if c%2 == 1 {
			t = Y11
		}
		VMASKMOVPD(row(c, disp), Y15, t)
		VFMADD213PD(yregs[acc+c], Y8, t) // t = z·m + acc
		VBLENDVPD(Y15, t, yregs[acc+c], yregs[acc+c])
	}
}

// reduce sums the partial sums of the accumulators of up to R rows by the
// tree of dot order, ((p0+p4) + (p2+p6)) + ((p1+p5) + (p3+p7)), and returns
// the vector of the R sums.
func (g *ridgeGen) reduce() VecPhysical {
	if g.s.wide {
		// Z0..Z7 hold the eight partial sums of rows 0..7.
		half := func(a, b, dst, tmp VecPhysical) { // (a.lo+a.hi, b.lo+b.hi) per 256 bits
			VSHUFF64X2(U8(0x44), b, a, dst)
			VSHUFF64X2(U8(0xee), b, a, tmp)
			VADDPD(tmp, dst, dst)
		}
		half(Z0, Z2, Z9, Z13)  // C0, C2
		half(Z1, Z3, Z10, Z14) // C1, C3
		t3, t4 := Z15, Z16
		if g.regT {
			t3, t4 = Z0, Z2 // already read by the halves above
		}
		half(Z4, Z6, Z11, t3)                         // C4, C6
		half(Z5, Z7, Z12, t4)                         // C5, C7
		quarter := func(a, b, dst, tmp VecPhysical) { // 128-bit halves of each C added
			VSHUFF64X2(U8(0x88), b, a, dst)
			VSHUFF64X2(U8(0xdd), b, a, tmp)
			VADDPD(tmp, dst, dst)
		}
		quarter(Z9, Z11, Z0, Z2)  // D0, D2, D4, D6
		quarter(Z10, Z12, Z1, Z3) // D1, D3, D5, D7
		VUNPCKLPD(Z1, Z0, Z4)
		VUNPCKHPD(Z1, Z0, Z5)
		VADDPD(Z5, Z4, Z8)
		return Z8
	}
	for c := 0; c < 4; c++ {
		VADDPD(yregs[4+c], yregs[c], yregs[c]) // C = (p0+p4, p1+p5, p2+p6, p3+p7)
	}
	VPERM2F128(U8(0x20), Y2, Y0, Y8)
	VPERM2F128(U8(0x31), Y2, Y0, Y9)
	VADDPD(Y9, Y8, Y8) // D0, D2
	VPERM2F128(U8(0x20), Y3, Y1, Y10)
	VPERM2F128(U8(0x31), Y3, Y1, Y11)
	VADDPD(Y11, Y10, Y10) // D1, D3
	VUNPCKLPD(Y10, Y8, Y11)
	VUNPCKHPD(Y10, Y8, Y12)
	VADDPD(Y12, Y11, Y8)
	return Y8
}

// act sets g[c] = a[c]·sech²(y[c] + b[c]) for the r rows of the block, y in
// register y, b, a and g at rI from their arguments.
func (g *ridgeGen) act(y VecPhysical, r int) {
	s := g.s
	bm, am, gm := Mem{Base: RAX, Index: rI, Scale: 1}, Mem{Base: RDX, Index: rI, Scale: 1}, Mem{Base: rBase, Index: rI, Scale: 1}
	Load(Param("b"), RAX)
	Load(Param("a"), RDX)
	Load(Param("grad"), rBase)
	if s.wide && g.regT {
		s.setTemps(append(append([]VecPhysical(nil), zregs[0:8]...), zregs[9:15]...)...)
	} else if s.wide {
		s.setTemps(zregs[9:32]...)
	} else {
		s.setTemps(yregs[9:15]...)
		s.release(yregs[0:8]...)
	}
	if r == g.R {
		VADDPD(bm, y, y)
		sech, _ := s.core(y, false)
		VMULPD(am, sech, sech)
		VMOVUPD(sech, gm)
		return
	}
	if s.wide {
		MOVL(U32(1<<r-1), ECX)
		KMOVB(ECX, K2)
		VADDPD_Z(bm, y, K2, y)
		sech, _ := s.core(y, false)
		VMULPD_Z(am, sech, K2, sech)
		VMOVUPD(sech, K2, gm)
		return
	}
	m := Y14
	s.setTemps(yregs[0:8]...)
	s.release(Y9, Y10, Y11, Y12, Y13)
	VMOVUPD(maskTab.Offset(32-8*r), m)
	t := s.alloc()
	VMASKMOVPD(bm, m, t)
	VADDPD(t, y, y)
	s.release(t)
	sech, _ := s.core(y, false)
	t = s.alloc()
	VMASKMOVPD(am, m, t)
	VMULPD(t, sech, sech)
	VMASKMOVPD(sech, m, gm)
}

// chain adds the rows of the block of r rows at p times their g (at gdisp
// bytes from g's row rI) into t: t[j] = fma(M[i][j], g[i], t[j]) for the rows in
// increasing order, panels of up to 8 vectors of t at a time. With pf set it
// also prefetches, from rPF on, as many lines as the block has (for ldm = n),
// spread over the full vectors: the rows of the next block, so that its
// products with z find them in L1 (a hint: it never faults).
func (g *ridgeGen) chain(p GPPhysical, r, gdisp int, pf bool) {
	s := g.s
	L := s.lanes
	Load(Param("grad"), rBase)
	for c := 0; c < r; c++ {
		VBROADCASTSD(Mem{Base: rBase, Index: rI, Scale: 1, Disp: gdisp + 8*c}, s.v(8+c))
	}
	rowsFrom(p, r)
	fullBytes(L)
	vb := 8 * L          // bytes per vector
	lines := r * vb / 64 // cache lines of the next block per vector of a row
	panel := func(w int) {
		for u := 0; u < w; u++ {
			VMOVUPD(Mem{Base: rT, Index: rOff, Scale: 1, Disp: u * vb}, s.v(u))
		}
		for c := 0; c < r; c++ {
			for u := 0; u < w; u++ {
				VFMADD231PD(row(c, u*vb), s.v(8+c), s.v(u))
			}
			if pf {
				for l := c * w * lines / r; l < (c+1)*w*lines/r; l++ {
					PREFETCHT0(Mem{Base: rPF, Disp: 64 * l})
				}
			}
		}
		if pf {
			ADDQ(U32(64*w*lines), rPF)
		}
		for u := 0; u < w; u++ {
			VMOVUPD(s.v(u), Mem{Base: rT, Index: rOff, Scale: 1, Disp: u * vb})
		}
		advance(r, w*vb)
		SUBQ(U32(w*vb), rRem)
	}
	p8, p4, p1, tail, done := g.newLabel("p8_"), g.newLabel("p4_"), g.newLabel("p1_"), g.newLabel("ptail"), g.newLabel("pdone")
	Label(p8)
	CMPQ(rRem, U32(8*vb))
	JLT(LabelRef(p4))
	panel(8)
	JMP(LabelRef(p8))
	Label(p4)
	CMPQ(rRem, U32(4*vb))
	JLT(LabelRef(p1))
	panel(4)
	Label(p1)
	TESTQ(rRem, rRem)
	JE(LabelRef(tail))
	panel(1)
	JMP(LabelRef(p1))
	Label(tail)
	tm := Mem{Base: rT, Index: rOff, Scale: 1}
	if s.wide {
		// K1 holds the tail of a row of 8: the same as the tail here.
		KORTESTB(K1, K1)
		JE(LabelRef(done))
		VMOVUPD_Z(tm, K1, Z0)
		for c := 0; c < r; c++ {
			VFMADD231PD(row(c, 0), s.v(8+c), K1, Z0)
		}
		VMOVUPD(Z0, K1, tm)
	} else {
		Load(Param("n"), rRem)
		TESTQ(U32(3), rRem)
		JE(LabelRef(done))
		VMASKMOVPD(tm, Y15, Y0)
		for c := 0; c < r; c++ {
			VMASKMOVPD(row(c, 0), Y15, Y1)
			VFMADD231PD(Y1, s.v(8+c), Y0)
		}
		VMASKMOVPD(Y0, Y15, tm)
	}
	Label(done)
}

// nextRows points dst at the first row of next, or, when next is nil, at
// rPrev (the block being chained, in L1 already: its prefetches cost
// nothing), so that the code has no branch.
func nextRows(dst GPPhysical) {
	Load(Param("next"), dst)
	TESTQ(dst, dst)
	CMOVQEQ(rPrev, dst)
}

// nextBlock moves the block pointer and the row offset on by r rows.
func nextBlock(r int) {
	LEAQ(Mem{Base: rP, Index: rS, Scale: uint8(r)}, rP)
	ADDQ(U8(8*r), rI)
}

// ridge emits tanhRidgeGrad for s: blocks of R rows (4 for AVX2, 8 for
// AVX-512), software-pipelined so that no instruction waits for the
// activation of the block just before (for AVX-512 regLoop when t fits in
// registers, n ≤ 8·regTMax, else lag2Loop; reorderLoop for AVX2: each
// measured the faster on its set); then blocks of R/2, R/4, …, 1 rows for
// the remainder (regLoop computes these itself, beside its last block).
//
// With step non-zero it then applies the layer's update to z in place
// (symplecticUpdate): TanhRidgeStep.
func ridge(s *isa) {
	name := "tanhRidgeGrad" + s.name
	TEXT(name, NOSPLIT, "func(k, n int, m *float64, ldm int, b, a, z, grad, t, next *float64, h float64, step int)")
	Pragma("noescape")
	Doc(name+" sets g = a ⊙ sech²(M z + b) and t += Mᵀ g for M k×n (k, n ≥ 1)",
		"with leading dimension ldm, reading each block of rows of M from memory once;",
		"while it chains the last full block it prefetches the first block of rows of",
		"next (nil: none), the matrix of the caller's next call. With step non-zero",
		"(n = 2d even) it then updates z in place: z[d+j] −= h·t[j], then",
		"z[j] += h·t[d+j], for j < d, each a rounded product then a rounded sum.")
	R := 4
	if s.wide {
		R = 8
	}
	g := &ridgeGen{s: s, R: R}
	Load(Param("k"), rK)
	Load(Param("m"), rP)
	Load(Param("ldm"), rS)
	SHLQ(U8(3), rS)
	LEAQ(Mem{Base: rS, Index: rS, Scale: 2}, rS3)
	Load(Param("z"), rZ)
	Load(Param("t"), rT)
	XORQ(rI, rI)
	if s.wide {
		Load(Param("n"), RCX)
		ANDQ(U8(7), RCX)
		setKMask(K1)
	} else {
		Load(Param("n"), RAX)
		ANDQ(U8(3), RAX)
		loadMask(RAX, RCX, Y15)
	}
	rem := g.newLabel("rem")
	CMPQ(rK, U8(R))
	JLT(LabelRef(rem))
	if s.wide {
		old := g.newLabel("old")
		Load(Param("n"), RAX)
		CMPQ(RAX, U32(8*regTMax))
		JG(LabelRef(old))
		g.regLoop(rem)
		Label(old)
		g.lag2Loop()
	} else {
		g.reorderLoop()
	}
	Label(rem)
	g.remainder(true)
	done := g.newLabel("done")
	Load(Param("step"), RAX)
	TESTQ(RAX, RAX)
	JE(LabelRef(done))
	g.symplecticUpdate()
	Label(done)
	VZEROUPPER()
	RET()
}

// tailLoad loads into v the lanes of the tail mask (K1 for AVX-512, Y15
// for AVX2) from m, and zeroes the others; the other lanes of m are not
// read.
func (s *isa) tailLoad(m Mem, v VecPhysical) {
	if s.wide {
		VMOVUPD_Z(m, K1, v)
	} else {
		VMASKMOVPD(m, Y15, v)
	}
}

// tailStore stores the lanes of the tail mask of v into m.
func (s *isa) tailStore(v VecPhysical, m Mem) {
	if s.wide {
		VMOVUPD(v, K1, m)
	} else {
		VMASKMOVPD(v, Y15, m)
	}
}

// symplecticUpdate emits, after the ridge (t complete in memory), the
// update of z = (Q, P), n = 2d: P −= h·t_Q first, then Q += h·t_P, each
// element round(h·t) then a rounded sum, as the Go reference.
func (g *ridgeGen) symplecticUpdate() {
	s := g.s
	L := s.lanes
	vb := 8 * L
	h, tv, zv := s.v(0), s.v(1), s.v(2)
	Load(Param("h"), X0)
	VBROADCASTSD(X0, h)
	Load(Param("n"), RCX)
	SHRQ(U8(1), RCX) // d
	Load(Param("z"), R9)
	Load(Param("t"), R10)
	MOVQ(RCX, R12)
	ANDQ(I32(-L), R12)
	SHLQ(U8(3), R12) // bytes of the full vectors of a half
	if s.wide {
		MOVQ(RCX, RDX)
		ANDQ(U8(L-1), RCX)
		setKMask(K1) // clobbers AX
		MOVQ(RDX, RCX)
	} else {
		MOVQ(RCX, RAX)
		ANDQ(U8(L-1), RAX)
		loadMask(RAX, RDX, Y15)
	}
	half := func(src, dst GPPhysical, sub bool) {
		op := VADDPD
		if sub {
			op = VSUBPD
		}
		lp, tail, done := g.newLabel("upd"), g.newLabel("updtail"), g.newLabel("upddone")
		XORQ(RAX, RAX)
		TESTQ(R12, R12)
		JE(LabelRef(tail))
		Label(lp)
		VMULPD(Mem{Base: src, Index: RAX, Scale: 1}, h, tv)
		VMOVUPD(Mem{Base: dst, Index: RAX, Scale: 1}, zv)
		op(tv, zv, zv)
		VMOVUPD(zv, Mem{Base: dst, Index: RAX, Scale: 1})
		ADDQ(U8(vb), RAX)
		CMPQ(RAX, R12)
		JLT(LabelRef(lp))
		Label(tail)
		TESTQ(U32(L-1), RCX)
		JE(LabelRef(done))
		sm, dm := Mem{Base: src, Index: RAX, Scale: 1}, Mem{Base: dst, Index: RAX, Scale: 1}
		s.tailLoad(sm, tv)
		VMULPD(h, tv, tv)
		s.tailLoad(dm, zv)
		op(tv, zv, zv)
		s.tailStore(zv, dm)
		Label(done)
	}
	LEAQ(Mem{Base: R9, Index: RCX, Scale: 8}, R11) // P
	half(R10, R11, true)
	LEAQ(Mem{Base: R10, Index: RCX, Scale: 8}, R11) // t_P
	half(R11, R9, false)
}

// remainder emits the rows rK mod R from rP on, as blocks of R/2, …, 1
// rows (each present when its bit of rK is set): each block's dot products
// and activation, then with chain its chain into t in memory.
func (g *ridgeGen) remainder(chain bool) {
	for r := g.R / 2; r >= 1; r /= 2 {
		skip := g.newLabel("skip")
		TESTQ(U32(r), rK)
		JE(LabelRef(skip))
		y := g.dot(rP, r)
		g.act(y, r)
		if chain {
			g.chain(rP, r, 0, false)
		}
		nextBlock(r)
		Label(skip)
	}
}

// retire finishes a full block of R rows whose dot products are in y: its
// activation, then (with keep) rPrev pointed at it for the chain, and the
// block pointer, the row offset and the rows left moved past it.
func (g *ridgeGen) retire(y VecPhysical, keep bool) {
	g.act(y, g.R)
	if keep {
		MOVQ(rP, rPrev)
	}
	nextBlock(g.R)
	SUBQ(U8(g.R), rK)
}

// prevBlock sets rPrev to the first row of the block back blocks before rP.
func (g *ridgeGen) prevBlock(back int) {
	IMUL3Q(I32(-back*g.R), rS, rPrev)
	ADDQ(rP, rPrev)
}

// lag2Loop: blocks 0 and 1 as dot then act; then for each block i the
// products with z fused column by column with the chain of block i−2 (its
// g computed a whole block earlier), then act(i); finally the chains of the
// last two blocks.
func (g *ridgeGen) lag2Loop() {
	R := g.R
	loop, flush2, flush1 := g.newLabel("loop"), g.newLabel("flush2_"), g.newLabel("flush1_")
	y := g.dot(rP, R)
	g.retire(y, false)
	CMPQ(rK, U8(R))
	JLT(LabelRef(flush1))
	y = g.dot(rP, R)
	g.retire(y, false)
	Label(loop)
	CMPQ(rK, U8(R))
	JLT(LabelRef(flush2))
	g.prevBlock(2)
	y = g.fused(-16 * R)
	g.retire(y, false)
	JMP(LabelRef(loop))
	Label(flush2)
	g.prevBlock(2)
	g.chain(rPrev, R, -16*R, false)
	Label(flush1)
	g.prevBlock(1)
	nextRows(rPF)
	g.chain(rPrev, R, -8*R, true)
}

// reorderLoop: for each block i, the products with z, then the chain of
// block i−1, then act(i).
func (g *ridgeGen) reorderLoop() {
	R := g.R
	loop, flush := g.newLabel("loop"), g.newLabel("flush")
	y := g.dot(rP, R)
	g.retire(y, true)
	Label(loop)
	CMPQ(rK, U8(R))
	JLT(LabelRef(flush))
	// dots(i), independent of the activation just before, hide its
	// latency; then chain(i−1), whose g is ready by now; then act(i). The
	// dot products wait in g's slots of block i meanwhile.
	y = g.dot(rP, R)
	gm := Mem{Base: rBase, Index: rI, Scale: 1}
	Load(Param("grad"), rBase)
	VMOVUPD(y, gm)
	LEAQ(Mem{Base: rP, Index: rS, Scale: uint8(R)}, rPF)
	g.chain(rPrev, R, -8*R, true)
	VMOVUPD(gm, y)
	g.retire(y, true)
	JMP(LabelRef(loop))
	Label(flush)
	nextRows(rPF)
	g.chain(rPrev, R, -8*R, true)
}

// fused emits, column by column, the products of the block of R rows at rP
// with z (as dot) together with the chain of the block of R rows at rPrev
// (as chain, its g at gdisp bytes from row rI), so that the rows streaming in
// from L2 for the first meet the FMAs on rows already in L1 for the second.
// It returns the register of the new block's dot products.
func (g *ridgeGen) fused(gdisp int) VecPhysical {
	s, R := g.s, g.R
	gb := func(c int) VecPhysical { return s.v(9 + c) } // Z9..Z16, or Y10..Y13
	acc := Z17
	if !s.wide {
		gb = func(c int) VecPhysical { return yregs[10+c] }
		acc = Y14
	}
	Load(Param("grad"), rBase)
	for c := 0; c < R; c++ {
		VBROADCASTSD(Mem{Base: rBase, Index: rI, Scale: 1, Disp: gdisp + 8*c}, gb(c))
	}
	rowsFrom(rP, R)
	if R > 4 {
		LEAQ(Mem{Base: rPrev, Index: rS, Scale: 4}, rQ4p)
	}

	prev := func(c, disp int) Mem { return rowAt(rPrev, rQ4p, c, disp) }
	for i := 0; i < 8; i++ {
		VXORPD(s.v(i), s.v(i), s.v(i))
	}
	fullBytes(8)
	lp, tail, done := g.newLabel("fused"), g.newLabel("fusedtail"), g.newLabel("fuseddone")
	JE(LabelRef(tail))
	Label(lp)
	zc := Mem{Base: rZ, Index: rOff, Scale: 1}
	tc := Mem{Base: rT, Index: rOff, Scale: 1}
	if s.wide {
		VMOVUPD(zc, Z8)
		VMOVUPD(tc, acc)
		for c := 0; c < R; c++ {
			VFMADD231PD(row(c, 0), Z8, s.v(c))
			VFMADD231PD(prev(c, 0), gb(c), acc)
		}
		VMOVUPD(acc, tc)
	} else {
		VMOVUPD(zc, Y8)
		VMOVUPD(zc.Offset(32), Y9)
		VMOVUPD(tc, acc)
		for c := 0; c < R; c++ {
			VFMADD231PD(row(c, 0), Y8, s.v(c))
			VFMADD231PD(prev(c, 0), gb(c), acc)
		}
		VMOVUPD(acc, tc)
		VMOVUPD(tc.Offset(32), acc)
		for c := 0; c < R; c++ {
			VFMADD231PD(row(c, 32), Y9, s.v(4+c))
			VFMADD231PD(prev(c, 32), gb(c), acc)
		}
		VMOVUPD(acc, tc.Offset(32))
	}
	advance(R, 64)
	ADDQ(U8(64), rPrev)
	if R > 4 {
		ADDQ(U8(64), rQ4p)
	}
	SUBQ(U8(64), rRem)
	JNE(LabelRef(lp))

	Label(tail)
	// The last n mod 8 columns: the chain's first, then the products'.
	if s.wide {
		KORTESTB(K1, K1)
		JE(LabelRef(done))
		VMOVUPD_Z(tc, K1, acc)
		for c := 0; c < R; c++ {
			VFMADD231PD(prev(c, 0), gb(c), K1, acc)
		}
		VMOVUPD(acc, K1, tc)
		VMOVUPD_Z(zc, K1, Z8)
		for c := 0; c < R; c++ {
			VFMADD231PD(row(c, 0), Z8, K1, s.v(c))
		}
		Label(done)
		return g.reduce()
	}
	partA := g.newLabel("fusedpartA")
	Load(Param("n"), rRem)
	ANDQ(U8(7), rRem)
	JE(LabelRef(done))
	CMPQ(rRem, U8(4))
	JLT(LabelRef(partA))
	// Four full columns, then n mod 4 masked ones.
	VMOVUPD(tc, acc)
	for c := 0; c < R; c++ {
		VFMADD231PD(prev(c, 0), gb(c), acc)
	}
	VMOVUPD(acc, tc)
	VMOVUPD(zc, Y8)
	for c := 0; c < R; c++ {
		VFMADD231PD(row(c, 0), Y8, s.v(c))
	}
	TESTQ(U32(3), rRem)
	JE(LabelRef(done))
	g.maskedChain(prev, gb, tc.Offset(32), 32)
	g.maskedFMA(R, zc.Offset(32), 32, 4)
	JMP(LabelRef(done))
	Label(partA)
	g.maskedChain(prev, gb, tc, 0)
	g.maskedFMA(R, zc, 0, 0)
	Label(done)
	return g.reduce()
}

// maskedChain adds to t at tm, in the lanes of mask Y15, the rows of the
// previous block (at disp) times their g.
func (g *ridgeGen) maskedChain(prev func(c, disp int) Mem, gb func(int) VecPhysical, tm Mem, disp int) {
	VMASKMOVPD(tm, Y15, Y14)
	for c := 0; c < g.R; c++ {
		VMASKMOVPD(prev(c, disp), Y15, Y8)
		VFMADD231PD(Y8, gb(c), Y14)
	}
	VMASKMOVPD(Y14, Y15, tm)
}

// regTMax is the most vectors of t that regLoop holds in registers.
const regTMax = 17

// tReg returns the register of vector u of t in regLoop.
func tReg(u int) VecPhysical { return zregs[32-regTMax+u] }

// regLoop (AVX-512, n ≤ 8·regTMax, k ≥ R) keeps all of t in registers
// Z15..Z31 through the full blocks, so that each row of the chain is
// ⌈n/8⌉ independent fused multiply–adds (the last one masked by K3) with no
// loads or stores of t. For each block i: the products with z (unrolled
// over the columns) with the rows of the chain of block i−1 interleaved
// among them (whole rows; FMA by FMA measured slower), then act(i); finally
// the products and act of the k mod R rows left (which need not wait for
// the last block's activation), the chain of the last block and of those
// rows, and t stored; the code at rem then has no rows left. (The rows
// left once ran after t was stored, dot, act and a chain into t in memory
// one after the other: a 66×132 layer took 928 ns against 887 now, fastest
// of 12 alternated pinned runs.) The code of the products and the chain,
// whose registers depend on the number of vectors, has one version per
// number, chosen by a search on ⌈n/8⌉ for each block.
//
// The chain one block behind, waiting on the activation just computed,
// measured the fastest on the Zen 4 of docs/performance.md. Chaining two or three
// blocks behind, with the activation of each block or of two blocks at a
// time (its dot products kept in g's slots meanwhile), so that no chain
// waits, took 1.09–1.28 µs for a 66×132 layer against 0.93–0.96 µs, and
// 22.7–28.5 µs for 18 layers against 20.2–21.9: the rows chained are
// then 17–26 KB behind the ones streaming in, and leave the 32 KB L1.
func (g *ridgeGen) regLoop(rem string) {
	R := g.R
	g.regT = true
	defer func() { g.regT = false }()
	// K3: the lanes of the last vector of a row.
	Load(Param("n"), RCX)
	DECQ(RCX)
	ANDQ(U8(7), RCX)
	INCQ(RCX)
	setKMask(K3)
	for u := 0; u < regTMax; u++ {
		VXORPD(tReg(u), tReg(u), tReg(u))
	}
	loop, after := g.newLabel("rloop"), g.newLabel("rafter")
	fusedLbl := func(nv int) string { return fmt.Sprintf("ridge%s_rfused%d", g.s.name, nv) }
	chainLbl := func(nv int) string { return fmt.Sprintf("ridge%s_rchain%d", g.s.name, nv) }
	search := func(target func(int) string) {
		Load(Param("n"), R10)
		ADDQ(U8(7), R10)
		SHRQ(U8(3), R10)
		var rec func(lo, hi int)
		rec = func(lo, hi int) {
			if lo == hi {
				JMP(LabelRef(target(lo)))
				return
			}
			mid := (lo + hi) / 2
			upper := g.newLabel("rsearch")
			CMPQ(R10, U8(mid))
			JG(LabelRef(upper))
			rec(lo, mid)
			Label(upper)
			rec(mid+1, hi)
		}
		rec(1, regTMax)
	}
	y := g.dot(rP, R)
	g.retire(y, true)
	Label(loop)
	CMPQ(rK, U8(R))
	flush := g.newLabel("rflush")
	JLT(LabelRef(flush))
	search(fusedLbl)
	Label(after)
	y = g.reduce()
	g.retire(y, true)
	JMP(LabelRef(loop))
	// The dot products and activation of the k mod R rows after the last
	// full block (blocks of R/2, …, 1 rows), which do not wait for that
	// block's activation: they run while it completes, and their rows are
	// chained from registers after the block's (chainLbl). R12 keeps the
	// last block's end in g meanwhile.
	Label(flush)
	MOVQ(rI, R12)
	g.remainder(false)
	search(chainLbl)

	bcast := func(c int) VecPhysical { return zregs[9+c%6] }
	prev := func(c, disp int) Mem { return rowAt(rPrev, R12, c, disp) }
	// chainAt adds the row of nv vectors at row(disp) times its g (gm,
	// broadcast into b) into t: t_u = fma(row[8u..], g, t_u).
	chainAt := func(nv int, gm Mem, row func(disp int) Mem, b VecPhysical) {
		VBROADCASTSD(gm, b)
		for u := 0; u < nv; u++ {
			if u == nv-1 {
				VFMADD231PD(row(64*u), b, K3, tReg(u))
			} else {
				VFMADD231PD(row(64*u), b, tReg(u))
			}
		}
	}
	chainRow := func(nv, c int) {
		chainAt(nv, Mem{Base: rBase, Index: rI, Scale: 1, Disp: -8*R + 8*c},
			func(disp int) Mem { return prev(c, disp) }, bcast(c))
	}
	// The products of the block at rP with z (as dot, unrolled over the
	// columns), interleaved with the rows of the chain of the block at
	// rPrev (g at rI−8R): t_u = fma(M[c][8u..], g[c], t_u), rows c in
	// increasing order, spread evenly over the columns.
	for nv := 1; nv <= regTMax; nv++ {
		Label(fusedLbl(nv))
		Load(Param("grad"), rBase)
		rowsFrom(rP, R)
		LEAQ(Mem{Base: rPrev, Index: rS, Scale: 4}, R12)
		for i := 0; i < 8; i++ {
			VXORPD(zregs[i], zregs[i], zregs[i])
		}
		c := 0
		for u := 0; u < nv; u++ {
			zc := Mem{Base: rZ, Disp: 64 * u}
			if u == nv-1 {
				VMOVUPD_Z(zc, K3, Z8)
				for r := 0; r < R; r++ {
					VFMADD231PD(row(r, 64*u), Z8, K3, zregs[r])
				}
			} else {
				VMOVUPD(zc, Z8)
				for r := 0; r < R; r++ {
					VFMADD231PD(row(r, 64*u), Z8, zregs[r])
				}
			}
			for ; c < (u+1)*R/nv; c++ {
				chainRow(nv, c)
			}
		}
		JMP(LabelRef(after))
	}
	// The chain of the last full block, then of the rows after it (rK of
	// them, which leaves rK 0 for the code at rem), then t stored.
	for nv := 1; nv <= regTMax; nv++ {
		Label(chainLbl(nv))
		Load(Param("grad"), rBase)
		MOVQ(R12, rI)
		LEAQ(Mem{Base: rPrev, Index: rS, Scale: 4}, R12)
		// With each row, the lines of the same row of next's first block
		// (rows 0–3 from R10, 4–7 from R15; rT and rRem are free here).
		nextRows(R10)
		LEAQ(Mem{Base: R10, Index: rS, Scale: 4}, R15)
		for c := 0; c < R; c++ {
			chainRow(nv, c)
			for u := 0; u < nv; u++ {
				PREFETCHT0(rowAt(R10, R15, c, 64*u))
			}
		}
		// Then the rK rows after the block (RAX), g from rI on (RDX).
		store, lp := g.newLabel("rstore"), g.newLabel("rrem")
		TESTQ(rK, rK)
		JE(LabelRef(store))
		LEAQ(Mem{Base: rPrev, Index: rS, Scale: 8}, RAX)
		LEAQ(Mem{Base: rBase, Index: rI, Scale: 1}, RDX)
		Label(lp)
		chainAt(nv, Mem{Base: RDX}, func(disp int) Mem { return Mem{Base: RAX, Disp: disp} }, Z9)
		ADDQ(rS, RAX)
		ADDQ(U8(8), RDX)
		DECQ(rK)
		JNE(LabelRef(lp))
		Label(store)
		Load(Param("t"), rT)
		for u := 0; u < nv; u++ {
			if u == nv-1 {
				VMOVUPD(tReg(u), K3, Mem{Base: rT, Disp: 64 * u})
			} else {
				VMOVUPD(tReg(u), Mem{Base: rT, Disp: 64 * u})
			}
		}
		JMP(LabelRef(rem))
	}
}
