/* boot.S - the default IPL3-slot boot stub (ROM 0x40..0x1000).
 *
 * mupen64plus's HLE PIF copies ROM 0x40..0x1000 to SP DMEM and runs it at
 * 0xA4000040. This stub waits for the PI to be idle, DMAs the 1 MiB program
 * slot (cart 0x10001000) to RDRAM 0x00000400 - the same contract as Nintendo's
 * CIC-6102 IPL3 - and jumps to the entry point 0x80000400 (crt0.S).
 *
 * EMULATOR ONLY: it neither initialises RDRAM nor the caches and is not
 * CIC-signed; real hardware needs a user-supplied signed IPL3.
 * Position independent: only PC-relative branches and absolute constants. */
    .set noreorder
    .set noat
    .text
    .globl dnn64_boot
dnn64_boot:
    lui     $t0, 0xA460             /* PI registers */
1:  lw      $t1, 0x10($t0)          /* PI_STATUS: bits 0-1 busy */
    andi    $t1, $t1, 3
    bnez    $t1, 1b
    nop
    li      $t1, 0x00000400         /* RDRAM destination (physical) */
    sw      $t1, 0x00($t0)
    li      $t1, 0x10001000         /* cartridge source (physical) */
    sw      $t1, 0x04($t0)
    li      $t1, 0x000FFFFF         /* length - 1: 1 MiB; starts the DMA */
    sw      $t1, 0x0C($t0)
2:  lw      $t1, 0x10($t0)
    andi    $t1, $t1, 3
    bnez    $t1, 2b
    nop
    li      $t1, 2                  /* acknowledge the PI interrupt */
    sw      $t1, 0x10($t0)
    lui     $sp, 0x8040             /* provisional stack; crt0 sets the real one */
    lui     $t2, 0x8000
    ori     $t2, $t2, 0x0400
    jr      $t2
    nop
