/* fnprof.c - a QEMU TCG plugin (API 1, QEMU 7.2, as armcount's) that counts
 * executed guest instructions per translation block start address, for a
 * profile by function (tests/armprof/profile.sh maps the addresses to the
 * symbols of the unstripped binary). Works with qemu-aarch64 and qemu-arm.
 *
 * Report (out=FILE, else qemu's log): one line per block executed,
 *   ADDRESS(hex) INSTRUCTIONS(executed, decimal)
 * Built by profile.sh against armcount's plugin header. Not part of pith. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

typedef struct {
    uint64_t vaddr;
    uint64_t n;     /* instructions in the block */
    uint64_t count; /* executions (inline add) */
} Block;

static GMutex lock;
static GPtrArray *blocks;
static char *out_path;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    Block *b = g_new0(Block, 1);
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    b->n = qemu_plugin_tb_n_insns(tb);
    g_mutex_lock(&lock);
    g_ptr_array_add(blocks, b);
    g_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->count, 1);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id, (void)p;
    FILE *f = out_path ? fopen(out_path, "w") : NULL;
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < blocks->len; i++) {
        Block *b = g_ptr_array_index(blocks, i);
        if (!b->count) continue;
        if (f) fprintf(f, "%" PRIx64 " %" PRIu64 "\n", b->vaddr, b->n * b->count);
        else g_string_append_printf(s, "%" PRIx64 " %" PRIu64 "\n", b->vaddr, b->n * b->count);
    }
    if (f) fclose(f);
    else qemu_plugin_outs(s->str);
    g_string_free(s, TRUE);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0) out_path = g_strdup(argv[i] + 4);
    blocks = g_ptr_array_new();
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
