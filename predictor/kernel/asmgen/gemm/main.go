// Command gemm generates the matrix kernels of package kernel (gemm_amd64.s
// and gemm_stubs_amd64.go) for two instruction sets: AVX2 with FMA3 (16 ymm
// registers, VMASKMOVPD tails) and AVX-512 (32 zmm registers, k-mask tails).
//
// Every kernel follows the order of operations of the kernel package
// (order.go), so both sets return the bits of the portable Go code:
//
//   - dot kernels (MatVec, Gemm NT) keep the eight partial sums of an output
//     (lanes j mod 8) in two ymm or one zmm register and reduce them as
//     ((p0+p4) + (p2+p6)) + ((p1+p5) + (p3+p7));
//   - chain kernels (MatTVec, Gemm NN and TN) keep each output in a lane of
//     its own and add the products in increasing order of the inner index;
//   - the result is finished as alpha·s, or out + alpha·s when accumulating.
//
// Run it through go generate in the kernel package.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// isa describes one instruction set.
type isa struct {
	name  string // suffix of the function names
	lanes int    // float64 lanes per vector
	nregs int    // vector registers
	// dot kernel tiles: rows of X × outputs (rows of B)
	dotRows, dotCols []int
	mvCols           []int
	// panel kernel tiles: rows of C and vectors of columns
	panelRows []int
	panelVecs int
	tvVecs    int // most vectors of the single-row chain kernel
}

var (
	avx2 = isa{
		name: "Avx2", lanes: 4, nregs: 16,
		dotRows: []int{2, 1}, dotCols: []int{3, 2, 1}, mvCols: []int{4, 2, 1},
		panelRows: []int{4, 2, 1}, panelVecs: 3, tvVecs: 12,
	}
	avx512 = isa{
		name: "Avx512", lanes: 8, nregs: 32,
		dotRows: []int{4, 2, 1}, dotCols: []int{6, 4, 2, 1}, mvCols: []int{8, 4, 2, 1},
		panelRows: []int{8, 4, 2, 1}, panelVecs: 3, tvVecs: 24,
	}
)

func (s *isa) v512() bool { return s.lanes == 8 }

// vec returns vector register i of the set.
func (s *isa) vec(i int) VecPhysical {
	if i >= s.nregs {
		panic(fmt.Sprintf("%s: vector register %d out of range", s.name, i))
	}
	if s.v512() {
		return zmm[i]
	}
	return ymm[i]
}

var (
	ymm = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}
	zmm = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
	ymm32 = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
		Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}
)

// lower returns the ymm register that is the lower half of zmm register z.
func lower(z VecPhysical) VecPhysical {
	for i, r := range zmm {
		if r == z {
			return ymm32[i]
		}
	}
	panic("not a zmm register")
}

// mask is a lane mask: a ymm register (AVX2) or a k register (AVX-512).
type mask struct {
	y VecPhysical
	k OpmaskPhysical
}

var maskTab, kmaskTab Mem

// setMask loads into m the mask of the first t lanes, t a register (not
// modified) or a constant.
func (s *isa) setMask(m mask, t Op) {
	if s.v512() {
		if c, ok := t.(U64); ok {
			tmp := GP64()
			MOVQ(U64((uint64(1)<<uint64(c))-1), tmp)
			KMOVW(tmp.As32(), m.k)
			return
		}
		// kmaskTab+t holds the byte (1<<t)-1.
		base := GP64()
		LEAQ(kmaskTab, base)
		KMOVB(Mem{Base: base, Index: t.(Register), Scale: 1}, m.k)
		return
	}
	// maskTab+32-8t holds t ones then zeros.
	if c, ok := t.(U64); ok {
		VMOVUPD(maskTab.Offset(32-8*int(c)), m.y)
		return
	}
	tmp := GP64()
	MOVQ(t, tmp)
	SHLQ(U8(3), tmp)
	NEGQ(tmp)
	base := GP64()
	LEAQ(maskTab.Offset(32), base)
	VMOVUPD(Mem{Base: base, Index: tmp, Scale: 1}, m.y)
}

// loadMasked sets dst to the lanes of mem under m, zero elsewhere, without
// touching memory outside them.
func (s *isa) loadMasked(mem Mem, m mask, dst VecPhysical) {
	if s.v512() {
		VMOVUPD_Z(mem, m.k, dst)
	} else {
		VMASKMOVPD(mem, m.y, dst)
	}
}

