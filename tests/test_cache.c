/* test_cache.c — the kernel cache (kernels/service/cache.c): memory and disk round
 * trips, corrupt entries (truncated, garbage, wrong key, bad checksum) that
 * are detected, counted, deleted and rebuilt, an unwritable directory that
 * fails puts with GS_ERR_IO while gets and dispatch keep working, two
 * processes filling one directory at once, and one builder of an entry
 * while the others wait for it. */
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cache, .timeout = 60);

static int64_t file_size(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static void write_bytes(const char *p, const void *b, size_t n) {
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "fopen %s: %s", p, strerror(errno));
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* Payload for key k: deterministic, length depends on k. */
static size_t payload_for(uint64_t k, char *buf, size_t cap) {
    size_t n = 100 + (size_t)(k % 37) * 50;
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (k * 7 + i * 13) % 26);
    return n;
}

Test(cache, fnv1a64_reference_values) {
    /* published FNV-1a 64 test vectors */
    cr_assert_eq(gs_fnv1a64("", 0), 0xcbf29ce484222325ull);
    cr_assert_eq(gs_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
    cr_assert_eq(gs_fnv1a64("foobar", 6), 0x85944171f73967e8ull);
    cr_assert_str_eq(gs_kbackend_name(GS_KB_CUDA_CUBIN), "cuda-cubin");
    cr_assert_str_eq(gs_kbackend_name(GS_KB_OPENCL_SOURCE), "opencl-source");
    cr_assert_str_eq(gs_kbackend_name((gs_kbackend)99), "unknown");
}

Test(cache, memory_round_trip) {
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, "", &c), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_null(gs_kcache_dir(c), "\"\" means memory only");
    const void *b = NULL;
    size_t n = 7;
    cr_assert(!gs_kcache_get(ctx, c, 42, GS_KB_CUDA_CUBIN, &b, &n));
    cr_assert_null(b);
    cr_assert_eq(n, 0);
    const unsigned char bin[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 0, 255};
    cr_assert_eq(gs_kcache_put(ctx, c, 42, GS_KB_CUDA_CUBIN, bin, sizeof bin), GS_OK);
    cr_assert_eq(gs_kcache_put(ctx, c, 42, GS_KB_OPENCL_SOURCE, "__kernel void k(){}", 19), GS_OK);
    cr_assert(gs_kcache_get(ctx, c, 42, GS_KB_CUDA_CUBIN, &b, &n));
    cr_assert_eq(n, sizeof bin);
    cr_assert_arr_eq(b, bin, sizeof bin);
    cr_assert_eq(((const unsigned char *)b)[n], 0, "payloads are NUL-terminated");
    cr_assert(gs_kcache_get(ctx, c, 42, GS_KB_OPENCL_SOURCE, &b, &n));
    cr_assert_str_eq(b, "__kernel void k(){}", "the backend is part of the key");
    cr_assert(!gs_kcache_get(ctx, c, 43, GS_KB_CUDA_CUBIN, &b, &n));
    /* many entries: the map grows and keeps everything */
    char buf[4096];
    for (uint64_t k = 1000; k < 1500; k++) {
        size_t l = payload_for(k, buf, sizeof buf);
        cr_assert_eq(gs_kcache_put(ctx, c, k, GS_KB_CUDA_PTX, buf, l), GS_OK);
    }
    for (uint64_t k = 1000; k < 1500; k++) {
        size_t l = payload_for(k, buf, sizeof buf);
        cr_assert(gs_kcache_get(ctx, c, k, GS_KB_CUDA_PTX, &b, &n), "key %llu lost", (unsigned long long)k);
        cr_assert_eq(n, l);
        cr_assert_arr_eq(b, buf, l);
    }
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    cr_assert_eq(st.entries, 502);
    cr_assert_eq(st.hits, 502);
    cr_assert_eq(st.misses, 2);
    cr_assert_eq(st.corrupt, 0);
    cr_assert_eq(st.write_errors, 0);
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
}

