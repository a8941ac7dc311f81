/* weft-prof --plugin (prof.h, weft/plugin.h): loads each shared library and
 * calls its weft_plugin_init, so the op classes it registers are known
 * before the graph is read. Libraries stay loaded until exit: the classes
 * they registered must outlive every lookup. */
#include <dlfcn.h>
#include <stdio.h>

#include "prof.h"

static int load_plugin(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "weft-prof: --plugin %s: %s\n", path, dlerror());
        return 1;
    }
    /* POSIX: a function pointer round-trips through dlsym's void * */
    void *sym = dlsym(h, WEFT_PLUGIN_INIT_SYMBOL);
    weft_plugin_init_fn init;
    *(void **)&init = sym;
    weft_status_t s = init ? init() : WEFT_OK;
    if (s == WEFT_OK) return 0;
    fprintf(stderr, "weft-prof: --plugin %s: %s failed: %s (%s)\n", path,
            WEFT_PLUGIN_INIT_SYMBOL, weft_status_name(s), weft_status_str(s));
    return 1;
}

int prof_load_plugins(const prof_opts_t *o)
{
    for (size_t k = 0; k < o->n_plugins; k++)
        if (load_plugin(o->plugins[k])) return 1;
    return 0;
}
