/* dnn64_rsp_bare.h - the RSP microcode arrays linked into bare ROMs.
 *
 * Each kernel's code is big-endian words for IMEM, 8-byte aligned and a whole
 * number of 8-byte granules (SP DMA). Generated: dnn64_rsp_microcode.c. */
#ifndef DNN64_RSP_BARE_H
#define DNN64_RSP_BARE_H

#include <stdint.h>

extern const uint32_t dnn64_rsp_matmul_s8_code[];
extern const uint32_t dnn64_rsp_matmul_s8_code_bytes;
extern const uint32_t dnn64_rsp_dwconv_s8_code[];
extern const uint32_t dnn64_rsp_dwconv_s8_code_bytes;
extern const uint32_t dnn64_rsp_pwconv_s8_code[];
extern const uint32_t dnn64_rsp_pwconv_s8_code_bytes;
extern const uint32_t dnn64_rsp_gemv_dma_s8_code[];
extern const uint32_t dnn64_rsp_gemv_dma_s8_code_bytes;
extern const uint32_t dnn64_rsp_sums_s8_code[];
extern const uint32_t dnn64_rsp_sums_s8_code_bytes;
extern const uint32_t dnn64_rsp_stem_s8_code[];
extern const uint32_t dnn64_rsp_stem_s8_code_bytes;

#endif /* DNN64_RSP_BARE_H */