Test(cache, disk_round_trip_and_file_format) {
    gs_ctx *ctx = gs_ctx_create();
    char *dir = gs_test_tmpdir("cache-test");
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    cr_assert_str_eq(gs_kcache_dir(c), dir);
    const char *src = "extern \"C\" __global__ void gs_x() {}";
    uint64_t key = 0x0123456789abcdefull;
    cr_assert_eq(gs_kcache_put(ctx, c, key, GS_KB_CUDA_SOURCE, src, strlen(src)), GS_OK, "%s", gs_ctx_errmsg(ctx));
    char path[1024], want[1024];
    cr_assert_eq(gs_kcache_path(c, key, GS_KB_CUDA_SOURCE, path, sizeof path), GS_OK);
    snprintf(want, sizeof want, "%s/0123456789abcdef.cuda-source.gsk", dir);
    cr_assert_str_eq(path, want);
    cr_assert_eq(file_size(path), GS_KCACHE_HEADER_BYTES + (int64_t)strlen(src));
    /* the header as documented */
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    unsigned char h[GS_KCACHE_HEADER_BYTES];
    cr_assert_eq(fread(h, 1, sizeof h, f), sizeof h);
    fclose(f);
    unsigned char ref[GS_KCACHE_HEADER_BYTES];
    gs_kcache_header_encode(ref, key, GS_KB_CUDA_SOURCE, src, strlen(src));
    cr_assert_arr_eq(h, ref, sizeof h);
    cr_assert_arr_eq(h, "GSKC", 4);
    cr_assert_eq(h[4], GS_KCACHE_FORMAT);
    cr_assert_eq(h[8], 0xef, "key little-endian");
    gs_kcache_close(c);
    cr_assert_eq(gs_test_count_files(dir, ".gsk"), 1);
    cr_assert_eq(gs_test_count_files(dir, ""), 1, "no temporary file left behind");

    /* a new cache (another process, say) reads it from disk */
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    const void *b = NULL;
    size_t n = 0;
    cr_assert(gs_kcache_get(ctx, c, key, GS_KB_CUDA_SOURCE, &b, &n), "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, strlen(src));
    cr_assert_str_eq(b, src);
    cr_assert(gs_kcache_get(ctx, c, key, GS_KB_CUDA_SOURCE, &b, &n));
    cr_assert(!gs_kcache_get(ctx, c, key, GS_KB_CUDA_CUBIN, &b, &n));
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    cr_assert_eq(st.hits, 2);
    cr_assert_eq(st.disk_hits, 1, "the second get is served from memory");
    cr_assert_eq(st.misses, 1);
    gs_kcache_close(c);

    /* NULL means $GS_CACHE_DIR (tests run in their own process) */
    setenv("GS_CACHE_DIR", dir, 1);
    cr_assert_eq(gs_kcache_open(ctx, NULL, &c), GS_OK);
    cr_assert_str_eq(gs_kcache_dir(c), dir);
    cr_assert(gs_kcache_get(ctx, c, key, GS_KB_CUDA_SOURCE, &b, &n));
    gs_kcache_close(c);
    unsetenv("GS_CACHE_DIR");
    cr_assert_eq(gs_kcache_open(ctx, NULL, &c), GS_OK);
    cr_assert_null(gs_kcache_dir(c), "unset: memory only");
    gs_kcache_close(c);

    /* a missing directory is created */
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/a", dir);
    char subsub[1100];
    snprintf(subsub, sizeof subsub, "%s/b", sub);
    cr_assert_eq(gs_kcache_open(ctx, subsub, &c), GS_OK);
    cr_assert_eq(gs_kcache_put(ctx, c, 1, GS_KB_CUDA_PTX, "x", 1), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_kcache_close(c);
    gs_test_rm_flat(subsub);
    gs_test_rm_flat(sub);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}

/* Write a good entry for key, damage it with fn, and check that a fresh
 * cache detects it, counts it, deletes it, and that a put rebuilds it. */
typedef void (*damage_fn)(const char *dir, const char *path, uint64_t key);

static void check_corrupt(damage_fn damage, const char *what) {
    gs_ctx *ctx = gs_ctx_create();
    char *dir = gs_test_tmpdir("cache-test");
    gs_kcache *c = NULL;
    uint64_t key = 0xfeedfacecafebeefull;
    char payload[2000];
    size_t len = payload_for(key, payload, sizeof payload);
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    cr_assert_eq(gs_kcache_put(ctx, c, key, GS_KB_CUDA_CUBIN, payload, len), GS_OK);
    char path[1024];
    gs_kcache_path(c, key, GS_KB_CUDA_CUBIN, path, sizeof path);
    gs_kcache_close(c);
    damage(dir, path, key);

    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    const void *b = NULL;
    size_t n = 0;
    cr_assert(!gs_kcache_get(ctx, c, key, GS_KB_CUDA_CUBIN, &b, &n), "%s: a damaged entry must not be served", what);
    cr_assert_null(b);
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    cr_assert_eq(st.corrupt, 1, "%s: counted as corrupt", what);
    cr_assert_eq(st.misses, 1);
    cr_assert(strstr(gs_ctx_errmsg(ctx), "corrupt"), "%s: message: %s", what, gs_ctx_errmsg(ctx));
    cr_assert(strstr(gs_ctx_errmsg(ctx), path), "%s: the message names the file: %s", what, gs_ctx_errmsg(ctx));
    cr_assert_eq(file_size(path), -1, "%s: the damaged file is deleted", what);
    /* rebuilt */
    cr_assert_eq(gs_kcache_put(ctx, c, key, GS_KB_CUDA_CUBIN, payload, len), GS_OK);
    gs_kcache_close(c);
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    cr_assert(gs_kcache_get(ctx, c, key, GS_KB_CUDA_CUBIN, &b, &n), "%s: rebuilt entry readable", what);
    cr_assert_eq(n, len);
    cr_assert_arr_eq(b, payload, len);
    gs_kcache_stats_get(c, &st);
    cr_assert_eq(st.corrupt, 0);
    gs_kcache_close(c);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}

static void dmg_truncate_payload(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    cr_assert_eq(truncate(path, file_size(path) - 3), 0);
}
static void dmg_truncate_header(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    cr_assert_eq(truncate(path, 17), 0);
}
static void dmg_empty(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    cr_assert_eq(truncate(path, 0), 0);
}
static void dmg_garbage(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    int64_t n = file_size(path);
    cr_assert(n > 0 && n < (1 << 20));
    char *g = malloc((size_t)n);
    cr_assert_not_null(g);
    for (int64_t i = 0; i < n; i++) g[i] = (char)(i * 131 + 7);
    write_bytes(path, g, (size_t)n);
    free(g);
}
static void dmg_checksum(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    char ch;
    cr_assert_eq(pread(fd, &ch, 1, GS_KCACHE_HEADER_BYTES + 5), 1);
    ch ^= 0x20;
    cr_assert_eq(pwrite(fd, &ch, 1, GS_KCACHE_HEADER_BYTES + 5), 1);
    close(fd);
}
/* A valid entry of another key under this key's name. */
static void dmg_wrong_key(const char *dir, const char *path, uint64_t key) {
    (void)dir;
    char other[500];
    size_t n = payload_for(key + 1, other, sizeof other);
    unsigned char *buf = malloc(GS_KCACHE_HEADER_BYTES + n);
    gs_kcache_header_encode(buf, key + 1, GS_KB_CUDA_CUBIN, other, n);
    memcpy(buf + GS_KCACHE_HEADER_BYTES, other, n);
    write_bytes(path, buf, GS_KCACHE_HEADER_BYTES + n);
    free(buf);
}
/* A valid entry of another backend under this name. */
static void dmg_wrong_backend(const char *dir, const char *path, uint64_t key) {
    (void)dir;
    unsigned char buf[GS_KCACHE_HEADER_BYTES + 3];
    gs_kcache_header_encode(buf, key, GS_KB_OPENCL_SOURCE, "abc", 3);
    memcpy(buf + GS_KCACHE_HEADER_BYTES, "abc", 3);
    write_bytes(path, buf, sizeof buf);
}
/* A future format version. */
static void dmg_version(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char v = GS_KCACHE_FORMAT + 1;
    cr_assert_eq(pwrite(fd, &v, 1, 4), 1);
    close(fd);
}

/* A FIFO under the entry's name: opening it for reading waited for a writer
 * that never came, so the lookup hung (a dispatcher's gs_dispatch with it). */
static void dmg_fifo(const char *dir, const char *path, uint64_t key) {
    (void)dir, (void)key;
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s: %s", path, strerror(errno));
}

Test(cache, truncated_payload_is_corrupt) { check_corrupt(dmg_truncate_payload, "truncated payload"); }
Test(cache, truncated_header_is_corrupt) { check_corrupt(dmg_truncate_header, "truncated header"); }
Test(cache, empty_file_is_corrupt) { check_corrupt(dmg_empty, "empty file"); }
Test(cache, garbage_is_corrupt) { check_corrupt(dmg_garbage, "garbage"); }
Test(cache, bad_checksum_is_corrupt) { check_corrupt(dmg_checksum, "flipped payload byte"); }
Test(cache, wrong_key_is_corrupt) { check_corrupt(dmg_wrong_key, "entry of another key"); }
Test(cache, wrong_backend_is_corrupt) { check_corrupt(dmg_wrong_backend, "entry of another backend"); }
Test(cache, other_version_is_corrupt) { check_corrupt(dmg_version, "other format version"); }
Test(cache, fifo_is_corrupt, .timeout = 20) { check_corrupt(dmg_fifo, "a FIFO"); }

/* A FIFO under the lock file's name: the lock's open waited for a writer
 * too. It is taken as any lock file is, and its holder removes it. */
Test(cache, fifo_lock_file_does_not_block, .timeout = 20) {
    char *dir = gs_test_tmpdir("cache-fifo");
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    char path[1024], lock[1100];
    cr_assert_eq(gs_kcache_path(c, 5, GS_KB_CUDA_CUBIN, path, sizeof path), GS_OK);
    snprintf(lock, sizeof lock, "%s.lock", path);
    cr_assert_eq(mkfifo(lock, 0644), 0, "mkfifo %s: %s", lock, strerror(errno));
    const void *b = NULL;
    size_t l = 0;
    int lk = -1;
    cr_assert_not(gs_kcache_get_or_lock(ctx, c, 5, GS_KB_CUDA_CUBIN, &b, &l, &lk, NULL));
    cr_assert_geq(lk, 0, "the lock is taken");
    cr_assert_eq(gs_kcache_put(ctx, c, 5, GS_KB_CUDA_CUBIN, "cubin", 5), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_kcache_unlock(c, 5, GS_KB_CUDA_CUBIN, lk);
    cr_assert_eq(file_size(lock), -1, "the holder removes the lock file");
    cr_assert_eq(file_size(path), GS_KCACHE_HEADER_BYTES + 5);
    gs_kcache_close(c);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}

/* A directory the cache cannot write. chmod 0555 does not stop root, so
 * when the chmod'ed directory is still writable (tests as root) the path
 * goes under a regular file instead, which no one can create. */
static void unwritable_dir(char *out, size_t n, char **cleanup) {
    char *dir = gs_test_tmpdir("cache-test");
    *cleanup = dir;
    char ro[600];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    cr_assert_eq(mkdir(ro, 0777), 0);
    cr_assert_eq(chmod(ro, 0555), 0);
    if (access(ro, W_OK) != 0) {
        snprintf(out, n, "%s", ro);
        return;
    }
    /* root: use a path below a regular file */
    char file[700];
    snprintf(file, sizeof file, "%s/file.txt", dir);
    write_bytes(file, "x", 1);
    snprintf(out, n, "%s/sub", file);
}

static void cleanup_unwritable(char *dir) {
    char p[700];
    snprintf(p, sizeof p, "%s/ro", dir);
    chmod(p, 0755);
    rmdir(p);
    snprintf(p, sizeof p, "%s/file.txt", dir);
    unlink(p);
    rmdir(dir);
    free(dir);
}

Test(cache, unwritable_dir_fails_put_but_get_works) {
    gs_ctx *ctx = gs_ctx_create();
    char dir[800], *cleanup = NULL;
    unwritable_dir(dir, sizeof dir, &cleanup);
    cr_log_info("unwritable cache directory: %s", dir);
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK, "opening is not an error: %s", gs_ctx_errmsg(ctx));
    gs_status s = gs_kcache_put(ctx, c, 7, GS_KB_CUDA_PTX, ".version 8.0", 12);
    cr_assert_eq(s, GS_ERR_IO, "put into %s: %s", dir, gs_status_str(s));
    const char *m = gs_ctx_errmsg(ctx);
    cr_assert(strstr(m, dir), "the message names the directory: %s", m);
    cr_assert(strstr(m, strerror(EACCES)) || strstr(m, strerror(ENOTDIR)) || strstr(m, strerror(ENOENT)) ||
                  strstr(m, strerror(EROFS)),
              "the message gives strerror: %s", m);
    const void *b = NULL;
    size_t n = 0;
    cr_assert(gs_kcache_get(ctx, c, 7, GS_KB_CUDA_PTX, &b, &n), "the memory level still serves the entry");
    cr_assert_str_eq(b, ".version 8.0");
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    cr_assert_eq(st.write_errors, 1);
    cr_assert(!gs_kcache_get(ctx, c, 8, GS_KB_CUDA_PTX, &b, &n), "a miss is just a miss");
    gs_kcache_close(c);
    cleanup_unwritable(cleanup);
    gs_ctx_destroy(ctx);
}

/* A dispatcher for rtx3090 whose kernels are OpenCL source (no device is
 * attached, so the cached artifact is the source), cached in dir. */
static gs_dispatcher *source_dispatcher(gs_ctx *ctx, const char *dir) {
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = dir;
    gs_dispatcher *d = NULL;
    cr_assert_eq(gs_dispatcher_create(ctx, gs_hw_find_builtin("rtx3090"), &o, &d), GS_OK, "%s", gs_ctx_errmsg(ctx));
    return d;
}

Test(cache, unwritable_dir_dispatch_still_works) {
    gs_ctx *ctx = gs_ctx_create();
    char dir[800], *cleanup = NULL;
    unwritable_dir(dir, sizeof dir, &cleanup);
    gs_dispatcher *d = source_dispatcher(ctx, dir);
    for (int i = 0; i < 2; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, "gemm M=100 N=64 K=32", &op), GS_OK);
        gs_kernel_handle h;
        cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_not_null(h.binary);
        cr_assert(strstr(h.binary, h.name), "the cached source holds the kernel");
        cr_assert_eq(h.hit, i == 1);
        gs_op_destroy(op);
    }
    gs_dispatch_stats st;
    gs_dispatch_stats_get(d, &st);
    cr_assert_eq(st.cache_write_errors, 1, "the failed disk write is counted");
    cr_assert_eq(st.dispatches, 2);
    gs_dispatcher_destroy(d);
    cleanup_unwritable(cleanup);
    gs_ctx_destroy(ctx);
}

