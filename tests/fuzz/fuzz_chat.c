/* fuzz_chat - a conversation read from arbitrary JSON (chat_json_read, in
 * its two passes: measure, then fill buffers of exactly the measured
 * sizes) and rendered with every template, thinking on and off, with and
 * without the generation prompt. Properties: the fill pass agrees with the
 * measure pass; every template renders it, except that Qwen3.5's may
 * refuse it (as its raise_exception does: no user query, a system message
 * after the first, arguments that are not an object); the rendered length
 * never exceeds chat_render_bound (Llama 3.1 with tools: re-indented by
 * depth, outside the bound as chat.h says); a render into a buffer of
 * exactly that length + 1 is complete and equals the measured length. */
#include "../../src/text/chat.h"

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    ChatJsonSizes sz, sz2;
    if (chat_json_read((const char *)data, size, "fuzz.json", NULL, &sz, err, sizeof err) != 0) {
        FUZZ_ASSERT(strchr(err, '\n') == NULL && strncmp(err, "fuzz.json", 9) == 0, "one-line error naming the input");
        return 0;
    }
    FUZZ_ASSERT(sz.text_bytes <= size * 4 + 64 && sz.n_messages <= size, "sizes bounded by the input");
    ChatJsonOut out;
    memset(&out, 0, sizeof out);
    out.msgs = calloc(sz.n_messages + 1, sizeof *out.msgs);
    out.calls = calloc(sz.n_tool_calls + 1, sizeof *out.calls);
    out.tools = calloc(sz.n_tools + 1, sizeof *out.tools);
    out.tools_len = calloc(sz.n_tools + 1, sizeof *out.tools_len);
    out.text = malloc(sz.text_bytes + 1);
    out.cap = sz;
    int rc = chat_json_read((const char *)data, size, "fuzz.json", &out, &sz2, err, sizeof err);
    FUZZ_ASSERT(rc == 0 && memcmp(&sz, &sz2, sizeof sz) == 0, "the fill pass agrees with the measure pass");
    uint64_t bound = chat_render_bound(sz.n_messages, sz.n_tool_calls, sz.n_tools, sz.text_bytes);
    for (int t = 0; t < CHAT_TEMPLATE_COUNT; t++) {
        for (int flags = 0; flags < 4; flags++) {
            ChatOptions co;
            memset(&co, 0, sizeof co);
            co.add_generation_prompt = flags & 1;
            co.enable_thinking = (flags >> 1) & 1;
            co.tools = out.tools;
            co.tools_len = out.tools_len;
            co.n_tools = (int)sz.n_tools;
            int64_t len = chat_render((ChatTemplate)t, out.msgs, (int)sz.n_messages, &co, NULL, 0);
            int may_refuse = t == CHAT_TEMPLATE_QWEN35 || t == CHAT_TEMPLATE_QWEN35_THINK;
            FUZZ_ASSERT(len >= 0 || may_refuse, "a conversation read from JSON renders (or Qwen3.5's refuses it)");
            if (len < 0) continue;
            FUZZ_ASSERT((uint64_t)len <= bound || (t == CHAT_TEMPLATE_LLAMA31 && sz.n_tools > 0),
                        "rendered length within chat_render_bound");
            char *buf = malloc((size_t)len + 1);
            int64_t len2 = chat_render((ChatTemplate)t, out.msgs, (int)sz.n_messages, &co, buf, (size_t)len + 1);
            FUZZ_ASSERT(len2 == len && buf[len] == '\0', "a render into a buffer of the measured size is complete");
            free(buf);
        }
    }
    free(out.msgs);
    free(out.calls);
    free(out.tools);
    free(out.tools_len);
    free(out.text);
    return 0;
}
