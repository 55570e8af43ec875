/* import.c — `gensor import MODEL.onnx [--dim NAME=N ...] --hw H [--out FILE]
 * [--construct DIR]`: an ONNX model's nodes as the model-list JSON that
 * `gensor suite` reads (the format of experiments/models/), identical kernels
 * merged with a count; every node without a kernel of its own that is not a
 * view is listed on stderr with the reason. --construct also constructs each
 * distinct kernel and writes a manifest a runtime can load
 * (experiments/onnx_run.c is one). */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char import_help[] =
    "usage: gensor import MODEL.onnx [--dim NAME=N ...] [--hw NAME|FILE] [--out FILE] [--construct DIR]\n"
    "\n"
    "Read an ONNX model, bind its symbolic input dims (--dim batch=8, once per dim), propagate the\n"
    "shapes, fold each batch norm into the conv before it, fuse each Relu into the kernel before it,\n"
    "and write the model list that `gensor suite FILE --hw H` constructs: one entry per distinct\n"
    "kernel with its count, to FILE (--out) or stdout. --hw names the profile the list is for (it is\n"
    "checked and recorded). Nodes that map to no kernel are listed on stderr, one line each, with the\n"
    "reason; views (Reshape, Flatten) and fused nodes are not. Exit 2 for a malformed model, an\n"
    "unknown or unbound dim, or a bad option.\n"
    "\n"
    "--construct DIR constructs every distinct kernel for the profile (the default options, the\n"
    "1x1-conv form chosen as `construct` does) and writes into DIR: model.json (the list),\n"
    "kernels/NAME.cl and NAME.cu (each kernel's top candidate), weights.bin (every constant a node\n"
    "reads, float32 little-endian: a FLOAT16 or BFLOAT16 constant's exact values) and\n"
    "manifest.json: per node in graph order its kind (kernel, view, constant, fused, unsupported\n"
    "with the reason), and for a kernel its spec, form, config, kernel name and sources, launch\n"
    "(grid, block, shared bytes) and buffer bindings (buffer, tensor, elements, dtype: the\n"
    "buffer's element type f32, f16 or bf16, constant or output, the output's initial tensor);\n"
    "the constants' offsets in weights.bin and their types. A runner converts each constant to\n"
    "its buffer's type (round to nearest even). tests/onnx_run.c runs a model from it.\n";

#define IMPORT_MAX_DIMS 32

typedef struct import_opts {
    const char *path, *hwname, *out, *construct;
    int ndims;
    const char *dim_name[IMPORT_MAX_DIMS];
    long dim_val[IMPORT_MAX_DIMS];
    char dim_buf[IMPORT_MAX_DIMS][128];
} import_opts;

static const struct option import_lo[] = {
    GS_CLI_OPT_HW, {"dim", required_argument, 0, 'd'}, {"out", required_argument, 0, 'o'},
    {"construct", required_argument, 0, 'C'}, GS_CLI_OPT_HELP,
    GS_CLI_OPT_END,
};
static const gs_cli_cmd import_cmd = {"import", import_help, import_lo, "unknown option or missing value '%s'",
                                      "missing the MODEL.onnx file%s", "unexpected argument '%s'"};

static int import_opt(int c, void *opts) {
    import_opts *o = opts;
    switch (c) {
    case 'w': o->hwname = optarg; break;
    case 'o': o->out = optarg; break;
    case 'C': o->construct = optarg; break;
    case 'd': {
        const char *eq = strchr(optarg, '=');
        if (o->ndims == IMPORT_MAX_DIMS) return gs_cli_usage_error("import", "more than 32 --dim options%s", "");
        if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof o->dim_buf[0])
            return gs_cli_usage_error("import", "--dim wants NAME=N, got '%s'", optarg);
        long v;
        if (!gs_cli_parse_long(eq + 1, 1, 2147483647L, &v))
            return gs_cli_usage_error("import", "--dim %s: the size must be an integer in 1..2147483647", optarg);
        char *b = o->dim_buf[o->ndims];
        memcpy(b, optarg, (size_t)(eq - optarg));
        b[eq - optarg] = 0;
        o->dim_name[o->ndims] = b;
        o->dim_val[o->ndims++] = v;
        break;
    }
    }
    return -1;
}