/* An older build's entry under the kernel's descriptor key (its printer
 * wrote other text for the same descriptor) is never read: the dispatcher
 * keys the binary by its source too. Before, a cache directory kept across
 * an upgrade served the old build's kernels. */
Test(cache, dispatcher_ignores_another_builds_entry) {
    gs_ctx *ctx = gs_ctx_create();
    char *dir = gs_test_tmpdir("cache-test");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=33 N=65 K=17 transA=1", &op), GS_OK);
    gs_kernel_handle h;
    gs_dispatcher *d = source_dispatcher(ctx, dir);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const uint64_t key = h.key;
    char *src = strdup(h.binary);
    cr_assert_not_null(src);
    gs_dispatcher_destroy(d);
    /* the old build's entry: its own text, under the descriptor's key */
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static const char stale[] = "/* an older printer's kernel */";
    cr_assert_eq(gs_kcache_put(ctx, c, key, GS_KB_OPENCL_SOURCE, stale, sizeof stale - 1), GS_OK);
    gs_kcache_close(c);
    d = source_dispatcher(ctx, dir);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(h.key, key, "the kernel keeps its name");
    cr_assert_str_eq(h.binary, src, "read the other build's entry");
    cr_assert_eq(h.disk_hit, 1, "this build's own entry is on disk");
    gs_dispatcher_destroy(d);
    free(src);
    gs_op_destroy(op);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}

