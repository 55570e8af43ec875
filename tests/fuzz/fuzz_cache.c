/* fuzz_cache.c — the kernel cache's entry reader (kernels/service/cache.c). The
 * input is written as the disk entry of a key, then read with
 * gs_kcache_get. The key and backend asked for are taken from the input's
 * header bytes (so the fuzzer gets past the key check), and when the first
 * byte is odd the harness writes the right checksum into the header (so it
 * gets past the checksum to the payload). Invariants: a hit returns exactly
 * the bytes after the 40-byte header, NUL-terminated, and a second get is a
 * memory hit with the same bytes; a miss of a present file counts it corrupt
 * and deletes it, with a message. */
#include "fuzz_common.h"
#include "kernels/service/service.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gs_fuzz_cache.%d", (int)getpid());
        mkdir(dir, 0700);
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    uint64_t key = size >= 16 ? rd64(buf + 8) : 0x0123456789abcdefull;
    gs_kbackend b = (gs_kbackend)((size >= 17 ? buf[16] : 0) % GS_KB_COUNT_);
    if (size >= GS_KCACHE_HEADER_BYTES && (buf[0] & 1)) {
        /* the right length and checksum for this payload; magic, version, key and backend stay the fuzzer's */
        uint8_t h[GS_KCACHE_HEADER_BYTES];
        gs_kcache_header_encode(h, key, b, buf + GS_KCACHE_HEADER_BYTES, size - GS_KCACHE_HEADER_BYTES);
        memcpy(buf + 24, h + 24, 16); /* length and checksum */
    }

    gs_ctx *ctx = gs_ctx_create();
    gs_kcache *c = NULL;
    if (gs_kcache_open(ctx, dir, &c) != GS_OK) abort();
    char path[4096];
    if (gs_kcache_path(c, key, b, path, sizeof path) != GS_OK) abort();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) abort();

    const void *bytes = NULL;
    size_t len = 0;
    bool hit = gs_kcache_get(ctx, c, key, b, &bytes, &len);
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    struct stat sb;
    if (hit) {
        FUZZ_CHECK(size >= GS_KCACHE_HEADER_BYTES && len == size - GS_KCACHE_HEADER_BYTES,
                   "hit of %zu bytes from a %zu-byte entry", len, size);
        FUZZ_CHECK(memcmp(bytes, buf + GS_KCACHE_HEADER_BYTES, len) == 0, "hit returns other bytes");
        FUZZ_CHECK(((const char *)bytes)[len] == '\0', "hit not NUL-terminated");
        FUZZ_CHECK(!memcmp(buf, GS_KCACHE_MAGIC, 4), "entry without the magic accepted");
        FUZZ_CHECK(st.disk_hits == 1 && st.corrupt == 0, "stats after a disk hit");
        const void *again = NULL;
        size_t len2 = 0;
        FUZZ_CHECK(gs_kcache_get(ctx, c, key, b, &again, &len2) && len2 == len && !memcmp(again, bytes, len),
                   "second get differs");
        gs_kcache_stats_get(c, &st);
        FUZZ_CHECK(st.hits == 2 && st.disk_hits == 1, "second get was not a memory hit");
    } else {
        FUZZ_CHECK(st.corrupt == 1 && st.misses == 1, "a present entry missed without being counted corrupt");
        FUZZ_CHECK(stat(path, &sb) != 0, "corrupt entry %s left on disk", path);
        FUZZ_CHECK(strstr(gs_ctx_errmsg(ctx), "corrupt entry") != NULL, "no message for a corrupt entry");
    }
    unlink(path);
    gs_kcache_close(c);
    gs_ctx_destroy(ctx);
    free(buf);
    return 0;
}
