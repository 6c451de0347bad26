/* crt0.S - entry point of a bare dnn64 program (0x80000400, see n64.ld).
 *
 * Sets CP0 Status (CU0|CU1: FPU usable; FR=0 to match -mabi=32/-mfp32, where
 * doubles live in even/odd register pairs; BEV=0 so exceptions use the RAM
 * vectors; kernel mode, interrupts off), FCSR (round to nearest, no FP traps,
 * FS=1 so denormal results flush to zero instead of raising the VR4300's
 * unimplemented-operation exception), the stack, clears .bss, then calls
 * dnn64_bare_start (dnn64_platform_bare.c), which never returns. */
    .set noreorder
    .section .text.dnn64_start, "ax"
    .globl _start
    .ent _start
_start:
    lui     $t0, 0x3000             /* Status = CU1 | CU0 */
    mtc0    $t0, $12
    nop
    nop
    lui     $t0, 0x0100             /* FCSR: FS=1, RM=0 (nearest), no enables */
    ctc1    $t0, $31
    la      $sp, __dnn64_stack_top
    la      $t0, __dnn64_bss_start  /* both 16-byte aligned (n64.ld) */
    la      $t1, __dnn64_bss_end
1:  beq     $t0, $t1, 2f
    nop
    sw      $zero, 0($t0)
    sw      $zero, 4($t0)
    sw      $zero, 8($t0)
    sw      $zero, 12($t0)
    b       1b
    addiu   $t0, $t0, 16
2:  jal     dnn64_bare_start
    nop
3:  b       3b
    nop
    .end _start

/* Exception vector body, copied to 0x80000000/0x80000080/0x80000180 by
 * dnn64_bare_start: jump to the C reporter (k0 is reserved for this). */
    .globl dnn64_bare_vector
    .globl dnn64_bare_vector_end
dnn64_bare_vector:
    lui     $k0, %hi(dnn64_bare_exception)
    addiu   $k0, $k0, %lo(dnn64_bare_exception)
    jr      $k0
    nop
dnn64_bare_vector_end:
