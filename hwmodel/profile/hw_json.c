/* hw_json.c — hardware profiles as JSON files (jansson).
 *
 * A file is one object whose keys are exactly the field names of struct
 * gs_hw. Two forms:
 *   - complete: every field is given;
 *   - derived:  "base": "<built-in name>" copies a built-in profile first and
 *     the other keys override some of its fields, e.g.
 *       { "base": "rtx3090", "name": "rtx3090-slowmem", "dram_gbs": 500 }
 *     Without a "name" key a derived profile is named "<base>+custom".
 * Unknown keys, missing keys (without base) and wrong types are errors that
 * name the key, so a typo never silently falls back to a default. After
 * loading, the profile goes through gs_hw_validate like any other.
 *
 * Saving writes a temp file next to path, syncs it and renames it over path
 * (gs_write_file_atomic), so a reader sees the old file or the new one, never
 * a partial one. (Devices and /dev/stdout-style links are written in place
 * instead; see gs_hw_save_json.)
 * Doubles are printed with 17 significant digits, which round-trips every
 * double exactly.
 */
#include "hwmodel/profile/hw.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the field table: one row per struct member, in struct order ---------- */
typedef enum { F_STR, F_INT, F_I64, F_REAL } field_type;

typedef struct {
    const char *key;
    field_type type;
    size_t off;
    size_t size; /* array size for F_STR */
} field_desc;

#define FSTR(f) {#f, F_STR, offsetof(struct gs_hw, f), sizeof(((struct gs_hw *)0)->f)}
#define FINT(f) {#f, F_INT, offsetof(struct gs_hw, f), sizeof(int)}
#define FI64(f) {#f, F_I64, offsetof(struct gs_hw, f), sizeof(int64_t)}
#define FREAL(f) {#f, F_REAL, offsetof(struct gs_hw, f), sizeof(double)}

static const field_desc fields[] = {
    FSTR(name),
    FSTR(desc),
    FINT(sm),
    FINT(num_sms),
    FREAL(clock_mhz),
    FINT(fp32_lanes_per_sm),
    FREAL(dram_gbs),
    FREAL(dram_latency_ns),
    FI64(l2_bytes),
    FREAL(l2_gbs),
    FREAL(l2_latency_ns),
    FI64(smem_per_sm),
    FI64(smem_per_block),
    FI64(smem_per_block_optin),
    FINT(smem_banks),
    FINT(bank_bytes),
    FREAL(smem_latency_ns),
    FI64(regs_per_sm),
    FINT(max_regs_per_thread),
    FINT(max_threads_per_block),
    FINT(max_threads_per_sm),
    FINT(max_blocks_per_sm),
    FINT(warp_size),
    FINT(transaction_bytes),
    FREAL(launch_overhead_us),
    FINT(tc_f16_flops_per_sm),
    FINT(tc_bf16_flops_per_sm),
    FINT(tc_tf32_flops_per_sm),
    FREAL(mma_sync_efficiency),
};
enum { N_FIELDS = (int)(sizeof fields / sizeof fields[0]) };
/* 29 members in struct gs_hw: a new member must get a row here too. */
_Static_assert(N_FIELDS == 29, "every struct gs_hw member needs a JSON field row");

/* Largest profile file we read: real ones are about 1 KiB. */
#define MAX_JSON_BYTES (1 << 20)

static const char *type_name(field_type t) {
    switch (t) {
    case F_STR: return "a string";
    case F_INT: return "an integer";
    case F_I64: return "an integer";
    case F_REAL: return "a number";
    }
    return "?";
}

static const char *json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Store one JSON value into its field; src names the file for messages. */
static gs_status set_field(gs_ctx *ctx, const char *src, const field_desc *f, json_t *v,
                           gs_hw *hw) {
    char *p = (char *)hw + f->off;
    bool ok;
    switch (f->type) {
    case F_STR: ok = json_is_string(v); break;
    case F_INT:
    case F_I64: ok = json_is_integer(v); break;
    case F_REAL: ok = json_is_number(v); break;
    default: ok = false;
    }
    if (!ok)
        return gs_err(ctx, GS_ERR_JSON, "%s: key '%s' must be %s (got %s)", src, f->key,
                      type_name(f->type), json_type_name(v));

    switch (f->type) {
    case F_STR: {
        size_t len = json_string_length(v);
        if (len >= f->size)
            return gs_err(ctx, GS_ERR_JSON, "%s: key '%s' is too long (%zu characters, max %zu)",
                          src, f->key, len, f->size - 1);
        memset(p, 0, f->size);
        memcpy(p, json_string_value(v), len);
        break;
    }
    case F_INT: {
        json_int_t x = json_integer_value(v);
        if (x < INT_MIN || x > INT_MAX)
            return gs_err(ctx, GS_ERR_JSON, "%s: key '%s' is out of range for an int (got %lld)",
                          src, f->key, (long long)x);
        int iv = (int)x;
        memcpy(p, &iv, sizeof iv);
        break;
    }
    case F_I64: {
        int64_t x = (int64_t)json_integer_value(v);
        memcpy(p, &x, sizeof x);
        break;
    }
    case F_REAL: {
        double x = json_number_value(v);
        memcpy(p, &x, sizeof x);
        break;
    }
    }
    return GS_OK;
}

/* Prefix the context's message with the source name ("file.json: ..."). */
static gs_status prefix_err(gs_ctx *ctx, gs_status s, const char *src) {
    char tmp[GS_MSG_MAX];
    return gs_err(ctx, s, "%s: %s", src, gs_ctx_msg_copy(ctx, tmp, sizeof tmp));
}

/* Parse len bytes of JSON into *out (untouched on failure). */
static gs_status load_buffer(gs_ctx *ctx, const char *src, const char *buf, size_t len,
                             gs_hw *out) {
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return gs_err(ctx, GS_ERR_JSON, "%s: line %d, column %d: %s", src, jerr.line,
                      jerr.column, jerr.text);

    gs_status s = GS_OK;
    gs_hw hw;
    memset(&hw, 0, sizeof hw);
    bool seen[N_FIELDS] = {false};

    if (!json_is_object(root)) {
        s = gs_err(ctx, GS_ERR_JSON, "%s: the top level must be an object (got %s)", src,
                   json_type_name(root));
        goto done;
    }

    /* "base" first: the built-in that the other keys override. */
    json_t *base = json_object_get(root, "base");
    if (base) {
        if (!json_is_string(base)) {
            s = gs_err(ctx, GS_ERR_JSON, "%s: key 'base' must be a string (got %s)", src,
                       json_type_name(base));
            goto done;
        }
        const gs_hw *b = gs_hw_find_builtin(json_string_value(base));
        if (!b) {
            char names[256];
            gs_hw_builtin_list(names, sizeof names);
            s = gs_err(ctx, GS_ERR_HW_UNKNOWN,
                       "%s: base '%s' is not a built-in profile (built-ins: %s)", src,
                       json_string_value(base), names);
            goto done;
        }
        hw = *b;
        /* a derived profile is not its base: without a "name" of its own it
         * is "<base>+custom", so tables and reports do not pass it off as the
         * built-in (a "name" key below overrides this) */
        snprintf(hw.name, sizeof hw.name, "%.24s+custom", b->name); /* built-in names are short */
    }

    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (strcmp(key, "base") == 0) continue;
        int fi = -1;
        for (int i = 0; i < N_FIELDS; i++)
            if (strcmp(key, fields[i].key) == 0) fi = i;
        if (fi < 0) {
            s = gs_err(ctx, GS_ERR_JSON, "%s: unknown key '%s'", src, key);
            goto done;
        }
        s = set_field(ctx, src, &fields[fi], val, &hw);
        if (s != GS_OK) goto done;
        seen[fi] = true;
    }

    /* Without a base every field must be given: no silent defaults. */
    if (!base)
        for (int i = 0; i < N_FIELDS; i++)
            if (!seen[i]) {
                s = gs_err(ctx, GS_ERR_JSON,
                           "%s: missing key '%s' (give every field, or \"base\": "
                           "\"<built-in>\" to inherit the others)",
                           src, fields[i].key);
                goto done;
            }

    s = gs_hw_validate(ctx, &hw);
    if (s != GS_OK) {
        s = prefix_err(ctx, s, src);
        goto done;
    }
    *out = hw;

done:
    json_decref(root);
    return s;
}

gs_status gs_hw_load_json_text(gs_ctx *ctx, const char *text, gs_hw *out) {
    if (!text || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_load_json_text: NULL argument");
    return load_buffer(ctx, "<text>", text, strlen(text), out);
}

gs_status gs_hw_load_json(gs_ctx *ctx, const char *path, gs_hw *out) {
    if (!path || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_load_json: NULL argument");

    /* Read the file ourselves so that I/O failures (missing file, a
     * directory, a read error) are GS_ERR_IO, apart from JSON syntax. */
    FILE *fp = fopen(path, "rb");
    if (!fp) return gs_err(ctx, GS_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    char *buf = malloc(MAX_JSON_BYTES + 1);
    if (!buf) {
        fclose(fp);
        return gs_err(ctx, GS_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    errno = 0;
    size_t len = fread(buf, 1, MAX_JSON_BYTES + 1, fp);
    bool rd_failed = ferror(fp) != 0;
    int rd_errno = errno ? errno : EIO;
    fclose(fp);
    gs_status s;
    if (rd_failed) {
        s = gs_err(ctx, GS_ERR_IO, "cannot read '%s': %s", path, strerror(rd_errno));
    } else if (len > MAX_JSON_BYTES) {
        s = gs_err(ctx, GS_ERR_JSON, "'%s' is larger than %d bytes: not a hardware profile",
                   path, MAX_JSON_BYTES);
    } else {
        s = load_buffer(ctx, path, buf, len, out);
    }
    free(buf);
    return s;
}

/* ---- saving ---------------------------------------------------------------- */

/* The profile as JSON text (malloc'd by jansson; free with free()). */
static char *dump_profile(const gs_hw *hw) {
    json_t *root = json_object();
    if (!root) return NULL;
    for (int i = 0; i < N_FIELDS; i++) {
        const field_desc *f = &fields[i];
        const char *p = (const char *)hw + f->off;
        json_t *v = NULL;
        switch (f->type) {
        case F_STR: v = json_string(p); break;
        case F_INT: {
            int x;
            memcpy(&x, p, sizeof x);
            v = json_integer(x);
            break;
        }
        case F_I64: {
            int64_t x;
            memcpy(&x, p, sizeof x);
            v = json_integer((json_int_t)x);
            break;
        }
        case F_REAL: {
            double x;
            memcpy(&x, p, sizeof x);
            v = json_real(x); /* NULL for NaN/inf; validation rules those out */
            break;
        }
        }
        if (!v || json_object_set_new(root, f->key, v) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    /* JSON_PRESERVE_ORDER keeps the struct order; 17 digits round-trip. */
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

/* Write text to an existing stream-like target (a device, a FIFO, or a
 * /dev or /proc file-descriptor link such as /dev/stdout) in place. A named
 * descriptor is written directly; anything else is opened with O_APPEND so
 * that a link resolving to a regular file is added to, not clobbered. */
/* The descriptor named by /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N, or -1. Writing to that descriptor directly shares its
 * file offset with the caller's own writes, which reopening would not. */
static int named_fd(const char *path) {
    if (strcmp(path, "/dev/stdout") == 0) return 1;
    if (strcmp(path, "/dev/stderr") == 0) return 2;
    const char *num = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0) num = path + 8;
    else if (strncmp(path, "/proc/self/fd/", 14) == 0) num = path + 14;
    if (!num || !*num) return -1;
    char *end;
    long n = strtol(num, &end, 10);
    if (*end || n < 0 || n > INT_MAX) return -1;
    return (int)n;
}

static gs_status write_in_place(gs_ctx *ctx, const char *path, const char *text, size_t len) {
    int nfd = named_fd(path);
    if (nfd >= 0) {
        if (!gs_write_full(nfd, text, len) || !gs_write_full(nfd, "\n", 1))
            return gs_err(ctx, GS_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return GS_OK;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return gs_err(ctx, GS_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (!gs_write_full(fd, text, len) || !gs_write_full(fd, "\n", 1)) {
        int err = errno;
        close(fd);
        return gs_err(ctx, GS_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    if (close(fd) != 0)
        return gs_err(ctx, GS_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return GS_OK;
}

/* Replace the regular file at path atomically (gs_write_file_atomic: a
 * temp file in the same directory, fsync, rename). On any failure the old
 * file, if any, is left as it was. */
static gs_status write_atomic(gs_ctx *ctx, const char *path, const char *text, size_t len) {
    gs_status s = gs_write_file_atomic(ctx, path, text, len, "\n", 1);
    if (s == GS_OK) return GS_OK;
    char why[GS_MSG_MAX];
    return gs_err(ctx, s, "cannot save '%s': %s", path, gs_ctx_msg_copy(ctx, why, sizeof why));
}

static bool is_dev_or_proc(const char *path) {
    return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
}

gs_status gs_hw_save_json(gs_ctx *ctx, const gs_hw *hw, const char *path) {
    if (!hw || !path || !*path)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_save_json: NULL or empty argument");
    /* Never write a profile that could not be loaded back. */
    gs_status s = gs_hw_validate(ctx, hw);
    if (s != GS_OK) return s;

    /* Decide how to write. A rename replaces the directory entry itself, so
     * it is only right for a plain regular file (or a new one):
     *  - a directory is refused;
     *  - a device (/dev/full), FIFO or socket is written in place: renaming
     *    over it would replace the device node;
     *  - a symlink under /dev or /proc (/dev/stdout, /dev/fd/N) is a stream
     *    even when it resolves to a regular file: written in place;
     *  - any other symlink is resolved, and its target replaced atomically,
     *    so the link survives. */
    struct stat st, lst;
    bool in_place = false;
    char *resolved = NULL;
    const char *target = path;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return gs_err(ctx, GS_ERR_IO, "cannot write '%s': %s", path, strerror(EISDIR));
        if (!S_ISREG(st.st_mode)) {
            in_place = true;
        } else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            if (is_dev_or_proc(path)) {
                in_place = true;
            } else {
                resolved = realpath(path, NULL);
                if (!resolved)
                    return gs_err(ctx, GS_ERR_IO, "cannot resolve '%s': %s", path,
                                  strerror(errno));
                target = resolved;
            }
        }
    }

    char *text = dump_profile(hw);
    if (!text) {
        free(resolved);
        return gs_err(ctx, GS_ERR_NOMEM, "out of memory encoding profile '%s'", hw->name);
    }
    size_t len = strlen(text);
    s = in_place ? write_in_place(ctx, target, text, len) : write_atomic(ctx, target, text, len);
    free(text);
    free(resolved);
    return s;
}