static int import_parse_opts(int argc, char **argv, void *opts) {
    import_opts *o = opts;
    memset(o, 0, sizeof *o);
    o->hwname = "rtx4090";
    int rc = gs_cli_getopt(&import_cmd, argc, argv, import_opt, o);
    if (rc >= 0) return rc;
    return gs_cli_operand(&import_cmd, argc, argv, &o->path);
}

/* The model's base name without .onnx: the list's name. */
static void base_name(const char *path, char *buf, size_t n) {
    const char *b = strrchr(path, '/');
    snprintf(buf, n, "%s", b ? b + 1 : path);
    size_t l = strlen(buf);
    if (l > 5 && !strcmp(buf + l - 5, ".onnx")) buf[l - 5] = 0;
}

/* One entry per distinct spec, in first-seen order: the first node's name,
 * the count, and a note naming the nodes (and what was fused into them). */
static json_t *import_entries(gs_ctx *ctx, const gs_model *m, int *kernels, int *unsupported) {
    json_t *ops = json_array();
    int n = gs_model_num_nodes(m);
    for (int i = 0; ops && i < n; i++) {
        gs_model_node nd;
        if (gs_model_node_get(ctx, m, i, &nd) != GS_OK) continue;
        if (nd.kind == GS_MODEL_UNSUPPORTED) {
            char line[1024];
            snprintf(line, sizeof line, "node %d '%s' (%s): %s", i, nd.name, nd.op_type, nd.reason ? nd.reason : "");
            gs_cli_error_line("gensor import: unsupported: ", line);
            (*unsupported)++;
        }
        if (nd.kind != GS_MODEL_KERNEL) continue;
        (*kernels)++;
        char what[256];
        snprintf(what, sizeof what, "%s", nd.op_type);
        for (int j = i + 1; j < n; j++) { /* the nodes fused into this one */
            gs_model_node f;
            if (gs_model_node_get(ctx, m, j, &f) == GS_OK && f.kind == GS_MODEL_FUSED && f.fused_into == i) {
                size_t l = strlen(what);
                snprintf(what + l, sizeof what - l, "+%s", f.op_type);
            }
        }
        const char *spec = gs_op_spec(nd.op);
        char name[200];
        snprintf(name, sizeof name, "%s", *nd.name ? nd.name : nd.op_type);
        if (!*nd.name) snprintf(name, sizeof name, "%s_%d", nd.op_type, i);
        json_t *e = NULL;
        size_t k;
        json_t *v;
        json_array_foreach(ops, k, v) {
            if (!strcmp(json_string_value(json_object_get(v, "spec")), spec)) e = v;
        }
        if (e) {
            json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
            const char *note = json_string_value(json_object_get(e, "note"));
            if (strlen(note) < 300) {
                char nn[512];
                snprintf(nn, sizeof nn, "%s, %s", note, name);
                json_object_set_new(e, "note", json_string(nn));
            }
            continue;
        }
        char note[512];
        snprintf(note, sizeof note, "ONNX %s: %s", what, name);
        json_array_append_new(ops, json_pack("{s:s, s:s, s:I, s:s}", "name", name, "spec", spec, "count", (json_int_t)1,
                                             "note", note));
    }
    return ops;
}

/* ---- --construct DIR: the kernels and the manifest ------------------------------------ */
typedef struct cbuild {
    gs_ctx *ctx;
    const gs_model *m;
    const gs_hw *hw;
    const char *dir;
    FILE *wf;          /* weights.bin */
    int64_t woff;      /* bytes written to it */
    json_t *constants; /* name -> {offset, elems, dtype} */
    json_t *kernels;   /* spec -> the kernel's object (constructed once per spec) */
    int constructed;
} cbuild;

/* The constant name into weights.bin, once: float32 (a FLOAT16 or BFLOAT16
 * constant's values are exact floats; its "dtype" says which, and a runner
 * converts it to the kernel buffer's type with gs_dtype_convert). */