// storeMasked writes the lanes of src under m to mem.
func (s *isa) storeMasked(src VecPhysical, m mask, mem Mem) {
	if s.v512() {
		VMOVUPD(src, m.k, mem)
	} else {
		VMASKMOVPD(src, m.y, mem)
	}
}

func (s *isa) zero(v VecPhysical) { VXORPD(v, v, v) }

// label returns a unique label.
var nlabel int

func label(prefix string) string {
	nlabel++
	return fmt.Sprintf("%s_%d", prefix, nlabel)
}

func main() {
	ConstraintExpr("amd64,!noasm")

	maskTab = GLOBL("gemmMaskTab", RODATA|NOPTR)
	for i := 0; i < 4; i++ {
		DATA(8*i, U64(^uint64(0)))
	}
	for i := 4; i < 8; i++ {
		DATA(8*i, U64(0))
	}
	kmaskTab = GLOBL("gemmKMaskTab", RODATA|NOPTR)
	for t := 0; t <= 8; t++ {
		DATA(t, U8(uint8((1<<t)-1)))
	}

	for _, s := range []*isa{&avx2, &avx512} {
		dotKernel(s, "dot"+s.name, s.dotRows, s.dotCols)
		dotKernel(s, "matVec"+s.name, []int{1}, s.mvCols)
		panelKernel(s)
		rowChainKernel(s)
	}
	Generate()
}

const dotSig = "func(R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int)"

