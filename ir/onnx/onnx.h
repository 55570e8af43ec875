/* onnx.h — the ONNX importer's room: a protobuf wire-format reader (proto.c)
 * and, on it, the subset of onnx.proto that gensor needs, mapped to gs_op
 * (onnx.c). Uses only util/ and ir/: no protobuf library, no new dependency.
 *
 * Field numbers follow onnx/onnx.proto (ModelProto, GraphProto, NodeProto,
 * TensorProto, AttributeProto, ValueInfoProto, TypeProto, TensorShapeProto,
 * OperatorSetIdProto, StringStringEntryProto). */
#ifndef GS_IR_ONNX_H
#define GS_IR_ONNX_H

#include "ir/ir.h"

/* ---- protobuf wire format ------------------------------------------------
 * A message is a sequence of (tag, value) records; the tag is a varint
 * field_number << 3 | wire_type. The reader never reads past end: every
 * length is checked against what is left, varints stop at 10 bytes, and
 * nested messages are opened with a depth that stops at GS_PB_MAX_DEPTH. */
#define GS_PB_MAX_DEPTH 32

typedef enum gs_pb_wire {
    GS_PB_VARINT = 0,
    GS_PB_FIXED64 = 1,
    GS_PB_LEN = 2, /* length-delimited: strings, bytes, messages, packed repeated */
    GS_PB_FIXED32 = 5
} gs_pb_wire;

typedef struct gs_pb {
    const uint8_t *p, *end;
    int depth;       /* nesting of this message below the file's top */
    const char *err; /* why the last call failed (a static string) */
} gs_pb;

typedef struct gs_pb_field {
    uint32_t num;
    gs_pb_wire wire;
    uint64_t v;          /* VARINT, FIXED64, FIXED32: the value's bits */
    const uint8_t *data; /* LEN: the bytes */
    size_t len;
} gs_pb_field;

/* A reader over buf[0..n). */
void gs_pb_init(gs_pb *r, const uint8_t *buf, size_t n);
/* The next field: 1 read, 0 at the end of the message, -1 malformed (r->err
 * says why: a truncated varint or length, an unknown wire type such as the
 * deprecated groups, field number 0). */
int gs_pb_next(gs_pb *r, gs_pb_field *f);
/* A reader over a LEN field's bytes, one level deeper; -1 (sub->err) past
 * GS_PB_MAX_DEPTH. */
int gs_pb_sub(const gs_pb *r, const gs_pb_field *f, gs_pb *sub);
/* One element of a repeated scalar field that may be packed or not: an
 * unpacked field holds one element in f; a packed one (LEN) holds many,
 * read one by one through *it (zeroed before the first call).
 * wire is the element's wire type (VARINT, FIXED32 or FIXED64). Returns 1
 * with the element's bits in *v, 0 when done, -1 malformed (it->err). */
int gs_pb_repeated(const gs_pb_field *f, gs_pb_wire wire, gs_pb *it, uint64_t *v);
/* A float or double from FIXED32 / FIXED64 bits (little-endian on the wire). */
float gs_pb_f32(uint64_t bits);
double gs_pb_f64(uint64_t bits);

/* ---- ONNX model ----------------------------------------------------------- */
/* The model itself (struct gs_model) is declared in gensor.h and defined in
 * onnx.c. Limits that bound what one file can make the importer allocate: */
#define GS_ONNX_MAX_RANK 8      /* dims of a tensor */
#define GS_ONNX_MAX_NODES 100000
#define GS_ONNX_MAX_FILE (1LL << 32) /* 4 GiB: protobuf's own limit is 2 GiB */

/* For the test runners (not in gensor.h): the values of an integer constant
 * of an imported model (an INT64, INT32 or BOOL initializer or Constant, or a
 * tensor the import folded from the shapes), *data owned by m;
 * GS_ERR_INVALID_ARG when name is no such constant. */
gs_status gs_model_constant_ints(gs_ctx *ctx, const gs_model *m, const char *name, const int64_t **data, int64_t *n);

#endif
