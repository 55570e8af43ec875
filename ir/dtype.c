/* dtype.c — the element-type table and exact host conversions between
 * binary32 and the 16-bit types (binary16, bfloat16), written from the IEEE
 * 754 formats: round to nearest, ties to even; NaN stays a quiet NaN;
 * overflow goes to inf; binary16 subnormals are produced and read. */
#include "ir/ir.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

const gs_dtype_info gs_dtypes[GS_DTYPE_COUNT] = {
    [GS_DTYPE_F32] = {"f32", 4, "float", "float", 0x00000000u, 0xff800000u, 0x7f800000u, 23, GS_DTYPE_F32},
    [GS_DTYPE_F16] = {"f16", 2, "unsigned short", "ushort", 0x0000u, 0xfc00u, 0x7c00u, 10, GS_DTYPE_F32},
    [GS_DTYPE_BF16] = {"bf16", 2, "unsigned short", "ushort", 0x0000u, 0xff80u, 0x7f80u, 7, GS_DTYPE_F32},
};

const char *gs_dtype_name(gs_dtype t) { return (int)t >= 0 && t < GS_DTYPE_COUNT ? gs_dtypes[t].name : "?"; }
int gs_dtype_bytes(gs_dtype t) { return (int)t >= 0 && t < GS_DTYPE_COUNT ? gs_dtypes[t].bytes : 0; }

bool gs_dtype_parse(const char *name, gs_dtype *t) {
    for (int i = 0; i < GS_DTYPE_COUNT; i++)
        if (!strcmp(name, gs_dtypes[i].name)) {
            *t = (gs_dtype)i;
            return true;
        }
    return false;
}

double gs_dtype_unit_roundoff(gs_dtype t) { return ldexp(1.0, -(gs_dtype_row(t)->mant_bits + 1)); }

static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static float bits_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

uint16_t gs_f32_to_f16(float x) {
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0)); /* inf, quiet NaN */
    int e = (int)exp - 127 + 15; /* the binary16 biased exponent */
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* subnormal (or zero): the value is m * 2^-24 with m = full mantissa >> shift */
        if (e < -10) return sign; /* below half the smallest subnormal: rounds to 0 */
        uint32_t full = man | 0x800000u;
        int shift = 14 - e; /* 14..24 */
        uint32_t m = full >> shift, rem = full & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (m & 1))) m++; /* may carry into the smallest normal: right */
        return (uint16_t)(sign | m);
    }
    uint32_t m = man >> 13, rem = man & 0x1fffu;
    uint32_t h = ((uint32_t)e << 10) | m;
    if (rem > 0x1000u || (rem == 0x1000u && (m & 1))) h++; /* a carry rounds up the exponent, to inf at most */
    return (uint16_t)(sign | h);
}

float gs_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) return (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24); /* exact: 10 bits */
    return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t gs_f32_to_bf16(float x) {
    uint32_t u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN: quiet, kept */
    u += 0x7fffu + ((u >> 16) & 1u);                                            /* the rounding bias */
    return (uint16_t)(u >> 16);
}

float gs_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

float gs_tf32_round(float x) {
    uint32_t u = f32_bits(x);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; /* half an ulp up the magnitude: ties away */
    return bits_f32(u);
}

float gs_dtype_round(gs_dtype t, float x) {
    if (t == GS_DTYPE_F16) return gs_f16_to_f32(gs_f32_to_f16(x));
    if (t == GS_DTYPE_BF16) return gs_bf16_to_f32(gs_f32_to_bf16(x));
    return x;
}

void gs_dtype_pack(gs_dtype t, const float *src, void *dst, int64_t n) {
    if (t == GS_DTYPE_F32) {
        memcpy(dst, src, (size_t)n * 4);
        return;
    }
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = t == GS_DTYPE_F16 ? gs_f32_to_f16(src[i]) : gs_f32_to_bf16(src[i]);
}

void gs_dtype_unpack(gs_dtype t, const void *src, float *dst, int64_t n) {
    if (t == GS_DTYPE_F32) {
        memcpy(dst, src, (size_t)n * 4);
        return;
    }
    const uint16_t *s = src;
    for (int64_t i = 0; i < n; i++) dst[i] = t == GS_DTYPE_F16 ? gs_f16_to_f32(s[i]) : gs_bf16_to_f32(s[i]);
}

gs_status gs_dtype_convert(gs_ctx *ctx, gs_dtype from, const void *src, gs_dtype to, void *dst, int64_t n) {
    if ((int)from < 0 || from >= GS_DTYPE_COUNT || (int)to < 0 || to >= GS_DTYPE_COUNT)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dtype_convert: unknown type %d/%d (known: 0 f32, 1 f16, 2 bf16)",
                      (int)from, (int)to);
    if (n < 0 || (n > 0 && (!src || !dst)))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dtype_convert: %lld elements from %p to %p", (long long)n, src, dst);
    if (n > PTRDIFF_MAX / 4) /* its bytes would not fit an address (memcpy's size wrapped: 2^62 + 1 floats copied 4 bytes) */
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_dtype_convert: %lld elements are more than a buffer can hold",
                      (long long)n);
    if (from == GS_DTYPE_F32) gs_dtype_pack(to, src, dst, n);
    else if (to == GS_DTYPE_F32) gs_dtype_unpack(from, src, dst, n);
    else { /* between the 16-bit types: through f32, which holds either exactly */
        const uint16_t *s = src;
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++) {
            float x;
            gs_dtype_unpack(from, &s[i], &x, 1);
            gs_dtype_pack(to, &x, &d[i], 1);
        }
    }
    return GS_OK;
}