static gs_status add_constant(cbuild *b, const char *name) {
    if (json_object_get(b->constants, name)) return GS_OK;
    const float *data;
    int64_t n;
    gs_dtype dt = GS_DTYPE_F32;
    /* an integer constant (a Reshape's shape, a value the import folded from
     * shapes) has no floats for a runner: no kernel binds one */
    if (gs_model_tensor_dtype(NULL, b->m, name, &dt) == GS_ERR_UNSUPPORTED) return GS_OK;
    gs_status s = gs_model_constant(b->ctx, b->m, name, &data, &n);
    if (s == GS_OK) s = gs_model_tensor_dtype(b->ctx, b->m, name, &dt);
    if (s != GS_OK) return s;
    if (n > 0 && fwrite(data, sizeof *data, (size_t)n, b->wf) != (size_t)n)
        return gs_err(b->ctx, GS_ERR_IO, "cannot write %s/weights.bin: %s", b->dir, strerror(errno));
    json_object_set_new(b->constants, name, json_pack("{s:I, s:I, s:s}", "offset", (json_int_t)b->woff, "elems",
                                                      (json_int_t)n, "dtype", gs_dtype_name(dt)));
    b->woff += n * (int64_t)sizeof *data;
    return GS_OK;
}

/* One kernel's source into DIR/kernels/NAME.EXT; its path relative to DIR in rel. */
static gs_status write_source(cbuild *b, const gs_kernel *k, const char *ext, char *rel, size_t nrel) {
    char path[4096];
    snprintf(rel, nrel, "kernels/%s.%s", gs_kernel_name(k), ext);
    snprintf(path, sizeof path, "%s/%s", b->dir, rel);
    const char *src = gs_kernel_source(k);
    return gs_write_file_atomic(b->ctx, path, src, strlen(src), NULL, 0);
}

/* The kernel of op's spec: constructed (the default options, GS_FORM_AUTO as
 * `construct`), its top candidate emitted in both dialects, described. */
static gs_status construct_kernel(cbuild *b, const gs_op *op, json_t **out) {
    *out = json_object_get(b->kernels, gs_op_spec(op));
    if (*out) return GS_OK;
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    co.conv_form = GS_FORM_AUTO;
    gs_result *r = NULL;
    gs_kernel *kc = NULL, *kcu = NULL;
    char cfg[512], cl[512], cu[512];
    int64_t grid = 0, block = 0, smem = 0;
    gs_status s = gs_construct(b->ctx, op, b->hw, &co, &r);
    if (s == GS_OK) s = gs_result_config(r, 0, cfg, sizeof cfg);
    if (s == GS_OK) s = gs_result_launch(r, 0, &grid, &block, &smem);
    if (s == GS_OK) s = gs_kernel_create(b->ctx, r, 0, GS_DIALECT_OPENCL, 0, &kc);
    if (s == GS_OK) s = gs_kernel_create(b->ctx, r, 0, GS_DIALECT_CUDA, 0, &kcu);
    if (s == GS_OK) s = write_source(b, kc, "cl", cl, sizeof cl);
    if (s == GS_OK) s = write_source(b, kcu, "cu", cu, sizeof cu);
    if (s == GS_OK) {
        *out = json_pack("{s:s, s:s, s:f, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I}}", "form", gs_result_form(r), "config",
                         cfg, "predicted_s", gs_result_predicted_s(r, 0), "kernel_cl", gs_kernel_name(kc), "source_cl",
                         cl, "kernel_cu", gs_kernel_name(kcu), "source_cu", cu, "launch", "grid", (json_int_t)grid,
                         "block", (json_int_t)block, "smem_bytes", (json_int_t)smem);
        if (!*out) s = gs_err(b->ctx, GS_ERR_NOMEM, "out of memory");
        else json_object_set_new(b->kernels, gs_op_spec(op), *out);
        b->constructed++;
    }
    gs_kernel_destroy(kc);
    gs_kernel_destroy(kcu);
    gs_result_destroy(r);
    return s;
}