/* A corrupt entry on disk is rebuilt by the dispatcher. */
Test(cache, dispatcher_rebuilds_corrupt_entry) {
    gs_ctx *ctx = gs_ctx_create();
    char *dir = gs_test_tmpdir("cache-test");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=33 N=65 K=17 transA=1", &op), GS_OK);
    gs_kernel_handle h1, h2;
    gs_dispatcher *d = source_dispatcher(ctx, dir);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h1), GS_OK);
    char path[1024];
    char *src1 = strdup(h1.binary); /* (the OpenCL backend's binary is the source) */
    cr_assert_eq(gs_kcache_path(gs_dispatcher_cache(d), gs_kcache_src_key(h1.key, src1), GS_KB_OPENCL_SOURCE, path,
                                sizeof path),
                 GS_OK);
    gs_dispatcher_destroy(d);
    cr_assert_eq(truncate(path, file_size(path) / 2), 0);
    d = source_dispatcher(ctx, dir);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_dispatch_stats st;
    gs_dispatch_stats_get(d, &st);
    cr_assert_eq(st.cache_corrupt, 1);
    cr_assert_eq(h2.disk_hit, 0);
    cr_assert_eq(h2.key, h1.key);
    cr_assert_str_eq(h2.binary, src1, "rebuilt to the same source");
    cr_assert_eq(file_size(path), GS_KCACHE_HEADER_BYTES + (int64_t)strlen(src1), "rewritten whole");
    gs_dispatcher_destroy(d);
    /* and a third dispatcher reads it from disk */
    d = source_dispatcher(ctx, dir);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h2), GS_OK);
    cr_assert_eq(h2.disk_hit, 1);
    gs_dispatcher_destroy(d);
    free(src1);
    gs_op_destroy(op);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}