// dotKernel generates a kernel that sets Y[r][c] = alpha·dot(X[r], B[c])
// (+ Y[r][c] when acc ≠ 0) for r < R, c < C, the dot products over k
// elements in dot order; X[r] starts at x + r*ldx, B[c] at b + c*ldb and
// Y[r] at y + r*ldy. R, C, k ≥ 1.
//
// Column blocks (rows of B, kept in L1) are the outer loop and row blocks of
// X the inner one; each block is the largest tile of rows × cols that fits
// what remains.
func dotKernel(s *isa, name string, rows, cols []int) {
	TEXT(name, NOSPLIT, dotSig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets Y[r][c] = alpha·dot(X[r], B[c]) (+ Y[r][c] when acc ≠ 0) for r < R, c < C in dot order; R, C, k ≥ 1.", name))

	if len(rows) == 1 && rows[0] == 1 {
		matVecKernel(s, name, cols)
		return
	}
	// State kept in memory across tiles.
	remC := AllocLocal(8)
	bcol := AllocLocal(8)
	ycol := AllocLocal(8)
	remR := AllocLocal(8)
	xrow := AllocLocal(8)
	yrow := AllocLocal(8)

	t := GP64()
	Load(Param("C"), t)
	MOVQ(t, remC)
	Load(Param("b"), t)
	MOVQ(t, bcol)
	Load(Param("y"), t)
	MOVQ(t, ycol)

	colLoop := label(name + "_cols")
	done := label(name + "_done")
	Label(colLoop)
	t = GP64()
	Load(Param("R"), t)
	MOVQ(t, remR)
	Load(Param("x"), t)
	MOVQ(t, xrow)
	MOVQ(ycol, t)
	MOVQ(t, yrow)

	for ci, ct := range cols {
		next := label(name + "_c")
		if ci < len(cols)-1 {
			CMPQ(remC, U32(ct))
			JL(LabelRef(next))
		}
		// Row loop for column tiles of width ct.
		rowLoop := label(name + "_rows")
		colDone := label(name + "_cdone")
		Label(rowLoop)
		for ri, rt := range rows {
			nextR := label(name + "_r")
			if ri < len(rows)-1 {
				CMPQ(remR, U32(rt))
				JL(LabelRef(nextR))
			} else {
				CMPQ(remR, U32(0))
				JE(LabelRef(colDone))
			}
			dotTile(s, rt, ct, xrow, bcol, yrow)
			// Next row block.
			t := GP64()
			Load(Param("ldx"), t)
			SHLQ(U8(3), t)
			IMUL3Q(U32(rt), t, t)
			ADDQ(t, xrow)
			Load(Param("ldy"), t)
			SHLQ(U8(3), t)
			IMUL3Q(U32(rt), t, t)
			ADDQ(t, yrow)
			SUBQ(U32(rt), remR)
			JMP(LabelRef(rowLoop))
			Label(nextR)
		}
		Label(colDone)
		t := GP64()
		Load(Param("ldb"), t)
		SHLQ(U8(3), t)
		IMUL3Q(U32(ct), t, t)
		ADDQ(t, bcol)
		ADDQ(U32(8*ct), ycol)
		SUBQ(U32(ct), remC)
		JNE(LabelRef(colLoop))
		JMP(LabelRef(done))
		Label(next)
	}
	Label(done)
	VZEROUPPER()
	RET()
}

// matVecKernel is dotKernel for R = 1, its state in registers.
func matVecKernel(s *isa, name string, cols []int) {
	remC, xr, bcol, ycol := GP64(), GP64(), GP64(), GP64()
	Load(Param("C"), remC)
	Load(Param("x"), xr)
	Load(Param("b"), bcol)
	Load(Param("y"), ycol)
	colLoop := label(name + "_cols")
	done := label(name + "_done")
	Label(colLoop)
	for ci, ct := range cols {
		next := label(name + "_c")
		if ci < len(cols)-1 {
			CMPQ(remC, U32(ct))
			JL(LabelRef(next))
		}
		dotTile(s, 1, ct, xr, bcol, ycol)
		t := GP64()
		Load(Param("ldb"), t)
		SHLQ(U8(3), t)
		IMUL3Q(U32(ct), t, t)
		ADDQ(t, bcol)
		ADDQ(U32(8*ct), ycol)
		SUBQ(U32(ct), remC)
		JNE(LabelRef(colLoop))
		JMP(LabelRef(done))
		Label(next)
	}
	Label(done)
	VZEROUPPER()
	RET()
}

// dotTile computes one rt × ct tile of the dot kernel: X rows from the
// pointer at xrow, B rows from bcol, outputs at yrow.
func dotTile(s *isa, rt, ct int, xrow, bcol, yrow Op) {
	halves := 8 / s.lanes // vectors per dot product
	hb := 8 * s.lanes     // bytes per vector
	// Register plan.
	accReg := func(r, c, h int) VecPhysical { return s.vec((r*ct+c)*halves + h) }
	nacc := rt * ct * halves
	xReg := func(r int) VecPhysical { return s.vec(nacc + r) }
	tReg := func(i int) VecPhysical {
		if s.v512() {
			return s.vec(nacc + rt + i%2)
		}
		return s.vec(nacc + rt)
	}
	var m mask
	if s.v512() {
		m.k = K1
	} else {
		m.y = s.vec(s.nregs - 1)
		if nacc+rt+1 > s.nregs-1 {
			panic("dot tile too large")
		}
	}

	x0, b0, b4 := GP64(), GP64(), GP64()
	ldx, ldx3, ldb, ldb3 := GP64(), GP64(), GP64(), GP64()
	MOVQ(xrow, x0)
	MOVQ(bcol, b0)
	if rt > 1 {
		Load(Param("ldx"), ldx)
		SHLQ(U8(3), ldx)
	}
	Load(Param("ldb"), ldb)
	SHLQ(U8(3), ldb)
	if rt > 3 {
		LEAQ(Mem{Base: ldx, Index: ldx, Scale: 2}, ldx3)
	}
	if ct > 3 {
		LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	}
	if ct > 4 {
		LEAQ(Mem{Base: b0, Index: ldb, Scale: 4}, b4)
	}
	xAddr := func(r, off int) Mem {
		switch r {
		case 0:
			return Mem{Base: x0, Disp: off}
		case 1:
			return Mem{Base: x0, Index: ldx, Scale: 1, Disp: off}
		case 2:
			return Mem{Base: x0, Index: ldx, Scale: 2, Disp: off}
		case 3:
			return Mem{Base: x0, Index: ldx3, Scale: 1, Disp: off}
		}
		panic("row")
	}
	bAddr := func(c, off int) Mem {
		base := b0
		if c >= 4 {
			base, c = b4, c-4
		}
		switch c {
		case 0:
			return Mem{Base: base, Disp: off}
		case 1:
			return Mem{Base: base, Index: ldb, Scale: 1, Disp: off}
		case 2:
			return Mem{Base: base, Index: ldb, Scale: 2, Disp: off}
		case 3:
			return Mem{Base: base, Index: ldb3, Scale: 1, Disp: off}
		}
		panic("col")
	}

	for i := 0; i < nacc; i++ {
		s.zero(s.vec(i))
	}

	// step emits one vector step into half h at byte offset off, masked
	// when masked is set.
	step := func(h, off int, masked bool) {
		for r := 0; r < rt; r++ {
			if masked {
				s.loadMasked(xAddr(r, off), m, xReg(r))
			} else {
				VMOVUPD(xAddr(r, off), xReg(r))
			}
		}
		for c := 0; c < ct; c++ {
			switch {
			case masked:
				s.loadMasked(bAddr(c, off), m, tReg(c))
			case rt == 1:
				VFMADD231PD(bAddr(c, off), xReg(0), accReg(0, c, h))
				continue
			default:
				VMOVUPD(bAddr(c, off), tReg(c))
			}
			for r := 0; r < rt; r++ {
				VFMADD231PD(tReg(c), xReg(r), accReg(r, c, h))
			}
		}
	}

	n := GP64()
	Load(Param("k"), n)
	SHRQ(U8(3), n)
	tail := label("dot_tail")
	JZ(LabelRef(tail))
	loop := label("dot_loop")
	Label(loop)
	for h := 0; h < halves; h++ {
		step(h, h*hb, false)
	}
	ADDQ(U32(64), x0)
	ADDQ(U32(64), b0)
	if ct > 4 {
		ADDQ(U32(64), b4)
	}
	DECQ(n)
	JNZ(LabelRef(loop))

	Label(tail)
	reduce := label("dot_reduce")
	tn := GP64()
	Load(Param("k"), tn)
	ANDQ(U32(7), tn)
	JZ(LabelRef(reduce))
	if s.v512() {
		s.setMask(m, tn)
		step(0, 0, true)
	} else {
		lo := label("dot_tlo")
		CMPQ(tn, U32(4))
		JL(LabelRef(lo))
		step(0, 0, false)
		SUBQ(U32(4), tn)
		JZ(LabelRef(reduce))
		s.setMask(m, tn)
		step(1, hb, true)
		JMP(LabelRef(reduce))
		Label(lo)
		s.setMask(m, tn)
		step(0, 0, true)
	}

	Label(reduce)
	// Reduce, finish and store each row.
	yp, ldy := GP64(), GP64()
	MOVQ(yrow, yp)
	if rt > 1 {
		Load(Param("ldy"), ldy)
		SHLQ(U8(3), ldy)
	}
	free := nacc // registers from here on are free
	alpha := s.vec(free)
	free++
	VBROADCASTSD(NewParamAddr("alpha", 9*8), alpha)
	var sm mask
	full := ct == s.lanes
	if !full {
		if s.v512() {
			sm.k = K2
		} else {
			sm.y = s.vec(free)
			free++
		}
		s.setMask(sm, U64(ct))
	}
	accFlag := GP64()
	Load(Param("acc"), accFlag)
	for r := 0; r < rt; r++ {
		q := make([]VecPhysical, s.lanes)
		for c := 0; c < ct; c++ {
			if halves == 2 {
				VADDPD(accReg(r, c, 1), accReg(r, c, 0), accReg(r, c, 0))
			}
			q[c] = accReg(r, c, 0)
		}
		for c := ct; c < s.lanes; c++ {
			q[c] = q[c%ct]
		}
		// Temporaries: the free registers, then the second halves of
		// this row's accumulators (AVX2), which the sums above released.
		var pool []VecPhysical
		for i := free; i < s.nregs; i++ {
			pool = append(pool, s.vec(i))
		}
		if halves == 2 {
			for c := 0; c < ct; c++ {
				pool = append(pool, accReg(r, c, 1))
			}
		}
		tmp := func(i int) VecPhysical {
			if i >= len(pool) {
				panic(fmt.Sprintf("%s: %d×%d dot tile: no register for temporary %d", s.name, rt, ct, i))
			}
			return pool[i]
		}
		var res VecPhysical
		if s.v512() {
			// Stage 1: pairs (0,2), (4,6), (1,3), (5,7) → [qP, qQ].
			pair := func(p, q VecPhysical, dst VecPhysical) {
				VSHUFF64X2(U8(0x44), q, p, dst)
				VSHUFF64X2(U8(0xEE), q, p, tmp(4))
				VADDPD(tmp(4), dst, dst)
			}
			pair(q[0], q[2], tmp(0))
			pair(q[4], q[6], tmp(1))
			pair(q[1], q[3], tmp(2))
			pair(q[5], q[7], tmp(3))
			// Stage 2: chunks [A, C, E, G] and [B, D, F, H].
			comb := func(pq, rs VecPhysical) {
				VSHUFF64X2(U8(0x88), rs, pq, tmp(4))
				VSHUFF64X2(U8(0xDD), rs, pq, tmp(5))
				VADDPD(tmp(5), tmp(4), pq)
			}
			comb(tmp(0), tmp(1))
			comb(tmp(2), tmp(3))
			// Stage 3: [A, B, C, D, E, F, G, H].
			VUNPCKLPD(tmp(2), tmp(0), tmp(4))
			VUNPCKHPD(tmp(2), tmp(0), tmp(5))
			VADDPD(tmp(5), tmp(4), tmp(4))
			res = tmp(4)
		} else {
			VPERM2F128(U8(0x20), q[2], q[0], tmp(0))
			VPERM2F128(U8(0x31), q[2], q[0], tmp(1))
			VADDPD(tmp(1), tmp(0), tmp(0))
			VPERM2F128(U8(0x20), q[3], q[1], tmp(2))
			VPERM2F128(U8(0x31), q[3], q[1], tmp(3))
			VADDPD(tmp(3), tmp(2), tmp(2))
			VHADDPD(tmp(2), tmp(0), tmp(0))
			res = tmp(0)
		}
		VMULPD(alpha, res, res)
		st := label("dot_st")
		TESTQ(accFlag, accFlag)
		JZ(LabelRef(st))
		out := Mem{Base: yp}
		if full {
			VADDPD(out, res, res)
		} else {
			li := 6
			if !s.v512() {
				li = 4
			}
			lt := tmp(li)
			s.loadMasked(out, sm, lt)
			VADDPD(lt, res, res)
		}
		Label(st)
		if full {
			VMOVUPD(res, out)
		} else {
			s.storeMasked(res, sm, out)
		}
		if r < rt-1 {
			ADDQ(ldy, yp)
		}
	}
}

const panelSig = "func(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int)"

// panelKernel generates panel<set>: C[i][j] = alpha·Σ_p A(i,p)·B[p][j]
// (+ C[i][j]) for i < m, j < w, p < k in chain order, A(i,p) at
// a + i*rsA + p*csA, B[p] at b + p*ldb, C[i] at c + i*ldc. m, k ≥ 1 and
// 1 ≤ w ≤ panelVecs·lanes; AVX2 takes w = 12 or w ≤ 8.
func panelKernel(s *isa) {
	name := "panel" + s.name
	TEXT(name, NOSPLIT, panelSig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets C[i][j] = alpha·Σ_p A(i,p)·B[p][j] (+ C[i][j] when acc ≠ 0) for i < m, j < w, p < k in chain order.", name))
	remR := AllocLocal(8)
	arow := AllocLocal(8)
	crow := AllocLocal(8)
	t := GP64()
	Load(Param("m"), t)
	MOVQ(t, remR)
	Load(Param("a"), t)
	MOVQ(t, arow)
	Load(Param("c"), t)
	MOVQ(t, crow)

	var m mask
	if s.v512() {
		m.k = K1
	} else {
		m.y = s.vec(s.nregs - 1)
	}
	done := label(name + "_done")
	w := GP64()
	Load(Param("w"), w)
	for v := s.panelVecs; v >= 1; v-- {
		next := label(name + "_v")
		masked := s.v512() || v < s.panelVecs
		if v > 1 {
			CMPQ(w, U32(s.lanes*(v-1)))
			JLE(LabelRef(next))
		}
		// AVX-512: a last vector of at most half the lanes runs on the
		// lower ymm halves (half the cost of a zmm operation on a CPU
		// that splits 512-bit operations in two).
		narrows := []bool{false}
		if s.v512() {
			narrows = []bool{true, false}
		}
		for ni, narrow := range narrows {
			wide := label(name + "_wide")
			if ni < len(narrows)-1 {
				CMPQ(w, U32(s.lanes*(v-1)+s.lanes/2))
				JG(LabelRef(wide))
			}
			rowLoop := label(name + "_rows")
			Label(rowLoop)
			for ri, rt := range s.panelRows {
				nextR := label(name + "_r")
				if ri < len(s.panelRows)-1 {
					CMPQ(remR, U32(rt))
					JL(LabelRef(nextR))
				} else {
					CMPQ(remR, U32(0))
					JE(LabelRef(done))
				}
				chainTile(s, rt, v, masked, narrow, m, arow, crow)
				t := GP64()
				Load(Param("rsA"), t)
				SHLQ(U8(3), t)
				IMUL3Q(U32(rt), t, t)
				ADDQ(t, arow)
				Load(Param("ldc"), t)
				SHLQ(U8(3), t)
				IMUL3Q(U32(rt), t, t)
				ADDQ(t, crow)
				SUBQ(U32(rt), remR)
				JMP(LabelRef(rowLoop))
				Label(nextR)
			}
			JMP(LabelRef(done))
			Label(wide)
		}
		Label(next)
	}
	Label(done)
	VZEROUPPER()
	RET()
}

// chainTile emits one tile of rt rows × v vectors of the chain kernels: the
// loop over p < k, then the finishing and the stores. A(i,p) is at
// arow + i*rsA + p*csA (with rsA, csA the parameters; for rt = 1 csA only),
// B[p] at b + p*ldb, the outputs at crow + i*ldc. When masked, the last
// vector has w - (v-1)·lanes lanes; when narrow (AVX-512, at most half the
// lanes) that vector is computed in the lower ymm halves of its registers.
func chainTile(s *isa, rt, v int, masked, narrow bool, m mask, arow, crow Mem) {
	hb := 8 * s.lanes
	// nw returns r, or its lower half when j is the narrow last vector.
	nw := func(j int, r VecPhysical) VecPhysical {
		if narrow && j == v-1 {
			return lower(r)
		}
		return r
	}
	acc := func(i, j int) VecPhysical { return nw(j, s.vec(i*v+j)) }
	nacc := rt * v
	var bReg func(j int) VecPhysical
	var bc func(i int) VecPhysical
	if rt == 1 {
		bc = func(i int) VecPhysical { return s.vec(nacc + i%2) }
		bReg = func(j int) VecPhysical { return s.vec(nacc + 2) }
	} else {
		bReg = func(j int) VecPhysical { return s.vec(nacc + j) }
		if s.v512() {
			bc = func(i int) VecPhysical { return s.vec(nacc + v + i%2) }
		} else {
			bc = func(i int) VecPhysical { return s.vec(nacc + v) }
		}
	}
	if masked {
		if s.v512() {
			lt := GP64()
			Load(Param("w"), lt)
			SUBQ(U32(s.lanes*(v-1)), lt)
			s.setMask(m, lt)
		} else {
			if nacc+v+1 > s.nregs-1 && rt > 1 {
				panic(fmt.Sprintf("chain tile %d×%d too large for a mask", rt, v))
			}
			lt := GP64()
			Load(Param("w"), lt)
			SUBQ(U32(s.lanes*(v-1)), lt)
			s.setMask(m, lt)
		}
	}

	a0, a4, rs, rs3, cs, bp, ldb, n := GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
	MOVQ(arow, a0)
	Load(Param("csA"), cs)
	SHLQ(U8(3), cs)
	if rt > 1 {
		Load(Param("rsA"), rs)
		SHLQ(U8(3), rs)
	}
	if rt > 3 {
		LEAQ(Mem{Base: rs, Index: rs, Scale: 2}, rs3)
	}
	if rt > 4 {
		LEAQ(Mem{Base: a0, Index: rs, Scale: 4}, a4)
	}
	Load(Param("b"), bp)
	Load(Param("ldb"), ldb)
	SHLQ(U8(3), ldb)
	aAddr := func(i int) Mem {
		base := a0
		if i >= 4 {
			base, i = a4, i-4
		}
		switch i {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: rs, Scale: 1}
		case 2:
			return Mem{Base: base, Index: rs, Scale: 2}
		case 3:
			return Mem{Base: base, Index: rs3, Scale: 1}
		}
		panic("row")
	}
	for i := 0; i < nacc; i++ {
		s.zero(s.vec(i))
	}
	Load(Param("k"), n)
	loop := label("chain_loop")
	Label(loop)
	if rt == 1 {
		VBROADCASTSD(aAddr(0), bc(0))
		for j := 0; j < v; j++ {
			mem := Mem{Base: bp, Disp: j * hb}
			if masked && j == v-1 {
				if s.v512() {
					VFMADD231PD(mem, nw(j, bc(0)), m.k, acc(0, j))
				} else {
					VMASKMOVPD(mem, m.y, bReg(j))
					VFMADD231PD(bReg(j), bc(0), acc(0, j))
				}
				continue
			}
			VFMADD231PD(mem, bc(0), acc(0, j))
		}
	} else {
		for j := 0; j < v; j++ {
			mem := Mem{Base: bp, Disp: j * hb}
			if masked && j == v-1 {
				s.loadMasked(mem, m, nw(j, bReg(j)))
			} else {
				VMOVUPD(mem, bReg(j))
			}
		}
		for i := 0; i < rt; i++ {
			VBROADCASTSD(aAddr(i), bc(i))
			for j := 0; j < v; j++ {
				VFMADD231PD(nw(j, bReg(j)), nw(j, bc(i)), acc(i, j))
			}
		}
	}
	ADDQ(cs, a0)
	if rt > 4 {
		ADDQ(cs, a4)
	}
	ADDQ(ldb, bp)
	DECQ(n)
	JNZ(LabelRef(loop))

	// Finish and store.
	alpha := s.vec(nacc)
	VBROADCASTSD(NewParamAddr("alpha", 9*8), alpha)
	tmp := s.vec(nacc + 1)
	cp, ldc, accFlag := GP64(), GP64(), GP64()
	Load(Param("acc"), accFlag)
	// alpha·s is s when alpha = 1 (s, the result of a fused multiply–add,
	// is never a signalling NaN), so the products are skipped then.
	one := label("chain_one")
	MOVQ(NewParamAddr("alpha", 9*8), cp)
	MOVQ(U64(0x3ff0000000000000), ldc)
	CMPQ(cp, ldc)
	JE(LabelRef(one))
	for i := 0; i < rt; i++ {
		for j := 0; j < v; j++ {
			VMULPD(nw(j, alpha), acc(i, j), acc(i, j))
		}
	}
	Label(one)
	MOVQ(crow, cp)
	Load(Param("ldc"), ldc)
	SHLQ(U8(3), ldc)
	st := label("chain_st")
	TESTQ(accFlag, accFlag)
	JZ(LabelRef(st))
	for i := 0; i < rt; i++ {
		for j := 0; j < v; j++ {
			mem := Mem{Base: cp, Disp: j * hb}
			if masked && j == v-1 {
				s.loadMasked(mem, m, nw(j, tmp))
				VADDPD(nw(j, tmp), acc(i, j), acc(i, j))
			} else {
				VADDPD(mem, acc(i, j), acc(i, j))
			}
		}
		if i < rt-1 {
			ADDQ(ldc, cp)
		}
	}
	MOVQ(crow, cp)
	Label(st)
	for i := 0; i < rt; i++ {
		for j := 0; j < v; j++ {
			mem := Mem{Base: cp, Disp: j * hb}
			if masked && j == v-1 {
				s.storeMasked(acc(i, j), m, mem)
			} else {
				VMOVUPD(acc(i, j), mem)
			}
		}
		if i < rt-1 {
			ADDQ(ldc, cp)
		}
	}
}

// rowChainKernel generates rowChain<set>: the chain kernel for a single row
// of A (csA = 1) and up to tvVecs vectors of columns, every column its own
// chain: C[j] = alpha·Σ_p a[p]·B[p][j] (+ C[j]) for j < w, p < k.
func rowChainKernel(s *isa) {
	name := "rowChain" + s.name
	TEXT(name, NOSPLIT, panelSig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s is %s for m = 1 and 1 ≤ w ≤ %d (one chain per column).", name, "panel"+s.name, s.tvVecs*s.lanes))
	arow := AllocLocal(8)
	crow := AllocLocal(8)
	t := GP64()
	Load(Param("a"), t)
	MOVQ(t, arow)
	Load(Param("c"), t)
	MOVQ(t, crow)
	var m mask
	if s.v512() {
		m.k = K1
	} else {
		m.y = s.vec(s.nregs - 1)
	}
	done := label(name + "_done")
	w := GP64()
	Load(Param("w"), w)
	// Binary search on w for the number of vectors.
	var dispatch func(lo, hi int)
	dispatch = func(lo, hi int) {
		if lo == hi {
			chainTile(s, 1, lo, true, false, m, arow, crow)
			JMP(LabelRef(done))
			return
		}
		mid := (lo + hi) / 2
		upper := label(name + "_v")
		CMPQ(w, U32(s.lanes*mid))
		JG(LabelRef(upper))
		dispatch(lo, mid)
		Label(upper)
		dispatch(mid+1, hi)
	}
	dispatch(1, s.tvVecs)
	Label(done)
	VZEROUPPER()
	RET()
}
