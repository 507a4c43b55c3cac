/* cli_cache.c - --prompt-cache FILE for run and chat (llama-cli's option):
 * the file's state is loaded into the slot before the first prompt (which
 * then computes only what it does not share with it), and the slot's state
 * is saved when the command ends if at least half of it was computed. Whatever is wrong with the file is one
 * note on stderr and the prompt computed as without it. */
#include "../../port/port.h"
#include "cli.h"

static int has_recurrent(const Engine *e)
{
    return model_recurrent_before(&e->cfg, e->cfg.n_layer) != 0;
}

uint32_t cli_cache_load(Engine *e, Slot *s, const char *path)
{
    char warn[1024];
    if (has_recurrent(e))
        port_err("note: --prompt-cache: not for a model with recurrent layers yet (their state has no checkpoints)\n");
    else if (port_file_exists(path) && slot_cache_load(e, s, path, NULL, warn, sizeof warn))
        port_err("note: %s\n", warn);
    return e->n_shifts;
}

void cli_cache_save(Engine *e, Slot *s, const char *path, uint32_t shifts, uint32_t loaded)
{
    char warn[1024];
    /* the positions computed, or after a context shift the first --keep
     * ones: the only ones still as a computation from the start has them */
    uint32_t n = s->seq.n_past, keep = (uint32_t)e->opt.keep;
    if (e->n_shifts != shifts && keep < n) n = keep;
    /* written again only when at least half of it is new: a fixed system
     * prompt asked new questions is written once, not a whole cache per
     * question */
    if (!has_recurrent(e) && n > 2 * (uint64_t)loaded && slot_cache_save(e, s, n, path, NULL, warn, sizeof warn))
        port_err("note: %s\n", warn);
}