/* A kernel node's manifest entry: its kernel, bindings, constants. */
static gs_status kernel_node(cbuild *b, const gs_model_node *nd, json_t *e) {
    json_t *k;
    gs_status s = construct_kernel(b, nd->op, &k);
    if (s != GS_OK) return s;
    json_object_set_new(e, "spec", json_string(gs_op_spec(nd->op)));
    json_object_set(e, "kernel", k);
    json_t *bs = json_array();
    json_object_set_new(e, "bindings", bs);
    for (int i = 0; i < nd->nbindings; i++) {
        const gs_model_binding *bd = &nd->bindings[i];
        json_array_append_new(bs, json_pack("{s:s, s:s, s:I, s:s, s:b, s:b}", "buffer", bd->buffer, "tensor",
                                            bd->tensor, "elems", (json_int_t)gs_op_buffer_elems(nd->op, i), "dtype",
                                            gs_dtype_name(gs_op_buffer_dtype(nd->op, i)), "constant", bd->constant,
                                            "output", bd->output));
        if (bd->constant && (s = add_constant(b, bd->tensor)) != GS_OK) return s;
    }
    if (nd->out_init) {
        json_object_set_new(e, "out_init", json_string(nd->out_init));
        const float *d; /* a constant (else a tensor a node writes first) */
        int64_t n;
        if (gs_model_constant(NULL, b->m, nd->out_init, &d, &n) == GS_OK) s = add_constant(b, nd->out_init);
    }
    return s;
}

static const char *const node_kind[] = {"kernel", "fused", "view", "unsupported"};

/* Node i's manifest entry. */
static gs_status node_entry(cbuild *b, int i, json_t *nodes) {
    gs_model_node nd;
    gs_status s = gs_model_node_get(b->ctx, b->m, i, &nd);
    if (s != GS_OK) return s;
    json_t *e = json_pack("{s:i, s:s, s:s, s:s}", "node", i, "name", nd.name, "op_type", nd.op_type, "kind",
                          node_kind[nd.kind]);
    json_array_append_new(nodes, e);
    if (nd.reason) json_object_set_new(e, "reason", json_string(nd.reason));
    if (nd.kind == GS_MODEL_FUSED) json_object_set_new(e, "fused_into", json_integer(nd.fused_into));
    if (nd.kind == GS_MODEL_KERNEL) return kernel_node(b, &nd, e);
    if (nd.kind != GS_MODEL_VIEW) return GS_OK;
    if (nd.nbindings == 1 && nd.bindings[0].constant) { /* a constant: its data in weights.bin */
        json_object_set_new(e, "kind", json_string("constant"));
        json_object_set_new(e, "out", json_string(nd.bindings[0].tensor));
        return add_constant(b, nd.bindings[0].tensor);
    }
    if (nd.nbindings != 2) return gs_err(b->ctx, GS_ERR_UNSUPPORTED, "view node %d with %d bindings", i, nd.nbindings);
    json_object_set_new(e, "in", json_string(nd.bindings[0].tensor));
    json_object_set_new(e, "out", json_string(nd.bindings[1].tensor));
    return nd.bindings[0].constant ? add_constant(b, nd.bindings[0].tensor) : GS_OK;
}

/* DIR: model.json (list), kernels/, weights.bin, manifest.json. */
static int import_construct(gs_ctx *ctx, const import_opts *o, const gs_model *m, const gs_hw *hw, const char *list,
                            json_t *dims) {
    char path[4096];
    const char *dir = o->construct;
    snprintf(path, sizeof path, "%s/kernels", dir);
    if ((mkdir(dir, 0777) && errno != EEXIST) || (mkdir(path, 0777) && errno != EEXIST))
        return gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_IO, "cannot create directory %s: %s", path, strerror(errno)));
    snprintf(path, sizeof path, "%s/weights.bin", dir);
    cbuild b = {ctx, m, hw, dir, fopen(path, "wb"), 0, json_object(), json_object(), 0};
    if (!b.wf) {
        json_decref(b.constants);
        json_decref(b.kernels);
        return gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_IO, "cannot create %s: %s", path, strerror(errno)));
    }
    json_t *nodes = json_array();
    gs_status s = GS_OK;
    for (int i = 0; s == GS_OK && i < gs_model_num_nodes(m); i++) s = node_entry(&b, i, nodes);
    if (fclose(b.wf) && s == GS_OK) s = gs_err(ctx, GS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    json_t *root = json_pack("{s:s, s:i, s:s, s:s, s:O, s:I, s:s, s:o, s:o}", "format", "gensor-onnx-manifest",
                             "version", 1, "model", o->path, "hw", gs_hw_name(hw), "dims", dims, "opset",
                             (json_int_t)gs_model_opset(m), "weights", "weights.bin", "constants", b.constants,
                             "nodes", nodes);
    json_decref(b.kernels);
    char *text = root && s == GS_OK ? json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (s == GS_OK && !text) s = gs_err(ctx, GS_ERR_NOMEM, "out of memory encoding the manifest");
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (s == GS_OK) s = gs_write_file_atomic(ctx, path, text, strlen(text), "\n", 1);
    free(text);
    snprintf(path, sizeof path, "%s/model.json", dir);
    if (s == GS_OK) s = gs_write_file_atomic(ctx, path, list, strlen(list), "\n", 1);
    if (s != GS_OK) return gs_cli_fail_run(ctx, s);
    fprintf(stderr, "gensor import: %d kernels constructed for %s into %s (manifest.json, weights.bin %lld bytes)\n",
            b.constructed, gs_hw_name(hw), dir, (long long)b.woff);
    return 0;
}

