/* import.c — `gensor import MODEL.onnx [--dim NAME=N ...] --hw H [--out FILE]`:
 * an ONNX model's nodes as the model-list JSON that `gensor suite` reads
 * (the format of experiments/models/), identical kernels merged with a count; every
 * node without a kernel of its own that is not a view is listed on stderr
 * with the reason. */
#include "cli/cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char import_help[] =
    "usage: gensor import MODEL.onnx [--dim NAME=N ...] [--hw NAME|FILE] [--out FILE]\n"
    "\n"
    "Read an ONNX model, bind its symbolic input dims (--dim batch=8, once per dim), propagate the\n"
    "shapes, fold each batch norm into the conv before it, fuse each Relu into the kernel before it,\n"
    "and write the model list that `gensor suite FILE --hw H` constructs: one entry per distinct\n"
    "kernel with its count, to FILE (--out) or stdout. --hw names the profile the list is for (it is\n"
    "checked and recorded). Nodes that map to no kernel are listed on stderr, one line each, with the\n"
    "reason; views (Reshape, Flatten) and fused nodes are not. Exit 2 for a malformed model, an\n"
    "unknown or unbound dim, or a bad option.\n";

#define IMPORT_MAX_DIMS 32

typedef struct import_opts {
    const char *path, *hwname, *out;
    int ndims;
    const char *dim_name[IMPORT_MAX_DIMS];
    long dim_val[IMPORT_MAX_DIMS];
    char dim_buf[IMPORT_MAX_DIMS][128];
} import_opts;

static const struct option import_lo[] = {
    GS_CLI_OPT_HW, {"dim", required_argument, 0, 'd'}, {"out", required_argument, 0, 'o'}, GS_CLI_OPT_HELP,
    GS_CLI_OPT_END,
};
static const gs_cli_cmd import_cmd = {"import", import_help, import_lo, "unknown option or missing value '%s'",
                                      "missing the MODEL.onnx file%s", "unexpected argument '%s'"};

static int import_opt(int c, void *opts) {
    import_opts *o = opts;
    switch (c) {
    case 'w': o->hwname = optarg; break;
    case 'o': o->out = optarg; break;
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
        gs_cli_error_line("gensor: error: ", "no node of the model maps to a gensor kernel (see the reasons above)");
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
        } else {
            puts(text);
        }
        free(text);
        if (!rc) fprintf(stderr, "gensor import: %s\n", desc);
    }
    gs_model_destroy(m);
    gs_hw_destroy(hw);
    return rc;
}

const gs_cli_sub gs_cli_import = {"import", sizeof(import_opts), import_parse_opts, import_run};