/* Two processes fill one directory at once with overlapping keys. */
static int fill(const char *dir, uint64_t lo, uint64_t hi) {
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    if (gs_kcache_open(ctx, dir, &c) != GS_OK) return 1;
    char buf[4096];
    int bad = 0;
    for (int round = 0; round < 2; round++)
        for (uint64_t k = lo; k < hi; k++) {
            size_t n = payload_for(k, buf, sizeof buf);
            /* both backends, so the two writers interleave on the same names */
            bad += gs_kcache_put(ctx, c, k, GS_KB_CUDA_CUBIN, buf, n) != GS_OK;
            bad += gs_kcache_put(ctx, c, k, GS_KB_OPENCL_SOURCE, buf, n / 2) != GS_OK;
        }
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
    return bad ? 1 : 0;
}

Test(cache, two_processes_fill_one_dir) {
    char *dir = gs_test_tmpdir("cache-test");
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) _exit(fill(dir, 0, 120));
    int mine = fill(dir, 60, 180);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's puts failed");
    cr_assert_eq(mine, 0, "the parent's puts failed");
    cr_assert_eq(gs_test_count_files(dir, ".gsk"), 360, "180 keys x 2 backends");
    cr_assert_eq(gs_test_count_files(dir, ""), 360, "no temporary files left");
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    char buf[4096];
    for (uint64_t k = 0; k < 180; k++) {
        size_t n = payload_for(k, buf, sizeof buf);
        const void *b = NULL;
        size_t l = 0;
        cr_assert(gs_kcache_get(ctx, c, k, GS_KB_CUDA_CUBIN, &b, &l), "key %llu: %s", (unsigned long long)k,
                  gs_ctx_errmsg(ctx));
        cr_assert_eq(l, n);
        cr_assert_arr_eq(b, buf, n);
        cr_assert(gs_kcache_get(ctx, c, k, GS_KB_OPENCL_SOURCE, &b, &l));
        cr_assert_eq(l, n / 2);
    }
    gs_kcache_stats s;
    gs_kcache_stats_get(c, &s);
    cr_assert_eq(s.corrupt, 0);
    cr_assert_eq(s.disk_hits, 360);
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
    gs_test_rm_flat(dir);
    free(dir);
}

