/* Plugins: shared libraries that add op classes to a program that loads
 * graphs by name, such as weft-prof (`weft-prof --plugin ./libmyops.so
 * graph.json`, docs/profiling.md).
 *
 * A plugin is a shared library that links weft (weft::weft, or
 * `pkg-config --libs weft`) and exports
 *
 *     WEFT_PLUGIN_EXPORT weft_status_t weft_plugin_init(void)
 *     {
 *         return weft_op_class_register(&my_class);   // weft/op.h
 *     }
 *
 * The loader (dlopen) calls weft_plugin_init once, after loading the
 * library and before any graph is read; a status other than WEFT_OK refuses
 * the plugin, and the loader reports it. Registering from a constructor
 * function instead also works (then weft_plugin_init may be absent), but a
 * status cannot be reported that way. The classes must stay valid while the
 * program runs: plugins are never unloaded.
 *
 * Thread: weft_plugin_init runs on the loading thread, before any graph is
 * loaded or compiled. */
#ifndef WEFT_PLUGIN_H
#define WEFT_PLUGIN_H

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The entry point's name and type. */
#define WEFT_PLUGIN_INIT_SYMBOL "weft_plugin_init"
typedef weft_status_t (*weft_plugin_init_fn)(void);

/* Exports the entry point from a library built with hidden visibility. */
#if defined(__GNUC__)
#define WEFT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define WEFT_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif
#endif /* WEFT_PLUGIN_H */
