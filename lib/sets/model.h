/* SPDX-License-Identifier: MIT */
/*
 * model.h - the formulas of the two probing geometries: a key's k probes
 * anywhere in m positions (classic; counting and DCSO too), or in one
 * 512-bit block (blocked). Expected false-positive rate at n keys, the
 * number of keys estimated back from the positions set, and that
 * estimate's standard deviation. model.c derives them; the layouts' tables
 * point at them, and sizing.c searches with them.
 */
#ifndef BFTOOLS_MODEL_H
#define BFTOOLS_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

double model_classic_fpr(uint64_t n, uint64_t m, uint32_t k);
double model_classic_estimate(uint64_t m, uint32_t k, uint64_t set);
double model_classic_estimate_sd(uint64_t m, uint32_t k, double n);

double model_blocked_fpr(uint64_t n, uint64_t m, uint32_t k);
double model_blocked_estimate(uint64_t m, uint32_t k, uint64_t set);
double model_blocked_estimate_sd(uint64_t m, uint32_t k, double n);

#ifdef __cplusplus
}
#endif

#endif
