//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 + FMA3 activation kernels. See act_amd64.go for the prototypes.
//
// Masks for VMASKMOVPD: the 4 quadwords at maskTab<>+32-8*t have their
// first t lanes set (0 ≤ t ≤ 4).
DATA maskTab<>+0(SB)/8, $0xffffffffffffffff
DATA maskTab<>+8(SB)/8, $0xffffffffffffffff
DATA maskTab<>+16(SB)/8, $0xffffffffffffffff
DATA maskTab<>+24(SB)/8, $0xffffffffffffffff
DATA maskTab<>+32(SB)/8, $0
DATA maskTab<>+40(SB)/8, $0
DATA maskTab<>+48(SB)/8, $0
DATA maskTab<>+56(SB)/8, $0
GLOBL maskTab<>(SB), RODATA|NOPTR, $64

// LOADMASK loads into ymm the mask of the first t lanes, t in register tr
// (clobbered), using scratch register sr.
#define LOADMASK(tr, sr, ymm) \
	SHLQ $3, tr                \
	NEGQ tr                    \
	LEAQ maskTab<>+32(SB), sr  \
	VMOVUPD (sr)(tr*1), ymm

// Constants of sech2Asm, four copies each:
//    0: absmask
//   32: clamp = 350.0
//   64: m2 = -2.0
//   96: log2e = 1.4426950408889634
//  128: mln2hi = -0.6931471803691238
//  160: mln2lo = -1.9082149292705877e-10
//  192: one = 1.0
//  224: four = 4.0
//  256: c13 = 1.6059043836821613e-10
//  288: c12 = 2.08767569878681e-09
//  320: c11 = 2.505210838544172e-08
//  352: c10 = 2.755731922398589e-07
//  384: c9 = 2.7557319223985893e-06
//  416: c8 = 2.48015873015873e-05
//  448: c7 = 0.0001984126984126984
//  480: c6 = 0.001388888888888889
//  512: c5 = 0.008333333333333333
//  544: c4 = 0.041666666666666664
//  576: c3 = 0.16666666666666666
//  608: c2 = 0.5
//  640: c1 = 1.0
//  672: c0 = 1.0
//  704: shift = 0x1.8p52 + 1023 (adding it rounds to an integer n held,
//       biased by 1023, in the low bits: shifted left by 52 they are 2ⁿ)
DATA sechTab<>+0(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+8(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+16(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+24(SB)/8, $0x7fffffffffffffff
DATA sechTab<>+32(SB)/8, $0x4075e00000000000
DATA sechTab<>+40(SB)/8, $0x4075e00000000000
DATA sechTab<>+48(SB)/8, $0x4075e00000000000
DATA sechTab<>+56(SB)/8, $0x4075e00000000000
DATA sechTab<>+64(SB)/8, $0xc000000000000000
DATA sechTab<>+72(SB)/8, $0xc000000000000000
DATA sechTab<>+80(SB)/8, $0xc000000000000000
DATA sechTab<>+88(SB)/8, $0xc000000000000000
DATA sechTab<>+96(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+104(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+112(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+120(SB)/8, $0x3ff71547652b82fe
DATA sechTab<>+128(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+136(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+144(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+152(SB)/8, $0xbfe62e42fee00000
DATA sechTab<>+160(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+168(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+176(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+184(SB)/8, $0xbdea39ef35793c76
DATA sechTab<>+192(SB)/8, $0x3ff0000000000000
DATA sechTab<>+200(SB)/8, $0x3ff0000000000000
DATA sechTab<>+208(SB)/8, $0x3ff0000000000000
DATA sechTab<>+216(SB)/8, $0x3ff0000000000000
DATA sechTab<>+224(SB)/8, $0x4010000000000000
DATA sechTab<>+232(SB)/8, $0x4010000000000000
DATA sechTab<>+240(SB)/8, $0x4010000000000000
DATA sechTab<>+248(SB)/8, $0x4010000000000000
DATA sechTab<>+256(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+264(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+272(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+280(SB)/8, $0x3de6124613a86d09
DATA sechTab<>+288(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+296(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+304(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+312(SB)/8, $0x3e21eed8eff8d898
DATA sechTab<>+320(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+328(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+336(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+344(SB)/8, $0x3e5ae64567f544e4
DATA sechTab<>+352(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+360(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+368(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+376(SB)/8, $0x3e927e4fb7789f5c
DATA sechTab<>+384(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+392(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+400(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+408(SB)/8, $0x3ec71de3a556c734
DATA sechTab<>+416(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+424(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+432(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+440(SB)/8, $0x3efa01a01a01a01a
DATA sechTab<>+448(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+456(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+464(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+472(SB)/8, $0x3f2a01a01a01a01a
DATA sechTab<>+480(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+488(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+496(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+504(SB)/8, $0x3f56c16c16c16c17
DATA sechTab<>+512(SB)/8, $0x3f81111111111111
DATA sechTab<>+520(SB)/8, $0x3f81111111111111
DATA sechTab<>+528(SB)/8, $0x3f81111111111111
DATA sechTab<>+536(SB)/8, $0x3f81111111111111
DATA sechTab<>+544(SB)/8, $0x3fa5555555555555
DATA sechTab<>+552(SB)/8, $0x3fa5555555555555
DATA sechTab<>+560(SB)/8, $0x3fa5555555555555
DATA sechTab<>+568(SB)/8, $0x3fa5555555555555
DATA sechTab<>+576(SB)/8, $0x3fc5555555555555
DATA sechTab<>+584(SB)/8, $0x3fc5555555555555
DATA sechTab<>+592(SB)/8, $0x3fc5555555555555
DATA sechTab<>+600(SB)/8, $0x3fc5555555555555
DATA sechTab<>+608(SB)/8, $0x3fe0000000000000
DATA sechTab<>+616(SB)/8, $0x3fe0000000000000
DATA sechTab<>+624(SB)/8, $0x3fe0000000000000
DATA sechTab<>+632(SB)/8, $0x3fe0000000000000
DATA sechTab<>+640(SB)/8, $0x3ff0000000000000
DATA sechTab<>+648(SB)/8, $0x3ff0000000000000
DATA sechTab<>+656(SB)/8, $0x3ff0000000000000
DATA sechTab<>+664(SB)/8, $0x3ff0000000000000
DATA sechTab<>+672(SB)/8, $0x3ff0000000000000
DATA sechTab<>+680(SB)/8, $0x3ff0000000000000
DATA sechTab<>+688(SB)/8, $0x3ff0000000000000
DATA sechTab<>+696(SB)/8, $0x3ff0000000000000
DATA sechTab<>+704(SB)/8, $0x43380000000003ff
DATA sechTab<>+712(SB)/8, $0x43380000000003ff
DATA sechTab<>+720(SB)/8, $0x43380000000003ff
DATA sechTab<>+728(SB)/8, $0x43380000000003ff
GLOBL sechTab<>(SB), RODATA|NOPTR, $736

// SECH2 sets Y2 = sech²(Y0) = 4u/(1+u)² with u = exp(−2·min(|x|, 350)),
// the exponential by a degree-13 Taylor polynomial after reduction by the
// nearest multiple n of ln 2 (found with the 1.5·2⁵² + 1023 shifter, whose
// low bits then hold the biased exponent of 2ⁿ). The polynomial is evaluated
// by Estrin's scheme (pairs, then powers r², r⁴, r⁸), which shortens the
// dependency chain for short calls. It clobbers Y0..Y7; R9 holds the address
// of sechTab, Y8..Y14 the constants absmask, clamp, −2, log2e, 1, 4 and the
// shifter. NaN propagates.
#define SECH2 \
	VANDPD Y8, Y0, Y0               \
	VMINPD Y0, Y9, Y0               \
	VMULPD Y10, Y0, Y0              \
	VMOVAPD Y14, Y1                 \
	VFMADD231PD Y11, Y0, Y1         \
	VPSLLQ $52, Y1, Y3              \
	VSUBPD Y14, Y1, Y1              \
	VFMADD231PD 128(R9), Y1, Y0     \
	VFMADD231PD 160(R9), Y1, Y0     \
	VMULPD Y0, Y0, Y1               \
	VMOVUPD 256(R9), Y2             \
	VFMADD213PD 288(R9), Y0, Y2     \
	VMOVUPD 320(R9), Y4             \
	VFMADD213PD 352(R9), Y0, Y4     \
	VMOVUPD 384(R9), Y5             \
	VFMADD213PD 416(R9), Y0, Y5     \
	VMOVUPD 448(R9), Y6             \
	VFMADD213PD 480(R9), Y0, Y6     \
	VMOVUPD 512(R9), Y7             \
	VFMADD213PD 544(R9), Y0, Y7     \
	VFMADD231PD Y4, Y1, Y5          \
	VFMADD231PD Y6, Y1, Y7          \
	VMOVUPD 576(R9), Y4             \
	VFMADD213PD 608(R9), Y0, Y4     \
	VMOVUPD 640(R9), Y6             \
	VFMADD213PD 672(R9), Y0, Y6     \
	VFMADD231PD Y4, Y1, Y6          \
	VMULPD Y1, Y1, Y1               \
	VFMADD231PD Y2, Y1, Y5          \
	VFMADD231PD Y7, Y1, Y6          \
	VMULPD Y1, Y1, Y1               \
	VFMADD231PD Y5, Y1, Y6          \
	VMULPD Y3, Y6, Y2               \
	VADDPD Y12, Y2, Y4              \
	VMULPD Y4, Y4, Y4               \
	VMULPD Y13, Y2, Y2              \
	VDIVPD Y4, Y2, Y2

// func sech2Asm(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int)
//
// Y[r][j] = a[j]·sech²(X[r][j] + b[j]) for r < rows, j < n (rows, n ≥ 1),
// four at a time, then a masked tail in each row. One call covers all rows so
// that the long dependency chains of consecutive vectors overlap.
TEXT ·sech2Asm(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), R11
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), R12
	SHLQ $3, R12
	MOVQ b+32(FP), DI
	MOVQ a+40(FP), DX
	MOVQ y+48(FP), R8
	MOVQ ldy+56(FP), R13
	SHLQ $3, R13
	LEAQ sechTab<>(SB), R9
	VMOVUPD 0(R9), Y8
	VMOVUPD 32(R9), Y9
	VMOVUPD 64(R9), Y10
	VMOVUPD 96(R9), Y11
	VMOVUPD 192(R9), Y12
	VMOVUPD 224(R9), Y13
	VMOVUPD 704(R9), Y14
	MOVQ n+8(FP), BX
	MOVQ BX, R14
	ANDQ $-4, BX
	ANDQ $3, R14
	MOVQ R14, AX
	LOADMASK(AX, R10, Y15)

sh_row:
	XORQ CX, CX
	TESTQ BX, BX
	JE    sh_tail

sh_loop:
	VMOVUPD (SI)(CX*8), Y0
	VADDPD (DI)(CX*8), Y0, Y0
	SECH2
	VMULPD (DX)(CX*8), Y2, Y2
	VMOVUPD Y2, (R8)(CX*8)
	ADDQ $4, CX
	CMPQ CX, BX
	JLT  sh_loop

sh_tail:
	TESTQ R14, R14
	JE    sh_next
	VMASKMOVPD (SI)(CX*8), Y15, Y0
	VMASKMOVPD (DI)(CX*8), Y15, Y5
	VADDPD Y5, Y0, Y0
	SECH2
	VMASKMOVPD (DX)(CX*8), Y15, Y5
	VMULPD Y5, Y2, Y2
	VMASKMOVPD Y2, Y15, (R8)(CX*8)

sh_next:
	ADDQ R12, SI
	ADDQ R13, R8
	DECQ R11
	JNE  sh_row
	VZEROUPPER
	RET