static int import_run(gs_ctx *ctx, const void *opts) {
    const import_opts *o = opts;
    gs_hw *hw = NULL;
    gs_model *m = NULL;
    gs_status s = gs_hw_load(ctx, o->hwname, &hw);
    if (s == GS_OK) s = gs_model_load(ctx, o->path, &m);
    for (int i = 0; s == GS_OK && i < o->ndims; i++) s = gs_model_bind_dim(ctx, m, o->dim_name[i], o->dim_val[i]);
    if (s == GS_OK) s = gs_model_import(ctx, m);
    if (s != GS_OK) {
        gs_model_destroy(m);
        gs_hw_destroy(hw);
        return gs_cli_fail(ctx, s);
    }
    int kernels = 0, unsupported = 0, rc = 0;
    json_t *ops = import_entries(ctx, m, &kernels, &unsupported);
    char name[256], desc[1024], dims[512] = "";
    base_name(o->path, name, sizeof name);
    for (int i = 0; i < o->ndims; i++) {
        size_t l = strlen(dims);
        snprintf(dims + l, sizeof dims - l, "%s%s=%ld", i ? ", " : "", o->dim_name[i], o->dim_val[i]);
    }
    snprintf(desc, sizeof desc, "imported from %s (opset %lld%s%s) for %s: %d kernels from %d nodes, %d unsupported",
             o->path, (long long)gs_model_opset(m), *dims ? ", " : "", dims, o->hwname, kernels, gs_model_num_nodes(m),
             unsupported);
    if (!ops) rc = gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory"));
    else if (!kernels) {
        char why[160];
        int nn = gs_model_num_nodes(m);
        if (!nn) snprintf(why, sizeof why, "the model has no nodes: no kernel");
        else snprintf(why, sizeof why, "the model's %d node%s only view%s tensors (a Reshape, a Cast to the type it has): no kernel",
                      nn, nn > 1 ? "s" : "", nn > 1 ? "" : "s");
        gs_cli_error_line("gensor: error: ", unsupported ? "no node of the model maps to a gensor kernel (see the reasons above)"
                                                         : why);
        json_decref(ops);
        rc = 1;
    } else {
        json_t *root = json_pack("{s:s, s:s, s:o}", "name", name, "description", desc, "ops", ops);
        char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(root);
        if (!text) rc = gs_cli_fail_run(ctx, gs_err(ctx, GS_ERR_NOMEM, "out of memory encoding the list"));
        else if (o->out) {
            s = gs_write_file_atomic(ctx, o->out, text, strlen(text), "\n", 1);
            if (s != GS_OK) rc = gs_cli_fail_run(ctx, s);
        } else if (!o->construct) {
            puts(text);
        }
        if (!rc) fprintf(stderr, "gensor import: %s\n", desc);
        if (!rc && text && o->construct) {
            json_t *dj = json_object();
            for (int i = 0; i < o->ndims; i++) json_object_set_new(dj, o->dim_name[i], json_integer(o->dim_val[i]));
            rc = import_construct(ctx, o, m, hw, text, dj);
            json_decref(dj);
        }
        free(text);
    }
    gs_model_destroy(m);
    gs_hw_destroy(hw);
    return rc;
}

const gs_cli_sub gs_cli_import = {"import", sizeof(import_opts), import_parse_opts, import_run};
