/* cli_text.c - a prompt or system prompt from a file (-f FILE,
 * --system-file FILE), so that a long agent prompt need not pass through
 * the shell. Its size is learnt before the plan (the arena holds the text),
 * its bytes read once the engine is open; as llama.cpp's -f, one final
 * newline is dropped. A file that cannot be read, is empty, holds a NUL
 * byte or changed size in between is one line naming it, exit 2. */
#include "../../port/port.h"
#include "cli.h"

uint64_t cli_text_size(const char *flag, const char *path)
{
    PortFile f;
    char why[256];
    if (port_file_open(&f, path, 0, why, sizeof why) != 0) port_die("%s: %s", flag, why);
    uint64_t n = f.size;
    port_file_close(&f);
    if (n == 0) port_die("%s: %s is empty", flag, path);
    if (n > CLI_TEXT_MAX) port_die("%s: %s: %llu bytes, more than %u", flag, path, (unsigned long long)n, CLI_TEXT_MAX);
    return n;
}

const char *cli_text_read(Arena *arena, const char *flag, const char *path, uint64_t size, size_t *len)
{
    char *text = arena_take(arena, size + 1);
    PortFile f;
    char why[256];
    if (!text) port_die("%s: %s: no room planned", flag, path);
    if (port_file_open(&f, path, 0, why, sizeof why) != 0) port_die("%s: %s", flag, why);
    int rc = f.size == size ? port_file_read(&f, 0, text, (size_t)size) : -1;
    port_file_close(&f);
    if (rc != 0) port_die("%s: %s: read error (or it changed while pith started)", flag, path);
    for (uint64_t i = 0; i < size; i++)
        if (text[i] == '\0') port_die("%s: %s: byte %llu: a NUL byte in a text file", flag, path, (unsigned long long)i);
    if (text[size - 1] == '\n') size--;
    text[size] = '\0';
    if (size == 0) port_die("%s: %s holds only a newline", flag, path);
    *len = (size_t)size;
    return text;
}