/* Single flight between two processes (gs_kcache_get_or_lock). The parent
 * misses keys 1 and 2 and holds their locks; the child, asking for them,
 * waits (a pipe says when it is about to ask). The parent puts key 1 and
 * releases it: the child gets a disk hit after waiting. The parent releases
 * key 2 without a put (its build failed) and at once asks for it again, as
 * a newcomer beside the child, which waits on the removed lock file: exactly
 * one of the two gets the lock (a miss) and builds, the other then finds the
 * entry. One hit or miss is counted per call, and no lock file is left. */
static void put_key(gs_ctx *ctx, gs_kcache *c, uint64_t k) {
    char buf[4096];
    size_t n = payload_for(k, buf, sizeof buf);
    cr_assert_eq(gs_kcache_put(ctx, c, k, GS_KB_CUDA_CUBIN, buf, n), GS_OK);
}

static int child_waits(const char *dir, int to_parent) {
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    if (gs_kcache_open(ctx, dir, &c) != GS_OK) return 10;
    const void *b = NULL;
    size_t l = 0;
    int lk = -1;
    double waited = 0;
    char buf[4096];
    size_t n = payload_for(1, buf, sizeof buf);
    if (write(to_parent, "a", 1) != 1) return 11;
    if (!gs_kcache_get_or_lock(ctx, c, 1, GS_KB_CUDA_CUBIN, &b, &l, &lk, &waited)) return 12;
    if (lk != -1 || l != n || memcmp(b, buf, n) || waited < 0.05) return 13;
    if (write(to_parent, "b", 1) != 1) return 14;
    bool hit = gs_kcache_get_or_lock(ctx, c, 2, GS_KB_CUDA_CUBIN, &b, &l, &lk, &waited);
    if (waited < 0.05 || hit == (lk >= 0)) return 15;
    if (!hit) {
        n = payload_for(2, buf, sizeof buf);
        if (gs_kcache_put(ctx, c, 2, GS_KB_CUDA_CUBIN, buf, n) != GS_OK) return 16;
        usleep(100 * 1000);
        gs_kcache_unlock(c, 2, GS_KB_CUDA_CUBIN, lk);
    }
    if (write(to_parent, hit ? "H" : "L", 1) != 1) return 17;
    gs_kcache_stats s;
    gs_kcache_stats_get(c, &s);
    if (s.hits != 1 + hit || s.disk_hits != 1 + hit || s.misses != !hit) return 18;
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
    return 0;
}

