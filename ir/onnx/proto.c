/* proto.c — a protobuf wire-format reader over a byte buffer: varints,
 * fixed 32/64-bit values and length-delimited records (strings, bytes,
 * nested messages, packed repeated scalars). Bounds-checked at every step:
 * a malformed or truncated buffer ends with -1 and a reason, never a read
 * past the end. */
#include "ir/onnx/onnx.h"

#include <string.h>

void gs_pb_init(gs_pb *r, const uint8_t *buf, size_t n) {
    r->p = buf;
    r->end = buf ? buf + n : buf;
    r->depth = 0;
    r->err = NULL;
}

/* A base-128 varint: 7 bits a byte, low group first, the high bit set on all
 * but the last byte; at most 10 bytes for 64 bits. */
static int read_varint(gs_pb *r, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0;; i++) { /* ends by the tenth byte: it may carry bit 63 alone */
        if (r->p >= r->end) {
            r->err = "truncated varint";
            return -1;
        }
        uint8_t b = *r->p++;
        if (i == 9 && b > 1) { /* the tenth byte carries bit 63 alone */
            r->err = "varint longer than 64 bits";
            return -1;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
}

static int read_fixed(gs_pb *r, int bytes, uint64_t *out) {
    if (r->end - r->p < bytes) {
        r->err = bytes == 4 ? "truncated fixed32" : "truncated fixed64";
        return -1;
    }
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | r->p[i]; /* little-endian */
    r->p += bytes;
    *out = v;
    return 0;
}

int gs_pb_next(gs_pb *r, gs_pb_field *f) {
    if (r->p >= r->end) return 0;
    uint64_t tag;
    if (read_varint(r, &tag) < 0) return -1;
    memset(f, 0, sizeof *f);
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
        r->err = "field number 0 or beyond 2^29";
        return -1;
    }
    f->num = (uint32_t)(tag >> 3);
    f->wire = (gs_pb_wire)(tag & 7);
    switch (f->wire) {
    case GS_PB_VARINT: return read_varint(r, &f->v) < 0 ? -1 : 1;
    case GS_PB_FIXED64: return read_fixed(r, 8, &f->v) < 0 ? -1 : 1;
    case GS_PB_FIXED32: return read_fixed(r, 4, &f->v) < 0 ? -1 : 1;
    case GS_PB_LEN: {
        uint64_t len;
        if (read_varint(r, &len) < 0) return -1;
        if (len > (uint64_t)(r->end - r->p)) {
            r->err = "length-delimited field runs past the end";
            return -1;
        }
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    }
    default: /* 3 and 4 are proto2 groups (not in onnx.proto), 6 and 7 do not exist */
        r->err = "unsupported wire type (groups or an invalid type)";
        return -1;
    }
}

int gs_pb_sub(const gs_pb *r, const gs_pb_field *f, gs_pb *sub) {
    gs_pb_init(sub, f->data, f->len);
    sub->depth = r->depth + 1;
    if (f->wire != GS_PB_LEN) {
        sub->err = "a message field is not length-delimited";
        return -1;
    }
    if (sub->depth > GS_PB_MAX_DEPTH) {
        sub->err = "messages nested too deeply";
        return -1;
    }
    return 0;
}

int gs_pb_repeated(const gs_pb_field *f, gs_pb_wire wire, gs_pb *it, uint64_t *v) {
    if (!it->depth) { /* the first call */
        it->depth = 1;
        it->p = it->end = NULL;
        if (f->wire == wire) { /* unpacked: this one element */
            *v = f->v;
            return 1;
        }
        if (f->wire != GS_PB_LEN) {
            it->err = "a repeated field has the wrong wire type";
            return -1;
        }
        it->p = f->data; /* packed: the elements back to back */
        it->end = f->data + f->len;
    }
    if (f->wire == wire || it->p >= it->end) return 0;
    int rc = wire == GS_PB_VARINT ? read_varint(it, v) : read_fixed(it, wire == GS_PB_FIXED32 ? 4 : 8, v);
    return rc < 0 ? -1 : 1;
}

float gs_pb_f32(uint64_t bits) {
    uint32_t u = (uint32_t)bits;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

double gs_pb_f64(uint64_t bits) {
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
