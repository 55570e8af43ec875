/* fuzz_profile.c — the JSON profile loader (gs_hw_load_json_text). A loaded
 * profile passes gs_hw_validate, and saving it and loading the file again
 * gives the same numbers. */
#include "fuzz_common.h"
#include "hwmodel/model/model.h"

#include <unistd.h>

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) snprintf(path, sizeof path, "/tmp/gs_fuzz_profile.%d.json", (int)getpid());
    char *text = fuzz_cstr(data, size, 16384);
    gs_ctx *ctx = gs_ctx_create();
    gs_hw hw;
    gs_status s = gs_hw_load_json_text(ctx, text, &hw);
    if (s != GS_OK) {
        FUZZ_CHECK(gs_ctx_errmsg(ctx)[0] != '\0', "error %d without a message", (int)s);
    } else {
        FUZZ_CHECK(gs_hw_validate(ctx, &hw) == GS_OK, "loaded profile fails validation: %s", gs_ctx_errmsg(ctx));
        char *desc = gs_hw_describe(&hw);
        FUZZ_CHECK(desc != NULL, "describe returned NULL");
        free(desc);
        s = gs_hw_save_json(ctx, &hw, path);
        FUZZ_CHECK(s == GS_OK, "save failed: %s", gs_ctx_errmsg(ctx));
        gs_hw back;
        s = gs_hw_load_json(ctx, path, &back);
        FUZZ_CHECK(s == GS_OK, "saved profile does not load: %s", gs_ctx_errmsg(ctx));
        char *d1 = gs_hw_describe(&hw), *d2 = gs_hw_describe(&back);
        FUZZ_CHECK(d1 && d2 && !strcmp(d1, d2), "save/load changes the profile:\n%s\n---\n%s", d1, d2);
        free(d1);
        free(d2);
        unlink(path);
    }
    free(text);
    gs_ctx_destroy(ctx);
    return 0;
}