Test(cache, one_builder_the_others_wait) {
    char *dir = gs_test_tmpdir("cache-lock");
    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &c), GS_OK);
    const void *b = NULL;
    size_t l = 0;
    int lk[3] = {-1, -1, -1};
    for (uint64_t k = 1; k <= 2; k++) {
        cr_assert_not(gs_kcache_get_or_lock(ctx, c, k, GS_KB_CUDA_CUBIN, &b, &l, &lk[k], NULL));
        cr_assert_geq(lk[k], 0, "key %llu: the lock is taken", (unsigned long long)k);
    }
    cr_assert_eq(gs_test_count_files(dir, ".lock"), 2);
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* the inherited descriptors share the parent's locks: a lock is
         * released when every copy of its descriptor is closed */
        close(lk[1]);
        close(lk[2]);
        close(pipefd[0]);
        _exit(child_waits(dir, pipefd[1]));
    }
    close(pipefd[1]);
    char said = 0;
    cr_assert_eq(read(pipefd[0], &said, 1), 1);
    cr_assert_eq(said, 'a');
    usleep(500 * 1000); /* the child is waiting for key 1 */
    put_key(ctx, c, 1);
    gs_kcache_unlock(c, 1, GS_KB_CUDA_CUBIN, lk[1]);
    cr_assert_eq(read(pipefd[0], &said, 1), 1);
    cr_assert_eq(said, 'b');
    usleep(500 * 1000); /* the child is waiting for key 2 */
    gs_kcache_unlock(c, 2, GS_KB_CUDA_CUBIN, lk[2]); /* no put: the build failed */
    double waited = 0;
    bool hit = gs_kcache_get_or_lock(ctx, c, 2, GS_KB_CUDA_CUBIN, &b, &l, &lk[2], &waited);
    cr_assert_eq(hit, lk[2] < 0, "a hit holds no lock, a miss holds it");
    if (!hit) {
        usleep(100 * 1000); /* the child moves to this lock file and waits */
        put_key(ctx, c, 2);
        gs_kcache_unlock(c, 2, GS_KB_CUDA_CUBIN, lk[2]);
    }
    cr_assert_eq(read(pipefd[0], &said, 1), 1);
    close(pipefd[0]);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's checks failed at step %d",
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    cr_assert(said == 'H' || said == 'L');
    cr_assert_neq(hit, said == 'H', "one builder of key 2: the parent %s, the child %s", hit ? "hit" : "built",
                  said == 'H' ? "hit" : "built");
    gs_kcache_stats s;
    gs_kcache_stats_get(c, &s);
    cr_assert_eq(s.misses, 2 + !hit, "one miss per call");
    cr_assert_eq(s.hits, hit);
    gs_kcache_close(c);
    cr_assert_eq(gs_test_count_files(dir, ".lock"), 0, "no lock file left");
    cr_assert_eq(gs_test_count_files(dir, ".gsk"), 2);
    /* without a directory there is nothing to lock */
    cr_assert_eq(gs_kcache_open(ctx, "", &c), GS_OK);
    cr_assert_not(gs_kcache_get_or_lock(ctx, c, 1, GS_KB_CUDA_CUBIN, &b, &l, &lk[0], NULL));
    cr_assert_eq(lk[0], -1);
    gs_kcache_unlock(c, 1, GS_KB_CUDA_CUBIN, lk[0]);
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
    gs_test_rm_flat(dir);
    free(dir);
}

Test(cache, bad_arguments) {
    gs_ctx *ctx = gs_ctx_create();
    cr_assert_eq(gs_kcache_open(ctx, "", NULL), GS_ERR_INVALID_ARG);
    gs_kcache *c = NULL;
    cr_assert_eq(gs_kcache_open(ctx, "", &c), GS_OK);
    cr_assert_eq(gs_kcache_put(ctx, c, 1, (gs_kbackend)17, "x", 1), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_kcache_put(ctx, c, 1, GS_KB_CUDA_PTX, NULL, 3), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_kcache_put(ctx, NULL, 1, GS_KB_CUDA_PTX, "x", 1), GS_ERR_INVALID_ARG);
    cr_assert(!gs_kcache_get(ctx, NULL, 1, GS_KB_CUDA_PTX, NULL, NULL));
    cr_assert_eq(gs_kcache_put(ctx, c, 1, GS_KB_CUDA_PTX, "", 0), GS_OK, "an empty payload is fine");
    const void *b = NULL;
    size_t n = 9;
    cr_assert(gs_kcache_get(ctx, c, 1, GS_KB_CUDA_PTX, &b, &n));
    cr_assert_eq(n, 0);
    char p[64];
    cr_assert_eq(gs_kcache_path(c, 1, GS_KB_CUDA_PTX, p, sizeof p), GS_ERR_UNSUPPORTED, "memory only: no path");
    gs_kcache_close(c);
    gs_kcache_close(NULL);
    gs_ctx_destroy(ctx);
}

/* Issue 11, item 5: NVRTC compiles through the cache (what `gensor construct
 * --nvrtc --cache-dir D` uses). A second compile of the same source, from a
 * fresh cache on the same directory, is a disk hit with the same PTX, cubin,
 * log and ptxas figures; a corrupted entry is detected, deleted and rebuilt. */
Test(cache, nvrtc_compile_through_the_cache) {
    gs_ctx *ctx = gs_ctx_create();
    if (!gs_nvrtc_available(ctx)) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gs_ctx_errmsg(ctx));
        gs_ctx_destroy(ctx);
        const char *req = getenv("GS_REQUIRE_NVRTC");
        if (req && *req && strcmp(req, "0") != 0) cr_assert_fail("GS_REQUIRE_NVRTC is set but NVRTC is missing: %s", msg);
        cr_skip_test("NVRTC not available, skipping the cached-compile test: %s", msg);
    }
    const char *src = "extern \"C\" __global__ void gs_cached_k(float *p) { p[threadIdx.x] *= 2.0f; }\n";
    char *dir = gs_test_tmpdir("cache-test");
    gs_nvrtc_out a, b, c;
    bool hit = true;
    /* first compile: a miss, compiled and stored */
    gs_kcache *k1 = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &k1), GS_OK);
    cr_assert_eq(gs_nvrtc_compile_cached(ctx, k1, src, "gs_cached_k", 75, true, true, &a, &hit), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(!hit, "a first compile cannot be a hit");
    gs_kcache_close(k1);
    cr_assert_eq(gs_test_count_files(dir, ".nvrtc-out.gsk"), 1);
    /* second, from a fresh cache: a disk hit, identical outputs */
    gs_kcache *k2 = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &k2), GS_OK);
    cr_assert_eq(gs_nvrtc_compile_cached(ctx, k2, src, "gs_cached_k", 75, true, true, &b, &hit), GS_OK);
    cr_assert(hit, "the repeated compile was not a cache hit");
    gs_kcache_stats st;
    gs_kcache_stats_get(k2, &st);
    cr_assert_eq(st.disk_hits, 1);
    cr_assert(a.ptx && b.ptx && !strcmp(a.ptx, b.ptx), "PTX differs");
    cr_assert(a.cubin_len == b.cubin_len && a.cubin_len > 0 && !memcmp(a.cubin, b.cubin, a.cubin_len), "cubin differs");
    cr_assert(a.log && b.log && !strcmp(a.log, b.log), "log differs");
    cr_assert_eq(a.stats.registers, b.stats.registers);
    cr_assert_gt(b.stats.registers, 0);
    /* another arch or other outputs are other entries */
    cr_assert_eq(gs_nvrtc_compile_cached(ctx, k2, src, "gs_cached_k", 80, true, true, &c, &hit), GS_OK);
    cr_assert(!hit, "sm_80 must not hit sm_75's entry");
    gs_nvrtc_out_free(&c);
    gs_kcache_close(k2);
    /* corrupt every entry: the next compile detects it, rebuilds, and stores a good one */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "r+b");
        cr_assert_not_null(f);
        fseek(f, 50, SEEK_SET);
        fputs("garbage", f);
        fclose(f);
    }
    closedir(d);
    gs_kcache *k3 = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &k3), GS_OK);
    cr_assert_eq(gs_nvrtc_compile_cached(ctx, k3, src, "gs_cached_k", 75, true, true, &c, &hit), GS_OK);
    cr_assert(!hit, "a corrupt entry must not be a hit");
    gs_kcache_stats_get(k3, &st);
    cr_assert_eq(st.corrupt, 1);
    cr_assert(c.ptx && !strcmp(a.ptx, c.ptx), "the rebuilt PTX differs");
    gs_nvrtc_out_free(&c);
    gs_kcache_close(k3);
    gs_kcache *k4 = NULL;
    cr_assert_eq(gs_kcache_open(ctx, dir, &k4), GS_OK);
    cr_assert_eq(gs_nvrtc_compile_cached(ctx, k4, src, "gs_cached_k", 75, true, true, &c, &hit), GS_OK);
    cr_assert(hit, "the rebuilt entry was not stored");
    gs_nvrtc_out_free(&c);
    gs_kcache_close(k4);
    gs_nvrtc_out_free(&a);
    gs_nvrtc_out_free(&b);
    gs_test_rm_flat(dir);
    free(dir);
    gs_ctx_destroy(ctx);
}
